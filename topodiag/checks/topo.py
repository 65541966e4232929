"""TOPO rules over the node's path classes: GPU-pair asymmetry, SYS pairs, far NICs, P2P refused.

Path classes come from `nvidia-smi topo -m`, or, where no matrix was given, from NCCL's topology XML
(the builder derives NV#/PIX/PXB/PHB/SYS from the PCI tree and NVLinks, `derived: True`, and the
messages say so). P2P status comes from `nvidia-smi topo -p2p`.

Bandwidth figures come from knowledge.path_nominal_gbyte_s (one-way GB/s). Where the GPU model is
unknown (topo -m alone does not name it), NV# counts 25 GB/s per link (NVLink 2-4; NVLink 5 has more)
and PCIe classes the fastest PCIe in the tables (Gen5 x16, 64 GB/s): a ratio is then a lower bound
and the message says "at least".
"""

from __future__ import annotations

from typing import Any

from .. import knowledge
from ..engine import check, hit, when
from ._design import by_design_words, platform_of
from ._facts import listing
from ..model import gpu_set
from ..model.topology import class_rank, nv_count

UNKNOWN_PER_LINK_GBYTE_S = knowledge.unknown_per_link_gbyte_s()  # NVLink 2.0-4.0 one-way per link (knowledge)
UNKNOWN_PCIE_GEN = knowledge.fastest_pcie_gen()  # an upper bound for the PCIe path (knowledge/pcie.toml)


def _node_facts(topology) -> Any:
    """GpuFacts of the node's GPU model when every GPU that names one names the same model, else None."""
    facts = set()
    for gpu in topology.gpus():
        model = topology.node(gpu).get("model")
        if model:
            facts.add(knowledge.gpu_facts(model))
    return facts.pop() if len(facts) == 1 else None


def _pair_gbyte_s(cls: str, facts) -> tuple[float | None, bool]:
    """(one-way GB/s of a pair of this class, exact?). exact is False when a default was assumed."""
    if nv_count(cls) is not None:
        if facts is not None and facts.nvlink_generation is not None:
            return knowledge.path_nominal_gbyte_s(cls, nvlink_generation=facts.nvlink_generation,
                                                  bridge=facts.nvlink_bridge), True
        return nv_count(cls) * UNKNOWN_PER_LINK_GBYTE_S, False
    if facts is not None and facts.pcie_gen in knowledge.PCIE_X16_GBYTE_S:
        return knowledge.path_nominal_gbyte_s(cls, pcie_gen=facts.pcie_gen), True
    return knowledge.path_nominal_gbyte_s(cls, pcie_gen=UNKNOWN_PCIE_GEN), False


def _pair_evidence(topology, a: str, b: str) -> list:
    data = topology.pair(a, b) or {}
    return list(data.get("sources") or [])[:1]


def _known_pairs(topology) -> list[tuple[str, str, str]]:
    """The GPU pairs whose cell is a path class (NV#, PIX, PXB, PHB, NODE, SYS, SOC). The topo -m parser
    also accepts cells it does not know ("N18", "NV", "SY": a paste's typo or a future class; it
    notes them): they have no bandwidth or rank to judge, so no rule reads them as a class."""
    return [(a, b, c) for a, b, c in topology.gpu_pairs() if c and knowledge.is_path_class(c)]


def is_dgx1_cube_mesh(topology, facts=None) -> bool:
    """8 GPUs, every pair NV1, NV2 or SYS, each GPU 4 NVLink peers holding 6 links: the DGX-1 (V100)
    hybrid cube-mesh. A GPU model other than V100 rules it out."""
    if facts is not None and facts.arch != "Volta":
        return False
    gpus = topology.gpus()
    pairs = _known_pairs(topology)
    if len(gpus) != 8 or len(pairs) != 28:
        return False
    if any(c not in ("NV1", "NV2", "SYS") for _, _, c in pairs):
        return False
    for g in gpus:
        counts = [nv_count(c) for a, b, c in pairs if g in (a, b) and nv_count(c)]
        if len(counts) != 4 or sum(counts) != 6:
            return False
    return True


def _fmt(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}"


DERIVED_FROM = {"nccl_topo_xml": "NCCL's topology XML", "nvml": "NVML", "sysfs_infiniband": "the sysfs PCI tree"}


