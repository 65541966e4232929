"""RoCE rules: the MTU of RoCE ports (IB014), the lossless configuration of a RoCE port (IB015:
mlnx_qos trust mode and PFC, the ECN switches), and pause / discard counters (IB016: ethtool -S).

An NCCL log's "Got completion from peer ... status 12" (IBV_WC_RETRY_EXC_ERR, transport retry counter
exceeded: the sender retransmitted and never got an ACK) is what a lossy or dropping RoCE fabric looks
like from NCCL; IB015 and IB016 attach those lines as evidence when the log is given beside them."""

from __future__ import annotations

import re
from typing import Any, Iterator, Optional

from ..engine import Evidence, Severity, check, hit, when
from ._facts import listing, plain

FULL_MTU = 4096
NETDEV_MTU_FOR_4096 = 4200  # the kernel keeps ~96 bytes of RoCE v2 headers below the netdev MTU
ROCE_DSCP = 26  # NCCL_IB_TC=106 / cma_roce_tos -t 106: DSCP 26, ECN-capable
RETRY_EXCEEDED_RE = re.compile(r"status\s*[=:]?\s*12\b|RETRY_EXC", re.I)


# -- NCCL completion error 12 -------------------------------------------------------------------

def retry_exceeded(nccl_debug) -> list:
    """The NCCL log's completion errors with status 12 (transport retry counter exceeded)."""
    out = []
    for e in getattr(nccl_debug, "errors", ()) or ():
        kind = getattr(e, "kind", None) if not isinstance(e, dict) else e.get("kind")
        text = getattr(e, "text", "") if not isinstance(e, dict) else e.get("text", "")
        if kind == "ib_completion" and RETRY_EXCEEDED_RE.search(text or ""):
            out.append(e)
    return out


def _nccl_evidence(errors: list) -> list:
    return [Evidence("nccl_debug", None, getattr(e, "line_no", None) if not isinstance(e, dict) else e.get("line_no"))
            for e in errors[:2]]


# -- IB014 RoCE MTU ------------------------------------------------------------------------------

def _active_eth_ports(topology) -> list[tuple[str, dict]]:
    return [(nic, p) for nic, p in topology.ib_ports()
            if p.get("link_layer") == "Ethernet" and p.get("state") == "Active" and p.get("active_mtu")]


def _ib_active(topology) -> bool:
    return any(p.get("link_layer") == "InfiniBand" and p.get("state") == "Active" for _, p in topology.ib_ports())


def _netdev_mtus(ib_counters) -> dict[str, tuple[str, int]]:
    """RDMA device -> (netdev, MTU) from the counters source."""
    out = {}
    for n in getattr(ib_counters, "netdevs", ()) or ():
        if n.device and n.mtu is not None:
            out[n.device] = (n.name, n.mtu)
    return out


def _low_ports(eth: list, netdevs: dict) -> list[tuple[str, str]]:
    low = []
    for nic, p in eth:
        top = min(p.get("max_mtu") or FULL_MTU, FULL_MTU)
        if p["active_mtu"] < top:
            dev = nic.split(":", 1)[1]
            nd = netdevs.get(dev)
            low.append((nic, f"{dev} port {p['port']} active_mtu {p['active_mtu']} (max {p.get('max_mtu')})"
                             + (f", netdev {nd[0]} MTU {nd[1]}" if nd else "")))
    return low


def _port_evidence(ports: list) -> list:
    return [Evidence.coerce(s) for _, p in ports[:3] for s in (p.get("sources") or [])[:1]]


def _nccl_qps(nccl_debug) -> list[dict]:
    """The NCCL log's per-QP MTUs (nccl_debug `qp_mtus`) as dicts."""
    return list(plain(nccl_debug).get("qp_mtus") or ()) if nccl_debug is not None else []


def _qp_where(q: dict) -> str:
    dev = q.get("device") or (f"NET/{q['net_dev']}" if q.get("net_dev") is not None else f"IbDev {q.get('ib_dev')}")
    host = f"{q['host']} " if q.get("host") else ""
    return f"{host}{dev} port {q.get('port')}"


def _qp_text(q: dict) -> str:
    size = f"{q['mtu_bytes']} bytes" if q.get("mtu_bytes") else "an MTU value outside 1..5"
    return f"{_qp_where(q)} mtu {q.get('mtu')} ({size}, {q.get('qps')} QP line{'s' if q.get('qps') != 1 else ''})"


def _qp_subjects(qps: list[dict]) -> list[str]:
    return sorted({f"nic:{q['device']}" if q.get("device") else f"host:{q.get('host') or 'unknown'}" for q in qps})


def _qp_evidence(qps: list[dict]) -> list:
    return [Evidence("nccl_debug", None, q.get("line_no")) for q in qps[:3]]


