"""NCCL's topology XML (NCCL_TOPO_DUMP_FILE or a static NCCL_TOPO_FILE): CPUs and NUMA nodes,
PCI switches, GPUs and NICs with "pci" edges child to parent, "nvlink" edges to peers and
NVSwitches, then the path classes the tree implies (paths.derive_xml_paths). A graph dump
(NCCL_GRAPH_DUMP_FILE) is kept as an observation."""

from __future__ import annotations

from typing import Any

from ...parsers.base import to_jsonable
from ...records import ParsedInput
from ..paths import derive_xml_paths, valid_numa, xml_cpu_id
from ..topology import Topology
from ._shared import add_numa_cpus, observe, ref

SOURCES = ("nccl_topo_xml",)
PROVIDES = ("nic.inventory", "pci.tree")  # NCCL's NICs, CPUs, PCI switches and NVSwitches, the PCI tree
FILLS = ("gpu.numa", "gpu.pair_class", "gpu.nic_path", "gpu.pcie_link", "nic.numa", "nccl.gdr")
NEEDS = ("gpu.index", "gpu.pcie_max")  # GPUs join by CUDA index where one is known; the tools' PCIe facts first


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    if r.kind != "system":
        observe(topo, host_id, item, {"graphs": to_jsonable(r.graphs)})
        return
    xref = ref(item, None)
    _add_cpus(topo, r, xref)
    ids = _add_pci_nodes(topo, r, xref)
    _add_pci_edges(topo, r, ids, xref)
    _add_nvlinks(topo, r, ids, xref)
    derive_xml_paths(topo, r, ids, xref)
    topo.notes.extend(f"nccl_topo_xml: {n}" for n in r.notes)


def _add_cpus(topo: Topology, r: Any, xref: dict) -> None:
    for cpu in r.cpus:
        if cpu.numaid is None:
            continue
        if cpu.numaid < 0:
            _add_unknown_numa_cpu(topo, r, cpu, xref)
            continue
        cid, numa = f"cpu:{cpu.numaid}", f"numa:{cpu.numaid}"
        topo.add_node(cid, "cpu", xref, name=cid, numa_node=cpu.numaid, affinity_mask=cpu.affinity,
                      cpu_affinity=cpu.cpus, arch=cpu.arch, vendor=cpu.vendor, family=cpu.family,
                      model=cpu.model)
        topo.add_node(numa, "numa", xref, name=numa, numa_node=cpu.numaid)
        if cpu.cpus:
            add_numa_cpus(topo, numa, cpu.cpus, xref)
        topo.add_edge(cid, numa, "numa", xref)


def _add_unknown_numa_cpu(topo: Topology, r: Any, cpu: Any, xref: dict) -> None:
    """<cpu numaid="-1">: NCCL could not tell the NUMA node (a VM that hides it). Still one CPU whose
    root complex its devices share (paths through it are PHB), so a node with no NUMA node; no node
    when several CPUs are unknown (which one a device is under cannot be told apart)."""
    cid = xml_cpu_id(r, cpu.numaid)
    if cid is None:
        topo.notes.append(f"nccl_topo_xml: {sum(1 for c in r.cpus if c.numaid is not None and c.numaid < 0)} "
                          "<cpu> elements with an unknown numaid: no CPU node for them")
        return
    topo.add_node(cid, "cpu", xref, name=cid, numa_node=None, numa_known=False, affinity_mask=cpu.affinity,
                  cpu_affinity=cpu.cpus, arch=cpu.arch, vendor=cpu.vendor, family=cpu.family, model=cpu.model)


