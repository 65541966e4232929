"""The kernel_log parser's limits and matchers, shared by kernel_log.py and its block reader
(_kernel_log_block.py). A helper module, no parser."""

from __future__ import annotations

import re
from typing import Optional

from .sniff.kernel_log import _KERNELISH_RE, _STAMP_RE

MAX_EVENTS = 200
MAX_LINK_EVENTS = 2000  # a flapping link logs many: enough to count the worst window
MAX_TEXT = 300
PROBE_S = 30.0
PROBE_LINES = 10
LOOKBACK_LINES = 5000  # how far before the last driver load its own lines are looked for (_probe_start)
STAMP_CHARS = 64  # a line's stamp is in its first characters: what the look-backs keep of a line

_XID_RE = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-9])?)\): ([0-9]+)(?:,\s*|\s*$)(.*)")  # a line cut after the number still reads
_CAUSE_RE = re.compile(r"caused by previous Xid ([0-9]+)")
_SXID_RE = re.compile(r"nvidia-nvswitch[0-9]*: SXid \((?:PCI:)?([0-9a-fA-F:.]+)\): ([0-9]+)(?:,\s*|\s*$)(.*)")
# "NVRM: GPU at PCI:BUS: ... fallen off the bus": the head then the words after it (base.search_after;
# `.*` between them in one regex scanned to the line's end from every repeat of the head)
_FALLEN_AT_RE = re.compile(r"NVRM: GPU (?:at )?(?:PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-9])?)[: ]")
_FALLEN_WORDS_RE = re.compile(r"fallen off the bus")
_GPU_NOTICE_RE = re.compile(r"NVRM: The NVIDIA GPU ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-9])?)")
# "NVRM: loading NVIDIA UNIX [Open] Kernel Module [for ARCH]  VERSION", read as its head then the
# version after it (base.search_after: one regex with a lazy run between was quadratic on a line
# repeating the head)
_DRIVER_HEAD_RE = re.compile(r"NVRM: loading NVIDIA UNIX ")
_DRIVER_RE = re.compile(r"Kernel Module(?: for \S+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)")
# The PCI core's (and drivers') downtraining report, any driver: "<driver> <bdf>[ <name>]: A Gb/s available
# PCIe bandwidth, limited by S GT/s PCIe xW link at <bdf> (capable of C Gb/s with S' GT/s PCIe xW' link)"
# (kernels before 5.3 print "8 GT/s x8 link", without "PCIe")
_LIMIT_RE = re.compile(r"([\w.-]{1,40}) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?: [\w.-]{1,40})?: "
                       r"([0-9.]{1,12}) Gb/s available PCIe bandwidth, limited by ([0-9.]{1,6}) GT/s (?:PCIe )?x([0-9]{1,2}) link "
                       r"at ([0-9a-fA-F:.]{7,16})(?: \(capable of ([0-9.]{1,12}) Gb/s with ([0-9.]{1,6}) GT/s (?:PCIe )?x([0-9]{1,2}) link\))?")
# "mlx5_core 0000:01:00.1 eth1: Link up" (the netdev's carrier, Ethernet/RoCE and IPoIB alike)
# and the IB port's "mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE" / "Link DOWN" (INIT and ARM,
# the steps on the way up, are not changes of their own)
_MLX_LINK_RE = re.compile(r"mlx5_core ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9])(?: (\S+?))?:?"
                          r"(?: Port: [0-9]+)? Link (up|down|active)\b", re.I)
