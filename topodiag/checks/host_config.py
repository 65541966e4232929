"""Host configuration rules read from files of the host: IB010 gdr-module-missing (the loaded
modules, `proc_modules`, judged with what the NCCL log or the profile says of InfiniBand use and
GPUDirect RDMA). The kernel command line's IOMMU mode is PCI003's (checks/pci.py, kernel_cmdline)."""

from __future__ import annotations

from typing import Any, Optional

from ..engine import Evidence, Severity, check, hit, when
from .nccl import _as_dict


def _ib_use(nccl_debug: Optional[dict], profile) -> str:
    """How the inputs show the node moving GPU data over InfiniBand/RoCE ("" when they do not)."""
    if nccl_debug:
        keys = nccl_debug.get("transports") or {}
        if any(k.startswith("NET/IB") for k in keys):
            return "the NCCL log's connections go via NET/IB"
        if any(d.get("kind") == "ib" for d in nccl_debug.get("net_devices") or []):
            return "NCCL lists NET/IB devices"
    if profile is not None and getattr(profile, "nics", 0):
        return f"profile {profile.name} has {profile.nics} RDMA NICs"
    return ""


def _gdr_state(nccl_debug: Optional[dict]) -> str:
    """'used' (connections via /GDRDMA: DMA-BUF or a module works), 'not_used' (NET/IB without it),
    '' (the log does not say)."""
    if not nccl_debug:
        return ""
    keys = nccl_debug.get("transports") or {}
    if any("GDRDMA" in k for k in keys):
        return "used"
    if any(k.startswith("NET/IB") for k in keys) or nccl_debug.get("gdr") is False:
        return "not_used"
    return ""


@check("IB010")
def ib010(proc_modules, nccl_debug=None, profile=None):
    """No peer-memory module on a node that moves GPU data over IB/RoCE: an error when NCCL shows no
    GPUDirect RDMA (one finding with both pieces of evidence), a warning when it does not say (DMA-BUF
    may stand in), nothing when NCCL used /GDRDMA anyway (DMA-BUF)."""
    if proc_modules.peer_memory:
        return None
    log: Optional[dict[str, Any]] = _as_dict(nccl_debug) if nccl_debug is not None else None
    use = _ib_use(log, profile)
    if not use:
        return None
    gdr = _gdr_state(log)
    if gdr == "used":
        return None
    evidence = [Evidence("proc_modules", None, None)] + ([Evidence("nccl_debug", None, None)] if log else [])
    return hit(["host"], evidence=evidence, severity=None if gdr == "not_used" else Severity.WARNING,
               expectation="nvidia_peermem loaded (or a DMA-BUF capable driver and kernel) where GPUs use RDMA NICs",
               use=use, notes=when(nccl_no_gdr=gdr == "not_used", unknown_dmabuf=gdr == ""))
