"""The gpu_scope probe: the NVIDIA driver's GPUs (bus id, device minor, UUID, model) join the GPUs
other inputs name by bus id or UUID, and the GPUs this job step or container cannot see (cgroup
device rules, Slurm's allocation, CUDA_VISIBLE_DEVICES: topodiag.model.scope) are marked
`job_visible: false`, with an observation saying what restricted them."""

from __future__ import annotations

from ...records import ParsedInput
from ..scope import visible
from ..topology import Topology
from ._shared import observe, ref

SOURCES = ("gpu_scope",)
PROVIDES = ("gpu.job_visible",)
FILLS = ()
NEEDS = ("gpu.busid", "gpu.pcie_max", "pci.tree", "pci.paths")  # joins GPUs by the bus ids the others gave


def _bus_gpus(topo: Topology) -> dict[str, str]:
    """bus id -> node id of every GPU the model knows by bus id."""
    out = {}
    for g in topo.gpus():
        bus = topo.node(g).get("busid")
        if isinstance(bus, str) and bus.count(":") == 2:
            dom, rest = bus.lower().split(":", 1)
            out[f"{dom[-4:]}:{rest}"] = g
    return out


def _uuid_gpu(topo: Topology, uuid: str | None) -> str | None:
    if not uuid:
        return None
    return next((g for g in topo.gpus() if str(topo.node(g).get("uuid") or "").lower() == uuid.lower()), None)


def _node_for(topo: Topology, bdf: str, uuid: str | None) -> str:
    """The GPU node this driver GPU is: the one with its bus id, the one with its UUID (joined into
    one when they are two: `nvlink -s` names GPUs by index and UUID, sysfs by bus id), or a new one."""
    by_bus, by_uuid = _bus_gpus(topo).get(bdf), _uuid_gpu(topo, uuid)
    if by_bus and by_uuid and by_bus != by_uuid:
        keep, drop = (by_uuid, by_bus) if topo.node(by_uuid).get("index") is not None else (by_bus, by_uuid)
        topo.join(keep, drop)
        return keep
    return by_bus or by_uuid or f"gpu:{bdf}"


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    gref = ref(item, None)
    for g in r.driver_gpus:
        node_id = _node_for(topo, g.bdf, g.uuid)
        known = topo.node(node_id).get("busid") if topo.has_node(node_id) else None  # "00000000:18:00.0" (-q)
        topo.add_node(node_id, "gpu", gref, busid=None if known else g.bdf, uuid=g.uuid, model=g.model,
                      device_minor=g.minor)
        topo.add_alias(g.bdf, node_id, gref)
        if g.uuid:
            topo.add_alias(g.uuid, node_id, gref)
    on_bus = _bus_gpus(topo)
    seen, how = visible(r, list(on_bus))
    hidden = [] if seen is None else sorted(set(on_bus) - set(seen))
    for bdf in hidden:
        topo.set_fact(on_bus[bdf], "job_visible", False, gref)
    observe(topo, host_id, item, {"ok": r.ok, "env": dict(r.env), "restricted_by": how or None,
                                  "visible": sorted(seen) if seen is not None else None, "hidden": hidden,
                                  "driver_gpus": len(r.driver_gpus)})
