"""GPU model facts: what each model has by design (data: gpus.toml)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Mapping

from ._data import table
from .nvlink import GA102_BRIDGE_ONE_WAY_GBYTE_S, GA102_BRIDGE_SPEED_GBPS, MULTINODE_NVLINK_GPUS, \
    NVLINK_GENS


@dataclass(frozen=True)
class GpuFacts:
    """What a GPU model should show: NVLink generation and links, PCIe generation."""

    model: str                        # canonical label, e.g. "H100 SXM"
    arch: str                         # "Hopper"
    form_factor: str                  # "SXM" | "PCIe" | "superchip" | "SoC"
    nvlink_generation: int | None     # 2..5; None: no GPU-GPU NVLink
    nvlinks: int                      # links per GPU by design (0: none)
    nvlinks_accepted: tuple[int, ...]  # active-link counts that are by design (bridge absent = 0)
    nvlink_bridge: bool               # NVLink only through a bridge between cards (pairs / quads)
    nvlink_speed_gbps: float | None   # lowest per-link one-way GB/s nvlink -s prints on a healthy link
    pcie_gen: int | None              # host PCIe generation of the GPU
    note: str = ""                    # what is uncertain or surprising
    gpudirect_rdma: bool = True       # False: the board has no GPUDirect RDMA (GeForce)
    source: str = ""                  # where the facts come from

    @property
    def nvlink_bidir_gbyte_s(self) -> float | None:
        """Per-GPU NVLink bidirectional GB/s: links x per-link (GA102 bridge: links x 2 x printed)."""
        if self.nvlink_generation is None or self.nvlinks == 0:
            return None
        if self.nvlink_bridge and self.nvlink_speed_gbps == GA102_BRIDGE_SPEED_GBPS:
            return self.nvlinks * 2 * GA102_BRIDGE_ONE_WAY_GBYTE_S
        return self.nvlinks * NVLINK_GENS[self.nvlink_generation].per_link_bidir_gbyte_s

    @property
    def nvlink_one_way_gbyte_s(self) -> float | None:
        bidir = self.nvlink_bidir_gbyte_s
        return None if bidir is None else bidir / 2

    @property
    def pcie_only(self) -> bool:
        """No NVLink between GPUs by design, or only through a bridge between cards: the node's GPU pairs
        are PCIe (PIX ... SYS) by design except the bridged pairs."""
        return self.nvlink_generation is None or self.nvlink_bridge


def _facts(row: dict) -> GpuFacts:
    kind = row["kind"]
    form = row.get("form_factor") or ("PCIe" if kind in ("bridged", "none") else "SXM")
    common = dict(pcie_gen=row.get("pcie_gen"), note=row.get("note", ""),
                  gpudirect_rdma=row.get("gpudirect_rdma", True), source=row.get("source", ""))
    if kind == "none":
        return GpuFacts(row["model"], row["arch"], form, None, 0, (0,), False, None, **common)
    gen = NVLINK_GENS[row["nvlink_generation"]]
    links = row.get("links", gen.links_per_gpu)
    speed = GA102_BRIDGE_SPEED_GBPS if row.get("bridge_speed") == "ga102" else min(gen.printed_speeds_gbps)
    if kind == "bridged":
        return GpuFacts(row["model"], gen.arch, form, gen.version, links, (0, links), True, speed, **common)
    accepted = tuple(row.get("accepted") or (links,))
    return GpuFacts(row["model"], gen.arch, form, gen.version, links, accepted, False, speed, **common)


@lru_cache(maxsize=1)
def gpu_table() -> tuple[tuple[str, GpuFacts], ...]:
    """(pattern, facts) of gpus.toml, most specific first, read on first use (keeps the import cheap for
    the prolog path)."""
    return tuple((row["pattern"], _facts(row)) for row in table("gpus")["gpu"])


@lru_cache(maxsize=1)
def _gpu_patterns() -> tuple[tuple[re.Pattern[str], GpuFacts], ...]:
    """The table's patterns, compiled on first use."""
    return tuple((re.compile(p), f) for p, f in gpu_table())


def gpu_models() -> Mapping[str, GpuFacts]:
    """Every GPU model the table knows, by its label."""
    return MappingProxyType({f.model: f for _, f in gpu_table()})


def __getattr__(name: str):
    """_GPU_TABLE / GPU_MODELS, built on first use."""
    if name == "_GPU_TABLE":
        return gpu_table()
    if name == "GPU_MODELS":
        return gpu_models()
    raise AttributeError(name)


_PREFIX_RE = re.compile(r"^(?:NVIDIA\s+)?(?:TESLA\s+|GEFORCE\s+|QUADRO\s+)?")


def normalize_gpu_name(name: str) -> str:
    """"NVIDIA A100-SXM4-80GB" -> "A100 SXM4 80GB"; "Tesla V100-SXM2-32GB" -> "V100 SXM2 32GB"."""
    text = re.sub(r"[-_]", " ", str(name).upper())
    text = re.sub(r"\s+", " ", text).strip()
    return _PREFIX_RE.sub("", text, count=1).strip()


GRACE_RE = re.compile(r"\bG[BH]\d{2,3}\b|\bGRACE\b")


def is_grace(name: str) -> bool:
    """True for a Grace-based GPU (GB200, GB300, GH200, or a name saying "Grace"): the GPU reaches its
    CPU over NVLink-C2C and the NICs hang off Grace's PCIe, so topo -m prints SYS for every GPU-NIC
    cell by design. GB10 (DGX Spark) is a single SoC, not a Grace superchip with NICs on the CPU:
    it counts too, since its GPU-NIC path is also through the CPU side."""
    return bool(GRACE_RE.search(normalize_gpu_name(name)))


def gpu_facts(name: str) -> GpuFacts | None:
    """GPU model name as nvidia-smi/NVML print it -> GpuFacts; None for a model not in the table."""
    norm = normalize_gpu_name(name)
    for pattern, facts in _gpu_patterns():
        if pattern.search(norm):
            return facts
    return None


def switched_nvlink(facts: "GpuFacts | None") -> bool:
    """True when the product joins every GPU of the node through NVLink by design (NVSwitch on 8-GPU
    SXM boards from A100 on, direct all-to-all NVLink on 4-GPU SXM4 boards, the NVLink switch trays
    of Grace-Blackwell): any GPU with an active link is in the node's one NVLink domain. Not V100
    SXM2 (the DGX-1 cube mesh leaves pairs unlinked) nor bridged PCIe cards."""
    return (facts is not None and facts.nvlink_generation is not None and facts.nvlink_generation >= 3
            and not facts.nvlink_bridge and facts.form_factor in ("SXM", "superchip") and facts.nvlinks > 0)


def multinode_nvlink_gpus(facts: "GpuFacts | None") -> int | None:
    """The GPUs of the product's multi-node NVLink domain (GB200 NVL72: 72), or None."""
    if facts is None:
        return None
    return next((n for key, n in MULTINODE_NVLINK_GPUS.items() if re.search(rf"\b{key}\b", facts.model)), None)


def slowest_sxm_nvlink() -> tuple[str, float]:
    """(model, one-way GB/s per GPU) of the slowest NVSwitch/hybrid-mesh (non-bridged) NVLink GPU in
    the table: the floor under which an intra-node busbw is below every NVLink class."""
    found = [(f.nvlink_one_way_gbyte_s, f.model) for _, f in gpu_table()
             if f.nvlink_one_way_gbyte_s and not f.nvlink_bridge]
    speed, model = min(found)
    return model, speed

