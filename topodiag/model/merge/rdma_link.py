"""Merge `rdma link show` (source rdma_link) into the Topology: each link becomes a port of `nic:<device>`.

The port facts have the shape the IB tools give (see `_merge_ib` in builder.py), so the IB rules
read them alike: state / state_raw, physical_state / physical_state_raw, link_layer, base_lid (the
tool's `lid`), sm_lid, lmc, plus what only this tool prints: netdev, netdev_index, subnet_prefix;
`printed_by` "rdma_link", `sources` the line. The NIC gets `netdevs` (its ports' netdevs, in port
order) and `software_rdma=True` for a software device (rxe: Soft RoCE, siw: Soft iWARP).

A port printed several times (runs pasted one after another) is merged once, from its last line:
that is the state the port was left in. A link whose device name was redacted is not merged.
"""

from __future__ import annotations

from typing import Any

from ...parsers.base import to_jsonable
from ...records import ParsedInput
from ..topology import Topology, source_ref
from ._shared import software_rdma

SOURCES = ("rdma_link",)
PROVIDES = ("nic.netdevs",)  # each port's network device
FILLS = ("nic.port_state", "nic.link_layer")
NEEDS = ("nic.port_state",)  # the IB tools' port facts come first, this one fills gaps

# RdmaLink field -> port fact (the IB tools' names where they say the same thing)
_PORT_FACTS = {
    "state": "state",
    "state_raw": "state_raw",
    "physical_state": "physical_state",
    "physical_state_raw": "physical_state_raw",
    "link_layer": "link_layer",
    "lid": "base_lid",
    "sm_lid": "sm_lid",
    "lmc": "lmc",
    "netdev": "netdev",
    "netdev_index": "netdev_index",
    "subnet_prefix": "subnet_prefix",
    "line_no": "line_no",
}


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    last: dict[tuple[str, int], Any] = {}
    for link in r.links:
        if link.device is None:
            topo.notes.append(f"{item.source} ({item.path}) line {link.line_no}: a link whose device "
                              "name is redacted is not in the topology")
            continue
        last[(link.device, link.port)] = link  # a later line of the same port replaces it
    by_device: dict[str, list[Any]] = {}
    for (dev, _port), link in last.items():
        by_device.setdefault(dev, []).append(link)
    for dev, links in by_device.items():
        links.sort(key=lambda lk: lk.port)
        ports: dict[str, dict[str, Any]] = {}
        for link in links:
            facts = to_jsonable(link)
            pd = {fact: facts[field] for field, fact in _PORT_FACTS.items()}
            pd["printed_by"] = item.source
            pd["sources"] = [source_ref(item.source, item.path, link.line_no)]
            ports[str(link.port)] = {k: v for k, v in pd.items() if v is not None and v != []}
        netdevs = [lk.netdev for lk in links if lk.netdev]
        kind = software_rdma(dev)
        software = kind is not None or any(lk.software for lk in links)
        topo.add_node(f"nic:{dev}", "nic", source_ref(item.source, item.path, links[0].line_no),
                      name=dev, ports=ports, netdevs=list(dict.fromkeys(netdevs)) or None,
                      software_rdma=True if software else None, software_rdma_kind=kind)
    if r.errors:
        attrs = topo.node(host_id)
        attrs.setdefault("observations", []).append(
            {"source": item.source, "file": item.path,
             "errors": [{"line_no": e.line_no, "text": e.text} for e in r.errors]})
        ref = source_ref(item.source, item.path, None)
        if ref not in attrs["sources"]:
            attrs["sources"].append(ref)
