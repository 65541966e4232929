"""What the node is by design: the hints its model carries, weighed by knowledge.platform.

Every topology and link rule asks `platform_of(topology, profile)` first: a layout the product has by
design (bridged pairs, a PCIe-only chassis, a cloud VM's hidden PCIe tree, Grace's GPU-NIC SYS, a
GeForce board without P2P or GPUDirect RDMA) is reported as info, never as a fault. The pipeline asks
the same question for the verdict line, so the report names the platform it judged against."""

from __future__ import annotations

from typing import Any, Optional

from .. import knowledge
from ..knowledge.platform import Hints, Platform, infer

SOURCE_WORDS = {"nvidia_smi_topo_m": "nvidia-smi topo -m", "nvidia_smi_nvlink_s": "nvidia-smi nvlink -s",
                "nvml": "NVML", "nvidia_smi_q": "nvidia-smi -q", "nccl_topo_xml": "NCCL's topology XML",
                "nccl_tests": "an nccl-tests run's rank lines", "nvidia_smi_topo_p2p": "nvidia-smi topo -p2p"}

# The sources that print a GPU's model name (topo -m never does).
MODEL_SOURCES = ("nvml", "nvidia_smi_q", "nvidia_smi_nvlink_s", "nvidia_smi_nvlink_e", "nvidia_smi_nvlink_c",
                 "nvidia_smi_nvlink_info", "nccl_tests", "nvidia_bug_report", "nccl_topo_xml")

_CACHE: list = [None]  # one (topology, profile name, Platform) tuple, read and replaced whole (threads)


def _model_hint(topology, gpus: list[str], profile) -> tuple[tuple[str, ...], str]:
    models = tuple(m for g in gpus if (m := topology.node(g).get("model")))
    if models:
        first = next(g for g in gpus if topology.node(g).get("model"))
        refs = topology.node(first).get("sources") or [{}]
        named = [r.get("source") for r in refs if r.get("source") in MODEL_SOURCES]
        src = named[0] if named else refs[0].get("source")
        return models, SOURCE_WORDS.get(src, src or "")
    match = tuple(getattr(profile, "match", None) or ())
    return (match[:1], f"profile {profile.name}") if match else ((), "")


def _pairs(topology) -> tuple[int, int, bool]:
    """(NVLinked pairs, PCIe pairs, SYS pairs within one NUMA node) among the GPU pairs with a path class."""
    nv = pcie = 0
    hidden = False
    for a, b, c in topology.gpu_pairs():
        if not c or not knowledge.is_path_class(c):
            continue
        if knowledge.is_nvlink(c):
            nv += 1
            continue
        pcie += 1
        numa = topology.numa_of(a)
        hidden = hidden or (c == "SYS" and numa is not None and numa == topology.numa_of(b))
    return nv, pcie, hidden


def _nic_hints(topology, gpus: list[str]) -> dict[str, Any]:
    nics = topology.nics()
    near = [topology.nearest_nic(g) for g in gpus] if nics else []
    all_sys = bool(near) and all(n is not None and n[1] == "SYS" for n in near)
    topo_m = bool(topology.observations("nvidia_smi_topo_m")) or any(
        s.get("source") == "nvidia_smi_topo_m" for g in gpus[:1] for s in topology.node(g).get("sources") or [])
    hcas = tuple(m for n in nics if (m := knowledge.hca_model(topology.node(n).get("ca_type"))))
    return {"nic_count": len(nics) or None, "nic_rows": bool(nics) if topo_m else None,
            "gpu_nic_all_sys": all_sys, "hca_models": hcas}


def _p2p_gns(topology) -> bool:
    """`topo -p2p` says GNS (GPU not supported) for a GPU pair: a consumer board without GPU P2P."""
    for _, _, _, d in topology.edges(kind="p2p"):
        for key, cells in d.items():
            if key.startswith("status_") and isinstance(cells, dict) and "GNS" in cells.values():
                return True
    return False


def hints_of(topology, profile=None) -> Hints:
    """Every hint the node's model carries about its design."""
    gpus = topology.gpus()
    models, where = _model_hint(topology, gpus, profile)
    nv, pcie, hidden = _pairs(topology)
    gens = {knowledge.pcie_gen_from_link_speed(topology.node(g).get("pcie_max_link_gts")) for g in gpus}
    gens.discard(None)
    return Hints(gpu_models=models, gpu_model_source=where, gpu_count=len(gpus) or None, nv_pairs=nv,
                 pcie_pairs=pcie, vm_hidden_pcie=hidden,
                 grace_numa=any(str(topology.node(g).get("gpu_numa_id") or "").strip().isdigit() for g in gpus),
                 p2p_gns=_p2p_gns(topology),
                 nvswitch=bool(topology.nodes("nvswitch")) or None, pcie_gen=max(gens) if gens else None,
                 **_nic_hints(topology, gpus))


def platform_of(topology, profile=None) -> Platform:
    """The node's platform (knowledge.platform.infer over hints_of), once per topology and profile."""
    key = getattr(profile, "name", None)
    entry = _CACHE[0]
    if entry is not None and entry[0] is topology and entry[1] == key:
        return entry[2]
    found = infer(hints_of(topology, profile))
    _CACHE[0] = (topology, key, found)
    return found


def by_design_words(platform: Optional[Platform]) -> str:
    """'RTX 6000 Ada x4 (no NVLink between GPUs), confidence high' for a finding's expectation."""
    if platform is None or platform.confidence == "none":
        return "platform unknown"
    return f"{platform.label}, confidence {platform.confidence}"
