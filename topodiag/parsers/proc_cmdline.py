"""Parser for the kernel command line (`/proc/cmdline`, or a GRUB_CMDLINE_LINUX line pasted from
/etc/default/grub): the IOMMU and PCI options that decide whether peer-to-peer DMA is translated or
redirected.

    BOOT_IMAGE=/vmlinuz-5.15.0-91-generic root=UUID=... ro intel_iommu=on iommu=pt pci=noacs

JSON: {source: "proc_cmdline", args [str], options {name: value or true}, iommu: {vendor_on
("intel_iommu=on"...), passthrough (iommu=pt), off (intel_iommu=off / amd_iommu=off / iommu=off)},
pci_noacs: bool}. ParseError when the text holds no kernel option.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from .base import ParseError, ParserInfo

INFO = ParserInfo(
    source="proc_cmdline",
    tool="cat /proc/cmdline",
    description="the kernel command line: IOMMU mode (intel_iommu, amd_iommu, iommu=pt) and pci=noacs",
)
SOURCE = INFO.source

_KNOWN = re.compile(r"(?:^|\s)(?:BOOT_IMAGE=|root=|ro(?:\s|$)|quiet(?:\s|$)|intel_iommu=|amd_iommu=|iommu=|"
                    r"console=|crashkernel=|GRUB_CMDLINE_LINUX(?:_DEFAULT)?=)")


@dataclass(frozen=True)
class Iommu:
    vendor_on: tuple[str, ...] = ()
    passthrough: bool = False
    off: bool = False


@dataclass(frozen=True)
class ProcCmdline:
    source: str
    args: tuple[str, ...]
    options: dict = field(default_factory=dict)
    iommu: Iommu = Iommu()
    pci_noacs: bool = False


def sniff(text: str) -> float:
    try:
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        if not lines or len(lines) > 3:
            return 0.0
        hits = len(_KNOWN.findall(" " + " ".join(lines)))
        return 0.8 if hits >= 2 and ("=" in lines[-1]) else 0.0
    except Exception:
        return 0.0


def parse(text: str) -> ProcCmdline:
    line = next((ln.strip() for ln in text.splitlines() if _KNOWN.search(" " + ln.strip())), None)
    if line is None:
        raise ParseError("expected a kernel command line (/proc/cmdline: 'BOOT_IMAGE=... root=... ro ...')",
                         len(text.splitlines()))
    m = re.match(r"GRUB_CMDLINE_LINUX(?:_DEFAULT)?=(.*)$", line)
    if m:
        line = m[1].strip().strip("'\"")
    try:
        args = tuple(shlex.split(line))
    except ValueError:
        args = tuple(line.split())
    options: dict = {}
    for a in args:
        k, eq, v = a.partition("=")
        options[k] = v if eq else True
    vendor_on = tuple(f"{k}={options[k]}" for k in ("intel_iommu", "amd_iommu")
                      if str(options.get(k, "")).split(",")[0] == "on")
    iommu_opt = str(options.get("iommu", ""))
    off = iommu_opt == "off" or any(str(options.get(k, "")).split(",")[0] == "off" for k in ("intel_iommu", "amd_iommu"))
    passthrough = iommu_opt == "pt" or "pt" in str(options.get("intel_iommu", "")).split(",")
    pci = str(options.get("pci", "")).split(",")
    return ProcCmdline(SOURCE, args, options, Iommu(vendor_on, passthrough, off), "noacs" in pci)