def _nccl_mtu(qps: list[dict], ports_known: bool) -> Iterator:
    """From NCCL's per-QP lines alone: RoCE QPs below 4096 (when no port facts said it already), and
    QPs of the log's hosts/devices that run different MTUs (each connection runs at the smaller)."""
    low = [q for q in qps if q.get("link_layer") == "RoCE" and (q.get("mtu_bytes") or 0) < FULL_MTU]
    if low and not ports_known:
        yield hit(_qp_subjects(low), variant="nccl_low", evidence=_qp_evidence(low),
                  qps=listing([_qp_text(q) for q in low], 6),
                  expectation="mtu 5 (4096 bytes) on NCCL's RoCE queue pairs")
    sizes = sorted({q.get("mtu") for q in qps if q.get("mtu") is not None})
    hosts = {q.get("host") for q in qps}
    if len(sizes) > 1 and (not ports_known or len(hosts) > 1):
        yield hit(_qp_subjects(qps), variant="nccl_mismatch", evidence=_qp_evidence(qps),
                  mtus=listing([_qp_text(q) for q in qps], 8),
                  expectation="one MTU on every queue pair of the job")


@check("IB014")
def ib014(topology, ib_counters=None, nccl_debug=None) -> Iterator:
    """Active RoCE ports below 4096 (warning on a RoCE host: two or more Active RoCE ports and no IB
    one; info for a lone Ethernet port or beside Active IB ports, which may not be NCCL's),
    RoCE ports whose active MTUs differ (warning); RoCE netdevs below 4200 from sysfs alone; from an
    NCCL log's per-QP lines ("NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 576 mtu 3 GID 3 ..."), RoCE QPs
    below 4096 when no port facts are given, and QPs of several hosts or devices at different MTUs."""
    eth = _active_eth_ports(topology)
    yield from _nccl_mtu(_nccl_qps(nccl_debug), bool(eth))
    netdevs = _netdev_mtus(ib_counters)
    low = _low_ports(eth, netdevs)
    ib_active = _ib_active(topology)
    roce_host = not ib_active and len(eth) >= 2
    if low:
        yield hit(sorted({nic for nic, _ in low}),
                  evidence=_port_evidence(eth), severity=None if roce_host else Severity.INFO,
                  ports=listing([text for _, text in low], 6), notes=when(mixed=ib_active, lone=not ib_active and len(eth) < 2),
                  expectation="active_mtu 4096 on RoCE ports (netdev MTU >= 4200)")
    mtus = sorted({p["active_mtu"] for _, p in eth})
    if len(mtus) > 1:
        yield hit(sorted({nic for nic, _ in eth}), variant="mismatch", evidence=_port_evidence(eth),
                  mtus=listing([f"{nic.split(':', 1)[1]} {p['active_mtu']}" for nic, p in eth], 8),
                  expectation="one active_mtu on every RoCE port of a host")
    if not eth and ib_counters is not None:
        yield from _netdev_only(ib_counters, netdevs)


def _netdev_only(ib_counters, netdevs: dict) -> Iterator:
    roce = {p.device for p in ib_counters.ports if p.link_layer == "Ethernet"}
    small = [(dev, nd) for dev, nd in sorted(netdevs.items()) if dev in roce and nd[1] < NETDEV_MTU_FOR_4096]
    if small:
        yield hit([f"nic:{dev}" for dev, _ in small], variant="netdev",
                  evidence=[Evidence("ib_counters", None, None)],
                  ports=listing([f"{dev} ({nd[0]} MTU {nd[1]})" for dev, nd in small], 6),
                  expectation="netdev MTU >= 4200 on RoCE interfaces")


# -- IB015 lossless configuration --------------------------------------------------------------

def _last_per_interface(sections) -> list:
    by: dict[Optional[str], Any] = {}
    for s in sections:
        by[s.interface] = s
    return list(by.values())


def _ecn_off(ib_counters, ifname: Optional[str], prios: list[int]) -> list[str]:
    for n in getattr(ib_counters, "netdevs", ()) or ():
        if n.name == ifname:
            return [f"{side} prio {p}" for side, table in (("roce_np", n.ecn_np), ("roce_rp", n.ecn_rp))
                    for p in prios if table.get(p) is False]
    return []


def _qos_problem(s, dscp: int) -> tuple[Optional[str], dict]:
    prios = [i for i, on in enumerate(s.pfc_enabled or ()) if on]
    if s.pfc_enabled is not None and not prios:
        return "default", {}
    if s.trust == "pcp" and prios:
        return "trust_pcp", {}
    mapped = s.dscp2prio.get(dscp)
    if s.trust == "dscp" and prios and mapped is not None and mapped not in prios:
        return "dscp_not_lossless", {"dscp": dscp, "mapped": mapped}
    return None, {}


def _ecn_only(s, prios: list[int], ib_counters) -> Iterator:
    """PFC and trust are right on this interface, but ECN (DCQCN) is off on a PFC priority: info."""
    ecn = _ecn_off(ib_counters, s.interface, prios)
    if prios and ecn:
        yield hit([f"netdev:{s.interface or 'unnamed'}"], variant="ecn_off_only", severity=Severity.INFO,
                  evidence=[Evidence("mlnx_qos", None, s.pfc_line or s.line_no), Evidence("ib_counters", None, None)],
                  iface=s.interface or "(interface not named)", trust=s.trust or "unknown", pfc=listing(prios, 8),
                  ecn=listing(ecn, 8), expectation="ECN (roce_np and roce_rp) enabled on the PFC priority")


