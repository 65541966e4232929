"""The PCIe causes of a broken or slow GPU peer path, from the PCIe sources when they were given: ACS
redirection on bridges (lspci -vvv, PCI001's reading) and an IOMMU that translates (kernel command line,
kernel log, /sys/class/iommu: PCI003's reading). PERF005 and NCCL012 attach them to their finding, so
one finding carries the symptom (a benchmark, NCCL's own check) and the cause with its evidence."""

from __future__ import annotations

from typing import Any

from ..engine import Evidence
from ..parsers.base import listing
from .pci import _mode, _redirects


def p2p_causes(lspci_vvv=None, kernel_cmdline=None, kernel_log=None, sysfs_iommu=None) -> dict[str, Any]:
    """{acs, iommu (flags for `when`), acs_bridges, iommu_said (facts), evidence, subjects}."""
    redirecting = [d for d in getattr(lspci_vvv, "devices", ()) or () if _redirects(d)]
    mode, said = _mode(kernel_cmdline, kernel_log, sysfs_iommu) if (kernel_cmdline or kernel_log or sysfs_iommu) \
        else (None, "")
    iommu = mode in ("translated", "on")
    evidence = [Evidence("lspci_vvv", None, d.line_no) for d in redirecting[:3]]
    if iommu and kernel_cmdline is not None:
        evidence.append(Evidence("kernel_cmdline", None, None))
    return {"acs": bool(redirecting), "iommu": iommu,
            "acs_bridges": listing([d.bdf or "?" for d in redirecting], 4), "iommu_said": said,
            "evidence": evidence, "subjects": [f"pcisw:{d.bdf}" for d in redirecting if d.bdf]}
