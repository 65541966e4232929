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
from ..engine import check, hit
from ..model.topology import class_rank, nv_count

UNKNOWN_PER_LINK_GBYTE_S = 25.0  # NVLink 2.0-4.0 one-way per link (DOMAIN.md "NVLink")
UNKNOWN_PCIE_GEN = 5  # fastest row of DOMAIN.md "PCIe (x16)": an upper bound for the PCIe path


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
    return [(a, b, c) for a, b, c in topology.gpu_pairs() if c]


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


def _derived_note(topology, pairs) -> str:
    """'; path classes derived from NVML ...' when the judged pairs were not printed by topo -m."""
    sources = []
    for a, b in pairs:
        edge = topology.pair(a, b) or {}
        if edge.get("derived"):
            sources += [DERIVED_FROM.get(s.get("source"), s.get("source")) for s in edge.get("sources") or []]
    if not sources:
        return ""
    return f"; path classes derived from {' and '.join(dict.fromkeys(sources))} (no topo -m matrix given)"


@check("TOPO001")
def gpu_link_asymmetry(topology, params, profile=None):
    pairs = _known_pairs(topology)
    if len(pairs) < 2:
        return
    best_cls = min((c for _, _, c in pairs), key=class_rank)
    if nv_count(best_cls) is None:
        return  # no NVLink at all: PCIe/SYS differences are TOPO002's
    worse = [(a, b, c) for a, b, c in pairs if class_rank(c) > class_rank(best_cls)]
    if not worse:
        return
    facts = _node_facts(topology)
    dgx1 = is_dgx1_cube_mesh(topology, facts)
    assumed_model = dgx1 and facts is None
    if assumed_model:
        facts = knowledge.gpu_facts("V100-SXM2")
    slow_a, slow_b, slow_cls = max(worse, key=lambda p: class_rank(p[2]))
    best_bw, best_exact = _pair_gbyte_s(best_cls, facts)
    slow_bw, slow_exact = _pair_gbyte_s(slow_cls, facts)
    ratio = best_bw / slow_bw if best_bw and slow_bw else None
    if ratio is None:
        ratio_text = "unknown"
    elif nv_count(slow_cls) is not None:
        ratio_text = f"{ratio:.1f}x"  # NV# against NV#: the link counts alone give it
    else:
        ratio_text = f"{ratio:.1f}x"
        if slow_cls == "SYS":
            ratio_text += " or more (SYS counted at the PCIe figure, an upper bound for the cross-socket path)"
    if not (best_exact and slow_exact) and nv_count(slow_cls) is None:
        ratio_text += "; GPU model unknown, so 25 GB/s per NVLink (NVLink 2.0-4.0) and PCIe Gen5 x16 are assumed"
    subjects = sorted({g for a, b, _ in worse for g in (a, b)}, key=topology.gpus().index)
    if dgx1:
        note = ("; this is the DGX-1 hybrid cube-mesh (V100: each GPU has 6 NVLinks to 4 peers, NV1/NV2, "
                "the other 3 over SYS): asymmetric by design, not a fault")
        severity, expectation = "info", "DGX-1 hybrid cube-mesh (by design)"
    else:
        unlinked = [g for g in topology.gpus()
                    if not any(nv_count(c) for a, b, c in pairs if g in (a, b))]
        note = (f"; {', '.join(unlinked)} {'has' if len(unlinked) == 1 else 'have'} no NVLink to any GPU"
                if unlinked else "")
        note += ("; a collective over all GPUs runs at the slowest pair") + _derived_note(topology, [(slow_a, slow_b)])
        severity, expectation = None, f"the node's best GPU pair ({best_cls})"
        want = getattr(profile, "gpu_pair_class", None)
        if want and nv_count(want) is not None and class_rank(slow_cls) > class_rank(want):
            severity, expectation = "error", f"profile {profile.name}: every GPU pair {want}"
    model = "" if facts is None else (f" ({facts.model}, assumed from the DGX-1 shape)" if assumed_model
                                      else f" ({facts.model})")
    yield hit(subjects, evidence=_pair_evidence(topology, slow_a, slow_b), severity=severity,
              expectation=expectation, slow_a=slow_a, slow_b=slow_b, slow_class=slow_cls,
              slow_gbyte_s=_fmt(slow_bw) if slow_bw else "?", best_class=best_cls,
              best_gbyte_s=_fmt(best_bw) if best_bw else "?", ratio=ratio_text, weak_pairs=len(worse),
              pairs=len(pairs), model=model, note=note)


