"""NCCL's own timestamps before the line prefix, in every form its source can print them.

NCCL's src/debug.cc (from v2.26.2-1, NVIDIA/nccl; the `ncclDebugLog` prefix is strftime of
NCCL_DEBUG_TIMESTAMP_FORMAT, then "%s:%d:%d " of host, pid, tid, then "[%d] " of the device):
the format's default is "[%F %T] ", a "%Nf" in it is N digits of the second's fraction, an "_" in
it is written as a blank, and NCCL_DEBUG_TIMESTAMP_LEVELS says which levels get one -- WARN by
default, INFO and ALL where a user asks. So a 2.26+ log's WARN lines start
"[2025-04-08 08:39:46] devgpu263:589012:591652 [0] transport/nvls.cc:254 NCCL WARN ..." (the
fixture nccl-catalogue-nvls-cuda-invalid-argument-01.log holds such a line), and its INFO lines
too where asked. Each form below is put before every prefixed line of NCCL fixture logs (WARN lines
only, as by default, and every line, as with NCCL_DEBUG_TIMESTAMP_LEVELS=ALL); the reader must find
the same hosts, devices, ranks, network and failures as without them, with the compiled line scan
and with the pure-Python one. (Invented lines, from the fixtures' own and the formats of the source.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from topodiag.parsers.base import to_jsonable
from topodiag.parsers.nccl_debug import lines as nccl_lines
from topodiag.parsers.nccl_debug import reader

ROOT = Path(__file__).resolve().parents[2]
LOGS = [ROOT / "fixtures" / "nccl_debug" / name for name in (
    "nccl-catalogue-nvls-cuda-invalid-argument-01.log",
    "nccl-socket-2node-no-ib-device-nccltests-timeout-01.log",
    "nccl-ib-roce-mixed-gdr-2.16-gather-01.log",
    "nccl-collnet-sharp-fallback-ib-gdrdma-01.log",
)]
# what strftime writes for each form: the default, with "%3f" / "%6f" subseconds, "_" as a blank
# ("[%F_%T]_"), epoch seconds ("%s "), a month name ("%b %d %T "), none ("" turns them off)
STAMPS = ["[2025-04-08 08:39:46] ", "[2025-04-08 08:39:46.123] ", "[2025-04-08 08:39:46.123456] ",
          "1744101586 ", "Apr 08 08:39:46 ", "2025-04-08T08:39:46 "]
_PREFIXED = re.compile(r"^(?:\[[0-9]+\] )?[^\s:\[\]]+:[0-9]+:[0-9]+\s+\[[0-9]+\]")
KEYS = ("nccl_version", "hosts", "cuda_devs", "nranks", "nnodes", "network", "nccl_lines", "warnings_total",
        "errors_total", "lines", "gdr")


def _stamped(text: str, stamp: str, every: bool) -> str:
    out = []
    for line in text.splitlines(True):
        if _PREFIXED.match(line) and (every or " NCCL WARN " in line):
            line = stamp + line
        out.append(line)
    return "".join(out)


def _read(text: str) -> dict:
    got = to_jsonable(reader.parse(text))
    errors = [(e["line_no"], e["kind"], e.get("class")) for e in got["errors"]]
    return {**{k: got[k] for k in KEYS}, "errors": errors}


@pytest.fixture(params=["compiled", "pure"])
def scan(request, monkeypatch):
    if request.param == "pure":
        monkeypatch.setattr(nccl_lines, "tagged", nccl_lines.tagged_py)
    elif nccl_lines.compiled is None:
        pytest.skip("no compiled line scan in this build")
    return request.param


@pytest.mark.parametrize("every", [False, True], ids=["warn-only", "all-levels"])
@pytest.mark.parametrize("stamp", STAMPS)
@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.stem)
def test_nccl_timestamps_read_as_without(scan, path: Path, stamp: str, every: bool) -> None:
    text = "".join(line for line in path.read_text("utf-8").splitlines(True) if not line.startswith("#@"))
    plain = text.replace("[2025-04-08 08:39:46] ", "")  # the fixture's own stamps out: the reference
    want = _read(plain)
    assert want["hosts"] and want["nccl_lines"]
    assert _read(_stamped(plain, stamp, every)) == want


def test_the_fixture_line_is_the_default_form() -> None:
    """Hand-checked: the 2.26 fixture's WARN line reads its host and device through the default stamp."""
    text = LOGS[0].read_text("utf-8")
    assert "[2025-04-08 08:39:46] devgpu263:589012:591652 [0] transport/nvls.cc:254 NCCL WARN" in text
    got = to_jsonable(reader.parse(text))
    assert got["hosts"] == ["devgpu263"] and got["errors"][0]["class"] == "cuda-failure"
