"""GPU003 (gpu-not-ready): the kernel log judged inside its window (the last driver load with its probe,
each GPU's last acknowledged reset, --kernel-log-since), blocking events only, and the kmsg record form."""

from __future__ import annotations

import json
from pathlib import Path

from topodiag import xid
from topodiag.checks import gpu_ready
from topodiag.engine import Severity
from topodiag.parsers import blank_provenance_header, kernel_log

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "kernel_log"
BANNER = "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release Build  (dvs-builder@U22-I3-B10-02-5)  Mon Jun  2 13:13:04 UTC 2025"
XID154 = "NVRM: Xid (PCI:0000:02:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)"


def _hits(log, **params) -> list:
    return list(gpu_ready.gpu003(log, params))


def _fixture(name: str):
    return kernel_log.parse(blank_provenance_header((FIX / f"{name}.txt").read_text()))


def test_a_driver_reload_closes_the_window_but_its_own_probe_stays_in_it():
    hits = _hits(_fixture("kernel-log-kmsg-reload-after-xid48-probe-fallen-01"))
    assert [list(h.subjects) for h in hits] == [["pci:0000:b3:00"]]  # not the Xid 48 of 0000:03:00 before the reload
    assert hits[0].severity == Severity.CRITICAL and hits[0].variant == "lost"
    assert hits[0].values["window"] == "after the last NVIDIA driver load (from line 11)"


def test_an_acknowledged_gpu_reset_closes_that_gpus_window():
    log = _fixture("kernel-log-syslog-xid48-then-gpu-reset-ack-01")
    assert _hits(log) == []
    # the same log without the reset line: the Xid 48 blocks
    text = blank_provenance_header((FIX / "kernel-log-syslog-xid48-then-gpu-reset-ack-01.txt").read_text())
    hits = _hits(kernel_log.parse(text.rsplit("\n", 2)[0] + "\n"))
    assert [list(h.subjects) for h in hits] == [["pci:0000:03:00"]] and hits[0].severity is None  # the rule's error
    # a failed reset closes nothing
    failed = text.replace("success: true", "success: false")
    assert [list(h.subjects) for h in _hits(kernel_log.parse(failed))] == [["pci:0000:03:00"]]


def test_only_what_blocks_a_job_counts():
    assert xid.blocks_job(79) and xid.blocks_job(48) and xid.blocks_job(74) and xid.blocks_job(95)
    assert xid.blocks_job(119) and xid.blocks_job(120) and xid.blocks_job(94) and xid.blocks_job(64)
    assert xid.blocks_job(63)  # a row remap pending until the next reset
    assert not xid.blocks_job(13) and not xid.blocks_job(31) and not xid.blocks_job(43) and not xid.blocks_job(109)
    assert not xid.blocks_job(92)  # the catalogue: single-bit errors the GPU corrects (warning)
    assert xid.blocks_job(154, "Node Reboot Required") and xid.blocks_job(154, "GPU Reset Required")
    assert xid.blocks_job(154, "Drain P2P") and xid.blocks_job(154) and not xid.blocks_job(154, "None")


def test_xid_154_says_its_action():
    log = kernel_log.parse(f"[10.0] {BANNER}\n[500.5] {XID154}\n"
                           "[501.0] NVRM: Xid (PCI:0000:04:00): 154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)\n"
                           "[502.0] NVRM: Xid (PCI:0000:05:00): 13, Graphics SM Warp Exception\n")
    assert [x.action for x in log.xids] == ["Node Reboot Required", "None", None]
    hits = _hits(log)
    assert [list(h.subjects) for h in hits] == [["pci:0000:02:00"]]
    assert hits[0].notes == ("action",) and hits[0].values["actions"] == "Node Reboot Required"