def _derived_from(topology, pairs) -> str:
    """The sources the judged pairs' path classes were derived from ("NVML and ..."), "" when topo -m
    printed them."""
    sources = []
    for a, b in pairs:
        edge = topology.pair(a, b) or {}
        if edge.get("derived"):
            sources += [DERIVED_FROM.get(s.get("source"), s.get("source")) for s in edge.get("sources") or []]
    return " and ".join(dict.fromkeys(sources))


def _ratio(best_bw, slow_bw) -> str:
    return f"{best_bw / slow_bw:.1f}x" if best_bw and slow_bw else "unknown"


def _asymmetry_model(topology, dgx1: bool) -> tuple[Any, str]:
    """(GpuFacts of the node's model, the TOPO001 message that names it): the model the GPUs name, a V100
    assumed from the DGX-1 shape, or none known."""
    facts = _node_facts(topology)
    if facts is not None:
        return facts, "default"
    if dgx1:
        return knowledge.gpu_facts("V100-SXM2"), "dgx1_assumed"
    return None, "no_model"


def _unlinked(topology, pairs) -> list[str]:
    """The GPUs with no NVLink to any GPU."""
    linked = {g for a, b, c in pairs if nv_count(c) for g in (a, b)}
    return [g for g in topology.gpus() if g not in linked]


def _asymmetry_verdict(profile, dgx1: bool, best_cls: str, slow_cls: str) -> tuple[Any, str]:
    """(severity, expectation): info for the DGX-1 cube-mesh, error below the profile's pair class,
    else the rule's severity against the node's best pair."""
    if dgx1:
        return "info", "DGX-1 hybrid cube-mesh (by design)"
    want = getattr(profile, "gpu_pair_class", None)
    if want and nv_count(want) is not None and class_rank(slow_cls) > class_rank(want):
        return "error", f"profile {profile.name}: every GPU pair {want}"
    return None, f"the node's best GPU pair ({best_cls})"


@check("TOPO001")
def gpu_link_asymmetry(topology, params, profile=None):
    pairs = _known_pairs(topology)
    if len(pairs) < 2:
        return
    best_cls = min((c for _, _, c in pairs), key=class_rank)
    if nv_count(best_cls) is None:
        return  # no NVLink at all: PCIe/SYS differences are TOPO002's
    worse = [(a, b, c) for a, b, c in pairs if class_rank(c) > class_rank(best_cls)]
    if worse:
        yield _asymmetry(topology, profile, pairs, best_cls, worse)


def _asymmetry(topology, profile, pairs, best_cls: str, worse):
    dgx1 = is_dgx1_cube_mesh(topology, _node_facts(topology))
    facts, variant = _asymmetry_model(topology, dgx1)
    slow_a, slow_b, slow_cls = max(worse, key=lambda p: class_rank(p[2]))
    best_bw, best_exact = _pair_gbyte_s(best_cls, facts)
    slow_bw, slow_exact = _pair_gbyte_s(slow_cls, facts)
    pcie_slowest = nv_count(slow_cls) is None  # NV# against NV#: the link counts alone give the ratio
    unlinked = [] if dgx1 else _unlinked(topology, pairs)
    derived = "" if dgx1 else _derived_from(topology, [(slow_a, slow_b)])
    severity, expectation = _asymmetry_verdict(profile, dgx1, best_cls, slow_cls)
    bridged = severity is None and _bridged_by_design(topology, profile, facts)
    if bridged:
        severity, expectation = "info", f"{facts.model}: NVLink only within bridged card pairs (by design)"
    return hit(sorted({g for a, b, _ in worse for g in (a, b)}, key=topology.gpus().index),
               evidence=_pair_evidence(topology, slow_a, slow_b), severity=severity, expectation=expectation,
               variant=variant,
               notes=when(sys_upper_bound=best_bw and slow_bw and slow_cls == "SYS",
                          defaults_assumed=pcie_slowest and not (best_exact and slow_exact), dgx1=dgx1,
                          unlinked_one=len(unlinked) == 1, unlinked_many=len(unlinked) > 1,
                          slowest_pair=not dgx1 and not bridged, bridged=bridged, derived=derived),
               slow_a=slow_a, slow_b=slow_b, slow_class=slow_cls, slow_gbyte_s=_fmt(slow_bw) if slow_bw else "?",
               best_class=best_cls, best_gbyte_s=_fmt(best_bw) if best_bw else "?", ratio=_ratio(best_bw, slow_bw),
               weak_pairs=len(worse), pairs=len(pairs), model=getattr(facts, "model", None),
               unlinked=", ".join(unlinked), derived_from=derived)