@check("TOPO002")
def gpu_pair_cross_socket(topology, params, profile=None):
    pairs = _known_pairs(topology)
    sys_pairs = [(a, b) for a, b, c in pairs if c == "SYS"]
    if not sys_pairs:
        return
    facts = _node_facts(topology)
    dgx1 = is_dgx1_cube_mesh(topology, facts)
    same_numa = [(a, b) for a, b in sys_pairs
                 if topology.numa_of(a) is not None and topology.numa_of(a) == topology.numa_of(b)]
    notes = []
    if same_numa:
        a, b = same_numa[0]
        notes.append(f"{len(same_numa)} of them join GPUs on the same NUMA node (e.g. {a}-{b}, both NUMA "
                     f"{topology.numa_of(a)}): SYS within one NUMA node is not a real cross-socket path but a "
                     "hidden PCIe topology (typically a VM whose hypervisor does not expose the PCIe switches); "
                     "the real path and whether P2P works are unknown from this matrix")
    if dgx1:
        notes.append("this is the DGX-1 hybrid cube-mesh, where the GPUs without an NVLink between them "
                     "cross the sockets by design")
    if len(sys_pairs) == len(pairs):
        notes.append("every GPU pair is SYS")
    derived = _derived_note(topology, sys_pairs)
    if derived:
        notes.append(derived[2:])
    listed = ", ".join(f"{a}-{b}" for a, b in sys_pairs[:6]) + (", ..." if len(sys_pairs) > 6 else "")
    subjects = sorted({g for p in sys_pairs for g in p}, key=topology.gpus().index)
    severity = "info" if dgx1 and not same_numa else None
    expectation = "DGX-1 hybrid cube-mesh (by design)" if dgx1 else "GPU pairs within one socket"
    if getattr(profile, "gpu_pair_class", None) == "SYS":
        severity, expectation = "info", f"profile {profile.name}: GPU pairs up to SYS expected"
    yield hit(subjects, evidence=_pair_evidence(topology, *sys_pairs[0]), severity=severity,
              expectation=expectation,
              count=len(sys_pairs), pairs=len(pairs), listed=listed,
              note=("; " + "; ".join(notes)) if notes else "")


@check("TOPO003")
def gpu_nic_far(topology, params, profile=None):
    """One finding per (NIC, class): the GPUs whose nearest NIC is that NIC at that class."""
    if not topology.nics():
        return
    max_path = getattr(profile, "gpu_nic_max_path", None) or params.get("max_path", "PXB")
    max_path = knowledge.normalize_path_class(max_path)
    expectation = (f"profile {profile.name}: nearest NIC at {max_path} or closer"
                   if getattr(profile, "gpu_nic_max_path", None) else f"nearest NIC at {max_path} or closer")
    groups: dict[tuple[str, str], list[str]] = {}
    for gpu in topology.gpus():
        near = topology.nearest_nic(gpu)
        if near is None:
            continue
        nic, cls = near
        if class_rank(cls) > class_rank(max_path):
            groups.setdefault((nic, cls), []).append(gpu)
    for (nic, cls), gpus in sorted(groups.items(), key=lambda kv: topology.gpus().index(kv[1][0])):
        topo_name = topology.node(nic).get("topo_name")
        label = nic + (f" ({topo_name})" if topo_name and topo_name not in nic else "")
        pairs = [(g, nic) for g in gpus]
        yield hit(gpus + [nic], evidence=_pair_evidence(topology, gpus[0], nic), expectation=expectation,
                  gpus=", ".join(gpus), verb="is" if len(gpus) == 1 else "are", nic=label, path=cls,
                  max_path=max_path, note=_derived_note(topology, pairs))


P2P_MEANING = {"CNS": "chipset not supported", "GNS": "GPU not supported (GeForce/consumer boards refuse P2P)",
               "TNS": "topology not supported", "NS": "not supported", "DR": "disabled by regkey",
               "U": "unknown"}
P2P_MODE = {"r": "read", "w": "write", "rw": "read/write", "n": "over NVLink", "a": "atomics", "p": "over PCIe",
            "unknown": "access"}  # unknown: the paste does not show which -p2p mode ran


