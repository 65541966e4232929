"""`nvidia-smi topo -m`: GPUs and NICs with their CPU/NUMA affinity, NUMA nodes, and one "path"
edge per device pair carrying the printed class (SOC, as older drivers print it, reads SYS)."""

from __future__ import annotations

from typing import Any

from ...records import ParsedInput
from ..topology import Topology, nv_count
from ._shared import add_numa_cpus, gpu_id, ref
from ...parsers.base import is_digits

SOURCES = ("nvidia_smi_topo_m",)
PROVIDES = ("gpu.index", "gpu.inventory", "gpu.numa", "gpu.pair_class", "gpu.nic_path", "nic.inventory", "nic.numa",
            "nic.topo_rows")  # GPUs by index, NICs, NUMA affinity, the printed path classes
FILLS = ()
NEEDS = ()


def _device_id(dev: Any) -> str:
    return gpu_id(dev.name) if dev.kind == "gpu" else f"nic:{dev.device or dev.name}"


def _device_facts(dev: Any, node_id: str) -> dict[str, Any]:
    facts: dict[str, Any] = {"name": dev.name, "cpu_affinity": dev.cpu_affinity,
                             "numa_affinity": dev.numa_affinity, "numa_node": dev.numa_node}
    if dev.kind == "gpu":
        tail = node_id.split(":", 1)[1]
        facts["index"] = int(tail) if is_digits(tail) else None
        facts["gpu_numa_id"] = dev.gpu_numa_id
    else:
        facts["name"] = dev.device or dev.name
        facts["topo_name"] = dev.name
    return facts


def _add_device(topo: Topology, item: ParsedInput, dev: Any) -> str:
    node_id = _device_id(dev)
    r = ref(item, dev.line_no)
    topo.add_node(node_id, dev.kind, r, **_device_facts(dev, node_id))
    if dev.name != node_id:
        topo.add_alias(dev.name, node_id, r)
    if dev.numa_node is not None:
        numa = f"numa:{dev.numa_node}"
        topo.add_node(numa, "numa", r, name=numa, numa_node=dev.numa_node)
        if dev.cpu_affinity is not None:
            add_numa_cpus(topo, numa, dev.cpu_affinity, r)
        topo.add_edge(node_id, numa, "numa", r)
    return node_id


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    ids = {dev.name: _add_device(topo, item, dev) for dev in r.devices}
    for link in r.links:
        a, b = ids.get(link.a), ids.get(link.b)
        if a is None or b is None:
            continue
        cls = "SYS" if link.type == "SOC" else link.type
        topo.add_edge(a, b, "path", ref(item, link.line_no), **{
            "class": cls, "class_raw": link.type if cls != link.type else None,
            "link_count": nv_count(cls)})
    topo.notes.extend(f"nvidia_smi_topo_m: {n}" for n in r.notes)