def _bridged_by_design(topology, profile, facts) -> bool:
    """The GPUs are cards joined by NVLink bridges in pairs (RTX A6000, A100/H100 PCIe, H100 NVL): the
    other pairs are PCIe by design. Not when a profile asks for NVLink between every pair."""
    if facts is None or not facts.nvlink_bridge:
        return False
    want = getattr(profile, "gpu_pair_class", None)
    return not (want and nv_count(want) is not None)


def _same_numa(topology, sys_pairs) -> list[tuple[str, str]]:
    """The SYS pairs whose two GPUs sit on one NUMA node (a hidden PCIe topology, not a socket crossing)."""
    return [(a, b) for a, b in sys_pairs
            if topology.numa_of(a) is not None and topology.numa_of(a) == topology.numa_of(b)]


def _pcie_by_design(platform, profile) -> bool:
    """GPU pairs over PCIe (and across the sockets) are the node's design: a PCIe-only product (no NVLink,
    or bridged pairs), a node whose GPU pairs are all PCIe, or a VM whose hypervisor hides the PCIe tree;
    not when a profile asks for better pairs than SYS."""
    want = getattr(profile, "gpu_pair_class", None)
    if want and want != "SYS":
        return False
    return bool(platform.pcie_only or platform.vm)


def _cross_socket_verdict(profile, dgx1: bool, same_numa: list) -> tuple[Any, str]:
    """(severity, expectation): info where SYS is expected (the profile, or the DGX-1 cube-mesh)."""
    if getattr(profile, "gpu_pair_class", None) == "SYS":
        return "info", f"profile {profile.name}: GPU pairs up to SYS expected"
    if dgx1:
        return ("info" if not same_numa else None), "DGX-1 hybrid cube-mesh (by design)"
    return None, "GPU pairs within one socket"


@check("TOPO002")
def gpu_pair_cross_socket(topology, params, profile=None):
    pairs = _known_pairs(topology)
    sys_pairs = [(a, b) for a, b, c in pairs if c == "SYS"]
    if not sys_pairs:
        return
    dgx1 = is_dgx1_cube_mesh(topology, _node_facts(topology))
    same_numa = _same_numa(topology, sys_pairs)
    numa_a, numa_b = same_numa[0] if same_numa else (None, None)
    derived = _derived_from(topology, sys_pairs)
    severity, expectation = _cross_socket_verdict(profile, dgx1, same_numa)
    platform = platform_of(topology, profile)
    design = severity is None and _pcie_by_design(platform, profile)
    if design:
        severity, expectation = "info", f"{by_design_words(platform)}: GPU pairs over PCIe by design"
    yield hit(sorted({g for p in sys_pairs for g in p}, key=topology.gpus().index),
              evidence=_pair_evidence(topology, *sys_pairs[0]), severity=severity, expectation=expectation,
              notes=when(same_numa=same_numa, dgx1=dgx1, every_pair=len(sys_pairs) == len(pairs), derived=derived,
                         pcie_design=design),
              count=len(sys_pairs), platform=platform.label, pairs=len(pairs), listed=listing((f"{a}-{b}" for a, b in sys_pairs), 6),
              same_numa=len(same_numa), numa_a=numa_a, numa_b=numa_b,
              numa=topology.numa_of(numa_a) if numa_a else None, derived_from=derived)


def _far_groups(topology, max_path: str) -> dict[tuple[str, str], list[str]]:
    """{(NIC, class): GPUs} of the GPUs whose nearest NIC is worse than max_path. A cell that is no path
    class (see _known_pairs) ranks last but says nothing of the distance: it is not judged."""
    groups: dict[tuple[str, str], list[str]] = {}
    for gpu in topology.gpus():
        near = topology.nearest_nic(gpu)
        if near is not None and knowledge.is_path_class(near[1]) and class_rank(near[1]) > class_rank(max_path):
            groups.setdefault((near[0], near[1]), []).append(gpu)
    return groups


