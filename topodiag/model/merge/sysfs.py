"""The sysfs (and pyverbs) probe: HCA ports as the IB tools give them; each HCA's PCI address,
NUMA node and netdevs; the PCI path, link speed and width of GPUs and HCAs; then the path classes
the PCI tree implies (paths.derive_pci_paths)."""

from __future__ import annotations

from typing import Any

from ...records import ParsedInput
from ..paths import derive_pci_paths
from ..topology import Topology
from . import ib
from ._shared import observe, ref

SOURCES = ("sysfs_infiniband",)
PROVIDES = ("pci.paths", "pci.functions")  # the PCI path, link speed and width of GPUs and HCAs
FILLS = ("gpu.inventory", "gpu.numa", "gpu.nic_path", "gpu.pcie_link", "nic.numa", "nic.port_state",
         "nic.link_layer", "nic.active_mtu", "nic.netdevs", "ib.tool_errors")
NEEDS = ("gpu.busid", "nic.port_state", "nic.netdevs", "pci.tree")  # joins GPUs by bus id; the tools' ports, netdevs and NCCL's tree first


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    ib.merge(topo, item, host_id)
    if getattr(r, "probe", None) == "sysfs" and getattr(r, "ok", False):  # the PCI tree was walked:
        observe(topo, host_id, item, {"pci_scanned": True,  # no GPU in it means none is visible
                                      "gpus_on_bus": sum(1 for p in r.pci if p.kind == "gpu")})
    sref = ref(item, None)
    for h in r.hcas:
        node_id = f"nic:{h.name}"
        topo.add_node(node_id, "nic", ref(item, h.line_no), name=h.name, busid=h.pci_address,
                      numa_node=h.numa_node, netdevs=[n.name for n in h.netdevs] or None)
        if h.pci_address:
            topo.add_alias(h.pci_address, node_id, sref)
    for p in r.pci:
        _add_function(topo, item, p, sref)
    derive_pci_paths(topo, sref)


def _add_function(topo: Topology, item: ParsedInput, p: Any, sref: dict) -> None:
    """One PCI function the probe read: a GPU (joined by bus id) or the HCAs it carries."""
    facts = {"busid": p.bdf, "pci_path": list(p.path) if p.path else None, "numa_node": p.numa_node,
             "pcie_link_gts": p.current_link_speed_gts, "pcie_link_width": p.current_link_width,
             "pcie_max_link_gts": p.max_link_speed_gts, "pcie_max_link_width": p.max_link_width,
             "pci_driver": p.driver}
    if p.kind == "gpu":
        node_id = topo.resolve(p.bdf)
        if not topo.has_node(node_id):
            node_id = f"gpu:{p.bdf}"
            topo.add_alias(p.bdf, node_id, sref)
        topo.add_node(node_id, "gpu", ref(item, p.line_no), **facts)
        return
    for name in list(p.rdma_devices) or [p.bdf]:
        topo.add_node(f"nic:{name}", "nic", ref(item, p.line_no), name=name, **facts)
