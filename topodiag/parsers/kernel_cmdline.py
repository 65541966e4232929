"""Parser for the kernel command line (`cat /proc/cmdline`, also the "Kernel command line:" line of
dmesg): the IOMMU and ACS options that decide whether PCIe peer-to-peer and GPUDirect RDMA go
through IOMMU translation.

    BOOT_IMAGE=/vmlinuz-5.15.0-101-generic root=/dev/mapper/ubuntu--vg-ubuntu--lv ro iommu=pt
    [    0.000000] Kernel command line: BOOT_IMAGE=/boot/vmlinuz-6.8.0 ro intel_iommu=on

Prompt lines (`$ cat /proc/cmdline`) are skipped; the first line that reads as a command line
(BOOT_IMAGE=, root=, an IOMMU/PCI option, or words that all read as name[=value] parameters, as a
VM's command line has) is taken, up to a " -- " (the init's own arguments follow it).

JSON: {source: "kernel_cmdline", line_no, cmdline, params {name: value, or true for a bare flag; the
last value wins as in the kernel}, iommu_mode ("passthrough": iommu=pt or iommu.passthrough=1;
"off": intel_iommu=off, amd_iommu=off, iommu=off or iommu=soft; "translated": intel_iommu=on,
amd_iommu=on, iommu=force/on or iommu.passthrough=0 without pt; "default": none of them, so the
kernel's built-in default decides), iommu_options (the options that decided it, as printed),
pci_noacs (pci=noacs: the kernel leaves ACS off)}. ParseError when no line reads as a command line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .base import ParseError, ParserInfo, clean_lines
from .sniff.kernel_cmdline import sniff

INFO = ParserInfo(
    source="kernel_cmdline",
    tool="cat /proc/cmdline",
    description="the kernel command line: IOMMU mode (intel_iommu, amd_iommu, iommu=pt), pci=noacs",
    argv=("cat", "/proc/cmdline"),
    timeout_s=5.0,
)
SOURCE = INFO.source

IOMMU_KEYS = ("intel_iommu", "amd_iommu", "iommu", "iommu.passthrough", "iommu.strict")
_DMESG_RE = re.compile(r"(?:Kernel )?[Cc]ommand line:\s*(.*)$")
_LOOKS_RE = re.compile(r"(?:^|\s)(?:BOOT_IMAGE=|root=|initrd=|(?:intel_|amd_)?iommu[=.]|pci=)")
_PROMPT_RE = re.compile(r"^(?:\S*[#$>]\s|\$|#|sudo\s|cat\s)")
_TRUE = ("1", "y", "on", "yes", "true")
_PARAM_RE = re.compile(r'^"?[A-Za-z0-9_][A-Za-z0-9_.\-]*(?:=\S*)?$')


def _all_params(line: str) -> bool:
    """A line whose words before a '--' (the init's own arguments follow it) all read as kernel
    parameters (name or name=value): /proc/cmdline of a VM has no BOOT_IMAGE= nor root=."""
    words = line.split(" -- ", 1)[0].split()
    return bool(words) and all(_PARAM_RE.match(w) for w in words) and any("=" in w for w in words)


@dataclass(frozen=True)
class KernelCmdline:
    source: str
    line_no: int
    cmdline: str
    params: dict
    iommu_mode: str
    iommu_options: tuple[str, ...]
    pci_noacs: bool


def params_of(cmdline: str) -> dict:
    """name -> value ('' kept), True for a bare flag; the last of a repeated name wins (as in Linux)."""
    out: dict = {}
    for tok in cmdline.split():
        tok = tok.strip('"')
        if not tok:
            continue
        name, eq, value = tok.partition("=")
        out[name] = value if eq else True
    return out


def iommu_mode(params: dict) -> tuple[str, tuple[str, ...]]:
    """('passthrough' | 'off' | 'translated' | 'default', the options that decided it)."""
    used = tuple(f"{k}={params[k]}" if params[k] is not True else k for k in IOMMU_KEYS if k in params)
    iommu = {str(v).lower() for v in str(params.get("iommu", "")).split(",")}
    intel = str(params.get("intel_iommu", "")).lower().split(",")
    amd = str(params.get("amd_iommu", "")).lower().split(",")
    passthrough = str(params.get("iommu.passthrough", "")).lower()
    if "pt" in iommu or passthrough in _TRUE:
        return "passthrough", used
    if "off" in intel or "off" in amd or "off" in iommu or "soft" in iommu:
        return "off", used
    if "on" in intel or "on" in amd or iommu & {"force", "on", "nopt"} or passthrough in ("0", "n", "off", "no"):
        return "translated", used
    return "default", used


def from_text(cmdline: str, line_no: int) -> KernelCmdline:
    params = params_of(cmdline)
    mode, used = iommu_mode(params)
    pci = str(params.get("pci", "")).split(",")
    return KernelCmdline(SOURCE, line_no, cmdline[:4096], params, mode, used, "noacs" in pci)


def parse(text: str) -> KernelCmdline:
    lines = clean_lines(text)
    for n, raw in enumerate(lines, 1):
        line = raw.strip().strip("`").strip()
        if not line:
            continue
        m = _DMESG_RE.search(line)
        if m and _LOOKS_RE.search(m[1]):
            return from_text(m[1].strip(), n)
        if _PROMPT_RE.match(line) and "BOOT_IMAGE=" not in line:
            continue
        if _LOOKS_RE.search(line) or _all_params(line):
            return from_text(line.split(" -- ", 1)[0], n)
    raise ParseError("no kernel command line (BOOT_IMAGE=..., root=..., or an iommu/pci option)", len(lines))
