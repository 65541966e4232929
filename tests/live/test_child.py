"""NVML and verbs read in a child process (topodiag/live/child.py): a crash or a hang in the library
becomes a failed source whose probe JSON names the call, never the end of the run. The NVML child
is the real pynvml over the fake libnvidia-ml (tests/fakes/nvml_child.py), killed for real by
SIGSEGV or left hanging in a chosen C call."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import topodiag
import topodiag.live.collection as live
from tests.fakes import nvml_child
from topodiag.live import child
from topodiag.parsers import nvml as nvml_parser

pytest.importorskip("pynvml")

ROOT = Path(__file__).resolve().parents[2]
H100 = ROOT / "fixtures" / "nvml" / "nvml-invented-h100-hgx-8gpu-nvswitch-01.json"
NVML_SOURCE = next(s for s in live.PROBES if s.member == "probes/nvml.json")
PYVERBS_SOURCE = next(s for s in live.PROBES if s.member == "probes/pyverbs.json")
FABRIC_V0 = "nvmlDeviceGetGpuFabricInfoV(gpu=0)"


def collect_nvml(deadline_s: float = 20.0) -> live.Record:
    [rec] = live.collect(live.Options(deadline_s=deadline_s), sources=[NVML_SOURCE])
    return rec


def test_the_probes_that_call_c_libraries_run_in_a_child():
    assert {s.member: s.child for s in live.PROBES if s.child} == {"probes/nvml.json": "nvml",
                                                                  "probes/pyverbs.json": "pyverbs"}


def test_replayed_node_through_the_child(monkeypatch):
    nvml_child.use(monkeypatch, H100, missing=["nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetGpuFabricInfo"])
    rec = collect_nvml()
    assert rec.status == "ok" and rec.reason == ""
    parsed = nvml_parser.parse(rec.text)
    assert parsed.ok and len(parsed.gpus) == 8 and parsed.died is None
    assert [ln.active for ln in parsed.gpus[7].nvlinks] == [True] * 18


def test_a_segfault_in_nvml_is_a_failed_source_naming_the_call(monkeypatch):
    nvml_child.use(monkeypatch, H100, crash_at=FABRIC_V0)
    rec = collect_nvml()
    assert rec.status == "failed" and not rec.timed_out
    assert rec.reason == f"NVML probe died with signal 11 (SIGSEGV) in {FABRIC_V0}"
    parsed = nvml_parser.parse(rec.text)
    assert parsed.ok is False and parsed.error == rec.reason and parsed.error_name is None
    assert (parsed.died.how, parsed.died.signal, parsed.died.rc, parsed.died.last_call) == (
        "signal", "SIGSEGV", -11, FABRIC_V0)
    assert parsed.gpus == () and parsed.pairs == ()


def test_a_hang_in_nvml_is_stopped_at_the_timeout_naming_the_call(monkeypatch):
    call = "nvmlDeviceGetNvLinkState(gpu=5, link=7)"
    nvml_child.use(monkeypatch, H100, hang_at=call)
    rec = collect_nvml(deadline_s=3.0)
    assert rec.status == "timed_out" and rec.timed_out
    assert rec.reason.startswith("NVML probe did not finish within ") and rec.reason.endswith(f"it was in {call}")
    died = json.loads(rec.text)["died"]
    assert died["how"] == "timeout" and died["last_call"] == call and died["rc"] == -9


def test_the_crash_is_a_sys001_finding_naming_the_call(monkeypatch, tmp_path):
    """The probe JSON the parent writes, read back: SYS001 (source failed), the call in its reason;
    the run itself goes on to its other inputs."""
    nvml_child.use(monkeypatch, H100, crash_at="nvmlDeviceGetPciInfo(gpu=4)")
    path = tmp_path / "nvml.json"
    path.write_text(collect_nvml().text)
    d = topodiag.diagnose([str(path)])
    [sys001] = [f for f in d.outcome.findings if f.code == "SYS001"]
    assert "nvml could not be collected: NVML probe died with signal 11 (SIGSEGV) in nvmlDeviceGetPciInfo(gpu=4)" \
        in sys001.message


def test_a_child_that_exits_without_json(monkeypatch):
    """No replay spec in its environment: the fake child fails with a traceback, before any call."""
    monkeypatch.setitem(child.REPLACED, nvml_child.MODULE, nvml_child.__name__)
    monkeypatch.delenv(nvml_child.ENV, raising=False)
    data = child.run_probe(nvml_child.MODULE, 30.0, {"probe": "nvml", "ok": False}, "NVML")
    assert data["ok"] is False and data["died"]["how"] == "exit" and data["died"]["rc"] == 1
    assert data["error"].startswith("NVML probe exited with status 1 without its JSON (before its first library "
                                    "call): KeyError")


def test_progress_lines_and_the_last_call():
    err = (b"@topodiag-call nvmlInit()\nsome warning\n@topodiag-call nvmlDeviceGetName(gpu=0)\n"
           b"Segmentation fault\n")
    assert child.last_call(err) == "nvmlDeviceGetName(gpu=0)"
    assert child.last_call(b"") is None
    assert child.wants_progress(["--progress"]) and not child.wants_progress([])


def test_the_real_pyverbs_boundary_in_the_child():
    """pyverbs (rdma-core's bindings) is not installable from PyPI as a wheel: where it is absent, the
    child's real import fails and the source is not available, as in-process before."""
    try:
        import pyverbs  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("pyverbs is installed here")
    [rec] = live.collect(live.Options(deadline_s=20.0), sources=[PYVERBS_SOURCE])
    assert rec.status == "not_available" and rec.reason.startswith("pyverbs not importable:")


FAKE_DEVICE = """
import os, signal

class _Dev:
    name, node_type, guid = b"mlx5_0", 1, 0x58A2E10300DAE626

def get_device_list():
    return [_Dev()]

class _Attr:
    phys_port_cnt, vendor_id, vendor_part_id, hw_ver, fw_version, sys_image_guid = 1, 0x15B3, 4129, 0, "28.39.1002", 1

class Context:
    def __init__(self, name=None):
        self.name = name
    def query_device(self):
        return _Attr()
    def query_port(self, port):
        os.kill(os.getpid(), signal.SIGSEGV)
    def close(self):
        pass
"""


def test_a_segfault_in_verbs_is_a_failed_source_naming_the_call(monkeypatch, tmp_path):
    """A pyverbs whose query_port dies as a broken provider library would (a stand-in package on the
    child's PYTHONPATH, at the module boundary the probe imports)."""
    (tmp_path / "pyverbs").mkdir()
    (tmp_path / "pyverbs" / "__init__.py").write_text("")
    (tmp_path / "pyverbs" / "device.py").write_text(FAKE_DEVICE)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    [rec] = live.collect(live.Options(deadline_s=20.0), sources=[PYVERBS_SOURCE])
    assert rec.status == "failed"
    assert rec.reason == "pyverbs probe died with signal 11 (SIGSEGV) in query_port(port=1)"
    data = json.loads(rec.text)
    assert data["probe"] == "pyverbs" and data["infiniband"] == [] and data["died"]["last_call"] == "query_port(port=1)"

