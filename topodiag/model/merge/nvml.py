"""The NVML probe: GPUs, their PCIe links and NVLinks (in the shape `nvlink -s` gives, unless that
was merged already), per pair the path class (paths.nvml_pair_class) and the P2P status (NVML
gives one value per pair; both directions carry it); driver versions and lost GPUs as an observation."""

from __future__ import annotations

from typing import Any

from ...records import ParsedInput
from ..paths import nvml_pair_class
from ..topology import Topology
from ._shared import observe, ref

SOURCES = ("nvml",)
PROVIDES = ("gpu.busid", "gpu.pcie_link")  # GPU bus ids (with their aliases), PCIe link generation and width
FILLS = ("gpu.inventory", "gpu.numa", "gpu.nvlinks", "gpu.pair_class", "gpu.nic_path", "gpu.p2p_status",
         "gpu.pcie_max")
NEEDS = ("gpu.index", "gpu.nvlinks", "gpu.pair_class", "gpu.p2p_status")  # joins by index; fills only what the tools did not print

P2P_KEYS = {"read": "status_r", "write": "status_w", "nvlink": "status_n", "atomics": "status_a"}


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    facts = {"driver_version": r.driver_version, "cuda_driver_version": r.cuda_driver_version}
    observe(topo, host_id, item, {"ok": r.ok, "error": r.error, "error_name": r.error_name, **facts,
                                  "lost": [g.index for g in r.gpus if g.lost],
                                  "unsupported": len(r.unsupported)})
    if not r.ok:
        return
    gref = ref(item, None)
    ids = {g.index: _add_gpu(topo, g, gref) for g in r.gpus}
    for pair in r.pairs:
        a, b = ids.get(pair.a), ids.get(pair.b)
        if a is not None and b is not None:
            _add_pair(topo, r, pair, a, b, gref)


def _pcie_gens(pcie: Any) -> dict[str, str]:
    """PCIe generations as "Gen5" (the form `pcie_link_speed` takes from other inputs)."""
    out = {}
    if pcie.current_gen:
        out["pcie_link_speed"] = f"Gen{pcie.current_gen}"
    if pcie.max_gen:
        out["pcie_max_link_gts"] = f"Gen{pcie.max_gen}"
    return out


def _add_gpu(topo: Topology, g: Any, gref: dict) -> str:
    node_id = f"gpu:{g.index}"
    topo.add_node(node_id, "gpu", gref, index=g.index, model=g.model, uuid=g.uuid, busid=g.pci_bus_id,
                  numa_node=g.numa_node, cpu_affinity=g.cpu_affinity, lost=g.lost or None,
                  pcie_link_width=g.pcie.current_width, pcie_max_link_width=g.pcie.max_width,
                  **_pcie_gens(g.pcie))
    if g.pci_bus_id:
        topo.add_alias(g.pci_bus_id, node_id, gref)
    if g.numa_node is not None:
        numa = f"numa:{g.numa_node}"
        topo.add_node(numa, "numa", gref, name=numa, numa_node=g.numa_node)
        topo.add_edge(node_id, numa, "numa", gref)
    if topo.node(node_id).get("nvlink") is None and not g.lost:
        topo.set_fact(node_id, "nvlink", _nvlink_fact(g, gref), gref)
    return node_id


def _nvlink_fact(g: Any, gref: dict) -> dict:
    """NVML's links of one GPU in the shape `nvlink -s` gives (merge module nvlink_s)."""
    links = [{"link": ln.link, "active": bool(ln.active), "speed_gbps": ln.speed_gbps,
              "state": "active" if ln.active else "inactive", "line_no": None} for ln in g.nvlinks]
    speeds = sorted({ln["speed_gbps"] for ln in links if ln["active"] and ln["speed_gbps"] is not None})
    unsupported = g.nvlink_count == 0 and (g.nvlink_end_error or "").endswith("NOT_SUPPORTED")
    return {"links": links, "active_count": g.active_nvlinks, "shown_count": len(links),
            "speeds_gbps": speeds, "truncated": False,
            "all_links_inactive": bool(links) and g.active_nvlinks == 0,
            "nvlink_unsupported": unsupported, "message": None, "source": gref}


def _add_pair(topo: Topology, r: Any, pair: Any, a: str, b: str, gref: dict) -> None:
    cls, links = nvml_pair_class(r, pair)
    if cls and topo.edge(a, b, "path") is None:
        topo.add_edge(a, b, "path", gref, **{"class": cls, "link_count": links or None, "derived": True,
                                            "nvml_topology": pair.topology})
    p2p = {P2P_KEYS[k]: {f"{a}>{b}": v, f"{b}>{a}": v}
           for k, v in (("read", pair.p2p.read), ("write", pair.p2p.write), ("nvlink", pair.p2p.nvlink),
                        ("atomics", pair.p2p.atomics)) if v}
    if p2p and topo.edge(a, b, "p2p") is None:
        topo.add_edge(a, b, "p2p", gref, **p2p)
