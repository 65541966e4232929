"""The platform a node is, inferred from every hint its inputs carry, with a confidence and the hints named.

Pure: the caller gathers the hints (checks/_design.py from the node's model, the pipeline adds an
nccl-tests run's rank lines) and this module weighs them against the GPU table and the cloud layouts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

from ._data import table
from .gpus import GpuFacts, gpu_facts, is_grace, switched_nvlink


@dataclass(frozen=True)
class Hints:
    """What the inputs say about the node's design (None / empty: not said)."""

    gpu_models: tuple[str, ...] = ()          # GPU names from any source (nvidia-smi, NVML, nccl-tests ranks)
    gpu_model_source: str = ""                # where the names come from
    gpu_count: Optional[int] = None
    nic_count: Optional[int] = None           # NIC rows / HCAs seen
    nic_rows: Optional[bool] = None           # topo -m was read: did it have NIC rows?
    nv_pairs: int = 0                         # GPU pairs joined by NVLink (NV#)
    pcie_pairs: int = 0                       # GPU pairs over PCIe only (PIX..SYS)
    grace_numa: bool = False                  # GPUs carry their own numeric NUMA ids (Grace: GPU memory nodes)
    gpu_nic_all_sys: bool = False             # every GPU-NIC cell SYS
    nvswitch: Optional[bool] = None           # NVSwitch devices / fabric manager seen
    hca_models: tuple[str, ...] = ()          # ConnectX-7 ...
    pcie_gen: Optional[int] = None            # the GPUs' PCIe generation from their links
    vm_hidden_pcie: bool = False              # SYS pairs between GPUs of one NUMA node (hypervisor hides the tree)
    p2p_gns: bool = False                     # topo -p2p: GNS (GPU not supported): a consumer board


@dataclass(frozen=True)
class Platform:
    """The node's design as inferred: what its GPUs have, and how sure that is."""

    label: str                                # "H100 SXM x8 (NVLink by design)", "PCIe-only ..."
    confidence: str                           # "high" | "medium" | "low" | "none"
    hints: tuple[str, ...] = ()               # the hints that decided it, in words
    facts: Optional[GpuFacts] = None          # the GPU model's facts when known
    pcie_only: Optional[bool] = None          # no GPU-GPU NVLink by design (bridged pairs aside)
    bridged: bool = False                     # NVLink only through bridges between cards
    grace: bool = False                       # Grace-based: GPU-NIC SYS by design
    gpudirect_rdma: Optional[bool] = None     # False: the GPUs have no GPUDirect RDMA (GeForce)
    vm: bool = False                          # a VM whose PCIe tree is hidden
    cloud: Optional[str] = None               # a published cloud layout the node fits
    notes: tuple[str, ...] = field(default=())

    def words(self) -> str:
        """'H100 SXM x8, confidence high (GPU model from nvidia-smi topo -m; 8 GPUs; ...)'."""
        if self.confidence == "none":
            return "platform unknown (no hint in the inputs)"
        said = "; ".join(self.hints)
        return f"{self.label}, confidence {self.confidence}" + (f" ({said})" if said else "")


@lru_cache(maxsize=1)
def cloud_layouts() -> tuple[dict, ...]:
    """The published cloud instance layouts (clouds.toml), each with its `source`."""
    return tuple(table("clouds")["instance"])


def _cloud(facts: Optional[GpuFacts], hints: Hints) -> Optional[str]:
    """The published instance layout the node fits (GPU model, GPU count and, when known, NIC count)."""
    if facts is None or hints.gpu_count is None:
        return None
    fits = [c["name"] for c in cloud_layouts()
            if c["gpu"] == facts.model and c["gpus"] == hints.gpu_count
            and (hints.nic_count is None or c.get("nics") is None or c["nics"] == hints.nic_count)]
    return fits[0] if len(fits) == 1 else None


def _one_model(hints: Hints) -> tuple[Optional[GpuFacts], Optional[str]]:
    facts = {gpu_facts(n) for n in hints.gpu_models}
    names = list(dict.fromkeys(hints.gpu_models))
    if len(facts) == 1 and None not in facts:
        return facts.pop(), names[0]
    return None, names[0] if names else None


