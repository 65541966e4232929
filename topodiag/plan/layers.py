"""The layers a parallel dimension can land on, measured from the node's graph (and nccl-tests).

- NVLink: the domains are the connected components of the NVLink subgraph (`Topology.nvlink_domains`,
  networkx), each with its size, its slowest GPU pair (a DGX-1 cube mesh joins 8 GPUs whose pairs are
  NV1, NV2 or not linked at all) and the per-GPU NVLink bandwidth of its weakest GPU: active links
  (`nvlink -s`, else what `topo -m` implies) x the per-link figure of the GPU's NVLink generation,
  one direction, as the hardware moves data and as nccl-tests' busbw measures it (H100: 18 x 25 =
  450 GB/s; the article's 900 GB/s adds both directions).
- PCIe: where two GPUs share no NVLink domain, the GPU's PCIe x16 link, one direction (PCIe 5.0 =
  64 GB/s; the article's table gives 128 GB/s over both).
- The network: the Active InfiniBand/RoCE ports (rate x ports, one rail per GPU at most), shared by
  the node's GPUs: 8 NDR ports for 8 GPUs = 50 GB/s per GPU (a NIC's line rate is one direction).
Every layer is counted the same way, one direction per GPU, so the ratio between two layers is the
ratio the hardware gives (H100 NVLink to NDR: 9x, not the article's 18x).
A measured all_reduce busbw replaces the nominal figure: in one node for NVLink, across nodes for the
network (the node's busbw over its GPUs: each GPU's share of the rails). Each layer says which it used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from .. import knowledge

ARTICLE_NDR_GBYTE_S = 50.0  # the article's "IB NDR (50 GB/s)": assumed when no input shows the network
ASSUMED_PCIE_GEN = 4
NVLINK_PER_LINK_ONE_WAY_DEFAULT = 25.0  # NVLink 2.0-4.0 alike, one direction (docs/domain.md "NVLink")
_MEMORY_RE = re.compile(r"(\d+)\s*GB\b", re.I)


@dataclass
class Layer:
    name: str                      # "nvlink" | "pcie" | "network"
    gbyte_s: Optional[float]       # per GPU, GB/s
    basis: str                     # "nominal" | "measured" | "assumed" | "unknown"
    how: str                       # how the figure was reached, for a person

    def to_json(self) -> dict:
        return {"name": self.name, "gbyte_s": _round(self.gbyte_s), "basis": self.basis, "how": self.how}


@dataclass
class Domain:
    gpus: list[str]
    slowest_pair: Optional[str]    # the worst path class between two GPUs of the domain
    links_per_gpu: Optional[int]   # of the weakest GPU
    gbyte_s: Optional[float]       # per GPU, of the weakest GPU
    basis: str = "nominal"

    def to_json(self) -> dict:
        return {"gpus": self.gpus, "size": len(self.gpus), "slowest_pair": self.slowest_pair,
                "links_per_gpu": self.links_per_gpu, "gbyte_s": _round(self.gbyte_s), "basis": self.basis}


@dataclass
class NodeLayers:
    gpus: list[str]
    gpu_model: Optional[str]
    memory_gb: Optional[float]
    domains: list[Domain]
    pcie: Layer
    network: Layer
    host: Optional[str] = None
    notes: list[str] = field(default_factory=list)
    nvlink_seen: int = 0           # GPUs with active NVLinks in `nvlink -s` (pairs or not)
    multinode: Optional[dict] = None  # {gpus, basis, how}: the NVLink domain across nodes (GB200 NVL72)

    def domain_of(self, gpu: str) -> Optional[Domain]:
        return next((d for d in self.domains if gpu in d.gpus), None)

    def to_json(self) -> dict:
        return {"host": self.host, "gpus": len(self.gpus), "gpu_model": self.gpu_model, "memory_gb": self.memory_gb,
                "nvlink_domains": [d.to_json() for d in self.domains], "multinode_nvlink": self.multinode,
                "pcie": self.pcie.to_json(),
                "network": self.network.to_json(), "notes": list(self.notes)}


def _round(v: Optional[float]) -> Optional[float]:
    return None if v is None else round(v, 3)


def _facts(topology) -> tuple[Optional[str], Optional[knowledge.GpuFacts]]:
    for g in topology.gpus():
        model = topology.node(g).get("model")
        if model:
            return model, knowledge.gpu_facts(model)
    return None, None


def _links(topology, gpu: str) -> Optional[int]:
    """Active NVLinks of a GPU: `nvlink -s` when it lists them all, else NCCL's XML link counts,
    else what `topo -m` implies (topodiag/model/paths.py)."""
    from ..model.paths import topo_nvlink_count

    nvl = topology.node(gpu).get("nvlink")
    if nvl and not nvl.get("truncated") and nvl.get("active_count") is not None:
        return int(nvl["active_count"])
    xml = [d.get("link_count") for _, d in topology.nvlink_edges(gpu) if d.get("link_count")]
    if xml:
        return int(sum(xml))
    return topo_nvlink_count(topology, gpu)


def _per_link_one_way(topology, gpu: str, facts) -> tuple[float, str]:
    """(GB/s per link, one direction, how it is known)."""
    if facts is not None and facts.nvlink_generation is not None:
        if facts.nvlink_bridge and facts.nvlink_speed_gbps == knowledge.GA102_BRIDGE_SPEED_GBPS:
            return knowledge.GA102_BRIDGE_ONE_WAY_GBYTE_S, f"{facts.model} NVLink bridge"
        gen = knowledge.NVLINK_GENS[facts.nvlink_generation]
        return gen.per_link_one_way_gbyte_s, f"{facts.model}: NVLink {gen.version}.0"
    nvl = topology.node(gpu).get("nvlink") or {}
    speeds = [s for s in nvl.get("speeds_gbps") or [] if s]
    if speeds:
        return min(speeds), "nvlink -s speed (one direction)"
    return NVLINK_PER_LINK_ONE_WAY_DEFAULT, "GPU model unknown: 25 GB/s per link, one direction, assumed (NVLink 2.0-4.0)"


def _slowest_pair(topology, gpus: list[str]) -> Optional[str]:
    from ..model.topology import class_rank

    classes = [topology.pair_class(a, b) or "none" for i, a in enumerate(gpus) for b in gpus[i + 1:]]
    known = [c for c in classes if c != "none"]
    if not known:
        return None
    worst = max(known, key=class_rank)
    return worst


def _switched(topology, facts) -> list[list[str]]:
    """Without a matrix that says which GPUs NVLink joins: on a product that joins every GPU through
    NVLink by design (knowledge.switched_nvlink), the GPUs `nvlink -s` shows with active links are one
    domain (every link goes to the switch plane, or to each of the other GPUs on a 4-GPU board)."""
    if not knowledge.switched_nvlink(facts):
        return []
    linked = [g for g in topology.gpus() if (topology.node(g).get("nvlink") or {}).get("active_count")]
    return [linked] if len(linked) > 1 else []


def _domains(topology, facts) -> tuple[list[Domain], list[str]]:
    notes = []
    out = []
    found = topology.nvlink_domains()
    switched = [] if found else _switched(topology, facts)
    if switched:
        notes.append(f"NVLink domain from nvlink -s: {len(switched[0])} GPUs with active links on {facts.model}, "
                     f"which joins its GPUs through NVLink by design (no matrix names the pairs)")
    for gpus in found or switched:
        links = [(_links(topology, g), g) for g in gpus]
        known = [(n, g) for n, g in links if n is not None]
        weakest = min(known) if known else None
        if weakest is not None:
            per_link, how = _per_link_one_way(topology, weakest[1], facts)
            gbs = weakest[0] * per_link
        else:
            per_link, how, gbs = None, "", None
        if how.startswith("GPU model unknown"):
            notes.append(f"NVLink per link: {how}")
        pair = _slowest_pair(topology, gpus) if found else "NVLink (switched, by design)"
        out.append(Domain(gpus, pair, weakest[0] if weakest else None, gbs))
    return out, sorted(set(notes))


def _multinode(facts, domains: list[Domain], gpus: list[str], fabric: list[dict]) -> Optional[dict]:
    """The NVLink domain across nodes (GB200/GB300 NVL72): its size from the product, confirmed when
    every GPU's fabric registration is Completed in one non-zero clique; None on other products, when
    the node's GPUs are not all in its one NVLink domain, or when the fabric says otherwise."""
    size = knowledge.multinode_nvlink_gpus(facts)
    if not size or len(domains) != 1 or len(domains[0].gpus) != len(gpus):
        return None
    states = {str(f.get("state") or "").lower() for f in fabric}
    cliques = {(str(f.get("clique_id")), str(f.get("cluster_uuid"))) for f in fabric}
    if fabric and states == {"completed"} and len(cliques) == 1 and next(iter(cliques))[0] not in ("0", "None"):
        clique, cluster = next(iter(cliques))
        return {"gpus": size, "basis": "nominal",
                "how": f"{facts.model}: NVL{size}, one NVLink domain of {size} GPUs across compute trays; every GPU's "
                       f"fabric is Completed in clique {clique} (cluster {cluster})"}
    if fabric:
        return None  # the fabric was read and does not show one registered clique: no domain across nodes
    return {"gpus": size, "basis": "assumed",
            "how": f"{facts.model}: NVL{size} by product design (no fabric state among the inputs: nvidia-smi -q "
                   f"or NVML would confirm the clique)"}


