"""GPUDirect RDMA rules (GDR001) over the peermem source (/proc/modules or lsmod, memory_peers): a host
that uses InfiniBand/RoCE for NCCL (its log, or a profile with InfiniBand) without a peer-memory module
(nvidia_peermem, nv_peer_mem) and without a DMA-BUF path. Where the NCCL log also shows NET/IB
connections without /GDRDMA, NCCL002 reports the one finding with this cause attached, and GDR001 is
silent."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ..engine import Evidence, check, hit, when
from .nccl import _IB_NET_RE, _as_dict, _ib_connections, _without_gdr


def peer_missing(peermem) -> bool:
    """The module list (or a grep) shows no peer-memory module."""
    return peermem is not None and getattr(peermem, "peer_absent", None) is True


def _dmabuf(nccl: Mapping[str, Any]) -> bool:
    """NCCL printed that it registers GPU memory through DMA-BUF ('GPU Direct RDMA (DMABUF) enabled')."""
    return any("DMABUF" in (g.get("text") or "").upper().replace("-", "") for g in nccl.get("gdr_lines") or [])


def _nccl_view(nccl_debug) -> Optional[str]:
    """'dmabuf' / 'gdr' (GPUDirect RDMA works: nothing to say), 'nccl002' (NET/IB without GDRDMA: NCCL002
    reports it with this cause), 'ib' (NET/IB chosen, no connection lines), None (NCCL not on IB)."""
    d = _as_dict(nccl_debug)
    plain, gdr = _ib_connections(d.get("transports") or {})
    if _dmabuf(d):
        return "dmabuf"
    if _without_gdr(d, plain, gdr):
        return "nccl002"
    if gdr:
        return "gdr"
    if _IB_NET_RE.match(d.get("network") or ""):
        return "ib"
    return None


def _evidence(peermem) -> list:
    return [Evidence("peermem", None, peermem.peer_line)]


@check("GDR001")
def gdr001(peermem, nccl_debug=None, profile=None, topology=None):
    """Error when NCCL (its log) or the profile uses InfiniBand and no peer-memory module nor DMA-BUF
    path shows; info when the module is missing and nothing says the host uses IB."""
    if not peer_missing(peermem):
        return None
    view = _nccl_view(nccl_debug) if nccl_debug is not None else None
    if view in ("dmabuf", "gdr", "nccl002"):
        return None
    host = (topology.host() if topology is not None else None) or "host:local"
    names = ", ".join(peermem.grepped) if peermem.grepped and not peermem.full_list else "the module list"
    if view == "ib":
        return hit([host], variant="default", evidence=_evidence(peermem),
                   notes=when(dmabuf_unknown=True), expectation="nvidia_peermem loaded (or NCCL using DMA-BUF) where NCCL uses NET/IB",
                   how="NCCL's log (Using network IB)", seen=names)
    layer = getattr(profile, "link_layer", None)
    if layer == "InfiniBand":
        return hit([host], variant="default", evidence=_evidence(peermem),
                   notes=when(dmabuf_unknown=True), expectation=f"profile {profile.name}: InfiniBand with GPUDirect RDMA",
                   how=f"profile {profile.name} (link_layer InfiniBand)", seen=names)
    return hit([host], variant="no_ib", severity="info", evidence=_evidence(peermem),
               expectation="a peer-memory module where GPUDirect RDMA is used", seen=names)