def _named(hints: Hints, facts: Optional[GpuFacts], name: Optional[str]) -> list[str]:
    said = []
    if name:
        said.append(f"GPU model {name}" + (f" from {hints.gpu_model_source}" if hints.gpu_model_source else ""))
    if hints.gpu_count:
        said.append(f"{hints.gpu_count} GPU(s)")
    if hints.nic_count is not None:
        said.append(f"{hints.nic_count} NIC(s)")
    elif hints.nic_rows is False:
        said.append("topo -m without NIC rows")
    if hints.nv_pairs or hints.pcie_pairs:
        said.append(f"{hints.nv_pairs} NVLinked / {hints.pcie_pairs} PCIe GPU pair(s)")
    if hints.grace_numa:
        said.append("GPU NUMA ids (Grace GPU memory nodes)")
    if hints.gpu_nic_all_sys:
        said.append("every GPU-NIC path SYS")
    if hints.nvswitch:
        said.append("NVSwitch present")
    if hints.hca_models:
        said.append("HCAs " + "/".join(dict.fromkeys(hints.hca_models)))
    if hints.pcie_gen:
        said.append(f"PCIe Gen{hints.pcie_gen}")
    if hints.vm_hidden_pcie:
        said.append("SYS pairs inside one NUMA node (hidden PCIe tree)")
    if hints.p2p_gns:
        said.append("topo -p2p GNS (consumer board, no GPU P2P)")
    return said


def infer(hints: Hints) -> Platform:
    """The platform the hints describe. high: the GPU model is known and the layout agrees with it;
    medium: the model is known but the layout says little, or the layout alone is unambiguous (Grace
    NUMA ids with SYS GPU-NIC paths, no NVLink pair at all); low: a partial layout; none: no hint."""
    facts, name = _one_model(hints)
    said = tuple(_named(hints, facts, name))
    grace = bool((name and is_grace(name)) or (hints.grace_numa and hints.gpu_nic_all_sys))
    if facts is not None:
        return _from_model(hints, facts, grace, said)
    if grace:
        return Platform("Grace-based node (GPU NUMA ids: GPU-NIC through the Grace CPU by design)", "medium", said,
                        grace=True, pcie_only=False if hints.nv_pairs else None)
    if hints.pcie_pairs and not hints.nv_pairs:
        return Platform("PCIe-only node (no NVLink between GPUs)", "medium", said, pcie_only=True,
                        vm=hints.vm_hidden_pcie, gpudirect_rdma=False if hints.p2p_gns else None)
    if hints.nv_pairs and hints.pcie_pairs:
        return Platform("NVLink on some GPU pairs (bridged pairs or a cube mesh)", "low", said, pcie_only=False)
    if hints.nv_pairs:
        return Platform("NVLink between every GPU pair", "medium" if hints.gpu_count else "low", said, pcie_only=False)
    if said:
        return Platform("GPU node of unknown model", "low", said)
    return Platform("unknown", "none")


def _from_model(hints: Hints, facts: GpuFacts, grace: bool, said: tuple[str, ...]) -> Platform:
    agrees = (facts.pcie_only and not (hints.nv_pairs and not facts.nvlink_bridge)) or \
        (switched_nvlink(facts) and hints.nv_pairs and not hints.pcie_pairs) or \
        (not facts.pcie_only and not switched_nvlink(facts))
    layout_known = bool(hints.nv_pairs or hints.pcie_pairs or hints.gpu_count)
    confidence = "high" if agrees and layout_known else "medium"
    count = f" x{hints.gpu_count}" if hints.gpu_count else ""
    design = ("NVLink bridges between card pairs" if facts.nvlink_bridge else
              "no NVLink between GPUs" if facts.nvlink_generation is None else
              "GPU-NIC through the Grace CPU" if grace else "NVLink by design")
    cloud = _cloud(facts, hints)
    label = f"{facts.model}{count} ({design})" + (f", fits {cloud}" if cloud else "")
    return Platform(label, confidence, said, facts=facts, pcie_only=facts.pcie_only, bridged=facts.nvlink_bridge,
                    grace=grace, gpudirect_rdma=facts.gpudirect_rdma, vm=hints.vm_hidden_pcie, cloud=cloud)
