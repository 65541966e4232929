"""PCIe generations and their ceilings (data: pcie.toml)."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Mapping

from ._data import table

_T = table("pcie")

PCIE_X16_GBYTE_S: Mapping[int, tuple[float, float]] = MappingProxyType({
    row["gen"]: (row["one_way_gbyte_s"], row["bidir_gbyte_s"]) for row in _T["x16"]})

PCIE_GTS_TO_GEN: Mapping[float, int] = MappingProxyType({
    float(k): v for k, v in _T["gts_to_gen"].items() if k != "source"})

_GTS_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*GT/?s\b", re.I)
_GEN_RE = re.compile(r"^\s*(?:PCIe\s*)?Gen\s*(\d)\s*$", re.I)


def pcie_gen_from_link_speed(speed: str | float | None) -> int | None:
    """"16.0 GT/s PCIe", "32.0 GT/s", "8 GT/s", 16.0 (GT/s) or "Gen4" -> 4; None when not a known rate."""
    if speed is None:
        return None
    if isinstance(speed, (int, float)) and not isinstance(speed, bool):
        gts = float(speed)
    else:
        text = str(speed)
        m = _GEN_RE.match(text)
        if m:
            gen = int(m.group(1))
            return gen if gen in PCIE_GTS_TO_GEN.values() else None
        m = _GTS_RE.match(text)
        if not m:
            return None
        gts = float(m.group(1))
    for rate, gen in PCIE_GTS_TO_GEN.items():
        if abs(gts - rate) < 0.05:
            return gen
    return None


def pcie_one_way_gbyte_s(gen: int | None, width: int = 16) -> float | None:
    """Nominal one-way GB/s of a PCIe link: the x16 figure scaled by width/16 (x8 = half, x4 = quarter)."""
    if gen not in PCIE_X16_GBYTE_S:
        return None
    if width <= 0:
        raise ValueError(f"PCIe link width must be positive, got {width}")
    return PCIE_X16_GBYTE_S[gen][0] * width / 16


def pcie_bidir_gbyte_s(gen: int | None, width: int = 16) -> float | None:
    """Nominal bidirectional GB/s of a PCIe link (twice the one-way figure)."""
    one_way = pcie_one_way_gbyte_s(gen, width)
    return None if one_way is None else 2 * one_way


def fastest_pcie_gen() -> int:
    """The fastest generation with a bandwidth row (an upper bound where the generation is unknown)."""
    return max(PCIE_X16_GBYTE_S)