def grace_model(topology, profile=None) -> str | None:
    """The Grace-based GPU model of the node (GB200, GH200, "... Grace ..."), from the GPU names the
    inputs give or, where none names a model, from the profile's match names; None when not Grace."""
    names = [m for g in topology.gpus() if (m := topology.node(g).get("model"))]
    if not names:
        names = list(getattr(profile, "match", None) or ())
    return next((n for n in names if knowledge.is_grace(n)), None)


def _grace_c2c(topology, groups, model: str, profile):
    """One info finding for a Grace-based node whose GPUs reach every NIC at SYS/NODE: by design."""
    gpus = [g for gs in groups.values() for g in gs]
    gpus = sorted(set(gpus), key=topology.gpus().index)
    nics = sorted({nic for nic, _ in groups})
    paths = sorted({cls for _, cls in groups}, key=class_rank)
    how = f"profile {profile.name}" if profile is not None and not topology.node(gpus[0]).get("model") else model
    return hit(gpus + nics, severity="info", variant="grace_c2c",
               evidence=_pair_evidence(topology, gpus[0], nics[0]),
               expectation=f"Grace-based node ({how}): GPU-NIC paths through the Grace CPU by design",
               gpus=listing(gpus, 8), count=len(gpus), nics=len(topology.nics()), path="/".join(paths), model=model)


@check("TOPO003")
def gpu_nic_far(topology, params, profile=None):
    """One finding per (NIC, class): the GPUs whose nearest NIC is that NIC at that class. On a
    Grace-based node (GB200, GH200) every GPU-NIC cell is SYS by design: one info finding says so."""
    if not topology.nics():
        return
    max_path = knowledge.normalize_path_class(getattr(profile, "gpu_nic_max_path", None) or params.get("max_path", "PXB"))
    expectation = (f"profile {profile.name}: nearest NIC at {max_path} or closer"
                   if getattr(profile, "gpu_nic_max_path", None) else f"nearest NIC at {max_path} or closer")
    groups = _far_groups(topology, max_path)
    platform = platform_of(topology, profile) if groups else None
    grace = (grace_model(topology, profile) or (GRACE_INFERRED if platform.grace else None)) if groups else None
    if grace:
        yield _grace_c2c(topology, groups, grace, profile)
        return
    design = _nic_by_design(platform, profile) if groups else None
    for (nic, cls), gpus in sorted(groups.items(), key=lambda kv: topology.gpus().index(kv[1][0])):
        yield _far(topology, nic, cls, gpus, expectation, max_path, platform, design)


def _far(topology, nic: str, cls: str, gpus: list[str], expectation: str, max_path: str, platform, design):
    """One (NIC, class) group's finding: a warning, or info when the far NIC is the node's design."""
    topo_name = topology.node(nic).get("topo_name")
    derived = _derived_from(topology, [(g, nic) for g in gpus])
    return hit(gpus + [nic], evidence=_pair_evidence(topology, gpus[0], nic),
               expectation=f"{by_design_words(platform)}: {design}" if design else expectation,
               severity="info" if design else None, variant="one_gpu" if len(gpus) == 1 else "default",
               notes=when(derived=derived, no_gdr=design == NO_GDR, pcie_design=design == PCIE_NICS),
               model=getattr(platform.facts, "model", None) or "these GPUs", platform=platform.label,
               gpus=", ".join(gpus), nic=nic + (f" ({topo_name})" if topo_name and topo_name not in nic else ""),
               path=cls, max_path=max_path, derived_from=derived)


GRACE_INFERRED = "Grace, inferred from the GPUs' own NUMA ids and SYS to every NIC"
NO_GDR = "no GPUDirect RDMA on this board (by design)"
PCIE_NICS = "GPUs and NICs on separate PCIe root ports or sockets (by design)"


def _nic_by_design(platform, profile) -> str | None:
    """Why a far NIC is the node's design, or None: a board without GPUDirect RDMA (GeForce), or a PCIe-only
    chassis; never when the profile sets gpu_nic_max_path."""
    if getattr(profile, "gpu_nic_max_path", None):
        return None
    if platform.gpudirect_rdma is False:
        return NO_GDR
    return PCIE_NICS if platform.pcie_only or platform.vm else None


