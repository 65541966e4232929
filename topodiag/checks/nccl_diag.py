"""NCCL012: NCCL's active diagnostics (NCCL_RUN_DIAGNOSTICS=1, NCCL 2.31+) found a GPU pair whose
peer-to-peer access fails. One finding per failing pair (both directions together), naming both GPUs
(NVML device numbers, nvidia-smi's), NCCL's path type between them and the rule that explains that kind
of path: PCIe paths (PIX/PXB/PHB/SYS) point at ACS and the IOMMU (PCI001, PCI003), NVLink paths at the
NVLink rules, fabric handles at IMEX. A summary below its total without failure lines is reported too."""

from __future__ import annotations

from typing import Iterator

from ..engine import Evidence, Severity, check, hit, when
from ._p2p_causes import p2p_causes

_PCIE = ("PIX", "PXB", "PXN", "PHB", "SYS", "P2C")
_NVLINK = ("NVL", "NVB")


def _dev(f, side: str):
    nvml, cuda = getattr(f, f"{side}_nvml_dev"), getattr(f, f"{side}_cuda_dev")
    return nvml if nvml is not None else cuda


def _variant(path: str, handle: str) -> str:
    if handle == "CUMEM_FABRIC" or path == "NET":
        return "fabric"
    if path in _NVLINK:
        return "nvlink"
    return "pcie" if path in _PCIE else "default"


def _pairs(failures) -> dict:
    pairs: dict = {}
    for f in failures:
        a, b = _dev(f, "src"), _dev(f, "dst")
        if a is None or b is None:
            continue
        pairs.setdefault((min(a, b), max(a, b), f.host), []).append(f)
    return pairs


def _cause(variant: str, pcie_sources: tuple) -> dict:
    """ACS / IOMMU evidence from the PCIe sources for a PCIe path (empty for the others)."""
    if variant != "pcie":
        return {"acs": False, "iommu": False, "acs_bridges": "", "iommu_said": "", "evidence": [], "subjects": []}
    return p2p_causes(*pcie_sources)


@check("NCCL012")
def nccl012(nccl_diag, lspci_vvv=None, kernel_cmdline=None, kernel_log=None, sysfs_iommu=None) -> Iterator:
    """Failing GPU pairs of NCCL's P2P check, with path and handle (and, for a PCIe path, the ACS bridges
    and translating IOMMU the PCIe sources show); a partial summary without failure lines."""
    pairs = _pairs(nccl_diag.failures)
    for (a, b, host), fs in sorted(pairs.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or "")):
        path, handle = fs[0].path or "?", fs[0].handle or "?"
        variant = _variant(path, handle)
        cause = _cause(variant, (lspci_vvv, kernel_cmdline, kernel_log, sysfs_iommu))
        subjects = [f"gpu:{a}", f"gpu:{b}"] + ([f"host:{host}"] if host else []) + cause["subjects"]
        yield hit(subjects, variant=variant,
                  evidence=[Evidence("nccl_diag", None, f.line_no) for f in fs] + cause["evidence"],
                  notes=when(acs=cause["acs"], iommu=cause["iommu"]), acs_bridges=cause["acs_bridges"],
                  iommu_said=cause["iommu_said"],
                  expectation="every directed GPU peer access of NCCL's P2P check verified",
                  a=a, b=b, path=path, handle=handle, kinds="; ".join(sorted({f.kind for f in fs})),
                  directions=", ".join(f"{_dev(f, 'src')}->{_dev(f, 'dst')}" for f in fs))
    if not pairs:
        for s in nccl_diag.summaries:
            if not s.ok and s.passed < s.tested:
                yield hit(["host:local"] if not nccl_diag.hosts else [f"host:{h}" for h in nccl_diag.hosts],
                          variant="partial", severity=Severity.WARNING,
                          evidence=[Evidence("nccl_diag", None, s.line_no)],
                          expectation="every directed GPU peer access of NCCL's P2P check verified",
                          passed=s.passed, tested=s.tested)
