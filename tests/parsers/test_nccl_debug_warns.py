"""A big log's WARN lines past the lists they fill (warnings, errors, unrecognised: MAX_LIST each) are
read by their distinct texts (reader.py `_warns`, Facts.warns_counted): counts, failed plugins and
hosts; the result is the line-by-line reading's, on the NCCL fixtures appended round after round with
their hosts and pids varied (thousands of WARN lines), in big and small chunks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from topodiag.parsers import blank_provenance_header
from topodiag.parsers.base import to_jsonable
from topodiag.parsers.nccl_debug import reader
from topodiag.parsers.nccl_debug.facts import Facts
from topodiag.parsers.nccl_debug.records import MAX_LIST

ROOT = Path(__file__).resolve().parents[2]
_PREFIX = re.compile(r"(?m)^([A-Za-z][\w.-]*):(\d+):(\d+)(?=[ \t]+\[)")


def _log(rounds: int) -> str:
    texts = [blank_provenance_header(p.read_text(encoding="utf-8", errors="replace"))
             for p in sorted((ROOT / "fixtures" / "nccl_debug").glob("*")) if p.suffix in (".log", ".txt")]
    out = []
    for rnd in range(rounds):
        for text in texts:
            out.append(_PREFIX.sub(lambda m: f"{m[1]}r{rnd % 7}:{int(m[2]) + rnd}:{int(m[3]) + rnd}", text))
    return "".join(out)


@pytest.fixture(scope="module")
def log() -> str:
    text = _log(30)
    assert text.count("NCCL WARN") > 4 * MAX_LIST  # the lists fill, and many lines come after
    return text


@pytest.mark.parametrize("chunk", [reader.CHUNK, 64 << 10])
def test_by_text_equals_line_by_line(log, monkeypatch, chunk) -> None:
    monkeypatch.setattr(reader, "CHUNK", chunk)
    used = []
    real = Facts.warns_counted

    def spying(self, texts):
        got = real(self, texts)
        used.append(got)
        return got

    monkeypatch.setattr(Facts, "warns_counted", spying)
    fast = to_jsonable(reader.parse(log))
    assert any(used)  # some chunks were read by their texts
    monkeypatch.setattr(Facts, "warns_counted", lambda self, texts: False)
    slow = to_jsonable(reader.parse(log))
    assert fast == slow
    lines = log.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    assert fast["warnings_total"] == sum(1 for line in lines if "NCCL WARN" in line)  # every WARN line counted
    assert len(fast["warnings"]) == MAX_LIST