def _add_pci_nodes(topo: Topology, r: Any, xref: dict) -> dict[str, list[str]]:
    """A node per <pci> element: GPU, NIC(s) (one per <net> on that bus id) or PCI switch.
    Returns pci busid -> the node ids it stands for."""
    gpu_by_bus = {g.busid: g for g in r.gpus if g.busid}
    nets_by_bus: dict[str, list] = {}
    for n in r.nets:
        nets_by_bus.setdefault(n.busid, []).append(n)
    ids: dict[str, list[str]] = {}
    for p in r.pci:
        if p.busid is None:
            continue
        facts = {"busid": p.busid, "pci_class": p.pci_class, "vendor_id": p.vendor, "device_id": p.device,
                 "pcie_link_speed": p.link_speed, "pcie_link_gts": p.link_speed_gts,
                 "pcie_link_width": p.link_width, "numa_node": valid_numa(p.numaid)}
        if p.kind == "gpu":
            g = gpu_by_bus.get(p.busid)
            node_id = xml_gpu_id(topo, p.busid, g.dev if g else None)
            extra = {"cuda_dev": g.dev, "nccl_rank": g.rank, "sm": g.sm, "gdr": g.gdr} if g else {}
            topo.add_node(node_id, "gpu", xref, **facts, **extra)
            ids[p.busid] = [node_id]
        elif p.kind == "nic" or p.busid in nets_by_bus:
            ids[p.busid] = _add_nics(topo, p.busid, nets_by_bus.get(p.busid, []), facts, xref)
        else:
            node_id = f"pcisw:{p.busid}"
            topo.add_node(node_id, "pcisw", xref, name=p.busid, **facts)
            ids[p.busid] = [node_id]
    return ids


def _add_nics(topo: Topology, busid: str, nets: list, facts: dict, xref: dict) -> list[str]:
    """The NICs of one PCI function: one per named <net>, else one named by the bus id."""
    out = []
    for n in nets:
        if not n.name:
            continue
        node_id = f"nic:{n.name}"
        topo.add_node(node_id, "nic", xref, name=n.name, **facts, nccl_dev=n.dev,
                      net_port=n.port, net_guid=n.guid, speed_mbps=n.speed_mbps, gdr=n.gdr)
        out.append(node_id)
    if not out:
        node_id = f"nic:{busid}"
        topo.add_node(node_id, "nic", xref, name=busid, **facts)
        out = [node_id]
    topo.add_alias(busid, out[0], xref)
    return out


def _add_pci_edges(topo: Topology, r: Any, ids: dict[str, list[str]], xref: dict) -> None:
    """Each device to its parent: the enclosing <pci> element, or the CPU at the top."""
    for p in r.pci:
        if p.busid is None or p.busid not in ids:
            continue
        parent = (ids.get(p.parent_busid) or [None])[0] if p.parent_busid else xml_cpu_id(r, p.numaid)
        if parent is None or not topo.has_node(parent):
            continue
        for child in ids[p.busid]:
            topo.add_edge(child, parent, "pci", xref, pcie_link_speed=p.link_speed,
                          pcie_link_gts=p.link_speed_gts, pcie_link_width=p.link_width)


def _add_nvlinks(topo: Topology, r: Any, ids: dict[str, list[str]], xref: dict) -> None:
    """A GPU's <nvlink> elements: edges to a peer GPU (made when only the XML names it) or an NVSwitch."""
    gpu_by_bus = {g.busid: g for g in r.gpus if g.busid}
    for g in r.gpus:
        if not g.busid or g.busid not in ids:
            continue
        gid = ids[g.busid][0]
        for nv in g.nvlinks:
            if not nv.target:
                continue
            target = topo.resolve(nv.target)
            if not topo.has_node(target):
                peer = gpu_by_bus.get(nv.target)
                if peer is not None:
                    target = xml_gpu_id(topo, nv.target, peer.dev)
                    topo.add_node(target, "gpu", xref, busid=nv.target)
                else:
                    target = f"nvswitch:{nv.target}"
                    topo.add_node(target, "nvswitch", xref, name=nv.target, pci_class=nv.tclass)
            topo.add_edge(gid, target, "nvlink", xref, link_count=nv.count, tclass=nv.tclass)


def xml_gpu_id(topo: Topology, busid: str, dev: int | None) -> str:
    """gpu:<dev> when a GPU of that index is known (or dev is the only name), else gpu:<busid>."""
    known = topo.aliases.get(busid)
    if known:
        return known
    node_id = f"gpu:{dev}" if dev is not None else f"gpu:{busid}"
    if dev is not None:
        topo.add_node(node_id, "gpu", None, index=dev)
    topo.add_alias(busid, node_id)
    return node_id
