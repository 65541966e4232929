"""Parser for the kernel log (`dmesg`, `journalctl -k`, /var/log/messages or kern.log): the NVIDIA
driver's Xid and fallen-off-the-bus lines, NVSwitch SXid lines, and mlx5 PCIe-bandwidth warnings.

    [12345.678901] NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.
    Feb 14 05:03:41 gpu-1 kernel: NVRM: Xid (PCI:0000:b9:00): 74, pid=<unknown>, name=<unknown>, NVLink: fatal error detected on link 6(0x10000, ...)
    [ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0
                   NVRM: (PCI ID: 10de:26b5) installed in this system has
                   NVRM: fallen off the bus and is not responding to commands.
    [  102.1] nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error
    [    9.8] mlx5_core 0000:ab:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:aa:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)
    [    0.87] iommu: Default domain type: Translated
    nvidia 0000:07:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0003 address=0x80000040 flags=0x0020]

Whatever precedes the message is read as a time stamp and host (`[ 12.3]`, `[Mon May 25 12:34:56
2026]`, `Feb 14 05:03:41 host kernel:`, ISO journal stamps); the message itself is matched. A driver
whose message spans lines (the "fallen off the bus" notice of R535+ without an Xid) is read across
them. Only the first MAX_EVENTS events of each kind are kept, with their totals.

JSON: {source: "kernel_log", lines, kernel_lines (lines that look like kernel log lines: a dmesg or
syslog stamp, or a driver prefix), driver_version ("570.158.01" from "NVRM: loading NVIDIA UNIX ...
Kernel Module"), xids [{xid, pci ("0000:18:00"), line_no, text, caused_by (the N of "caused by previous
Xid N", else null)}], xid_counts {xid: n}, xids_total,
fallen_off_bus [{pci, line_no, text}] (also when no Xid 79 line says it), sxids [{sxid, pci, line_no,
text}], sxids_total, pcie_limited [{device, line_no, text, driver, available_gbps, speed_gts, width, at
(the limiting link), capable_gbps, capable_speed_gts, capable_width}] (the kernel's "A Gb/s available
PCIe bandwidth, limited by ..." report, any driver, each device once), link_events [{device, netdev, state,
line_no, time_s}] (mlx5 "Link up/down" lines, with the stamp's time in seconds), link_events_total,
and the IOMMU: iommu_default_domain
("Translated", "Passthrough": the kernel's own statement), iommu_enabled (true for "DMAR: IOMMU enabled",
"AMD-Vi: ... found" and the like; null when no line says), kernel_cmdline (the "Kernel command line:"
text), iommu_faults [{device, line_no, text}] (AMD-Vi IO_PAGE_FAULT, DMAR "Request device [..] fault"),
iommu_faults_total}. ParseError when nothing in the text looks like a kernel log line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .base import ParseError, ParserInfo

INFO = ParserInfo(
    source="kernel_log",
    tool="dmesg / journalctl -k",
    description="the kernel log: NVIDIA Xid and fallen-off-the-bus lines, NVSwitch SXid, PCIe bandwidth limits",
    schema_version=2,  # 2: pcie_limited from any driver, with its figures
    # Live: dmesg's ring buffer. Where kernel.dmesg_restrict=1 a user who is not root may not read
    # it: collection records that as not available (a reason, no finding), never as a failure.
    argv=("dmesg",),
    timeout_s=10.0,
)
SOURCE = INFO.source

MAX_EVENTS = 200
MAX_LINK_EVENTS = 2000  # a flapping link logs many: enough to count the worst window
MAX_TEXT = 300

# [ \t] where a line's blanks are meant and no two runs that can match the same blank side by side:
# `^\s*(?:<\d+>)?\s*` is quadratic on a line of blanks. dmesg -x/--decode prefixes each line with
# "facility:level : " ("kern  :err   : "); dmesg --time-format iso stamps it
# "2025-01-25T10:34:54,859532+00:00 " (no host, no "kernel:").
_STAMP_RE = re.compile(r"^[ \t]*[a-z]{2,8} {0,3}:[a-z]{2,7} {0,4}: |^[ \t]*[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9][,.][0-9]{1,9}[+-][0-9][0-9]:?[0-9][0-9] |"
                       r"^[ \t]*(?:<[0-9]{1,3}>[ \t]*)?\[[ \t]*[0-9.]{1,32}\]|^[ \t]*\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] [0-9]{4}\]"
                       r"|^[A-Z][a-z]{2} [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] \S+ kernel:|^[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\S* \S+ kernel:")
_XID_RE = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-9])?)\): ([0-9]+),\s*(.*)")
_CAUSE_RE = re.compile(r"caused by previous Xid ([0-9]+)")
_SXID_RE = re.compile(r"nvidia-nvswitch[0-9]*: SXid \((?:PCI:)?([0-9a-fA-F:.]+)\): ([0-9]+),\s*(.*)")
_FALLEN_AT_RE = re.compile(r"NVRM: GPU (?:at )?(?:PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-9])?)[: ]"
                           r".*fallen off the bus")
_GPU_NOTICE_RE = re.compile(r"NVRM: The NVIDIA GPU ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-9])?)")
_DRIVER_RE = re.compile(r"NVRM: loading NVIDIA UNIX .*?Kernel Module(?: for \S+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)")
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
_ISO_T_RE = re.compile(r"^([0-9]{4})-([0-9][0-9])-([0-9][0-9])[T ]([0-9][0-9]):([0-9][0-9]):([0-9][0-9])")
_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
                                       "Nov", "Dec"))}
_IOMMU_DOMAIN_RE = re.compile(r"iommu: Default domain type: (\w+)")
_IOMMU_ON_RE = re.compile(r"DMAR: IOMMU enabled|Intel-IOMMU force enabled|AMD-Vi: Found IOMMU|AMD-Vi: AMD IOMMUv2|"
                          r"AMD-Vi: Interrupt remapping enabled|DMAR: Intel\(R\) Virtualization Technology for Directed I/O")
_CMDLINE_RE = re.compile(r"Kernel command line: (.*)$")
_FAULT_RE = re.compile(r"IO_PAGE_FAULT|DMAR: \[DMA (?:Read|Write)[^\]]*\] Request device|DMAR: DRHD: handling fault")
_FAULT_DEV_RE = re.compile(r"(?:\S+ )?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9]): AMD-Vi|device=([0-9a-fA-F:]+\.[0-9])"
                           r"|Request device \[(?:0x)?([0-9a-fA-F]{2}):(?:0x)?([0-9a-fA-F]{2})\.([0-9])\]")


@dataclass(frozen=True)
class Xid:
    xid: int
    pci: str
    line_no: int
    text: str
    caused_by: Optional[int] = None  # Xid 45 "... caused by previous Xid 149": the Xid behind it


@dataclass(frozen=True)
class Event:
    pci: Optional[str]
    line_no: int
    text: str


@dataclass(frozen=True)
class SXid:
    sxid: int
    pci: str
    line_no: int
    text: str


@dataclass(frozen=True)
class PcieLimit:
    device: str  # the device's PCI function, "0000:ab:00.0"
    line_no: int
    text: str
    driver: Optional[str] = None  # who printed it: "mlx5_core", "nvidia", "pci" (the PCI core)...
    available_gbps: Optional[float] = None
    speed_gts: Optional[float] = None  # the limiting link's speed and width
    width: Optional[int] = None
    at: Optional[str] = None  # the limiting link: the device itself or a bridge above it
    capable_gbps: Optional[float] = None
    capable_speed_gts: Optional[float] = None
    capable_width: Optional[int] = None


@dataclass(frozen=True)
class LinkEvent:
    device: str  # the NIC's PCI function, "0000:01:00.1"
    netdev: Optional[str]
    state: str  # "up" | "down"
    line_no: int
    time_s: Optional[float]  # seconds (since boot for dmesg stamps, in the year for syslog ones)


@dataclass(frozen=True)
class KernelLog:
    source: str
    lines: int
    kernel_lines: int
    driver_version: Optional[str]
    xids: tuple[Xid, ...]
    xid_counts: dict
    xids_total: int
    fallen_off_bus: tuple[Event, ...]
    sxids: tuple[SXid, ...]
    sxids_total: int
    pcie_limited: tuple[PcieLimit, ...]
    link_events: tuple[LinkEvent, ...] = ()
    link_events_total: int = 0
    iommu_default_domain: Optional[str] = None
    iommu_enabled: Optional[bool] = None
    kernel_cmdline: Optional[str] = None
    iommu_faults: tuple[Event, ...] = ()
    iommu_faults_total: int = 0


def _bus(pci: str) -> str:
    """'0000:18:00.0' and '0000:18:00' name one GPU: the form without the function."""
    return pci.lower().split(".")[0]


def _num(v: Optional[str]) -> Optional[float]:
    try:
        return float(v) if v else None
    except ValueError:  # "1.2.3": not a number a human would read either
        return None


def _limit(m: "re.Match[str]", n: int, line: str) -> PcieLimit:
    """One downtraining report (each device once: the first report is the boot's)."""
    return PcieLimit(m[2].lower(), n, line[:MAX_TEXT], m[1], _num(m[3]), _num(m[4]), int(m[5]), m[6].lower(),
                     _num(m[7]), _num(m[8]), int(m[9]) if m[9] else None)


def sniff(text: str) -> float:
    """0.9 for NVRM Xid / SXid / fallen-off-the-bus lines, 0.6 for a kernel log without them."""
    try:
        if "NVRM: Xid" in text or "SXid (" in text or ("NVRM:" in text and "fallen off the bus" in text):
            return 0.9
        if "Gb/s available PCIe bandwidth, limited by" in text:
            return 0.8
        head = text.splitlines()[:200]
        stamped = sum(1 for line in head if _STAMP_RE.match(line))
        if stamped >= max(3, len([h for h in head if h.strip()]) // 2):
            return 0.6
    except Exception:
        return 0.0
    return 0.0


def parse(text: str) -> KernelLog:
    lines = text.splitlines()
    kernel = 0
    driver: Optional[str] = None
    xids: list[Xid] = []
    counts: dict[int, int] = {}
    xids_total = 0
    fallen: list[Event] = []
    fallen_seen: set[str] = set()
    sxids: list[SXid] = []
    sxids_total = 0
    limits: list[PcieLimit] = []
    links: list[LinkEvent] = []
    links_total = 0
    notice: Optional[tuple[str, int]] = None  # "The NVIDIA GPU <bus>" waiting for "fallen off the bus"
    iommu: dict = {"domain": None, "enabled": None, "cmdline": None, "faults": [], "total": 0}
    for n, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line:
            continue
        if _STAMP_RE.match(raw) or "NVRM:" in line or "kernel:" in line or "mlx5_core" in line or "nvidia-nvswitch" in line:
            kernel += 1
        if "NVRM" in line:
            m = _XID_RE.search(line)
            if m:
                xid = int(m[2])
                xids_total += 1
                counts[xid] = counts.get(xid, 0) + 1
                cause = _CAUSE_RE.search(m[3])
                if len(xids) < MAX_EVENTS:
                    xids.append(Xid(xid, _bus(m[1]), n, line[:MAX_TEXT], int(cause[1]) if cause else None))
                if xid == 79:
                    _fallen(fallen, fallen_seen, _bus(m[1]), n, line)
                continue
            m = _FALLEN_AT_RE.search(line)
            if m:
                _fallen(fallen, fallen_seen, _bus(m[1]), n, line)
                continue
            m = _GPU_NOTICE_RE.search(line)
            if m:
                notice = (_bus(m[1]), n)
                continue
            if notice is not None and "fallen off the bus" in line and n - notice[1] <= 3:
                _fallen(fallen, fallen_seen, notice[0], notice[1], lines[notice[1] - 1].strip())
                notice = None
                continue
            if driver is None:
                m = _DRIVER_RE.search(line)
                if m:
                    driver = m[1]
            continue
        if "SXid" in line:
            m = _SXID_RE.search(line)
            if m:
                sxids_total += 1
                if len(sxids) < MAX_EVENTS:
                    sxids.append(SXid(int(m[2]), m[1].lower(), n, line[:MAX_TEXT]))
            continue
        if "Link " in line and "mlx5_core" in line:
            m = _MLX_LINK_RE.search(line)
            if m:
                links_total += 1
                if len(links) < MAX_LINK_EVENTS:
                    state = "down" if m[3].lower() == "down" else "up"
                    links.append(LinkEvent(m[1].lower(), m[2], state, n, _time_s(raw)))
                continue
        if "limited by" in line and "available PCIe bandwidth" in line:
            m = _LIMIT_RE.search(line)
            if m and len(limits) < MAX_EVENTS and not any(x.device == m[2].lower() for x in limits):
                limits.append(_limit(m, n, line))
            continue
        if "DMAR" in line or "AMD-Vi" in line or "iommu" in line or "command line" in line:
            _iommu_line(iommu, line, n)
    if kernel == 0:
        raise ParseError("no kernel log line (dmesg / journalctl -k: a time stamp, 'kernel:' or an NVRM line)",
                         len(lines))
    return KernelLog(SOURCE, len(lines), kernel, driver, tuple(xids), dict(sorted(counts.items())), xids_total,
                     tuple(fallen), tuple(sxids), sxids_total, tuple(limits), tuple(links), links_total,
                     iommu["domain"], iommu["enabled"], iommu["cmdline"], tuple(iommu["faults"]), iommu["total"])


def _time_s(raw: str) -> Optional[float]:
    """A kernel line's time in seconds, from its dmesg or syslog/journal stamp; None without one."""
    m = _DMESG_T_RE.match(raw)
    if m:
        return float(m[1])
    m = _SYSLOG_T_RE.match(raw.strip())
    if m and m[1] in _MONTHS:
        return (((_MONTHS[m[1]] * 31 + int(m[2])) * 24 + int(m[3])) * 60 + int(m[4])) * 60 + float(m[5])
    m = _ISO_T_RE.match(raw.strip())
    if m:
        return ((((int(m[2]) - 1) * 31 + int(m[3])) * 24 + int(m[4])) * 60 + int(m[5])) * 60 + float(m[6])
    return None


def _iommu_line(iommu: dict, line: str, n: int) -> None:
    """The IOMMU's mode, its being on, the command line and translation faults (DMAR / AMD-Vi lines)."""
    m = _IOMMU_DOMAIN_RE.search(line)
    if m:
        iommu["domain"] = m[1]
        return
    m = _CMDLINE_RE.search(line)
    if m:
        if iommu["cmdline"] is None:
            iommu["cmdline"] = m[1].strip()[:4096]
        return
    if _FAULT_RE.search(line):
        iommu["total"] += 1
        d = _FAULT_DEV_RE.search(line)
        dev = None
        if d:
            dev = (d[1] or d[2] or f"{d[3]}:{d[4]}.{d[5]}").lower()
            dev = dev if dev.count(":") == 2 else f"0000:{dev}"
        if len(iommu["faults"]) < MAX_EVENTS and "handling fault" not in line:
            iommu["faults"].append(Event(dev, n, line[:MAX_TEXT]))
        return
    if _IOMMU_ON_RE.search(line):
        iommu["enabled"] = True


def _fallen(out: list[Event], seen: set[str], bus: str, n: int, line: str) -> None:
    if bus not in seen and len(out) < MAX_EVENTS:
        seen.add(bus)
        out.append(Event(bus, n, line[:MAX_TEXT]))