def test_since_keeps_only_the_last_seconds_by_the_probes_clock_or_the_logs_end():
    text = f"[10.0] {BANNER}\n[100.0] {XID154}\n[7300.0] NVRM: Xid (PCI:0000:07:00): 79, pid=1, GPU has fallen off the bus.\n"
    log = kernel_log.parse(text)
    assert {h.subjects[0] for h in _hits(log)} == {"pci:0000:02:00", "pci:0000:07:00"}
    hits = _hits(log, since_s=3600)  # the log ends at 7300 s: only the Xid 79 is within the last hour
    assert [list(h.subjects) for h in hits] == [["pci:0000:07:00"]]
    assert "within the last 1 h (the log's last stamp)" in hits[0].values["window"]
    probe = json.dumps({"probe": "kernel_log", "schema_version": 1, "ok": True, "error": None, "via": "/dev/kmsg",
                        "now_s": 20000.0, "since_s": 3600, "lost": 0, "truncated": False,
                        "records": [f"6,1,10000000,-;{BANNER}", f"4,2,100000000,-;{XID154}",
                                    "4,3,7300000000,-;NVRM: Xid (PCI:0000:07:00): 79, pid=1, GPU has fallen off the bus."]},
                       indent=1)
    log = kernel_log.parse(probe)
    assert (log.via, log.now_s, log.since_s) == ("/dev/kmsg", 20000.0, 3600)
    assert [x.line_no for x in log.xids] == [13, 14]  # the records' lines in the member
    assert _hits(log) == []  # by the probe's clock (20000 s) both are older than an hour
    assert len(_hits(log, since_s=0)) == 0  # the probe's --kernel-log-since wins over the rule's


def test_a_probe_that_could_not_read_is_no_kernel_log():
    import pytest

    from topodiag.parsers import ParseError

    text = json.dumps({"probe": "kernel_log", "ok": False, "error": "not readable: /dev/kmsg: Permission denied",
                       "records": []})
    with pytest.raises(ParseError, match="not readable"):
        kernel_log.parse(text)
    with pytest.raises(ParseError):
        kernel_log.parse('{"probe": "sysfs"}')
    empty = json.dumps({"probe": "kernel_log", "ok": True, "records": []})
    assert kernel_log.parse(empty).xids == ()


def test_kmsg_records_read_as_the_kernel_log():
    text = ("6,1001,12103215,-;" + BANNER + "\n"
            "4,1600,90001843308,-;NVRM: The NVIDIA GPU 0000:b3:00.0\\x0aNVRM: (PCI ID: 10de:26b5) installed in this "
            "system has\\x0aNVRM: fallen off the bus and is not responding to commands.\n"
            " SUBSYSTEM=pci\n DEVICE=+pci:0000:b3:00.0\n")
    log = kernel_log.parse(text)
    assert log.kernel_lines == 2 and log.driver_loaded_line == 1
    assert [(e.pci, e.line_no, e.time_s) for e in log.fallen_off_bus] == [("0000:b3:00", 2, 90001.843308)]
    assert kernel_log.sniff(text) == 0.9


# -- GPU001 (the history the whole log keeps) reads the same window ------------------------------------

def test_gpu001_calls_events_before_a_reset_or_reload_history():
    """Every Xid since boot stays in the ring buffer: GPU001 grades a GPU's events as history (info,
    variant "history") when all came before its acknowledged reset or the last driver load, and as
    before when one came after."""
    from topodiag.checks import gpu

    text = blank_provenance_header((FIX / "kernel-log-syslog-xid48-then-gpu-reset-ack-01.txt").read_text())
    after_reset = list(gpu.gpu001(kernel_log.parse(text)))
    assert [(h.variant, h.severity) for h in after_reset] == [("history", Severity.INFO)]
    assert after_reset[0].values["since"] == "its reset at line 10"  # the line numbers of the fixture file
    no_reset = list(gpu.gpu001(kernel_log.parse(text.rsplit("\n", 2)[0] + "\n")))
    assert [(h.variant, h.severity) for h in no_reset] == [("default", None)]  # the rule's error
    reload = list(gpu.gpu001(_fixture("kernel-log-kmsg-reload-after-xid48-probe-fallen-01")))
    by_gpu = {h.subjects[0]: (h.variant, h.severity) for h in reload}
    assert by_gpu == {"pci:0000:03:00": ("history", Severity.INFO), "pci:0000:b3:00": ("lost", Severity.CRITICAL)}
    xid_after_load = kernel_log.parse(f"[ 1.0] {BANNER}\n[ 9.0] NVRM: Xid (PCI:0000:03:00): 48, pid=1, name=x, Ch 1\n")
    assert [(h.variant, h.severity) for h in gpu.gpu001(xid_after_load)] == [("default", None)]