P2P_MEANING = {"CNS": "chipset not supported", "GNS": "GPU not supported (GeForce/consumer boards refuse P2P)",
               "TNS": "topology not supported", "NS": "not supported", "DR": "disabled by regkey",
               "U": "unknown"}
P2P_MODE = {"r": "read", "w": "write", "rw": "read/write", "n": "over NVLink", "a": "atomics", "p": "over PCIe",
            "unknown": "access"}  # unknown: the paste does not show which -p2p mode ran


def _refusals(topology) -> dict[tuple[str, str], list[tuple[str, str, bool]]]:
    """{(mode, status): [(GPU a, GPU b, refused one way only)]} of the cells that are not OK; NVLink (n)
    and atomics (a) modes only for NVLinked pairs."""
    refused: dict[tuple[str, str], list[tuple[str, str, bool]]] = {}
    for a, b, _, d in topology.edges(kind="p2p"):
        nvlinked = nv_count(topology.pair_class(a, b)) is not None
        for key, cells in d.items():
            mode = key[len("status_"):] if key.startswith("status_") else None
            if mode is None or (mode in ("n", "a") and not nvlinked):
                continue
            for status in sorted({st for st in cells.values() if st != "OK"}):
                both = all(st == status for st in cells.values()) and len(cells) == 2
                refused.setdefault((mode, status), []).append((a, b, not both))
    return refused


@check("TOPO004")
def gpu_p2p_unsupported(topology, params, profile=None):
    """GPU pairs whose `topo -p2p` status is not OK: NCCL cannot use P2P between them.

    Read/write (r, w, rw; unknown mode counts as read/write) refusals are judged; NVLink (n) and
    atomics (a) refusals only where `topo -m` says the pair is NVLinked, since a PCIe pair has no
    NVLink P2P and often no P2P atomics by design."""
    for (mode, status), cells in sorted(_refusals(topology).items()):
        yield _refused(topology, mode, status, cells)


def _nvlinked(topology, pairs) -> dict[str, Any]:
    """How many of the pairs are NVLinked, and the first (a P2P refusal there is a fault)."""
    nvlinked = [p for p in pairs if nv_count(topology.pair_class(*p)) is not None]
    if not nvlinked:
        return {"nvlinked": 0}
    a, b = nvlinked[0]
    return {"nvlinked": len(nvlinked), "nv_a": a, "nv_b": b, "nv_class": topology.pair_class(a, b)}


def _refusal_verdict(status: str, nvlinked: int) -> tuple:
    """(severity, expectation): error on NVLinked pairs; info for GNS (the GPU offers no P2P: a GeForce
    board's design); else the rule's severity."""
    if nvlinked:
        return "error", "P2P OK between every GPU pair"
    if status == "GNS":
        return "info", "the GPU refuses P2P (GNS): its design"
    return None, "P2P OK between every GPU pair"


def _refused(topology, mode: str, status: str, cells):
    order = topology.gpus()
    pairs = sorted(((a, b) for a, b, _ in cells), key=lambda p: (order.index(p[0]), order.index(p[1])))
    nvlinked = _nvlinked(topology, pairs)
    paths = sorted({c for p in pairs if (c := topology.pair_class(*p))}, key=class_rank)
    one_way = [f"{a}-{b}" for a, b, partial in cells if partial]
    severity, expectation = _refusal_verdict(status, nvlinked["nvlinked"])
    return hit(sorted({g for p in pairs for g in p}, key=order.index),
               evidence=list((topology.edge(*pairs[0], "p2p") or {}).get("sources") or [])[:1],
               severity=severity, expectation=expectation,
               notes=when(paths=paths, one_way=one_way, nvlinked=nvlinked["nvlinked"], gns=severity == "info"),
               count=len(pairs), listed=listing((f"{a}-{b}" for a, b in pairs), 8), status=status,
               meaning=P2P_MEANING.get(status, status), mode=P2P_MODE.get(mode, mode), paths="/".join(paths),
               one_way=", ".join(one_way[:4]), **nvlinked)