def _pcie(facts) -> Layer:
    gen = facts.pcie_gen if facts is not None else None
    if gen in knowledge.PCIE_X16_GBYTE_S:
        one_way = knowledge.pcie_one_way_gbyte_s(gen)
        return Layer("pcie", one_way, "nominal", f"{facts.model}: PCIe {gen}.0 x16, {one_way:g} GB/s one direction")
    one_way = knowledge.pcie_one_way_gbyte_s(ASSUMED_PCIE_GEN)
    return Layer("pcie", one_way, "assumed",
                 f"GPU's PCIe generation unknown: PCIe {ASSUMED_PCIE_GEN}.0 x16 assumed, {one_way:g} GB/s one direction")


def _gdr(topology) -> str:
    """How many GPUs have a NIC at PIX/PXB (GPUDirect RDMA at full speed), when `topo -m` says."""
    near = [topology.nearest_nic(g) for g in topology.gpus()]
    known = [n for n in near if n is not None]
    if not known:
        return ""
    close = sum(1 for _, cls in known if cls in ("PIX", "PXB"))
    return f"; GPUDirect RDMA distance (a NIC at PIX/PXB) for {close} of {len(topology.gpus())} GPUs"


def _network(topology, gpus: int) -> Layer:
    rates = []
    for _, port in topology.ib_ports():
        state = str(port.get("state") or "").lower()
        rate = port.get("rate_gbps")
        if isinstance(rate, (int, float)) and rate > 0 and "active" in state and "inactive" not in state:
            rates.append(float(rate))
    nics = len(topology.nics())
    if (not rates or not gpus) and nics and gpus:
        rails = min(nics, gpus)
        per_gpu = rails * ARTICLE_NDR_GBYTE_S / gpus
        return Layer("network", per_gpu, "assumed",
                     f"{nics} NIC(s) in the inputs but no port state or rate: NDR 400 Gb/s each assumed, {rails} "
                     f"rail(s) x 50 GB/s shared by {gpus} GPUs (give ibstat or ibv_devinfo for the real rate)"
                     + _gdr(topology))
    if not rates or not gpus:
        return Layer("network", ARTICLE_NDR_GBYTE_S, "assumed",
                     "no input shows the node's NICs or Active IB/RoCE ports: one NDR 400 Gb/s NIC per GPU assumed "
                     "(50 GB/s; give ibstat or ibv_devinfo)" + _gdr(topology))
    rails = min(len(rates), gpus)
    rate = min(rates)
    total = rails * knowledge.gbit_to_gbyte(rate)
    per_gpu = total / gpus
    short = f" (only {len(rates)} Active port(s) for {gpus} GPUs)" if len(rates) < gpus else ""
    seen = {nic for nic, port in topology.ib_ports() if port.get("state") and port.get("rate_gbps")}
    unseen = [n for n in topology.nics() if n not in seen]
    if unseen and len(rates) < gpus:
        short += f"; {len(unseen)} more NIC(s) with no port state and rate in the inputs, not counted"
    return Layer("network", per_gpu, "nominal",
                 f"{rails} Active port(s) x {rate:g} Gb/s = {total:g} GB/s per node, shared by {gpus} GPUs{short}"
                 + _gdr(topology))


