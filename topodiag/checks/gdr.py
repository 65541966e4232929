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


def _host_has_rdma(topology) -> bool:
    """The model holds an HCA port (an IB tool or sysfs saw one): the host has RDMA NICs NCCL would use."""
    try:
        return topology is not None and bool(topology.ib_ports())
    except Exception:  # a model without the question: nothing said
        return False


def _ib_in_use(peermem, nccl_debug, profile, topology) -> Optional[tuple[str, str]]:
    """(how we know the host uses IB/RoCE, the expectation) or None."""
    view = _nccl_view(nccl_debug) if nccl_debug is not None else None
    if view == "ib":
        return "NCCL's log (Using network IB)", "nvidia_peermem loaded (or NCCL using DMA-BUF) where NCCL uses NET/IB"
    layer = getattr(profile, "link_layer", None)
    if layer == "InfiniBand":
        return f"profile {profile.name} (link_layer InfiniBand)", f"profile {profile.name}: InfiniBand with GPUDirect RDMA"
    if _host_has_rdma(topology):
        return "this host's RDMA HCAs", "a peer-memory module (or the DMA-BUF path) on a host with RDMA HCAs"
    return None


def _no_gdr_board(topology, profile) -> Optional[str]:
    """The GPU model when the node's GPUs have no GPUDirect RDMA by design (GeForce boards), else None."""
    if topology is None:
        return None
    from ._design import platform_of

    platform = platform_of(topology, profile)
    if platform.gpudirect_rdma is False:
        return getattr(platform.facts, "model", None) or "consumer GPUs (topo -p2p GNS)"
    return None


@check("GDR001")
def gdr001(peermem, nccl_debug=None, profile=None, topology=None):
    """Error when NCCL (its log), the profile or the host's HCAs say it uses InfiniBand/RoCE and neither a
    peer-memory module nor a DMA-BUF path shows; info when only the DMA-BUF path is there, when nothing says
    the host uses IB, and when the module list is not visible (a container without /proc/modules) on a host
    that uses IB."""
    host = (topology.host() if topology is not None else None) or "host:local"
    if getattr(peermem, "modules_visible", None) is False and getattr(peermem, "peer_absent", None) is None:
        if _ib_in_use(peermem, nccl_debug, profile, topology) is None:
            return None  # nothing here would use GPUDirect RDMA: nothing to say
        return hit([host], variant="not_visible", severity="info", evidence=_evidence(peermem),
                   expectation="the kernel's module list, to judge GPUDirect RDMA")
    if not peer_missing(peermem):
        return None
    view = _nccl_view(nccl_debug) if nccl_debug is not None else None
    if view in ("dmabuf", "gdr", "nccl002"):
        return None
    names = ", ".join(peermem.grepped) if peermem.grepped and not peermem.full_list else "the module list"
    facts = "; ".join(getattr(peermem, "dmabuf_facts", ()) or ()) or "nothing"
    if getattr(peermem, "dmabuf_possible", None) is True:
        return hit([host], variant="dmabuf_path", severity="info", evidence=_evidence(peermem),
                   expectation="a peer-memory module or the DMA-BUF path", seen=names, facts=facts)
    return _missing(host, peermem, names, facts, _ib_in_use(peermem, nccl_debug, profile, topology),
                    _no_gdr_board(topology, profile))


def _missing(host, peermem, names: str, facts: str, use, board: Optional[str]):
    """No peer-memory module and no DMA-BUF path: info on a board without GPUDirect RDMA or a host that
    does not use IB, else the finding that says how we know the host uses IB/RoCE."""
    if use is not None and board:
        return hit([host], variant="no_gdr_board", severity="info", evidence=_evidence(peermem),
                   expectation=f"{board}: no GPUDirect RDMA by design", seen=names, model=board)
    if use is None:
        return hit([host], variant="no_ib", severity="info", evidence=_evidence(peermem),
                   expectation="a peer-memory module where GPUDirect RDMA is used", seen=names)
    how, expectation = use
    known = getattr(peermem, "dmabuf_possible", None) is False
    return hit([host], variant="default", evidence=_evidence(peermem),
               notes=when(dmabuf_no=known, dmabuf_unknown=not known), expectation=expectation,
               how=how, seen=names, facts=facts)