def _pcie(attrs: dict) -> tuple[int | None, int | None]:
    """(PCIe generation, width) of a device's current link, from the model's pcie_link_* facts."""
    gen = knowledge.pcie_gen_from_link_speed(attrs.get("pcie_link_gts") or attrs.get("pcie_link_speed"))
    width = attrs.get("pcie_link_width")
    return gen, width if isinstance(width, int) and width > 0 else None


def _gpu_bandwidth(gen, width: int, max_gen, max_width: int) -> dict[str, Any]:
    """The link's one-way GB/s now and at its maximum, when the generation is known."""
    now = knowledge.pcie_one_way_gbyte_s(gen, width) if gen else None
    full = knowledge.pcie_one_way_gbyte_s(max_gen or gen, max_width) if (max_gen or gen) else None
    if not (now and full):
        return {}
    return {"now": _fmt(now), "full": _fmt(full)}


def _gpu_link(topology, gpu: str, full_width: int):
    """A GPU whose PCIe link is narrower than its maximum (x16 unless a source says otherwise) or below its
    maximum generation; None when it is at both."""
    attrs = topology.node(gpu)
    gen, width = _pcie(attrs)
    if width is None:
        return None
    max_width = attrs.get("pcie_max_link_width") or full_width
    max_gen = knowledge.pcie_gen_from_link_speed(attrs.get("pcie_max_link_gts"))
    narrow = width < max_width
    slow = None not in (gen, max_gen) and gen < max_gen
    if not (narrow or slow):
        return None
    bandwidth = _gpu_bandwidth(gen, width, max_gen, max_width)
    return hit([gpu], evidence=list(attrs.get("sources") or [])[:1],
               expectation=f"GPU PCIe link x{max_width}" + (f" Gen{max_gen}" if max_gen else ""),
               variant="narrow_and_slow" if narrow and slow else "default" if narrow else "slow",
               notes=when(bandwidth=bandwidth), device=gpu, width=width, max_width=max_width, gen=gen,
               max_gen=max_gen, **bandwidth)


def _nics_by_bus(topology) -> dict[str, list[str]]:
    """The NICs with a port speed by PCI bus id (the ports of one card share its link)."""
    by_bus: dict[str, list[str]] = {}
    for nic in topology.nics():
        attrs = topology.node(nic)
        if attrs.get("busid") and attrs.get("speed_mbps"):
            by_bus.setdefault(attrs["busid"], []).append(nic)
    return by_bus


def _nic_link(topology, busid: str, nics: list[str]):
    """A NIC whose PCIe link carries less than its ports' line rate together; None when it carries it."""
    attrs = topology.node(nics[0])
    gen, width = _pcie(attrs)
    link = knowledge.pcie_one_way_gbyte_s(gen, width) if gen and width else None
    ports = knowledge.gbit_to_gbyte(sum(topology.node(n)["speed_mbps"] for n in nics) / 1000)
    if link is None or link >= ports * (1 - knowledge.IB_RATE_REL_TOL):
        return None
    return hit(nics, evidence=list(attrs.get("sources") or [])[:1],
               expectation="a NIC's PCIe link at least its ports' line rate", variant="nic_slot",
               busid=busid, nics=", ".join(n.split(":", 1)[-1] for n in nics), gen=gen, width=width,
               link=_fmt(link), port_rates=" + ".join(f"{topology.node(n)['speed_mbps'] / 1000:g}" for n in nics),
               ports=_fmt(ports), percent=f"{100 * link / ports:.0f}")


@check("TOPO005")
def pcie_link_degraded(topology, params):
    """A GPU whose PCIe link trained narrower than x16 (or below its maximum, where a source says
    it), and a NIC whose PCIe link carries less than its ports' line rate."""
    full_width = int(params.get("gpu_width", 16))
    for gpu in topology.gpus():
        found = _gpu_link(topology, gpu, full_width)
        if found is not None:
            yield found
    for busid, nics in sorted(_nics_by_bus(topology).items()):
        found = _nic_link(topology, busid, nics)
        if found is not None:
            yield found


_LOST_RE = __import__("re").compile(r"GPU is lost|fallen off the bus|Unable to determine the device handle", __import__("re").I)


