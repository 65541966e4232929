"""Merge parsed inputs into one Topology, keeping where each fact came from and what disagrees.

Joins: `topo -m` GPUs ("GPU3") and `nvlink -s` GPUs ("GPU 3") by index; `topo -m` NICs by their
RDMA device name (the NIC Legend's `device`, or a column named mlx5_0) with the IB tools' CA
names; NCCL topology XML GPUs by CUDA device index where an index-keyed GPU exists (else by bus
id), NICs by net name. NCCL logs and nccl-tests results are kept as observations on the host node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from ..parsers.base import to_jsonable
from ..records import ParsedInput
from .merge_rdma_link import merge as _merge_rdma_link
from .topology import Topology, nv_count, source_ref

# A GPU has at most this many NVLinks of its own (H100/H200/B200: 18); a `topo -m` row whose NV#
# counts add up to more sees a switched fabric, where each peer's NV# is the GPU's whole bundle.
MAX_NVLINKS_PER_GPU = 18

IB_SOURCES = ("ibstat", "ibv_devinfo", "ibstatus")
# Order in which inputs are merged, so ids and first-seen facts do not depend on argument order.
_ORDER = ("nvidia_smi_topo_m", "nvidia_smi_topo_p2p", "nvidia_smi_nvlink_s", "nvml", "nccl_topo_xml", *IB_SOURCES, "rdma_link",
          "sysfs_infiniband", "nccl_debug", "nccl_tests")


def build(inputs: Iterable[ParsedInput], host: str | None = None) -> Topology:
    """One Topology from whatever inputs are present; unknown sources are noted and skipped."""
    topo = Topology()
    items = sorted(inputs, key=lambda i: _ORDER.index(i.source) if i.source in _ORDER else len(_ORDER))
    host_id = f"host:{host or _host_from(items) or 'local'}"
    topo.add_node(host_id, "host", name=host_id.split(":", 1)[1])
    for item in items:
        merge = _MERGERS.get(item.source)
        if merge is None:
            topo.notes.append(f"{item.source} ({item.path}): not merged into the topology")
            continue
        merge(topo, item, host_id)
    _check_nvlink_counts(topo)
    return topo


def _host_from(items: list[ParsedInput]) -> str | None:
    for item in items:
        if item.source == "nccl_debug":
            hosts = list(getattr(item.result, "hosts", ()) or ())
            if len(hosts) == 1:
                return hosts[0]
    return None


def _ref(item: ParsedInput, line_no: int | None) -> dict:
    return source_ref(item.source, item.path, line_no)


# -- nvidia-smi topo -m -----------------------------------------------------------------------

def _device_id(dev: Any) -> str:
    if dev.kind == "gpu":
        return f"gpu:{dev.name[3:]}" if dev.name.startswith("GPU") and dev.name[3:].isdigit() else f"gpu:{dev.name}"
    return f"nic:{dev.device or dev.name}"


def _merge_topo_m(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    ids: dict[str, str] = {}
    for dev in r.devices:
        node_id = _device_id(dev)
        ids[dev.name] = node_id
        ref = _ref(item, dev.line_no)
        facts: dict[str, Any] = {"name": dev.name, "cpu_affinity": dev.cpu_affinity,
                                 "numa_affinity": dev.numa_affinity, "numa_node": dev.numa_node}
        if dev.kind == "gpu":
            tail = node_id.split(":", 1)[1]
            facts["index"] = int(tail) if tail.isdigit() else None
            facts["gpu_numa_id"] = dev.gpu_numa_id
        else:
            facts["name"] = dev.device or dev.name
            facts["topo_name"] = dev.name
        topo.add_node(node_id, dev.kind, ref, **facts)
        if dev.name != node_id:
            topo.add_alias(dev.name, node_id, ref)
        if dev.numa_node is not None:
            numa = f"numa:{dev.numa_node}"
            topo.add_node(numa, "numa", ref, name=numa, numa_node=dev.numa_node)
            if dev.cpu_affinity is not None:
                _add_numa_cpus(topo, numa, dev.cpu_affinity, ref)
            topo.add_edge(node_id, numa, "numa", ref)
    for link in r.links:
        a, b = ids.get(link.a), ids.get(link.b)
        if a is None or b is None:
            continue
        cls = "SYS" if link.type == "SOC" else link.type
        topo.add_edge(a, b, "path", _ref(item, link.line_no), **{
            "class": cls, "class_raw": link.type if cls != link.type else None,
            "link_count": nv_count(cls)})
    topo.notes.extend(f"nvidia_smi_topo_m: {n}" for n in r.notes)


def _add_numa_cpus(topo: Topology, numa: str, cpus: str, ref: dict) -> None:
    """A NUMA node's CPU list; GPUs of one node may print different affinity (kept as a list)."""
    attrs = topo.node(numa)
    seen = attrs.setdefault("cpu_affinities", [])
    if cpus not in seen:
        seen.append(cpus)
    if "cpu_affinity" not in attrs:
        attrs["cpu_affinity"] = cpus
        attrs["provenance"]["cpu_affinity"] = ref


