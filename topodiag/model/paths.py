"""Path classes the inputs imply, where none printed them: the one place that derives paths.

`topo -m` prints a class per device pair; the other inputs give the pieces: NVML the NVLinks and
common ancestor of two GPUs (nvml_pair_class), sysfs each function's PCI path (pci_path_class,
derive_pci_paths), NCCL's XML its PCI tree and NVLinks (derive_xml_paths). A derived class is a
"path" edge with `derived: True`, and never replaces one an input printed. Then the NVLink counts
the inputs imply are checked against each other (check_nvlink_counts).
"""

from __future__ import annotations

from typing import Any

from .topology import Topology, nv_count

# A GPU has at most this many NVLinks of its own (H100/H200/B200: 18); a `topo -m` row whose NV#
# counts add up to more sees a switched fabric, where each peer's NV# is the GPU's whole bundle.
MAX_NVLINKS_PER_GPU = 18


def valid_numa(numaid: int | None) -> int | None:
    """NCCL's numaid, None for the -1 it writes when it does not know."""
    return numaid if numaid is not None and numaid >= 0 else None


UNKNOWN_NUMA_CPU = "cpu:numa-unknown"


def xml_cpu_id(r: Any, numaid: int | None) -> str | None:
    """The CPU node a device of NCCL's XML hangs under, by the numaid of its <cpu>: cpu:<numaid>, or
    UNKNOWN_NUMA_CPU for the one <cpu numaid="-1"> NCCL writes when NUMA is hidden (a VM): its devices
    still share that CPU's root complex. None outside a <cpu> (numaid missing), or when several <cpu>
    elements have an unknown numaid (which of them a device is under is not told)."""
    if valid_numa(numaid) is not None:
        return f"cpu:{numaid}"
    if numaid is None:
        return None
    unknown = sum(1 for c in r.cpus if c.numaid is not None and c.numaid < 0)
    return UNKNOWN_NUMA_CPU if unknown == 1 else None


# -- NVML -------------------------------------------------------------------------------------

def nvml_pair_class(r: Any, pair: Any) -> tuple[str | None, int]:
    """(class, NVLinks) of one NVML GPU pair: NV<links> when NVLinked (links whose far end is the
    other GPU, or, through NVSwitches, the fewer of the two GPUs' switch links), else NVML's common
    ancestor class (pair.path_class); links is 0 then."""
    by_bus = {g.pci_bus_id: g.index for g in r.gpus if g.pci_bus_id}
    to_switch = {g.index: sum(1 for ln in g.nvlinks if ln.active and ln.remote_device_type == "switch")
                 for g in r.gpus}
    ga = next(g for g in r.gpus if g.index == pair.a)
    direct = sum(1 for ln in ga.nvlinks if ln.active and by_bus.get(ln.remote_pci_bus_id) == pair.b)
    links = direct + min(to_switch.get(pair.a, 0), to_switch.get(pair.b, 0))
    return (f"NV{links}" if links else pair.path_class), links


# -- sysfs ------------------------------------------------------------------------------------

def pci_path_class(a: dict, b: dict) -> str | None:
    """The `topo -m` class of two PCI functions from their paths (root complex .. function) and
    NUMA nodes: under one switch PIX, several bridges PXB, one root complex PHB, two root complexes
    of one NUMA node NODE, else SYS. None when a path is unknown."""
    pa, pb = a.get("pci_path"), b.get("pci_path")
    if not pa or not pb:
        return None
    up_a, up_b = pa[:-1], pb[:-1]  # the bridges above each function, root complex first
    if not up_a or not up_b or up_a[0] != up_b[0]:
        na, nb = a.get("numa_node"), b.get("numa_node")
        return "NODE" if na is not None and na == nb else "SYS"
    k = 0
    while k + 1 < min(len(up_a), len(up_b)) and up_a[k + 1] == up_b[k + 1]:
        k += 1
    if k == 0:
        return "PHB"  # only the root complex in common
    below = max(len(up_a) - 1 - k, len(up_b) - 1 - k)
    return "PIX" if below <= 1 else "PXB"


def derive_pci_paths(topo: Topology, ref: dict) -> None:
    """Path classes that no other input gave (`derived: True`): GPU-NIC pairs, and GPU-GPU pairs of
    GPUs known to have no active NVLink (else their traffic goes over NVLink, whatever the PCI tree)."""
    gpus, nics = topo.gpus(), topo.nics()
    no_nvlink = {g for g in gpus if (topo.node(g).get("nvlink") or {}).get("active_count", None) == 0}
    pairs = [(a, b) for i, a in enumerate(gpus) for b in gpus[i + 1:] if a in no_nvlink and b in no_nvlink]
    pairs += [(g, n) for g in gpus for n in nics]
    for a, b in pairs:
        if topo.edge(a, b, "path") is not None:
            continue
        cls = pci_path_class(topo.node(a), topo.node(b))
        if cls is not None:
            topo.add_edge(a, b, "path", ref, **{"class": cls, "link_count": None, "derived": True})


# -- NCCL topology XML ------------------------------------------------------------------------

