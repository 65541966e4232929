"""PCI001-PCI003 across sources: what the rule examples and fixture conclusions do not show."""

from pathlib import Path

import topodiag

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
