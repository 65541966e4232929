"""IB007 ib-link-degraded: fabric links trained narrower or slower than they should, from
`iblinkinfo` or `ibnetdiscover` (the fabric as the subnet sees it, not one host's HCAs).

Each physical link appears twice in both tools (once from each end): links are keyed by their two
ends, (LID, port) for iblinkinfo and (node GUID, port) for ibnetdiscover, and reported once. What is
judged, for links that are up:
- width below 4X (1X, 2X): a quarter or half of the link's bandwidth;
- iblinkinfo's own "Could be ..." note: both ends support a faster width or speed than trained;
- a rate under half the fabric's most common link rate (a DDR link among EDR ones): the link fell
  back a generation or more (cable, transceiver, port);
- ports that are physically up but not Active (Initialize, Armed: the subnet manager has not
  finished with them);
- from ibnetdiscover, a CA with no link at all (the node is not on the fabric).
Switch ports that are Down / Polling / Disabled with nothing plugged in are normal and not judged.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterator, Optional

from ..engine import Evidence, Severity, check, hit
from .. import knowledge

FULL_WIDTH = 4


def _name(description: Optional[str], guid: Optional[str], lid: Optional[int]) -> str:
    if description:
        return description
    if guid:
        return guid
    return f"LID {lid}" if lid is not None else "?"


def _links(iblinkinfo: Any, ibnetdiscover: Any) -> tuple[list[dict], list[dict], str]:
    """(up links, up-but-not-Active ports, source) as dicts {key, a, b, width_lanes, rate_gbps,
    speed_name, could_be, line_no}; isolated CAs come separately (see _isolated)."""
    links: dict[frozenset, dict] = {}
    not_active: list[dict] = []
    if iblinkinfo is not None:
        for node in iblinkinfo.nodes:
            for ln in node.links:
                a = f"{_name(node.description, node.guid, ln.lid)} port {ln.port}"
                if ln.state in ("Initializing", "Armed") and ln.physical_state == "LinkUp":
                    not_active.append({"a": a, "state": ln.state, "line_no": ln.line_no})
                    continue
                if ln.state != "Active" or ln.peer is None:
                    continue
                key = frozenset({(ln.lid, ln.port), (ln.peer.lid, ln.peer.port)})
                b = f"{ln.peer.description or f'LID {ln.peer.lid}'} port {ln.peer.port}"
                seen = links.get(key)
                if seen is None:
                    links[key] = {"a": a, "b": b, "width_lanes": ln.width_lanes, "rate_gbps": ln.rate_gbps,
                                  "speed_name": ln.speed_name, "could_be": ln.could_be, "line_no": ln.line_no}
                elif ln.could_be and not seen["could_be"]:
                    seen["could_be"] = ln.could_be
        return list(links.values()), not_active, "iblinkinfo"
    for node in ibnetdiscover.nodes:
        for c in node.connections:
            a = f"{_name(node.description, node.guid, node.lid)} port {c.port}"
            key = frozenset({(node.guid or node.name, c.port), (c.peer_guid or c.peer_name, c.peer_port)})
            if key in links:
                # the far end's view of the same link: keep the narrower / slower report
                seen = links[key]
                if (c.width_lanes or FULL_WIDTH) < (seen["width_lanes"] or FULL_WIDTH):
                    seen.update(width_lanes=c.width_lanes, rate_gbps=c.rate_gbps, line_no=c.line_no)
                continue
            b = f"{c.peer_description or c.peer_name} port {c.peer_port}"
            links[key] = {"a": a, "b": b, "width_lanes": c.width_lanes, "rate_gbps": c.rate_gbps,
                          "speed_name": c.speed, "could_be": None, "line_no": c.line_no}
    for p in ibnetdiscover.ports:  # `ibnetdiscover -p`: one record per port; unconnected ones have no rate
        if p.rate_gbps is None or p.peer_lid is None:
            continue
        key = frozenset({(p.lid, p.port), (p.peer_lid, p.peer_port)})
        seen = links.get(key)
        if seen is not None and (p.width_lanes or FULL_WIDTH) >= (seen["width_lanes"] or FULL_WIDTH):
            continue
        links[key] = {"a": f"{_name(p.description, p.port_guid, p.lid)} port {p.port}",
                      "b": f"{p.peer_description or f'LID {p.peer_lid}'} port {p.peer_port}",
                      "width_lanes": p.width_lanes, "rate_gbps": p.rate_gbps, "speed_name": p.speed,
                      "could_be": None, "line_no": p.line_no}
    return list(links.values()), not_active, "ibnetdiscover"


def _isolated(ibnetdiscover: Any) -> list[Any]:
    if ibnetdiscover is None or ibnetdiscover.format != "topology" or ibnetdiscover.elided:
        return []
    return [n for n in ibnetdiscover.nodes if n.kind == "Ca" and not n.connections]


def _listed(links: list[dict], text) -> str:
    shown = "; ".join(text(x) for x in links[:6])
    return shown + (f"; and {len(links) - 6} more" if len(links) > 6 else "")


@check("IB007")
def ib_link_degraded(params, iblinkinfo=None, ibnetdiscover=None) -> Iterator:
    links, not_active, source = _links(iblinkinfo, ibnetdiscover)
    ev = lambda xs: [Evidence(source, None, x["line_no"]) for x in xs[:3]]  # noqa: E731
    narrow = [x for x in links if x["width_lanes"] is not None and x["width_lanes"] < FULL_WIDTH]
    if narrow:
        yield hit([f"iblink:{x['a']}" for x in narrow], evidence=ev(narrow), expectation="every link at 4X",
                  count=len(narrow), problem="trained narrower than 4X",
                  listed=_listed(narrow, lambda x: f"{x['a']} <-> {x['b']} at {x['width_lanes']}X "
                                 f"{x['speed_name'] or ''} ({x['rate_gbps']:g} Gb/s of "
                                 f"{x['rate_gbps'] * FULL_WIDTH / x['width_lanes']:g})" if x["rate_gbps"] else
                                 f"{x['a']} <-> {x['b']} at {x['width_lanes']}X"),
                  note="; a lane or more is down: reseat or replace the cable or transceiver, then check the "
                       "port counters (perfquery) for symbol errors")
    could = [x for x in links if x["could_be"] and x not in narrow]
    if could:
        yield hit([f"iblink:{x['a']}" for x in could], evidence=ev(could),
                  expectation="links at the width and speed both ends support",
                  count=len(could), problem="trained below what both ends support (iblinkinfo: Could be ...)",
                  listed=_listed(could, lambda x: f"{x['a']} <-> {x['b']} at {x['speed_name'] or '?'}: {x['could_be']}"),
                  note="; a cable or transceiver of a slower generation, or a port forced to a lower speed")
    rates = Counter(x["rate_gbps"] for x in links if x["rate_gbps"])
    if rates:
        common, _ = rates.most_common(1)[0]
        slow = [x for x in links if x["rate_gbps"] and x["rate_gbps"] < common / 2 and x not in narrow and x not in could]
        if slow:
            name = knowledge.ib_rate_name(common)
            yield hit([f"iblink:{x['a']}" for x in slow], evidence=ev(slow),
                      expectation=f"links near the fabric's common rate ({common:g} Gb/s{f', {name}' if name else ''})",
                      count=len(slow), problem=f"far below the fabric's common {common:g} Gb/s",
                      listed=_listed(slow, lambda x: f"{x['a']} <-> {x['b']} at {x['rate_gbps']:g} Gb/s "
                                     f"({x['speed_name'] or '?'})"),
                      note=f"; {common / min(x['rate_gbps'] for x in slow):g}x slower: the link fell back a "
                           "generation or more (cable, transceiver or port)")
    if not_active:
        yield hit([f"iblink:{x['a']}" for x in not_active], evidence=ev(not_active),
                  expectation="every cabled port Active", count=len(not_active),
                  problem="physically up but not Active", severity=Severity.WARNING,
                  listed=_listed(not_active, lambda x: f"{x['a']} {x['state']}"),
                  note="; the subnet manager has not brought them to Active (no SM, or it has not swept yet): "
                       "they carry no traffic")
    for node in _isolated(ibnetdiscover):
        yield hit([f"iblink:{node.description or node.guid}"], severity=Severity.ERROR,
                  evidence=[Evidence(source, None, node.line_no)], expectation="every CA linked to the fabric",
                  count=1, problem="with no link partner",
                  listed=f"{node.description or node.guid} (CA, {node.nports or '?'} port(s)) has no connection",
                  note="; the discovery found no switch behind this HCA: the host is not on the fabric (cable, "
                       "switch port or the HCA's port down)")


@check("IB008")
def hca_no_rdma_device(sysfs_infiniband, params) -> Iterator:
    """Mellanox/NVIDIA network functions on the PCI bus that registered no RDMA device (sysfs)."""
    for p in sysfs_infiniband.pci:
        if p.kind != "nic" or p.rdma_devices:
            continue
        if p.driver is None:
            what, severity = ("no driver is bound to it (mlx5_core / mlx4_core not loaded, or it failed to "
                              "initialise the card: firmware, see dmesg)"), Severity.ERROR
        else:
            what, severity = (f"its driver {p.driver} is bound but no RDMA device was registered (mlx5_ib / "
                              "mlx4_ib not loaded, or RDMA disabled for this function)"), Severity.WARNING
        link = (f", PCIe {p.current_link_speed or '?'} x{p.current_link_width}" if p.current_link_width else "")
        yield hit([f"nic:{p.bdf}"], severity=severity, evidence=[Evidence("sysfs_infiniband", None, p.line_no)],
                  expectation="every HCA on the PCI bus has an RDMA device",
                  bdf=p.bdf, device=f"{p.vendor}:{p.device}", numa=p.numa_node if p.numa_node is not None else "?",
                  link=link, what=what)
