"""GPU004 (topodiag/checks/kernel_messages.py): one finding per device and class, at its worst line's
gravity, with the catalogue's meaning and fix; classes other rules report (mlx5 health: IB017, IOMMU
faults: PCI003) are left to them; lines that name no device are the log's."""

from __future__ import annotations

import topodiag
from topodiag.checks.kernel_messages import groups
from topodiag.parsers import kernel_log

LOG = """\
[  114.8] NVRM: GPU 0000:a1:00.0: rm_init_adapter failed, device minor number 7
[  115.0] NVRM: GPU6 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP
[  115.1] NVRM: GPU 0000:a1:00.0: RmInitAdapter failed! (0x62:0x40:2168)
[  116.0] pcieport 0000:00:01.1: AER: Corrected error received: 0000:01:00.0
[  116.1] pcieport 0000:00:01.1: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)
[  117.0] mlx5_core 0000:3b:00.0: mlx5_cmd_out_err:838:(pid 1): device's health compromised - reached miss count
"""


def test_groups_by_device_and_class_at_the_worst_line():
    g = groups(kernel_log.parse(LOG))
    assert sorted(g) == [("pci:0000:00:01.1", "pcie-aer-corrected"), ("pci:0000:00:01.1", "pcie-aer-fatal"),
                         ("pci:0000:a1:00.0", "gpu-init-failure"), ("source:kernel_log", "gpu-reset-required")]
    assert g[("pci:0000:a1:00.0", "gpu-init-failure")]["lines"] == [1, 3]
    assert g[("pci:0000:00:01.1", "pcie-aer-fatal")]["severity"] == "critical"


def test_findings_carry_the_meaning_and_fix(tmp_path):
    path = tmp_path / "dmesg.txt"
    path.write_text(LOG)
    d = topodiag.diagnose([str(path)], select=["GPU004"])
    by = {(f.subjects[0], str(f.severity)): f.message for f in d.findings if f.code == "GPU004"}
    assert set(by) == {("pci:0000:a1:00.0", "error"), ("source:kernel_log", "critical"),
                       ("pci:0000:00:01.1", "warning"), ("pci:0000:00:01.1", "critical")}
    msg = by[("source:kernel_log", "critical")]
    assert "needs a reset" in msg and "WPR2" in msg and "Fix:" in msg
    assert "lines 1, 3" in by[("pci:0000:a1:00.0", "error")]


def test_a_clean_log_has_no_finding(tmp_path):
    path = tmp_path / "dmesg.txt"
    path.write_text("[ 1.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 2024\n"
                    "[ 2.0] pcieport 0000:00:01.0: AER: enabled with IRQ 122\n[ 3.0] usb 1-1: new device\n")
    d = topodiag.diagnose([str(path)], select=["GPU004"])
    assert [f for f in d.findings if f.code in ("GPU004", "SYS004")] == []


def test_a_count_past_the_kept_events_says_the_log_total(tmp_path):
    """250 corrected-error reports of one device: the reader keeps the first MAX_EVENTS (200) events and
    counts all 250 by class; the finding names the 200 it read and says the log holds 250."""
    lines = [f"[  {100 + k}.0] pcieport 0000:00:01.1: AER: Corrected error received: 0000:01:00.0\n" for k in range(250)]
    path = tmp_path / "dmesg.txt"
    path.write_text("".join(lines))
    log = kernel_log.parse("".join(lines))
    assert len(log.events) == 200 and log.event_counts["pcie-aer-corrected"] == 250
    d = topodiag.diagnose([str(path)], select=["GPU004"])
    [msg] = [f.message for f in d.findings if f.code == "GPU004"]
    assert "AER, 200 report(s)" in msg
    assert "the log has 250 line(s) of this kind on all its devices: its first 200 driver events are kept" in msg


def test_no_sampled_note_when_every_event_is_kept(tmp_path):
    path = tmp_path / "dmesg.txt"
    path.write_text(LOG)
    d = topodiag.diagnose([str(path)], select=["GPU004"])
    assert not any("of this kind on all its devices" in f.message for f in d.findings)