def measure(topology, nccl_tests: list[tuple[Any, str]] = (), fabric: list[dict] = ()) -> NodeLayers:
    """The node's layers from its Topology; `nccl_tests` (parsed result, file) replace nominal figures;
    `fabric` ({state, clique_id, cluster_uuid} per GPU, nvidia-smi -q or NVML) confirms a multi-node
    NVLink domain."""
    gpus = topology.gpus()
    model, facts = _facts(topology)
    domains, notes = _domains(topology, facts)
    memory = None
    if model and (m := _MEMORY_RE.search(model)):
        memory = float(m.group(1))
    host = topology.host()
    layers = NodeLayers(gpus, model, memory, domains, _pcie(facts), _network(topology, len(gpus)),
                        topology.node(host).get("name") if host else None, notes)
    layers.nvlink_seen = sum(1 for g in gpus if (topology.node(g).get("nvlink") or {}).get("active_count"))
    layers.multinode = _multinode(facts, domains, gpus, list(fabric))
    for result, path in nccl_tests:
        _apply_measured(layers, result, path)
    return layers


def _apply_measured(layers: NodeLayers, result, path: str) -> None:
    """A measured all_reduce busbw at the run's largest size (>= 256 MB) replaces the nominal figure."""
    from ..checks import perf

    data = perf.as_dict(result)
    for run, rows in sorted(perf.rows_by_run(data).items()):
        rows = [r for r in rows if r.get("size_bytes") and perf.best_busbw(r)]
        if not rows or perf.collective_of(data, rows) != "all_reduce":
            continue
        largest = max(rows, key=lambda r: r["size_bytes"])
        if largest["size_bytes"] < perf.MIN_SIZE_BYTES:
            continue
        busbw = perf.best_busbw(largest)
        hosts, per_host, _ = perf.rank_layout(data, run)
        where = f"{path}: all_reduce busbw {busbw:g} GB/s at {perf.size_words(largest['size_bytes'])}"
        if len(hosts) > 1:
            gpn = max(per_host.values())
            nominal = layers.network.gbyte_s if layers.network.basis == "nominal" else None
            layers.network = Layer("network", busbw / gpn, "measured",
                                   f"{where} across {len(hosts)} nodes, over {gpn} GPUs per node")
            if nominal and busbw / gpn > 1.1 * nominal:
                layers.notes.append(f"network: the measured {busbw / gpn:.3g} GB/s per GPU is above the "
                                    f"{nominal:g} the Active ports seen allow: ports are missing from the inputs, "
                                    f"or a Tree/NVLSTree run on few nodes overstates the network (NCCL_ALGO=Ring "
                                    f"measures it)")
        elif len(hosts) == 1 or not hosts:
            for d in layers.domains:
                if len(d.gpus) > 1:
                    d.gbyte_s, d.basis = busbw, "measured"
            if layers.domains:
                layers.notes.append(f"NVLink: measured, {where} in one node")
            else:
                layers.pcie = Layer("pcie", busbw, "measured", f"{where} in one node")