# -- nvidia-smi topo -p2p ---------------------------------------------------------------------

def _merge_topo_p2p(topo: Topology, item: ParsedInput, host_id: str) -> None:
    """One "p2p" edge per GPU pair: `status_<mode>` = {"gpu:0>gpu:1": "OK", "gpu:1>gpu:0": "OK"}
    (mode r, w, n, a, p, rw as on the prompt line; "unknown" when the text does not show it)."""
    r = item.result
    key = f"status_{r.mode or 'unknown'}"
    ids = {}
    for name in r.gpus:
        tail = name[3:]
        ids[name] = f"gpu:{tail}" if name.startswith("GPU") and tail.isdigit() else f"gpu:{name}"
        topo.add_node(ids[name], "gpu", _ref(item, None), index=int(tail) if tail.isdigit() else None)
    pairs: dict[tuple[str, str], dict] = {}
    lines: dict[tuple[str, str], int] = {}
    for c in r.cells:
        a, b = ids.get(c.src), ids.get(c.dst)
        if a is None or b is None:
            continue
        pair = tuple(sorted((a, b)))
        pairs.setdefault(pair, {})[f"{a}>{b}"] = c.status
        lines.setdefault(pair, c.line_no)
    for (a, b), cells in pairs.items():
        topo.add_edge(a, b, "p2p", _ref(item, lines[(a, b)]), **{key: dict(sorted(cells.items()))})
    topo.notes.extend(f"nvidia_smi_topo_p2p: {n}" for n in r.notes)


# -- NVML probe -------------------------------------------------------------------------------

P2P_KEYS = {"read": "status_r", "write": "status_w", "nvlink": "status_n", "atomics": "status_a"}


