"""GPU005, PERF008, IB005's catalogue classes and SYS004 over tool failure output: the edge cases
beyond the rules' examples. Texts marked invented are written here for the case they test."""

from __future__ import annotations

import topodiag
from topodiag.parsers import fabricmanager, get


def _diag(tmp_path, **texts):
    paths = []
    for name, text in texts.items():
        p = tmp_path / name
        p.write_text(text)
        paths.append(str(p))
    return topodiag.diagnose(paths)


def _codes(d):
    return sorted((f.code, f.severity.name.lower()) for f in d.outcome.findings)


def test_gpu005_reports_one_failure_once_across_the_nvidia_smi_sources(tmp_path):
    # one text is read as nvidia_smi_q, topo -m and nvlink -s: one GPU005 finding naming them all
    d = _diag(tmp_path, **{"smi.txt": "Failed to initialize NVML: Driver/library version mismatch\n"})
    found = [f for f in d.outcome.findings if f.code == "GPU005"]
    assert len(found) == 1
    assert {e.source for e in found[0].evidence} >= {"nvidia_smi_q"}
    assert "reboot" in found[0].message.lower()


def test_gpu005_leaves_a_lost_gpu_to_topo006(tmp_path):
    text = "Unable to determine the device handle for GPU0000:65:00.0: Unknown Error\n"
    codes = _codes(_diag(tmp_path, **{"smi.txt": text}))
    assert ("TOPO006", "critical") in codes
    assert not [c for c in codes if c[0] == "GPU005"]


def test_an_unexplained_nvidia_smi_failure_is_sys004_not_ok(tmp_path):
    # invented: beside a failure the catalogue explains, one in nvidia-smi's manner that no entry explains
    text = ("$ nvidia-smi topo -m\nFailed to initialize NVML: Unknown Error\n"
            "Failed to frobnicate the widget: Unknown thing\n")
    assert [e.text for e in get("nvidia_smi_topo_m").parse(text).unrecognised] == [
        "Failed to frobnicate the widget: Unknown thing"]
    got = [f.code for f in _diag(tmp_path, **{"smi.txt": text}).outcome.findings]
    assert "SYS004" in got and "GPU005" in got


def test_perf008_unnamed_waived_lines_of_newer_nvbandwidth_are_info(tmp_path):
    # invented from nvbandwidth v0.8's output.cpp: a waived testcase prints "Waived: " and no name
    text = ("nvbandwidth Version: v0.8\n\nDevice 0: NVIDIA A100-SXM4-80GB (00000000:34:00)\n\n"
            "Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
            "           0\n 0     24.10\n\nSUM host_to_device_memcpy_ce 24.10\n\nWaived: \nWaived: \n")
    result = get("nvbandwidth").parse(text)
    assert [e.entry for e in result.errors] == ["nvbandwidth.waived", "nvbandwidth.waived"]
    perf = [f for f in _diag(tmp_path, **{"nvb.txt": text}).outcome.findings if f.code == "PERF008"]
    assert [(f.severity.name.lower(), f.values["count"]) for f in perf] == [("info", 2)]


def test_fabricmanager_message_drops_journal_and_fm_log_prefixes():
    assert fabricmanager.message("Sep 18 03:19:01 host nvidia-fabricmanager-start.sh[4753]: Detected Pre-NVL5 system") \
        == "Detected Pre-NVL5 system"
    assert fabricmanager.message("nv-fabricmanager[3228]: fabric manager x") == "fabric manager x"
    assert fabricmanager.message("May 16 15:10:22 ip-1 nv-fabricmanager[29850]: [May 16 2025 15:10:21] [INFO] "
                                 "[tid 30042] GPU probe request received") == "GPU probe request received"


def test_fabricmanager_informational_lines_are_not_tool_errors():
    text = ("Jan 05 14:44:41 T nvidia-fabricmanager-start.sh[1049]: Detected Pre-NVL5 system\n"
            "Jan 05 14:45:28 T nv-fabricmanager[1120]: Successfully configured all the available NVSwitches to "
            "route GPU NVLink traffic.\n")
    r = fabricmanager.parse(text)
    assert r.errors == () and r.unrecognised == () and r.started


def test_ib005_classified_line_carries_the_entry_meaning(tmp_path):
    d = _diag(tmp_path, **{"ibstat.txt": "ibpanic: [4242] main: can't init UMAD library: No such file or directory\n"})
    ib = [f for f in d.outcome.findings if f.code == "IB005"]
    assert len(ib) == 1 and ib[0].severity.name.lower() == "error"
    assert "ib_umad" in ib[0].message


def test_fabricmanager_unexplained_failure_is_in_errors_and_unrecognised():
    """As in every parse record, `errors` holds all the tool's failure lines and `unrecognised` the ones
    no catalogue entry explains (invented journal lines: one the catalogue knows, one it does not)."""
    text = ("Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface version "
            "550.127.05 don't match with driver version 550.120. Please update with matching NVIDIA driver package.\n"
            "Nov 05 13:55:27 node1 nv-fabricmanager[104230]: frobnicating the widget failed with error: Unknown\n")
    r = fabricmanager.parse(text)
    assert [e.line_no for e in r.errors] == [1, 2]
    assert [e.line_no for e in r.unrecognised] == [2] and r.errors[0].entry == "fm.driver_version_mismatch"