# NVML failures that mean the driver stack is broken on a host with GPUs (not a slow or unprivileged probe).
NVML_DRIVER_FAULTS = ("NVML_ERROR_DRIVER_NOT_LOADED", "NVML_ERROR_LIBRARY_NOT_FOUND",
                      "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "NVML_ERROR_GPU_IS_LOST")


def _smi_lost(topology, observations) -> list:
    """nvidia-smi's 'GPU is lost' / 'fallen off the bus': one critical finding per output that says so."""
    found = []
    for obs in observations:
        if not obs.get("source", "").startswith("nvidia_smi"):
            continue
        # the error lines an nvidia-smi observation keeps (only nvlink -s's: a text that is only an
        # nvidia-smi failure is read as nvlink -s too)
        e = next((e for e in obs.get("errors") or [] if _LOST_RE.search(e.get("text", ""))), None)
        if e is not None:
            found.append(hit([topology.host() or "host:local"], severity="critical", variant="smi_lost",
                             evidence=[{"source": obs["source"], "file": obs.get("file"), "line_no": e.get("line_no")}],
                             expectation="every GPU answers", text=e["text"].strip()[:200]))
    return found


def _on_bus(topology) -> list[str]:
    """The GPUs the sysfs PCI tree shows that this job step or container can see."""
    return [g for g in gpu_set.on_bus(topology) if topology.node(g).get("job_visible") is not False]


def _busids(topology, gpus: list[str]) -> str:
    return ", ".join(topology.node(g).get("busid") or g for g in gpus)


def _not_in_nvml(topology, on_bus: list[str]):
    """The GPUs on the PCI bus that NVML (which answers) does not list; None when it lists them all."""
    unseen = [g for g in on_bus if not any(s.get("source") == "nvml" for s in topology.node(g).get("sources") or [])]
    if not unseen:
        return None
    return hit(unseen, severity="error", evidence=[{"source": "sysfs_infiniband"}],
               expectation="NVML lists every NVIDIA GPU on the PCI bus", variant="not_in_nvml",
               count=len(unseen), busids=_busids(topology, unseen))


def _not_listed(topology):
    """Without NVML: GPUs on the PCI bus (visible here) that no nvidia-smi output lists, where one lists
    others (none listing any is SYS005: not checked). Outputs that name GPUs by index only, and not as
    many as the bus shows, cannot say which GPU they lack: the host is the subject then."""
    inv = gpu_set.inventory(topology)
    if not inv["unchecked"] or not (inv["checked"] or inv["unmatched"]):
        return None
    listed = len(inv["checked"]) + len(inv["unmatched"])
    subjects = [topology.host() or "host:local"] if inv["unmatched"] else inv["unchecked"]
    busids = "which: unknown (they name GPUs by index)" if inv["unmatched"] else _busids(topology, inv["unchecked"])
    return hit(subjects, severity="error", evidence=[{"source": "sysfs_infiniband"}], variant="not_listed",
               expectation="nvidia-smi lists every NVIDIA GPU on the PCI bus", count=len(inv["unchecked"]),
               on_bus=listed + len(inv["unchecked"]), listed=listed, busids=busids)


def _not_visible(topology):
    """GPUs on the PCI bus this job step or container cannot see: said (info), never judged missing."""
    hidden = [g for g in gpu_set.on_bus(topology) if topology.node(g).get("job_visible") is False]
    if not hidden:
        return None
    scope = next((o for o in topology.observations("gpu_scope")), {})
    return hit(hidden, severity="info", evidence=[{"source": "gpu_scope", "file": scope.get("file")}],
               expectation="only the GPUs visible to this job are judged", variant="not_visible",
               count=len(hidden), busids=_busids(topology, hidden), visible=len(scope.get("visible") or []),
               how=scope.get("restricted_by") or "the job's selection")


def _nvml_gpus(topology, nvml: dict) -> list:
    """What NVML says against the PCI bus: GPUs it reports lost, NVML failing on a host with NVIDIA GPUs
    on the bus, or GPUs on the bus it does not list."""
    evidence = [{"source": "nvml", "file": nvml.get("file")}]
    found = [hit([f"gpu:{index}"], severity="critical", evidence=evidence, expectation="every GPU answers",
                 variant="nvml_lost", index=index) for index in nvml.get("lost") or []]
    on_bus = _on_bus(topology)
    if not nvml.get("ok") and on_bus and nvml.get("error_name") in NVML_DRIVER_FAULTS:
        found.append(hit(on_bus[:8], severity="error", evidence=evidence,
                         expectation="NVML answers on a host with NVIDIA GPUs", variant="nvml_fails",
                         count=len(on_bus), error=nvml.get("error") or nvml.get("error_name") or "NVML failed"))
    elif nvml.get("ok"):
        found.append(_not_in_nvml(topology, on_bus))
    return [h for h in found if h is not None]


@check("TOPO006")
def gpu_missing(topology, params, profile=None):
    """A GPU the node should have and does not show: lost (nvidia-smi's 'GPU is lost', NVML's
    GPU_IS_LOST), on the PCI bus but not in NVML, NVML failing on a host with NVIDIA GPUs on the
    bus, or fewer GPUs than the profile's (counted over the inputs not cut short: a paste that ends
    inside a GPU's block, or elides whole GPUs, proves none missing)."""
    observations = topology.observations()
    yield from _smi_lost(topology, observations)
    nvml = next((o for o in observations if o.get("source") == "nvml"), None)
    found = _nvml_gpus(topology, nvml) if nvml is not None else [_not_listed(topology)]
    yield from (h for h in found + [_not_visible(topology)] if h is not None)
    want = getattr(profile, "gpus", None)
    seen = gpu_set.inventory(topology)["count"]  # one set by bus id: GPUs hidden from this job included
    if not want or seen >= want:
        return
    seen = min(seen, len(_listed_in_full(topology, observations)))
    if seen == 0 and topology.gpus():
        return  # only inputs cut short list GPUs: the GPUs they do not show may be there
    expectation = f"profile {profile.name}: {want} GPUs"
    if seen:
        yield hit([topology.host() or "host:local"], severity="error", expectation=expectation, seen=seen, want=want)
    elif _gpu_lister_read(observations, nvml):
        yield hit([topology.host() or "host:local"], severity="error", expectation=expectation, variant="none_seen",
                  want=want)


def _listed_in_full(topology, observations) -> list[str]:
    """The GPUs some input that is not cut short lists: an output that ends inside a GPU's block
    (`truncated`) or whose elision hid whole GPUs shows some of the node's GPUs, not how many it has."""
    partial = {(o.get("source"), o.get("file")) for o in observations
               if o.get("truncated") or o.get("elided_gpu_indices")}
    if not partial:
        return topology.gpus()
    return [g for g in topology.gpus()
            if not (refs := topology.node(g).get("sources") or [])
            or any((r.get("source"), r.get("file")) not in partial for r in refs)]


def _gpu_lister_read(observations, nvml) -> bool:
    """Whether an input that lists the node's GPUs was read, so that seeing none means none are
    visible (NVML answering, or the sysfs PCI tree), not that nothing looked."""
    if nvml is not None and nvml.get("ok"):
        return True
    return any(o.get("source") == "sysfs_infiniband" and o.get("pci_scanned") for o in observations)


def _topo_devices(nvidia_smi_topo_m) -> tuple[list[str], list[str]]:
    """(GPU names, NIC names) of a parsed `topo -m` matrix: its rows and columns alike."""
    from ..parsers.base import to_jsonable

    data = nvidia_smi_topo_m if isinstance(nvidia_smi_topo_m, dict) else to_jsonable(nvidia_smi_topo_m)
    devices = [d for d in data.get("devices") or [] if isinstance(d, dict)]
    return ([d.get("name") for d in devices if d.get("kind") == "gpu"],
            [d.get("name") for d in devices if d.get("kind") == "nic"])


@check("TOPO007")
def nic_rows_missing(topology, nvidia_smi_topo_m, profile=None):
    """`topo -m` lists GPUs and no NIC at all while the profile (given or detected) expects compute
    NICs, and no other input shows one: the RDMA devices are hidden where the matrix was taken."""
    want = getattr(profile, "nics", None)
    if not want:
        return
    gpus, nics = _topo_devices(nvidia_smi_topo_m)
    if not gpus or nics or topology.nics():
        return
    yield hit([topology.host() or "host:local"], expectation=f"profile {profile.name}: {want} compute NICs",
              evidence=[{"source": "nvidia_smi_topo_m"}], gpus=len(gpus), nics=want, profile=profile.name)
