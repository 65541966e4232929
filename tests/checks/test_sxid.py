"""GPU002 (NVSwitch SXid): the grade of each line, per switch, and the kernel log forms it comes in."""

from __future__ import annotations

from topodiag import xid
from topodiag.checks import gpu
from topodiag.engine import Severity
from topodiag.parsers import kernel_log


def _findings(text: str) -> list:
    return list(gpu.gpu002(kernel_log.parse(text)))


def test_the_line_says_its_class():
    assert xid.sxid_grade(20034, "nvidia-nvswitch0: SXid (PCI:0000:00:00.0): 20034, Fatal, Link 30 LTSSM Fault Up") == "fatal"
    assert xid.sxid_grade(22013, "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 22013, Non-fatal, Link 32 x") == "nonfatal"
    # a corrected single-bit ECC SXid is correctable whatever the word
    assert xid.sxid_grade(11012, "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 11012, Non-fatal, ECC") == "correctable"
    # a Data-only line of a code the table does not grade
    assert xid.sxid_grade(11111, "nvidia-nvswitch0: SXid (PCI:0000:a9:00.0): 11111, Data {0x5}") == "unknown"
    # 12028 stalls the port's traffic: fatal even where the driver calls it non-fatal
    assert xid.sxid_grade(12028, "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress") == "fatal"


def test_one_finding_per_switch_at_its_worst_grade_with_its_links():
    text = ("[1.0] nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 11012, Non-fatal, Link 2 single bit ECC\n"
            "[2.0] nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 LTSSM Fault Up\n"
            "[3.0] nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 11012, Non-fatal, Link 4 single bit ECC\n")
    hits = _findings(text)
    assert [h.subjects[0] for h in hits] == ["nvswitch:0000:05:00.0", "nvswitch:0000:84:00.0"]
    worst, ecc = hits
    assert worst.severity is None and worst.variant == "default"  # the rule's own: error
    assert worst.values["link_list"] == "2, 30" and worst.values["events"] == 2
    assert ecc.severity == Severity.INFO and ecc.variant == "correctable"


def test_a_data_line_takes_the_class_a_worded_line_of_its_code_gives():
    text = ("[131453.740743] nvidia-nvswitch0: SXid (PCI:0000:00:00.0): 20034, Fatal, Link 30 LTSSM Fault Up\n"
            "[131453.740758] nvidia-nvswitch0: SXid (PCI:0000:a9:00.0): 20034, Data {0x50610002, 0x10100030}\n")
    assert [h.severity for h in _findings(text)] == [None, None]
    alone = _findings("[131453.740758] nvidia-nvswitch0: SXid (PCI:0000:a9:00.0): 20034, Data {0x50610002, 0x10100030}\n")
    assert [h.severity for h in alone] == [Severity.WARNING]


def test_dmesg_decode_and_iso_stamps_are_kernel_lines():
    r = kernel_log.parse("kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data {0x1}\n"
                         "kern  :info  : 2025-01-25T10:34:55,000001+00:00 usb 1-1: new device\n"
                         "2025-01-25T10:34:56,123456+00:00 mlx5_core 0000:ab:00.0: something\n")
    assert r.kernel_lines == 3 and [e.sxid for e in r.sxids] == [12028]


def test_no_sxid_no_finding():
    assert _findings("[   10.001] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n") == []
