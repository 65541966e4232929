"""Path classes of `nvidia-smi topo -m` (NV#, PIX, PXB, PHB, NODE, SYS; SOC on older drivers) and the rough
nominal bandwidth of a GPU pair's path. docs/domain.md "`nvidia-smi topo -m` link classes (best to worst)"."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Mapping

from .nvlink import GA102_BRIDGE_ONE_WAY_GBYTE_S, NvlinkGen, nvlink_gen
from .pcie import pcie_bidir_gbyte_s, pcie_one_way_gbyte_s

# Path classes of `nvidia-smi topo -m`. docs/domain.md "`nvidia-smi topo -m` link classes (best to worst)".

PATH_CLASSES: tuple[str, ...] = ("NV#", "PIX", "PXB", "PHB", "NODE", "SYS")
PATH_ALIASES: Mapping[str, str] = MappingProxyType({"SOC": "SYS"})  # older drivers print SOC
PCIE_PATH_CLASSES = frozenset({"PIX", "PXB", "PHB", "NODE", "SYS"})

_NV_RE = re.compile(r"^NV(\d{1,3})$")


def normalize_path_class(path_type: str) -> str:
    """"nv18" -> "NV18", "SOC" -> "SYS", " PIX " -> "PIX"; ValueError for anything else (X included)."""
    text = str(path_type).strip().upper()
    text = PATH_ALIASES.get(text, text)
    if text in PCIE_PATH_CLASSES or _NV_RE.match(text):
        return text
    raise ValueError(f"not a topo path class: {path_type!r} (expected NV#, PIX, PXB, PHB, NODE, SYS or SOC)")


def is_path_class(path_type: str) -> bool:
    try:
        normalize_path_class(path_type)
    except ValueError:
        return False
    return True


def is_nvlink(path_type: str) -> bool:
    """True for NV# classes ("NV18", "NV4"); False for the PCIe classes and for non-classes."""
    return bool(_NV_RE.match(str(path_type).strip().upper()))


def nvlink_count(path_type: str) -> int:
    """"NV18" -> 18; 0 for a PCIe class; ValueError for what is not a path class."""
    cls = normalize_path_class(path_type)
    m = _NV_RE.match(cls)
    return int(m.group(1)) if m else 0


def path_rank(path_type: str) -> int:
    """0 (NV#, best) .. 5 (SYS, worst), as docs/domain.md orders the classes; SOC ranks as SYS."""
    cls = normalize_path_class(path_type)
    return 0 if _NV_RE.match(cls) else PATH_CLASSES.index(cls)


def path_sort_key(path_type: str) -> tuple[int, int]:
    """Sort key best first that also orders NV# by link count: NV18 < NV12 < NV2 < PIX < ... < SYS."""
    return (path_rank(path_type), -nvlink_count(path_type))


def path_nominal_gbyte_s(path_type: str, *, nvlink_generation: int | float | str | NvlinkGen | None = None,
                         pcie_gen: int | None = None, pcie_width: int = 16,
                         bidir: bool = False, bridge: bool = False) -> float | None:
    """Rough nominal bandwidth of one GPU pair's path, for the "why" math (one-way unless bidir).

    NV#: count x per-link of the NVLink generation (NV18 on Hopper: 18 x 25 = 450 GB/s one-way).
    PIX/PXB: the platform's PCIe link (x16 of pcie_gen). PHB/NODE/SYS: also the PCIe link, now
    through the CPU. SYS additionally crosses the socket interconnect (QPI/UPI/xGMI), whose bandwidth
    docs/domain.md does not give: the PCIe figure is used as an upper bound, and real SYS traffic usually
    gets less (cross-socket P2P is often disabled and staged through host memory). So the number
    understates how bad SYS is, never overstates it. None when the generation needed is unknown.
    `bridge=True` with NVLink 3 uses the GA102 bridge's 14.0625 GB/s per link (NV4 = 56.25 one-way).
    """
    cls = normalize_path_class(path_type)
    if _NV_RE.match(cls):
        if nvlink_generation is None:
            return None
        gen = nvlink_gen(nvlink_generation)
        per_link = gen.per_link_one_way_gbyte_s
        if bridge and gen.version == 3:
            per_link = GA102_BRIDGE_ONE_WAY_GBYTE_S
        if bidir:
            per_link *= 2
        return nvlink_count(cls) * per_link
    if bidir:
        return pcie_bidir_gbyte_s(pcie_gen, pcie_width)
    return pcie_one_way_gbyte_s(pcie_gen, pcie_width)
