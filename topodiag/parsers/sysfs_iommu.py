"""Parser for the listing of /sys/class/iommu (`ls /sys/class/iommu`, `ls -l`): the IOMMU units the
kernel registered. Intel VT-d names them dmar0, dmar1 ..., AMD-Vi ivhd0 ... (or amd-iommu.N, newer
kernels), Arm SMMUs by their address. An empty listing means no IOMMU is active (off in the BIOS or
the kernel, or none present); a unit means the IOMMU is on, in translation or passthrough mode (the
kernel command line and the kernel log tell which).

    $ ls /sys/class/iommu
    dmar0  dmar1  dmar2  dmar3

JSON: {source: "sysfs_iommu", units [names], vendor ("intel" | "amd" | "arm" | null)}. ParseError for
a listing that names something that is not an IOMMU unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .base import ParseError, ParserInfo, clean_lines
from .sniff.sysfs_iommu import _UNIT_RE, sniff

INFO = ParserInfo(
    source="sysfs_iommu",
    tool="ls /sys/class/iommu",
    description="the IOMMU units the kernel registered (dmarN: Intel VT-d, ivhdN: AMD-Vi); empty: no IOMMU active",
)
SOURCE = INFO.source

_PROMPT_RE = re.compile(r"^(?:\S*[#$>]\s|\$|#|ls\s|sudo\s|total [0-9]+)")
_LS_L_RE = re.compile(r"^l[rwx-]{9}\S*\s.*?\s(\S+) -> \S+$")


@dataclass(frozen=True)
class SysfsIommu:
    source: str
    units: tuple[str, ...]
    vendor: Optional[str]


def _vendor(units: list[str]) -> Optional[str]:
    if any(u.startswith("dmar") for u in units):
        return "intel"
    if any(u.startswith(("ivhd", "amd-iommu")) for u in units):
        return "amd"
    return "arm" if units else None


def parse(text: str) -> SysfsIommu:
    units: list[str] = []
    for n, raw in enumerate(clean_lines(text), 1):
        line = raw.strip().strip("`").strip()
        if not line or _PROMPT_RE.match(line):
            continue
        m = _LS_L_RE.match(line)
        for tok in ([m[1]] if m else line.split()):
            if not _UNIT_RE.match(tok):
                raise ParseError(f"{tok[:40]!r} is not an IOMMU unit of /sys/class/iommu (dmarN, ivhdN ...)", n)
            units.append(tok)
    return SysfsIommu(SOURCE, tuple(units), _vendor(units))