@check("TOPO004")
def gpu_p2p_unsupported(topology, params, profile=None):
    """GPU pairs whose `topo -p2p` status is not OK: NCCL cannot use P2P between them.

    Read/write (r, w, rw; unknown mode counts as read/write) refusals are judged; NVLink (n) and
    atomics (a) refusals only where `topo -m` says the pair is NVLinked, since a PCIe pair has no
    NVLink P2P and often no P2P atomics by design."""
    refused: dict[tuple[str, str], list[tuple[str, str, bool]]] = {}  # (mode, status) -> (a, b, one way)
    for a, b, _, d in topology.edges(kind="p2p"):
        nvlinked = nv_count(topology.pair_class(a, b)) is not None
        for key, cells in d.items():
            mode = key[len("status_"):] if key.startswith("status_") else None
            if mode is None or (mode in ("n", "a") and not nvlinked):
                continue
            for status in sorted({st for st in cells.values() if st != "OK"}):
                both = all(st == status for st in cells.values()) and len(cells) == 2
                refused.setdefault((mode, status), []).append((a, b, not both))
    order = topology.gpus()
    for (mode, status), cells in sorted(refused.items()):
        pairs = sorted(((a, b) for a, b, _ in cells), key=lambda p: (order.index(p[0]), order.index(p[1])))
        nvlinked = [p for p in pairs if nv_count(topology.pair_class(*p)) is not None]
        subjects = sorted({g for p in pairs for g in p}, key=order.index)
        listed = ", ".join(f"{a}-{b}" for a, b in pairs[:8]) + (", ..." if len(pairs) > 8 else "")
        paths = sorted({c for p in pairs if (c := topology.pair_class(*p))}, key=class_rank)
        notes = [f"topo -m path {'/'.join(paths)}"] if paths else []
        one_way = [f"{a}-{b}" for a, b, partial in cells if partial]
        if one_way:
            notes.append(f"refused in one direction only for {', '.join(one_way[:4])}")
        if nvlinked:
            a, b = nvlinked[0]
            notes.append(f"{len(nvlinked)} of these pairs are NVLinked ({a}-{b} {topology.pair_class(a, b)}): "
                         "P2P should work there (driver, fabric manager or a faulty link)")
        yield hit(subjects, evidence=list((topology.edge(*pairs[0], "p2p") or {}).get("sources") or [])[:1],
                  severity="error" if nvlinked else None, expectation="P2P OK between every GPU pair",
                  count=len(pairs), listed=listed, status=status, meaning=P2P_MEANING.get(status, status),
                  mode=P2P_MODE.get(mode, mode), note="".join(f"; {n}" for n in notes))


def _pcie(attrs: dict) -> tuple[int | None, int | None]:
    """(PCIe generation, width) of a device's current link, from the model's pcie_link_* facts."""
    gen = knowledge.pcie_gen_from_link_speed(attrs.get("pcie_link_gts") or attrs.get("pcie_link_speed"))
    width = attrs.get("pcie_link_width")
    return gen, width if isinstance(width, int) and width > 0 else None


@check("TOPO005")
def pcie_link_degraded(topology, params):
    """A GPU whose PCIe link trained narrower than x16 (or below its maximum, where a source says
    it), and a NIC whose PCIe link carries less than its ports' line rate."""
    full_width = int(params.get("gpu_width", 16))
    for gpu in topology.gpus():
        attrs = topology.node(gpu)
        gen, width = _pcie(attrs)
        if width is None:
            continue
        max_width = attrs.get("pcie_max_link_width") or full_width
        max_gen = knowledge.pcie_gen_from_link_speed(attrs.get("pcie_max_link_gts"))
        problems = []
        if width < max_width:
            problems.append(f"x{width} instead of x{max_width}")
        if gen is not None and max_gen is not None and gen < max_gen:
            problems.append(f"Gen{gen} instead of Gen{max_gen}")
        if not problems:
            continue
        now = knowledge.pcie_one_way_gbyte_s(gen, width) if gen else None
        full = knowledge.pcie_one_way_gbyte_s(max_gen or gen, max_width) if (max_gen or gen) else None
        math = (f": {_fmt(now)} of {_fmt(full)} GB/s one-way host<->GPU bandwidth" if now and full else "")
        yield hit([gpu], evidence=list(attrs.get("sources") or [])[:1],
                  expectation=f"GPU PCIe link x{max_width}" + (f" Gen{max_gen}" if max_gen else ""),
                  device=gpu, what=f"PCIe link runs {' and '.join(problems)}{math}",
                  note=("; a narrow link is a seating, riser or slot problem (or a BIOS bifurcation setting); "
                        "it slows host<->GPU copies, GPUDirect RDMA and P2P over PCIe"))
    by_bus: dict[str, list[str]] = {}
    for nic in topology.nics():
        attrs = topology.node(nic)
        if attrs.get("busid") and attrs.get("speed_mbps"):
            by_bus.setdefault(attrs["busid"], []).append(nic)
    for busid, nics in sorted(by_bus.items()):
        attrs = topology.node(nics[0])
        gen, width = _pcie(attrs)
        link = knowledge.pcie_one_way_gbyte_s(gen, width) if gen and width else None
        ports_gbit = sum(topology.node(n)["speed_mbps"] for n in nics) / 1000
        ports = knowledge.gbit_to_gbyte(ports_gbit)
        if link is None or link >= ports * (1 - knowledge.IB_RATE_REL_TOL):
            continue
        names = ", ".join(n.split(":", 1)[-1] for n in nics)
        port_rates = " + ".join(f"{topology.node(n)['speed_mbps'] / 1000:g}" for n in nics)
        yield hit(nics, evidence=list(attrs.get("sources") or [])[:1],
                  expectation="a NIC's PCIe link at least its ports' line rate",
                  device=f"NIC {busid} ({names})",
                  what=(f"PCIe Gen{gen} x{width} carries {_fmt(link)} GB/s one-way, less than its port(s) "
                        f"{port_rates} Gb/s = "
                        f"{_fmt(ports)} GB/s"),
                  note=(f"; the slot caps the NIC at {100 * link / ports:.0f}% of its line rate when its ports run "
                        "together (a x8 slot or a link that trained narrow)"))