def _merge_nvml(topo: Topology, item: ParsedInput, host_id: str) -> None:
    """GPUs, their PCIe links and NVLinks (in the shape `nvlink -s` gives, unless that was merged
    already), and per pair the path class (NVML's common ancestor; NV# from the NVLinks: links whose
    far end is the other GPU, or, through NVSwitches, the fewer of the two GPUs' switch links) and
    the P2P status (NVML gives one value per pair; both directions carry it)."""
    r = item.result
    ref = _ref(item, None)
    facts = {"driver_version": r.driver_version, "cuda_driver_version": r.cuda_driver_version}
    _observe(topo, host_id, item, {"ok": r.ok, "error": r.error, "error_name": r.error_name, **facts,
                                   "lost": [g.index for g in r.gpus if g.lost],
                                   "unsupported": len(r.unsupported)})
    if not r.ok:
        return
    ids = {}
    for g in r.gpus:
        node_id = f"gpu:{g.index}"
        ids[g.index] = node_id
        pcie = {}
        if g.pcie.current_gen:
            pcie["pcie_link_speed"] = f"Gen{g.pcie.current_gen}"
        if g.pcie.max_gen:
            pcie["pcie_max_link_gts"] = f"Gen{g.pcie.max_gen}"
        topo.add_node(node_id, "gpu", ref, index=g.index, model=g.name, uuid=g.uuid, busid=g.pci_bus_id,
                      numa_node=g.numa_node, cpu_affinity=g.cpu_affinity, lost=g.lost or None,
                      pcie_link_width=g.pcie.current_width, pcie_max_link_width=g.pcie.max_width, **pcie)
        if g.pci_bus_id:
            topo.add_alias(g.pci_bus_id, node_id, ref)
        if g.numa_node is not None:
            numa = f"numa:{g.numa_node}"
            topo.add_node(numa, "numa", ref, name=numa, numa_node=g.numa_node)
            topo.add_edge(node_id, numa, "numa", ref)
        if topo.node(node_id).get("nvlink") is None and not g.lost:
            links = [{"link": ln.link, "active": bool(ln.active), "speed_gbps": ln.speed_gbps,
                      "state": "active" if ln.active else "inactive", "line_no": None} for ln in g.nvlinks]
            speeds = sorted({ln["speed_gbps"] for ln in links if ln["active"] and ln["speed_gbps"] is not None})
            unsupported = g.nvlink_count == 0 and (g.nvlink_end_error or "").endswith("NOT_SUPPORTED")
            topo.set_fact(node_id, "nvlink", {
                "links": links, "active_count": g.active_nvlinks, "shown_count": len(links),
                "speeds_gbps": speeds, "truncated": False,
                "all_links_inactive": bool(links) and g.active_nvlinks == 0,
                "nvlink_unsupported": unsupported, "message": None, "source": ref}, ref)
    by_bus = {g.pci_bus_id: g.index for g in r.gpus if g.pci_bus_id}
    to_switch = {g.index: sum(1 for ln in g.nvlinks if ln.active and ln.remote_device_type == "switch")
                 for g in r.gpus}
    for pair in r.pairs:
        a, b = ids.get(pair.a), ids.get(pair.b)
        if a is None or b is None:
            continue
        ga = next(g for g in r.gpus if g.index == pair.a)
        direct = sum(1 for ln in ga.nvlinks if ln.active and by_bus.get(ln.remote_pci_bus_id) == pair.b)
        switched = min(to_switch.get(pair.a, 0), to_switch.get(pair.b, 0))
        links = direct + switched
        cls = f"NV{links}" if links else pair.path_class
        if cls and topo.edge(a, b, "path") is None:
            topo.add_edge(a, b, "path", ref, **{"class": cls, "link_count": links or None, "derived": True,
                                               "nvml_topology": pair.topology})
        p2p = {P2P_KEYS[k]: {f"{a}>{b}": v, f"{b}>{a}": v}
               for k, v in (("read", pair.p2p.read), ("write", pair.p2p.write), ("nvlink", pair.p2p.nvlink),
                            ("atomics", pair.p2p.atomics)) if v}
        if p2p and topo.edge(a, b, "p2p") is None:
            topo.add_edge(a, b, "p2p", ref, **p2p)


# -- nvidia-smi nvlink -s ---------------------------------------------------------------------