def _ecn_all_off(ib_counters) -> Iterator:
    """Without mlnx_qos: interfaces whose sysfs ECN switches are all off on one side (roce_np or
    roce_rp): no congestion control on any priority (info)."""
    for n in getattr(ib_counters, "netdevs", ()) or ():
        off = [side for side, table in (("roce_np", n.ecn_np), ("roce_rp", n.ecn_rp))
               if table and not any(table.values())]
        if off:
            yield hit([f"netdev:{n.name}"], variant="ecn_all_off", severity=Severity.INFO,
                      evidence=[Evidence("ib_counters", None, n.line_no)], iface=n.name,
                      ecn=listing(off, 2), expectation="ECN (DCQCN) enabled on the RoCE priority")


@check("IB015")
def ib015(mlnx_qos=None, params=None, ib_counters=None, nccl_debug=None) -> Iterator:
    """Per interface (its last mlnx_qos run): no PFC priority (warning), trust pcp with PFC (info:
    lossless only for VLAN-tagged traffic), the RoCE DSCP mapped to a priority without PFC (warning);
    a right PFC setup with ECN (DCQCN) off on its priority (info, from the ib_counters sysfs ECN
    switches). Without mlnx_qos: RoCE interfaces whose ECN switches are all off on one side (info)."""
    if mlnx_qos is None:
        yield from _ecn_all_off(ib_counters)
        return
    dscp = int((params or {}).get("roce_dscp", ROCE_DSCP))
    retry = retry_exceeded(nccl_debug) if nccl_debug is not None else []
    for s in _last_per_interface(mlnx_qos.sections):
        variant, extra = _qos_problem(s, dscp)
        prios = [i for i, on in enumerate(s.pfc_enabled or ()) if on]
        if variant is None:
            yield from _ecn_only(s, prios, ib_counters)
            continue
        ecn = _ecn_off(ib_counters, s.interface, prios)
        yield hit([f"netdev:{s.interface or 'unnamed'}"], variant=variant,
                  severity=Severity.INFO if variant == "trust_pcp" else None,
                  evidence=[Evidence("mlnx_qos", None, s.trust_line or s.line_no)] + _nccl_evidence(retry),
                  iface=s.interface or "(interface not named)", trust=s.trust or "unknown",
                  pfc=listing(prios, 8) or "none", ecn=listing(ecn, 8), retries=len(retry),
                  notes=when(ecn_off=bool(ecn), retry12=bool(retry)),
                  expectation=f"trust dscp, DSCP {dscp} mapped to a PFC-enabled priority", **extra)


# -- IB016 pause and discard counters ----------------------------------------------------------

DISCARD_RE = re.compile(r"^(?:rx|tx)_discards_phy$|^rx_prio\d_(?:discards|buf_discard|cong_discard)$")
GLOBAL_PAUSE = ("tx_pause_ctrl_phy", "rx_pause_ctrl_phy", "tx_global_pause", "rx_global_pause")
PFC_PAUSE_RE = re.compile(r"^(?:rx|tx)_prio\d_pause$")


def _pick(stats: dict, test) -> list[tuple[str, int]]:
    return [(k, v) for k, v in stats.items() if v and v > 0 and test(k)]


@check("IB016")
def ib016(ethtool_stats, nccl_debug=None) -> Iterator:
    """Per interface: physical-port or per-priority discards (warning); only link-level (global)
    pause frames (info: 802.3x pause instead of PFC, or congestion)."""
    retry = retry_exceeded(nccl_debug) if nccl_debug is not None else []
    for s in ethtool_stats.sections:
        discards = _pick(s.stats, DISCARD_RE.match)
        glob = _pick(s.stats, lambda k: k in GLOBAL_PAUSE)
        pfc = _pick(s.stats, PFC_PAUSE_RE.match)
        if not discards and not glob:
            continue
        first = min((s.lines.get(k, s.line_no) for k, _ in discards + glob), default=s.line_no)
        yield hit([f"netdev:{s.interface or 'unnamed'}"], variant="default" if discards else "pause_only",
                  severity=None if discards else Severity.INFO,
                  evidence=[Evidence("ethtool_stats", None, first)] + _nccl_evidence(retry),
                  iface=s.interface or "(interface not named)",
                  discards=listing([f"{k} {v}" for k, v in discards], 5) or "none",
                  pause=listing([f"{k} {v}" for k, v in glob + pfc], 5) or "none", retries=len(retry),
                  notes=when(global_pause=bool(glob), retry12=bool(retry)),
                  expectation="no discards on a RoCE port; PFC (per-priority) pause rather than global pause")
