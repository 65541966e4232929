"""PCI001-PCI003 across sources: what the rule examples and fixture conclusions do not show."""

from pathlib import Path

import topodiag
from topodiag.checks import pci

FIX = Path(__file__).resolve().parents[2] / "fixtures"
LSPCI = FIX / "lspci_vvv" / "lspci-vvv-invented-plx-gpu-nic-acs-redirect-01.txt"
NCCL_ERR4 = FIX / "nccl_debug" / "nccl-928-h100-ib-completion-error4-vendor81-01.log"


def _found(*paths, code):
    d = topodiag.diagnose([str(p) for p in paths])
    return [f for f in d.outcome.findings if f.code == code]


def test_acs_finding_names_both_ends_and_takes_the_nccl_error_as_evidence():
    alone = _found(LSPCI, code="PCI001")
    assert [f.severity.name.lower() for f in alone] == ["error", "error"]
    assert all({"pci:0000:18:00.0", "pci:0000:19:00.0"} <= set(f.subjects) for f in alone)
    joined = _found(LSPCI, NCCL_ERR4, code="PCI001")
    assert all("vendor err 81" in f.message for f in joined)
    assert all({e.source for e in f.evidence} == {"lspci_vvv", "nccl_debug"} for f in joined)


def test_iommu_translation_is_a_warning_with_a_gpu_and_a_nic_and_info_alone():
    cmdline = FIX / "kernel_cmdline" / "cmdline-invented-intel-iommu-on-01.txt"
    assert [f.severity.name.lower() for f in _found(cmdline, code="PCI003")] == ["info"]
    assert [f.severity.name.lower() for f in _found(cmdline, LSPCI, code="PCI003")] == ["warning"]
    assert _found(FIX / "kernel_cmdline" / "cmdline-rccl1129-mi100-iommu-pt-01.txt", LSPCI, code="PCI003") == []


# -- PCI002 from the kernel's downtraining reports ---------------------------------------------

def _kernel(text: str):
    from topodiag.parsers import kernel_log
    return kernel_log.parse(text)


def test_kernel_report_of_a_nic_at_half_width_is_an_error():
    log = _kernel("[10380.3] mlx5_core 0000:b3:00.1: 63.008 Gb/s available PCIe bandwidth, limited by 8 GT/s x8 link "
                  "at 0000:b2:00.0 (capable of 252.048 Gb/s with 16 GT/s x16 link)\n")
    [h] = list(pci.pcie_link_below_cap(kernel_log=log))
    assert h.variant == "narrow" and h.severity.name == "ERROR"
    assert h.values["now"] == "7.9" and h.values["full"] == "31.5" and h.values["at"].startswith("the link at 0000:b2:00.0")


def test_kernel_report_of_a_gpu_at_low_speed_full_width_is_info():
    log = _kernel("[5.1] nvidia 0000:18:00.0: 126.016 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x16 link "
                  "at 0000:18:00.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)\n")
    [h] = list(pci.pcie_link_below_cap(kernel_log=log))
    assert h.variant == "idle" and h.severity.name == "INFO" and h.values["at"] == ""


def test_lspci_and_the_kernel_on_one_device_give_one_finding():
    from topodiag.parsers import lspci_vvv as lspci_parser
    lspci = lspci_parser.parse(topodiag.parsers.blank_provenance_header(LSPCI.read_text()))
    bdfs = [d.bdf for d in lspci.devices if d.bdf]
    log = _kernel(f"[5.1] nvidia {bdfs[0]}: 126.016 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x16 link "
                  f"at {bdfs[0]} (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)\n")
    with_kernel = list(pci.pcie_link_below_cap(lspci, kernel_log=log))
    assert len(with_kernel) == len(list(pci.pcie_link_below_cap(lspci)))