def _merge_nvlink_s(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    for g in r.gpus:
        ref = _ref(item, g.line_no)
        node_id = f"gpu:{g.index}"
        links = [{"link": ln.link, "active": ln.active, "speed_gbps": ln.speed_gbps,
                  "state": ln.state, "line_no": ln.line_no} for ln in g.links]
        speeds = sorted({ln.speed_gbps for ln in g.links if ln.active and ln.speed_gbps is not None})
        nvlink = {"links": links, "active_count": sum(1 for ln in g.links if ln.active),
                  "shown_count": len(links), "speeds_gbps": speeds, "truncated": g.truncated,
                  "all_links_inactive": g.all_links_inactive,
                  "nvlink_unsupported": g.nvlink_unsupported, "message": g.message,
                  "source": ref}
        topo.add_node(node_id, "gpu", ref, index=g.index, model=g.name, uuid=g.uuid, nvlink=nvlink)
    if r.errors or r.elided_gpu_indices:
        _observe(topo, host_id, item, {
            "errors": [{"line_no": e.line_no, "text": e.text} for e in r.errors],
            "elided_gpu_indices": list(r.elided_gpu_indices)})
    topo.notes.extend(f"nvidia_smi_nvlink_s: {n}" for n in r.notes)


def topo_nvlink_count(topo: Topology, gpu: str) -> int | None:
    """How many NVLinks `topo -m` says a GPU has: the sum of its NV# peers, or on a switched
    fabric (the sum exceeds what one GPU has) the largest NV#. None without NV# pairs."""
    counts = [d.get("link_count") for _, b, _, d in topo.edges(gpu, "path")
              if topo.node(b).get("kind") == "gpu" and d.get("link_count")]
    if not counts:
        return None
    total = sum(counts)
    return total if total <= MAX_NVLINKS_PER_GPU else max(counts)


def _check_nvlink_counts(topo: Topology) -> None:
    """`topo -m` NV# against the active links `nvlink -s` lists, and against the NVLink count of a
    GPU-GPU link in NCCL's XML: a disagreement is a conflict."""
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
    for gpu in topo.gpus():
        attrs = topo.node(gpu)
        nvl = attrs.get("nvlink")
        expected = topo_nvlink_count(topo, gpu)
        if nvl is None or expected is None or nvl["truncated"]:
            continue
        attrs["topo_nvlink_count"] = expected
        if nvl["active_count"] != expected:
            topo_src = next((s for s in attrs["sources"] if s["source"] == "nvidia_smi_topo_m"), None)
            topo.add_conflict(gpu, "nvlink_count", [(expected, topo_src), (nvl["active_count"], nvl["source"])],
                              f"{gpu}: nvidia-smi topo -m implies {expected} NVLinks, "
                              f"nvlink -s shows {nvl['active_count']} active")


# -- InfiniBand tools -------------------------------------------------------------------------

def _merge_ib(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    for ca in r.cas:
        ref = _ref(item, ca.line_no)
        if ca.name is None:
            topo.notes.append(f"{item.source} ({item.path}) line {ca.line_no}: a CA without a name "
                              "(fragment) is not in the topology")
            continue
        ports = {}
        for p in ca.ports:
            if p.port is None:
                continue
            pd = to_jsonable(p)
            pd.pop("port", None)
            pd["printed_by"] = ca.printed_by
            pd["sources"] = [_ref(item, p.line_no)]
            ports[str(p.port)] = {k: v for k, v in pd.items() if v is not None and v != []}
        topo.add_node(f"nic:{ca.name}", "nic", ref, name=ca.name, ca_type=ca.type,
                      node_type=ca.node_type, firmware=ca.firmware,
                      hardware_version=_hw_version(ca.hardware_version), node_guid=ca.node_guid,
                      system_guid=ca.system_guid, transport=ca.transport, vendor_id=ca.vendor_id,
                      vendor_part_id=ca.vendor_part_id, board_id=ca.board_id,
                      num_ports=ca.num_ports, ports=ports or None)
    if r.errors:
        _observe(topo, host_id, item, {"errors": [{"line_no": e.line_no, "text": e.text} for e in r.errors]})


def _hw_version(raw: str | None) -> str | None:
    """ibstat prints the hardware revision in decimal ("0"), ibv_devinfo in hex ("0x0"): one form."""
    if raw is None:
        return None
    try:
        return f"0x{int(raw, 0):x}"
    except ValueError:
        return raw


# -- sysfs (and pyverbs) probe --------------------------------------------------------------------

def _merge_sysfs(topo: Topology, item: ParsedInput, host_id: str) -> None:
    """HCA ports as the IB tools give them; each HCA's PCI address, NUMA node and netdevs; the PCI
    path, link speed and width of GPUs and HCAs; then the path classes the PCI tree implies."""
    r = item.result
    _merge_ib(topo, item, host_id)
    ref = _ref(item, None)
    for h in r.hcas:
        node_id = f"nic:{h.name}"
        topo.add_node(node_id, "nic", _ref(item, h.line_no), name=h.name, busid=h.pci_address,
                      numa_node=h.numa_node, netdevs=[n.name for n in h.netdevs] or None)
        if h.pci_address:
            topo.add_alias(h.pci_address, node_id, ref)
    for p in r.pci:
        facts = {"busid": p.bdf, "pci_path": list(p.path) if p.path else None, "numa_node": p.numa_node,
                 "pcie_link_gts": p.current_link_speed_gts, "pcie_link_width": p.current_link_width,
                 "pcie_max_link_gts": p.max_link_speed_gts, "pcie_max_link_width": p.max_link_width,
                 "pci_driver": p.driver}
        if p.kind == "gpu":
            node_id = topo.resolve(p.bdf)
            if not topo.has_node(node_id):
                node_id = f"gpu:{p.bdf}"
                topo.add_alias(p.bdf, node_id, ref)
            topo.add_node(node_id, "gpu", _ref(item, p.line_no), **facts)
        else:
            names = list(p.rdma_devices) or [p.bdf]
            for name in names:
                topo.add_node(f"nic:{name}", "nic", _ref(item, p.line_no), name=name, **facts)
    _derive_pci_paths(topo, ref)


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


def _derive_pci_paths(topo: Topology, ref: dict) -> None:
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

def _merge_nccl_xml(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    if r.kind != "system":
        _observe(topo, host_id, item, {"graphs": to_jsonable(r.graphs)})
        return
    ref = _ref(item, None)
    for cpu in r.cpus:
        if cpu.numaid is None or cpu.numaid < 0:
            continue
        cid, numa = f"cpu:{cpu.numaid}", f"numa:{cpu.numaid}"
        topo.add_node(cid, "cpu", ref, name=cid, numa_node=cpu.numaid, affinity_mask=cpu.affinity,
                      cpu_affinity=cpu.cpus, arch=cpu.arch, vendor=cpu.vendor, family=cpu.family,
                      model=cpu.model)
        topo.add_node(numa, "numa", ref, name=numa, numa_node=cpu.numaid)
        if cpu.cpus:
            _add_numa_cpus(topo, numa, cpu.cpus, ref)
        topo.add_edge(cid, numa, "numa", ref)
    gpu_by_bus = {g.busid: g for g in r.gpus if g.busid}
    nets_by_bus: dict[str, list] = {}
    for n in r.nets:
        nets_by_bus.setdefault(n.busid, []).append(n)
    ids: dict[str, list[str]] = {}  # pci busid -> node ids it stands for
    for p in r.pci:
        if p.busid is None:
            continue
        facts = {"busid": p.busid, "pci_class": p.pci_class, "vendor_id": p.vendor, "device_id": p.device,
                 "pcie_link_speed": p.link_speed, "pcie_link_gts": p.link_speed_gts,
                 "pcie_link_width": p.link_width, "numa_node": _numa(p.numaid)}
        if p.kind == "gpu":
            g = gpu_by_bus.get(p.busid)
            node_id = _xml_gpu_id(topo, p.busid, g.dev if g else None)
            extra = {"cuda_dev": g.dev, "nccl_rank": g.rank, "sm": g.sm, "gdr": g.gdr} if g else {}
            topo.add_node(node_id, "gpu", ref, **facts, **extra)
            ids[p.busid] = [node_id]
        elif p.kind == "nic" or p.busid in nets_by_bus:
            names = [n.name for n in nets_by_bus.get(p.busid, []) if n.name]
            ids[p.busid] = []
            for n in nets_by_bus.get(p.busid, []):
                if not n.name:
                    continue
                node_id = f"nic:{n.name}"
                topo.add_node(node_id, "nic", ref, name=n.name, **facts, nccl_dev=n.dev,
                              net_port=n.port, net_guid=n.guid, speed_mbps=n.speed_mbps, gdr=n.gdr)
                ids[p.busid].append(node_id)
            if not names:
                node_id = f"nic:{p.busid}"
                topo.add_node(node_id, "nic", ref, name=p.busid, **facts)
                ids[p.busid] = [node_id]
            topo.add_alias(p.busid, ids[p.busid][0], ref)
        else:
            node_id = f"pcisw:{p.busid}"
            topo.add_node(node_id, "pcisw", ref, name=p.busid, **facts)
            ids[p.busid] = [node_id]
    for p in r.pci:
        if p.busid is None or p.busid not in ids:
            continue
        parent = (ids.get(p.parent_busid) or [None])[0] if p.parent_busid else (
            f"cpu:{p.numaid}" if _numa(p.numaid) is not None else None)
        if parent is None:
            continue
        for child in ids[p.busid]:
            topo.add_edge(child, parent, "pci", ref, pcie_link_speed=p.link_speed,
                          pcie_link_gts=p.link_speed_gts, pcie_link_width=p.link_width)
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
                    target = _xml_gpu_id(topo, nv.target, peer.dev)
                    topo.add_node(target, "gpu", ref, busid=nv.target)
                else:
                    target = f"nvswitch:{nv.target}"
                    topo.add_node(target, "nvswitch", ref, name=nv.target, pci_class=nv.tclass)
            topo.add_edge(gid, target, "nvlink", ref, link_count=nv.count, tclass=nv.tclass)
    _derive_xml_paths(topo, r, ids, ref)
    topo.notes.extend(f"nccl_topo_xml: {n}" for n in r.notes)


def _derive_xml_paths(topo: Topology, r: Any, ids: dict[str, list[str]], ref: dict) -> None:
    """Path classes for GPU-GPU and GPU-NIC pairs of the XML that no `topo -m` matrix gave, in
    NCCL's own terms (`derived: True`): NV<links> over NVLink (summed over shared NVSwitches), PIX
    under one switch, PXB across switches, PHB through one CPU (NCCL does not tell PHB from
    NODE), SYS across CPUs. Where `topo -m` printed the pair, its class stands alone. GPU-GPU
    pairs only for GPUs the file has <gpu> elements for (NCCL dumps list their NVLinks)."""
    parent = {p.busid: p.parent_busid for p in r.pci if p.busid}
    cpu_of = {p.busid: _numa(p.numaid) for p in r.pci if p.busid}

    def chain(busid: str) -> list[str]:
        out, seen = [], {busid}
        while parent.get(busid) and parent[busid] not in seen:
            busid = parent[busid]
            seen.add(busid)
            out.append(busid)
        return out

    dumped = [(g.busid, ids[g.busid][0]) for g in r.gpus if g.busid in ids]  # NCCL saw their NVLinks
    gpus = dumped + [(p.busid, ids[p.busid][0]) for p in r.pci if p.kind == "gpu" and p.busid in ids
                     and all(p.busid != b for b, _ in dumped)]
    nics = [(busid, nid) for busid, nids in ids.items() for nid in nids if nid.startswith("nic:")]
    # A static file without <gpu> elements says nothing of NVLink: no GPU-GPU class from it.
    pairs = [(a, b) for i, a in enumerate(dumped) for b in dumped[i + 1:]] + [(g, n) for g in gpus for n in nics]
    for (bus_a, a), (bus_b, b) in pairs:
        if topo.edge(a, b, "path") is not None:
            continue
        cls = _nvlink_class(topo, a, b) if b.startswith("gpu:") else None
        if cls is None:
            up_a, up_b = chain(bus_a), chain(bus_b)
            common = next((x for x in up_a if x in up_b), None)
            if common is not None:
                cls = "PIX" if up_a[:1] == up_b[:1] == [common] else "PXB"
            elif cpu_of.get(bus_a) is not None and cpu_of.get(bus_a) == cpu_of.get(bus_b):
                cls = "PHB"
            elif cpu_of.get(bus_a) is not None and cpu_of.get(bus_b) is not None:
                cls = "SYS"
        if cls is not None:
            topo.add_edge(a, b, "path", ref, **{"class": cls, "link_count": nv_count(cls), "derived": True})


def _nvlink_class(topo: Topology, a: str, b: str) -> str | None:
    """NV<n> for two GPUs NVLinked directly, or through the NVSwitches they share."""
    direct = topo.edge(a, b, "nvlink")
    if direct and direct.get("link_count"):
        return f"NV{direct['link_count']}"
    links_a = {peer: d.get("link_count") or 0 for peer, d in topo.nvlink_edges(a) if peer.startswith("nvswitch:")}
    links_b = {peer for peer, _ in topo.nvlink_edges(b) if peer.startswith("nvswitch:")}
    shared = sum(n for peer, n in links_a.items() if peer in links_b)
    return f"NV{shared}" if shared else None


def _numa(numaid: int | None) -> int | None:
    return numaid if numaid is not None and numaid >= 0 else None


def _xml_gpu_id(topo: Topology, busid: str, dev: int | None) -> str:
    """gpu:<dev> when a GPU of that index is known (or dev is the only name), else gpu:<busid>."""
    known = topo.aliases.get(busid)
    if known:
        return known
    node_id = f"gpu:{dev}" if dev is not None else f"gpu:{busid}"
    if dev is not None:
        topo.add_node(node_id, "gpu", None, index=dev)
    topo.add_alias(busid, node_id)
    return node_id


# -- NCCL logs and nccl-tests: observations ---------------------------------------------------

def _observe(topo: Topology, host_id: str, item: ParsedInput, facts: dict) -> None:
    attrs = topo.node(host_id)
    attrs.setdefault("observations", []).append({"source": item.source, "file": item.path, **facts})
    ref = _ref(item, None)
    if ref not in attrs["sources"]:
        attrs["sources"].append(ref)


def _merge_nccl_debug(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    _observe(topo, host_id, item, {
        "nccl_version": r.nccl_version, "cuda_version": r.cuda_version, "hosts": list(r.hosts),
        "nranks": r.nranks, "network": r.network, "networks": list(r.networks),
        "net_plugin": r.net_plugin, "net_devices": to_jsonable(r.net_devices), "gdr": r.gdr,
        "gdr_lines": to_jsonable(r.gdr_lines)[:5], "transports": dict(r.transports),
        "env": dict(r.env), "socket_fallback_reasons": list(r.socket_fallback_reasons or ()),
        "init_complete": r.init_complete, "warnings_total": r.warnings_total,
        "errors_total": r.errors_total, "errors": to_jsonable(r.errors)[:20]})


def _merge_nccl_tests(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    rows = [{"size_bytes": x.size_bytes, "oop_busbw_gbps": x.oop_busbw_gbps,
             "ip_busbw_gbps": x.ip_busbw_gbps, "oop_wrong": x.oop_wrong, "ip_wrong": x.ip_wrong,
             "run": x.run, "line_no": x.line_no} for x in r.rows]
    largest = max(rows, key=lambda x: x["size_bytes"] or 0) if rows else None
    _observe(topo, host_id, item, {
        "collective": r.collective, "nccl_version": r.nccl_version, "nranks": r.nranks,
        "avg_busbw_gbps": r.avg_busbw_gbps, "peak_busbw_gbps": r.peak_busbw_gbps,
        "out_of_bounds": r.out_of_bounds, "out_of_bounds_ok": r.out_of_bounds_ok, "runs": r.runs,
        "failures": len(r.failures), "rows": rows, "largest": largest})


_MERGERS = {
    "nvidia_smi_topo_m": _merge_topo_m,
    "nvidia_smi_topo_p2p": _merge_topo_p2p,
    "nvidia_smi_nvlink_s": _merge_nvlink_s,
    "nvml": _merge_nvml,
    "sysfs_infiniband": _merge_sysfs,
    "nccl_topo_xml": _merge_nccl_xml,
    "ibstat": _merge_ib,
    "ibv_devinfo": _merge_ib,
    "ibstatus": _merge_ib,
    "rdma_link": _merge_rdma_link,
    "nccl_debug": _merge_nccl_debug,
    "nccl_tests": _merge_nccl_tests,
}