# The time of a line, in seconds: dmesg's "[ 1843.308145]", or a syslog/journal stamp
_DMESG_T_RE = re.compile(r"^[ \t]*(?:<[0-9]{1,3}>[ \t]*)?\[[ \t]*([0-9]{1,12}(?:\.[0-9]{1,9})?)\]")
_SYSLOG_T_RE = re.compile(r"^([A-Z][a-z]{2}) +([0-9]{1,2}) ([0-9][0-9]):([0-9][0-9]):([0-9][0-9])\b")
_CTIME_T_RE = re.compile(r"^\[[A-Z][a-z]{2} ([A-Z][a-z]{2}) +([0-9]{1,2}) ([0-9][0-9]):([0-9][0-9]):([0-9][0-9]) [0-9]{4}\]")
_ISO_T_RE = re.compile(r"^([0-9]{4})-([0-9][0-9])-([0-9][0-9])[T ]([0-9][0-9]):([0-9][0-9]):([0-9][0-9])")
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                       "Nov", "Dec"))}
# /dev/kmsg records: "<prio>,<seq>,<usec since boot>,<flags>[,...];<message>" (Documentation/ABI/
# testing/dev-kmsg), then " KEY=value" dictionary lines; a newline inside a message is written "\x0a".
_KMSG_RE = re.compile(r"^([0-9]{1,3}),([0-9]{1,20}),([0-9]{1,20}),[^;\n]{0,40};(.*)$")
_KMSG_DICT_RE = re.compile(r"^ [A-Z][A-Z0-9_]{0,40}=")
# mlx5_core's health reporter (drivers/net/ethernet/mellanox/mlx5/core/health.c), with or without the
# "func:line:(pid N): " prefix of mlx5_core_err
_MLX_HEALTH_RE = re.compile(r"mlx5_core ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?: [\w.-]{1,40})?: "
                            r"(?:\w{1,40}:[0-9]{1,6}:\(pid [0-9]{1,9}\): )?"
                            r"(?:(device's health compromised - reached miss count)"
                            r"|Health issue observed, ([^,]{1,80}), severity\(([0-9]{1,2})\) ([A-Z]{1,12})"
                            r"|synd (0x[0-9a-fA-F]{1,8}): ([^\n]{1,80})"
                            r"|Fatal error ([0-9]{1,6}) detected"
                            r"|health recovery (succeeded|failed))")
_UUID_AT_RE = re.compile(r"NVRM: GPU at PCI:([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.[0-9])?: (GPU-[0-9a-fA-F-]{8,40})")
_RESET_RE = re.compile(r"GPU reset executed: (GPU-[0-9a-fA-F-]{8,40}), success: (true|false)")
_ACTION_RE = re.compile(r"recovery action changed from \S{1,12} \(([^)]{0,40})\) to \S{1,12} \(([^)]{0,40})\)")
_IOMMU_DOMAIN_RE = re.compile(r"iommu: Default domain type: (\w+)")
_IOMMU_ON_RE = re.compile(r"DMAR: IOMMU enabled|Intel-IOMMU force enabled|AMD-Vi: Found IOMMU|AMD-Vi: AMD IOMMUv2|"
                          r"AMD-Vi: Interrupt remapping enabled|DMAR: Intel\(R\) Virtualization Technology for Directed I/O")
_CMDLINE_RE = re.compile(r"Kernel command line: (.*)$")
_FAULT_RE = re.compile(r"IO_PAGE_FAULT|DMAR: \[DMA (?:Read|Write)[^\]]*\] Request device|DMAR: DRHD: handling fault")
_FAULT_DEV_RE = re.compile(r"([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9]): AMD-Vi|device=([0-9a-fA-F:]+\.[0-9])"
                           r"|Request device \[(?:0x)?([0-9a-fA-F]{2}):(?:0x)?([0-9a-fA-F]{2})\.([0-9])\]")


def time_s(raw: str) -> Optional[float]:
    """A kernel line's time in seconds, from its dmesg or syslog/journal stamp; None without one."""
    m = _DMESG_T_RE.match(raw)
    if m:
        return float(m[1])
    m = _SYSLOG_T_RE.match(raw.strip())
    if m and m[1] in _MONTHS:
        return (((_MONTHS[m[1]] * 31 + int(m[2])) * 24 + int(m[3])) * 60 + int(m[4])) * 60 + float(m[5])
    m = _CTIME_T_RE.match(raw.strip())
    if m and m[1] in _MONTHS:
        return (((_MONTHS[m[1]] * 31 + int(m[2])) * 24 + int(m[3])) * 60 + int(m[4])) * 60 + float(m[5])
    m = _ISO_T_RE.match(raw.strip())
    if m:
        return ((((int(m[2]) - 1) * 31 + int(m[3])) * 24 + int(m[4])) * 60 + int(m[5])) * 60 + float(m[6])
    return None


def split_012(raw: str) -> list[str]:
    """rsyslog writes a message's newlines as "#012": a /var/log/messages line holding several kernel
    lines is read as those lines, at its line number (each after the first keeps the first's stamp)."""
    first, *rest = raw.split("#012")
    m = _STAMP_RE.match(first)
    head = first[:m.end()] + " " if m else ""
    return [first] + [head + part for part in rest]
