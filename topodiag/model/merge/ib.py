"""The InfiniBand tools (`ibstat`, `ibv_devinfo`, `ibstatus`): one NIC per CA, its ports as the
nested `ports` fact (merged port by port, see Topology), tool errors as an observation. A software
RDMA device (Soft RoCE rxe, Soft iWARP siw: by vendor id or name) gets `software_rdma` True and
`software_rdma_kind`."""

from __future__ import annotations

from typing import Any

from ...parsers.base import to_jsonable
from ...records import ParsedInput
from ..topology import Topology
from ._shared import observe, ref, software_rdma

SOURCES = ("ibstat", "ibv_devinfo", "ibstatus")
PROVIDES = ("nic.port_state", "nic.link_layer", "ib.tool_errors")
FILLS = ()
NEEDS = ("nic.inventory",)  # CAs join the NICs topo -m and NCCL name


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    for ca in r.cas:
        if ca.name is None:
            topo.notes.append(f"{item.source} ({item.path}) line {ca.line_no}: a CA without a name "
                              "(fragment) is not in the topology")
            continue
        topo.add_node(f"nic:{ca.name}", "nic", ref(item, ca.line_no), name=ca.name, ca_type=ca.type,
                      node_type=ca.node_type, firmware=ca.firmware,
                      hardware_version=_hw_version(ca.hardware_version), node_guid=ca.node_guid,
                      system_guid=ca.system_guid, transport=ca.transport, vendor_id=ca.vendor_id,
                      vendor_part_id=ca.vendor_part_id, board_id=ca.board_id,
                      num_ports=ca.num_ports, ports=_ports(item, ca) or None,
                      software_rdma=True if software_rdma(ca.name, ca.vendor_id) else None,
                      software_rdma_kind=software_rdma(ca.name, ca.vendor_id))
    if r.errors:
        # each error with its catalogue class, entry and severity where the parser classed it (IB005)
        observe(topo, host_id, item, {"errors": [to_jsonable(e) for e in r.errors], "cas_listed": len(r.cas)})


def _ports(item: ParsedInput, ca: Any) -> dict[str, dict]:
    """"1" -> the port's facts (no nulls or empty lists), who printed them and where."""
    ports = {}
    for p in ca.ports:
        if p.port is None:
            continue
        pd = to_jsonable(p)
        pd.pop("port", None)
        pd["printed_by"] = ca.printed_by
        pd["sources"] = [ref(item, p.line_no)]
        ports[str(p.port)] = {k: v for k, v in pd.items() if v is not None and v != []}
    return ports


def _hw_version(raw: str | None) -> str | None:
    """ibstat prints the hardware revision in decimal ("0"), ibv_devinfo in hex ("0x0"): one form."""
    if raw is None:
        return None
    try:
        return f"0x{int(raw, 0):x}"
    except ValueError:
        return raw