_LOST_RE = __import__("re").compile(r"GPU is lost|fallen off the bus|Unable to determine the device handle", __import__("re").I)


# NVML failures that mean the driver stack is broken on a host with GPUs (not a slow or unprivileged probe).
NVML_DRIVER_FAULTS = ("NVML_ERROR_DRIVER_NOT_LOADED", "NVML_ERROR_LIBRARY_NOT_FOUND",
                      "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "NVML_ERROR_GPU_IS_LOST")


@check("TOPO006")
def gpu_missing(topology, params, profile=None):
    """A GPU the node should have and does not show: lost (nvidia-smi's 'GPU is lost', NVML's
    GPU_IS_LOST), on the PCI bus but not in NVML, NVML failing on a host with NVIDIA GPUs on the
    bus, or fewer GPUs than the profile's."""
    observations = topology.observations()
    for obs in observations:
        if not obs.get("source", "").startswith("nvidia_smi"):
            continue
        for e in obs.get("errors") or []:
            if _LOST_RE.search(e.get("text", "")):
                yield hit([topology.host() or "host:local"], severity="critical",
                          evidence=[{"source": obs["source"], "file": obs.get("file"), "line_no": e.get("line_no")}],
                          expectation="every GPU answers", what="nvidia-smi reports a lost GPU",
                          detail=e["text"].strip()[:200])
                break
    nvml = next((o for o in observations if o.get("source") == "nvml"), None)
    on_bus = [g for g in topology.gpus() if any(s.get("source") == "sysfs_infiniband"
                                                for s in topology.node(g).get("sources") or [])]
    if nvml is not None:
        for index in nvml.get("lost") or []:
            yield hit([f"gpu:{index}"], severity="critical", evidence=[{"source": "nvml", "file": nvml.get("file")}],
                      expectation="every GPU answers", what=f"NVML reports gpu:{index} lost (NVML_ERROR_GPU_IS_LOST)",
                      detail="the GPU fell off the bus or stopped answering: Xid 79 in dmesg, a reset or reboot")
        if not nvml.get("ok") and on_bus and nvml.get("error_name") in NVML_DRIVER_FAULTS:
            yield hit(on_bus[:8], severity="error", evidence=[{"source": "nvml", "file": nvml.get("file")}],
                      expectation="NVML answers on a host with NVIDIA GPUs",
                      what=f"{len(on_bus)} NVIDIA GPU(s) on the PCI bus, and NVML fails",
                      detail=nvml.get("error") or nvml.get("error_name") or "NVML failed")
        elif nvml.get("ok"):
            unseen = [g for g in on_bus if not any(s.get("source") == "nvml"
                                                   for s in topology.node(g).get("sources") or [])]
            if unseen:
                yield hit(unseen, severity="error", evidence=[{"source": "sysfs_infiniband"}],
                          expectation="NVML lists every NVIDIA GPU on the PCI bus",
                          what=f"{len(unseen)} NVIDIA GPU(s) on the PCI bus that NVML does not list",
                          detail=", ".join(topology.node(g).get("busid") or g for g in unseen)
                          + ": a GPU the driver could not bring up (dmesg: NVRM, Xid), or one hidden from "
                            "this container (CUDA_VISIBLE_DEVICES does not hide it from NVML)")
    want = getattr(profile, "gpus", None)
    seen = len(topology.gpus())
    if want and seen and seen < want:
        yield hit([topology.host() or "host:local"], severity="error", expectation=f"profile {profile.name}: {want} GPUs",
                  what=f"{seen} GPU(s) seen, the profile has {want}",
                  detail="a GPU missing from the node: lost, not bound to the driver, or not seated")