def derive_xml_paths(topo: Topology, r: Any, ids: dict[str, list[str]], ref: dict) -> None:
    """Path classes for GPU-GPU and GPU-NIC pairs of the XML that no `topo -m` matrix gave, in
    NCCL's own terms (`derived: True`): NV<links> over NVLink (summed over shared NVSwitches), PIX
    under one switch, PXB across switches, PHB through one CPU (NCCL does not tell PHB from
    NODE; a <cpu numaid="-1"> is one CPU too), SYS across CPUs. Where `topo -m` printed the pair, its class stands alone. GPU-GPU
    pairs only for GPUs the file has <gpu> elements for (NCCL dumps list their NVLinks)."""
    parent = {p.busid: p.parent_busid for p in r.pci if p.busid}
    cpu_of = {p.busid: xml_cpu_id(r, p.numaid) for p in r.pci if p.busid}
    for (bus_a, a), (bus_b, b) in _xml_pairs(r, ids):
        if topo.edge(a, b, "path") is not None:
            continue
        cls = nvlink_class(topo, a, b) if b.startswith("gpu:") else None
        if cls is None:
            cls = _tree_class(_ancestors(parent, bus_a), _ancestors(parent, bus_b),
                              cpu_of.get(bus_a), cpu_of.get(bus_b))
        if cls is not None:
            topo.add_edge(a, b, "path", ref, **{"class": cls, "link_count": nv_count(cls), "derived": True})


def _xml_pairs(r: Any, ids: dict[str, list[str]]) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """((busid, id), (busid, id)) of the GPU-GPU pairs of GPUs with <gpu> elements (a static file
    without them says nothing of NVLink: no GPU-GPU class from it), then of every GPU-NIC pair."""
    dumped = [(g.busid, ids[g.busid][0]) for g in r.gpus if g.busid in ids]  # NCCL saw their NVLinks
    seen = {b for b, _ in dumped}
    gpus = dumped + [(p.busid, ids[p.busid][0]) for p in r.pci
                     if p.kind == "gpu" and p.busid in ids and p.busid not in seen]
    nics = [(busid, nid) for busid, nids in ids.items() for nid in nids if nid.startswith("nic:")]
    return [(a, b) for i, a in enumerate(dumped) for b in dumped[i + 1:]] + [(g, n) for g in gpus for n in nics]


def _ancestors(parent: dict[str, str | None], busid: str) -> list[str]:
    """The bus ids above a device in the XML's PCI tree, nearest first."""
    out, seen = [], {busid}
    while parent.get(busid) and parent[busid] not in seen:
        busid = parent[busid]
        seen.add(busid)
        out.append(busid)
    return out


def _tree_class(up_a: list[str], up_b: list[str], cpu_a: str | None, cpu_b: str | None) -> str | None:
    """PIX (one switch right above both), PXB (a common switch further up), PHB (one CPU), SYS
    (two CPUs); None when a CPU is unknown."""
    common = next((x for x in up_a if x in up_b), None)
    if common is not None:
        return "PIX" if up_a[:1] == up_b[:1] == [common] else "PXB"
    if cpu_a is None or cpu_b is None:
        return None
    return "PHB" if cpu_a == cpu_b else "SYS"


def nvlink_class(topo: Topology, a: str, b: str) -> str | None:
    """NV<n> for two GPUs NVLinked directly, or through the NVSwitches they share."""
    direct = topo.edge(a, b, "nvlink")
    if direct and direct.get("link_count"):
        return f"NV{direct['link_count']}"
    links_a = {peer: d.get("link_count") or 0 for peer, d in topo.nvlink_edges(a) if peer.startswith("nvswitch:")}
    links_b = {peer for peer, _ in topo.nvlink_edges(b) if peer.startswith("nvswitch:")}
    shared = sum(n for peer, n in links_a.items() if peer in links_b)
    return f"NV{shared}" if shared else None


# -- NVLink counts across inputs --------------------------------------------------------------

def topo_nvlink_count(topo: Topology, gpu: str) -> int | None:
    """How many NVLinks `topo -m` says a GPU has: the sum of its NV# peers, or on a switched
    fabric (the sum exceeds what one GPU has) the largest NV#. None without NV# pairs."""
    counts = [d.get("link_count") for _, b, _, d in topo.edges(gpu, "path")
              if topo.node(b).get("kind") == "gpu" and d.get("link_count")]
    if not counts:
        return None
    total = sum(counts)
    return total if total <= MAX_NVLINKS_PER_GPU else max(counts)


def check_nvlink_counts(topo: Topology) -> None:
    """`topo -m` NV# against the NVLink count of a GPU-GPU link in NCCL's XML, and against the
    active links `nvlink -s` lists: a disagreement is a conflict. Sets `topo_nvlink_count` on GPUs."""
    _check_xml_link_counts(topo)
    for gpu in topo.gpus():
        _check_active_links(topo, gpu)


def _check_xml_link_counts(topo: Topology) -> None:
    for a, b, _, d in topo.edges(kind="nvlink"):
        if d.get("link_count") is None:
            continue
        path = topo.edge(a, b, "path")
        if path and path.get("link_count") is not None and path["link_count"] != d["link_count"]:
            topo.add_conflict(f"{a}~{b}", "link_count",
                              [(path["link_count"], path["sources"][0] if path["sources"] else None),
                               (d["link_count"], d["sources"][0] if d["sources"] else None)],
                              f"{a}-{b}: topo -m says {path['class']}, NCCL's topology "
                              f"{d['link_count']} NVLinks")


def _check_active_links(topo: Topology, gpu: str) -> None:
    attrs = topo.node(gpu)
    nvl = attrs.get("nvlink")
    expected = topo_nvlink_count(topo, gpu)
    if nvl is None or expected is None or nvl["truncated"]:
        return
    attrs["topo_nvlink_count"] = expected
    if nvl["active_count"] != expected:
        topo_src = next((s for s in attrs["sources"] if s["source"] == "nvidia_smi_topo_m"), None)
        topo.add_conflict(gpu, "nvlink_count", [(expected, topo_src), (nvl["active_count"], nvl["source"])],
                          f"{gpu}: nvidia-smi topo -m implies {expected} NVLinks, "
                          f"nvlink -s shows {nvl['active_count']} active")
