"""NVLink generations, the GA102 bridge, and multi-node NVLink domains (data: nvlink.toml).

`printed_gbps` / `nvlink_speed_gbps` are GB/s as `nvidia-smi nvlink -s` prints them (one way, per link)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from ._data import table

_T = table("nvlink")


@dataclass(frozen=True)
class NvlinkGen:
    """One NVLink generation as nvlink.toml tables it."""

    version: int                      # 2, 3, 4, 5 (NVLink 2.0 ...)
    arch: str                         # "Volta", "Ampere", "Hopper", "Blackwell"
    gpus: tuple[str, ...]             # GPUs of this generation
    per_link_bidir_gbyte_s: float
    links_per_gpu: int                # on the flagship SXM part; export SKUs have fewer (GpuFacts)
    per_gpu_bidir_gbyte_s: float
    printed_speeds_gbps: tuple[float, ...]  # per-link one-way GB/s values nvlink -s prints when healthy

    @property
    def per_link_one_way_gbyte_s(self) -> float:
        return self.per_link_bidir_gbyte_s / 2

    @property
    def per_gpu_one_way_gbyte_s(self) -> float:
        return self.per_gpu_bidir_gbyte_s / 2

    @property
    def nominal_printed_gbps(self) -> float:
        """The speed a healthy link prints (the highest known value; messages quote it)."""
        return max(self.printed_speeds_gbps)


NVLINK_GENS: Mapping[int, NvlinkGen] = MappingProxyType({
    g["version"]: NvlinkGen(g["version"], g["arch"], tuple(g["gpus"]), g["per_link_bidir_gbyte_s"],
                            g["links_per_gpu"], g["per_gpu_bidir_gbyte_s"], tuple(g["printed_speeds_gbps"]))
    for g in _T["gen"]})

GA102_BRIDGE_SPEED_GBPS: float = _T["ga102_bridge"]["speed_gbps"]
GA102_BRIDGE_LINKS: int = _T["ga102_bridge"]["links"]
GA102_BRIDGE_ONE_WAY_GBYTE_S: float = _T["ga102_bridge"]["one_way_gbyte_s"]

NVLINK_SPEED_REL_TOL: float = _T["tolerance"]["speed_rel_tol"]

MULTINODE_NVLINK_GPUS: Mapping[str, int] = MappingProxyType({
    k: v for k, v in _T["multinode_domain"].items() if k != "source"})

_NVLINK_VERSION_RE = re.compile(r"^\s*(?:nvlink\s*)?(\d)(?:\.0)?\s*$", re.I)


def nvlink_gen(generation: int | float | str | NvlinkGen) -> NvlinkGen:
    """4, 4.0, "4.0", "NVLink4", "nvlink 4.0" -> NVLINK_GENS[4]; ValueError for anything else."""
    if isinstance(generation, NvlinkGen):
        return generation
    version: int | None = None
    if isinstance(generation, bool):
        version = None
    elif isinstance(generation, int):
        version = generation
    elif isinstance(generation, float) and generation.is_integer():
        version = int(generation)
    elif isinstance(generation, str):
        m = _NVLINK_VERSION_RE.match(generation)
        version = int(m.group(1)) if m else None
    if version not in NVLINK_GENS:
        raise ValueError(f"unknown NVLink generation {generation!r} (known: 2.0, 3.0, 4.0, 5.0)")
    return NVLINK_GENS[version]


def nvlink_nominal_speed_gbps(generation: int | float | str | NvlinkGen, *, bridge: bool = False) -> float:
    """Per-link one-way GB/s a healthy link of this generation prints in `nvidia-smi nvlink -s`."""
    gen = nvlink_gen(generation)
    if bridge and gen.version == 3:
        return GA102_BRIDGE_SPEED_GBPS
    return gen.nominal_printed_gbps


def nvlink_speed_ok(printed_gbps: float, generation: int | float | str | NvlinkGen, *,
                    bridge: bool = False, rel_tol: float = NVLINK_SPEED_REL_TOL) -> bool:
    """True when a per-link speed printed by nvlink -s is at the generation's nominal (within rel_tol).

    Compared with the lowest healthy value the generation prints (25 for NVLink 3 on newer drivers,
    50 for NVLink 5), so driver rounding never reads as low. `bridge=True` judges a GA102 NVLink 3
    bridge (14.062 GB/s nominal). Faster than nominal is not low.
    """
    gen = nvlink_gen(generation)
    floor = GA102_BRIDGE_SPEED_GBPS if (bridge and gen.version == 3) else min(gen.printed_speeds_gbps)
    return printed_gbps >= floor * (1 - rel_tol)


def unknown_per_link_gbyte_s() -> float:
    """One-way GB/s per link assumed where the GPU model is unknown: the slowest generation's (a lower
    bound for NV# pairs; NVLink 5 has more)."""
    return min(g.per_link_one_way_gbyte_s for g in NVLINK_GENS.values())
