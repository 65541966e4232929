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
iommu_faults_total, driver_loads, driver_loaded_line, driver_loaded_time_s, driver_window_line (where the
last driver load's own lines begin: its probe, just before its banner), gpu_uuids [{uuid, pci, line_no}],
gpu_resets [{pci, uuid, line_no, time_s, text}] (a reset acknowledged by "GPU reset executed: GPU-<uuid>,
success: true"), nic_health [{device, kind (miss_count, health_issue, syndrome, fatal; recovered / recovery_failed: the
driver's "health recovery succeeded/failed"), line_no, time_s, text,
syndrome, severity}] (mlx5_core's health reporter: firmware that stopped answering or reported an error),
nic_health_total, last_time_s, events [{line_no, cls, entry, severity, device, text, rule}] (the drivers'
other messages that a catalogue read by "kernel_log" explains: NVRM initialisation, firmware, version,
reset-required and PCI-resource messages, PCIe AER reports graded by the severity they print, mlx5 and
IOMMU lines this module does not record itself, nvidia-peermem; see _kernel_log_events), events_total,
event_counts {class: n}, unrecognised [{line_no, text}] (those drivers' failure-looking lines no entry
explains: SYS004), unrecognised_total, and, from the live probe's JSON, via, now_s, since_s}; Xids and
fallen-off-the-bus events carry time_s, Xid 154 its new recovery action. /dev/kmsg records
("6,1234,5678901,-;NVRM: Xid ...", with " KEY=value" lines and "\\x0a" for a newline) read like dmesg
lines, and so does the kernel-log probe's JSON (topodiag/live/kernel_log_probe.py: a probe that could not
read is a ParseError with its reason); an rsyslog line's "#012" newlines split it into its lines. Short
pastes are detected too (`dmesg | grep NVRM` without stamps, two `dmesg -T` lines, "..." elisions).
ParseError when nothing in the text looks like a kernel log line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Optional

from ._kernel_log_events import Events, KernelEvent, Unrecognised, gate
from ._kernel_log_re import split_012 as _split_012, time_s as _time_s
from ._kernel_log_re import (  # noqa: F401 (the matchers are this module's names too)
    MAX_EVENTS, MAX_LINK_EVENTS, MAX_TEXT, PROBE_S, PROBE_LINES, LOOKBACK_LINES, STAMP_CHARS, _STAMP_RE,
    _XID_RE, _CAUSE_RE, _SXID_RE, _FALLEN_AT_RE, _FALLEN_WORDS_RE, _GPU_NOTICE_RE, _DRIVER_HEAD_RE,
    _DRIVER_RE, _LIMIT_RE, _MLX_LINK_RE, _DMESG_T_RE, _SYSLOG_T_RE, _CTIME_T_RE, _ISO_T_RE, _MONTHS, _KMSG_RE,
    _KMSG_DICT_RE, _MLX_HEALTH_RE, _UUID_AT_RE, _RESET_RE, _ACTION_RE, _IOMMU_DOMAIN_RE, _IOMMU_ON_RE,
    _CMDLINE_RE, _FAULT_RE, _FAULT_DEV_RE, _KERNELISH_RE,
)
from .base import ParseError, ParserInfo, note, probe_object, search_after

INFO = ParserInfo(
    source="kernel_log",
    tool="dmesg / journalctl -k",
    description="the kernel log: NVIDIA Xid and fallen-off-the-bus lines, NVSwitch SXid, PCIe bandwidth limits",
    # 2: pcie_limited from any driver, with its figures; 3: kmsg records and the probe's JSON, stamps
    # (time_s) on Xids and fallen-off-the-bus events, Xid 154's action, driver loads, GPU resets
    schema_version=3,
    # Live: the kernel_log probe reads /dev/kmsg non-blocking (no subprocess: prolog-safe), else the
    # ring buffer through syslog(2) as dmesg does; neither readable (kernel.dmesg_restrict for a user
    # who is not root, a container) is "not readable": not available, never a failure.
    prolog_safe=True,
    probe="kernel_log",
    timeout_s=5.0,
)
SOURCE = INFO.source


@dataclass(frozen=True)
class Xid:
    xid: int
    pci: str
    line_no: int
    text: str
    caused_by: Optional[int] = None  # Xid 45 "... caused by previous Xid 149": the Xid behind it
    time_s: Optional[float] = None  # the line's stamp in seconds (as LinkEvent.time_s)
    action: Optional[str] = None  # Xid 154's new recovery action: "GPU Reset Required", "None"...


@dataclass(frozen=True)
class Event:
    pci: Optional[str]
    line_no: int
    text: str
    time_s: Optional[float] = None


@dataclass(frozen=True)
class NicHealth:
    """One line of the mlx5 driver's health reporter: the firmware stopped answering ("device's health
    compromised - reached miss count"), reported an error ("Health issue observed, firmware internal
    error, severity(3) ERROR:", "synd 0x1: firmware internal error") or a fatal sensor ("Fatal error 1
    detected")."""

    device: str  # the PCI function, "0000:0d:00.0"
    kind: str  # "miss_count" | "health_issue" | "syndrome" | "fatal" | "recovered" | "recovery_failed"
    line_no: int
    time_s: Optional[float]
    text: str
    syndrome: Optional[str] = None  # "0x1", or the health issue's words ("firmware internal error")
    severity: Optional[str] = None  # "ERROR", "CRIT"... (the firmware's own grade, health_issue lines)


@dataclass(frozen=True)
class GpuUuid:
    uuid: str
    pci: str
    line_no: int


@dataclass(frozen=True)
class GpuReset:
    """A GPU reset that a line of the log acknowledges. The NVIDIA driver prints none of its own
    (`nvidia-smi -r` leaves no kernel line): NVIDIA's NVSentinel writes one to syslog for that reason,
    `GPU reset executed: GPU-<uuid>, success: true` (logger -t nvsentinel-gpu-reset); its GPU is found
    through the driver's own "NVRM: GPU at PCI:<bus>: GPU-<uuid>" line of the same log."""

    pci: Optional[str]  # None when no line of the log ties the UUID to a bus
    uuid: str
    line_no: int
    time_s: Optional[float]
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
    driver_loads: int = 0  # "NVRM: loading NVIDIA UNIX ... Kernel Module" lines (a reload makes two)
    driver_loaded_line: Optional[int] = None  # the last of them: nothing before it is of this driver
    driver_loaded_time_s: Optional[float] = None
    # where that load's own lines begin: the driver prints its banner after probing the GPUs, so a GPU
    # that failed this load's probe is reported just before it (NVIDIA/NVSentinel#155): the lines
    # stamped up to PROBE_S before the banner (without stamps, up to PROBE_LINES lines), never before
    # the previous banner
    driver_window_line: Optional[int] = None
    gpu_uuids: tuple[GpuUuid, ...] = ()  # from "NVRM: GPU at PCI:<bus>: GPU-<uuid>" (once a GPU per load)
    gpu_resets: tuple[GpuReset, ...] = ()
    nic_health: tuple[NicHealth, ...] = ()
    nic_health_total: int = 0
    last_time_s: Optional[float] = None  # the last stamp of the log: its "now" when no probe says one
    # how a live probe read it (None for a file): "/dev/kmsg", "syslog(2)"; the probe's clock at the
    # read (seconds since boot, the time base of kmsg and dmesg stamps) and the --kernel-log-since asked
    via: Optional[str] = None
    now_s: Optional[float] = None
    since_s: Optional[float] = None
    # the drivers' other messages, recognised through the catalogues (_kernel_log_events): NVRM
    # initialisation/firmware/version failures, PCIe AER, mlx5 commands and ports, nvidia-peermem
    events: tuple[KernelEvent, ...] = ()
    events_total: int = 0
    event_counts: dict = field(default_factory=dict)
    unrecognised: tuple[Unrecognised, ...] = ()  # their failure-looking lines no entry explains (SYS004)
    unrecognised_total: int = 0


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


def parse(text: str) -> KernelLog:
    if text.lstrip()[:1] == "{":
        return _parse_probe(text)
    return _parse_lines(text.splitlines())


def parse_lines(lines: Iterable[str]) -> KernelLog:
    """`parse`, streaming: one pass over the lines with bounded state (the look-backs keep the stamps of
    at most LOOKBACK_LINES lines), so a multi-GB kernel log is read in flat memory. The probe's JSON
    (a first non-blank line starting with "{") is read whole, as `parse` does."""
    it = iter(lines)
    head: list[str] = []
    for raw in it:
        head.append(raw)
        if raw.strip():
            break
    if head and head[-1].lstrip()[:1] == "{":
        return _parse_probe("".join(head) + "".join(it))
    return _parse_lines(_chain_stripped(head, it))


def parse_binary(handle) -> KernelLog:
    """`parse_lines` over a file opened "rb", read a block of text at a time (_kernel_log_block); a big
    regular file with the blocks' keys found in forked workers over the cores (_kernel_log_par)."""
    from . import _kernel_log_par

    return _block.read_file(handle, _Log, _finish, parse_lines, _line, _kernel_log_par)


def reader() -> "_block.Reader":
    """A pass that takes the log a line at a time (`add(line)`, then `result()`): `parse_lines`
    for a log pushed by its reader (the dmesg section of an nvidia-bug-report), in flat memory."""
    return _block.Reader(_Log(), _line, _finish, parse_lines)


# The lists whose length follows the log's lines (the others hold a device once: a GPU off the bus, a
# downtrained link, a GPU's UUID)
_REPEATED = ("xids", "sxids", "link_events", "iommu_faults", "gpu_resets", "nic_health", "events", "unrecognised")


def cut_lists(log: KernelLog, keep: int) -> KernelLog:
    """`log` with each list of repeated events cut to its first `keep` entries (as the parser keeps
    the first MAX_EVENTS), its totals and counts whole: what an input of many kernel logs keeps of
    those past its first (`lists_cut_note` says so)."""
    cut = {name: getattr(log, name)[:keep] for name in _REPEATED if len(getattr(log, name)) > keep}
    return replace(log, **cut) if cut else log


def warm() -> None:
    """Load what a pass reads besides its lines (the catalogues of the drivers' messages), so that
    worker processes forked afterwards share it instead of each loading it again."""
    from ._kernel_log_events import classified

    classified("NVRM: GPU at PCI:0000:00:00: GPU-0")


def lists_cut_note(section: int, whole: int, keep: int) -> str:
    """The note of a kernel log read with `cut_lists`: the `section`th of its input, past `whole`."""
    return note(SOURCE, "lists-cut", section=section, whole=whole, keep=keep)


def _chain_stripped(head: list[str], it) -> Iterable[str]:
    for raw in head:
        yield raw.rstrip("\r\n")
    for raw in it:
        yield raw.rstrip("\r\n")


def _parse_probe(text: str) -> KernelLog:
    """The kernel-log probe's JSON (topodiag/live/kernel_log_probe.py): its records, read as the
    kernel log, and how it read them. A probe that could not read the log (ok false) is no kernel log:
    ParseError with its reason (live collection records it as not available, never as a failure)."""
    data = probe_object(text, "kernel_log", "the kernel-log probe's JSON")
    records = data.get("records")
    lines = text.split("\n")
    if data.get("ok") is False or records is None:
        why = data.get("error") if isinstance(data.get("error"), str) else "no records"
        raise ParseError(f"the kernel-log probe could not read the kernel log: {why[:300]}", 1)
    if not isinstance(records, list) or not all(isinstance(r, str) for r in records):
        raise ParseError("the kernel-log probe's records: expected a list of strings",
                         next((n for n, ln in enumerate(lines, 1) if '"records"' in ln), 1))
    # json.dumps(indent=1) puts each record on a line of its own: line numbers are then the member's
    at = next((i for i, ln in enumerate(lines) if ln.strip() == '"records": ['), None)
    first = at + 1 if at is not None and len(lines) >= at + 1 + len(records) else 0
    log = _parse_lines([""] * first + records) if records else _empty()
    nums = [data.get(k) if isinstance(data.get(k), (int, float)) and not isinstance(data.get(k), bool) else None
            for k in ("now_s", "since_s")]
    via = data.get("via") if isinstance(data.get("via"), str) else None
    return replace(log, via=via, now_s=nums[0], since_s=nums[1])


def _empty() -> KernelLog:
    """An empty ring buffer read by the probe: a kernel log with nothing in it."""
    return KernelLog(SOURCE, 0, 0, None, (), {}, 0, (), (), 0, ())


class _Log:
    """What one pass over the lines collects (parse's state). `cap`: how many entries each list of
    repeated events keeps (MAX_EVENTS, links MAX_LINK_EVENTS; less: what cut_lists keeps). `origin`:
    the line number before the first line (a log inside a larger file: its line numbers are the
    file's, as shifting the result by `origin` makes them; `lines` still counts the log's own)."""

    def __init__(self, cap: Optional[int] = None, origin: int = 0) -> None:
        self.origin = origin
        self.cap = cap or MAX_EVENTS
        self.link_cap = cap or MAX_LINK_EVENTS
        self.kernel = 0
        self.driver: Optional[str] = None
        self.loads = 0
        self.loaded: Optional[tuple[int, Optional[float]]] = None
        self.previous_load: Optional[int] = None
        self.xids: list[Xid] = []
        self.counts: dict[int, int] = {}
        self.xids_total = 0
        self.fallen: list[Event] = []
        self.fallen_seen: set[str] = set()
        self.sxids: list[SXid] = []
        self.sxids_total = 0
        self.limits: list[PcieLimit] = []
        self.links: list[LinkEvent] = []
        self.links_total = 0
        self.notice: Optional[tuple[str, int, str]] = None  # "The NVIDIA GPU <bus>" (bus, line, text) waiting for "fallen off the bus"
        self.iommu: dict = {"domain": None, "enabled": None, "cmdline": None, "faults": [], "total": 0}
        self.uuids: dict[str, tuple[str, int]] = {}  # uuid as printed -> (bus, line)
        self.resets: list[tuple[str, int, Optional[float], str]] = []
        self.health: list[NicHealth] = []
        self.health_total = 0
        self.ev = Events(cap=self.cap)
        self.lines = origin
        self.kmsg = False
        # The lines are read a block at a time (_kernel_log_block): the block's lines and the LOOKBACK_LINES
        # + 1 lines before it (or only their stamps, first STAMP_CHARS characters); at a driver load the
        # stamps of the lines since the load before are taken from those (before_load: _probe_start).
        self.block: list = []
        self.block_base = origin  # the line number before the block's first line
        self.hist: list = []  # the lines, or their stamps (_block.feed)
        self.hist_base = 1  # the line number of hist[0]
        self.before_load = None  # (first, n, hist, hist_base, block, block_base): _block.stamps_before


def _parse_lines(lines: Iterable[str]) -> KernelLog:
    """One pass over the lines (without their terminators), a block at a time (_kernel_log_block)."""
    st = _Log()
    for block in _block.blocks(lines):
        _block.feed(st, block, _line)
    return _finish(st)


def _line(st: _Log, n: int, raw: str) -> None:
    """One line, in order: a /dev/kmsg record read as its dmesg line, an rsyslog "#012" line as its lines."""
    if raw[:1].isdigit() and "," in raw[:8]:
        m = _KMSG_RE.match(raw)
        if m:
            st.kmsg = True
            raw = f"[{int(m[3]) / 1e6:.6f}] " + m[4].replace("\\x0a", " ")
    elif st.kmsg and raw[:1] == " " and _KMSG_DICT_RE.match(raw):
        return  # a record's SUBSYSTEM=/DEVICE= line
    if "#012" in raw:
        for part in _split_012(raw):
            if part.strip():
                _one(st, n, part, part.strip())
        return
    line = raw.strip()
    if line:
        _one(st, n, raw, line)


def _line_known(st: _Log, n: int, raw: str, kflag: int, kind: str) -> None:
    """`_line` for a line whose own description (_kernel_log_desc.describe: no /dev/kmsg record, no
    "#012", its kernel-line flag `kflag`) is `kind`, one of the recorders' (_kernel_log_block._DIRECT):
    `_known` takes such a line (describe mirrors it), a catalogue kind ("event", "unrec") the
    catalogues read (describe found it gated, not known)."""
    st.kernel += kflag
    if kind == "event" or kind == "unrec":
        st.ev.line(n, raw)
    else:
        _known(st, n, raw, raw.strip())


_line.known = _line_known  # type: ignore[attr-defined]  # (_kernel_log_block._direct)


def _finish(st: _Log) -> KernelLog:
    """The result of a pass (_Log) once every block is read; ParseError when no line was the kernel's."""
    n = st.lines
    kmsg = st.kmsg
    if st.kernel == 0:
        raise ParseError("no kernel log line (dmesg / journalctl -k: a time stamp, 'kernel:' or an NVRM line)", n)
    iommu = st.iommu
    bus_of = {u.lower(): b for u, (b, _) in st.uuids.items()}
    resets = tuple(GpuReset(bus_of.get(u.lower()), u, n, t, text) for u, n, t, text in st.resets)
    window = _probe_start(st, kmsg) if st.loaded else None
    return KernelLog(SOURCE, st.lines - st.origin, st.kernel, st.driver, tuple(st.xids), dict(sorted(st.counts.items())),
                     st.xids_total, tuple(st.fallen), tuple(st.sxids), st.sxids_total, tuple(st.limits),
                     tuple(st.links), st.links_total, iommu["domain"], iommu["enabled"], iommu["cmdline"],
                     tuple(iommu["faults"]), iommu["total"], st.loads,
                     st.loaded[0] if st.loaded else None, st.loaded[1] if st.loaded else None, window,
                     tuple(GpuUuid(u, b, n) for u, (b, n) in st.uuids.items()), resets, tuple(st.health),
                     st.health_total, _last_time([s[:STAMP_CHARS] for s in st.hist[-200:]], kmsg),
                     events=tuple(st.ev.events),
                     events_total=st.ev.total, event_counts=dict(sorted(st.ev.counts.items())),
                     unrecognised=tuple(st.ev.unrecognised), unrecognised_total=st.ev.unrecognised_total)


def _line_time(raw: str, kmsg: bool) -> Optional[float]:
    m = _KMSG_RE.match(raw) if kmsg and raw[:1].isdigit() else None
    return int(m[3]) / 1e6 if m else _time_s(raw)


def _probe_start(st: _Log, kmsg: bool) -> int:
    """The first line of the last driver load's own lines (see KernelLog.driver_window_line), from the
    stamps of the lines before it (st.before_load: since the load before, at most LOOKBACK_LINES)."""
    banner, t = st.loaded  # type: ignore[misc]
    floor = st.previous_load + 1 if st.previous_load else st.origin + 1
    start = banner
    if t is None:
        return max(banner - PROBE_LINES, floor)
    for n, stamp in reversed(_block.stamps_before(st.before_load)):
        if n >= banner:
            continue
        if n < floor:
            break
        tn = _line_time(stamp, kmsg)
        if tn is not None and tn < t - PROBE_S:
            break
        start = n
    return start


def _last_time(tail: Iterable[str], kmsg: bool) -> Optional[float]:
    """The stamp of the last line that has one (the log's end: its "now" for --kernel-log-since)."""
    for raw in reversed(tail):
        t = _line_time(raw, kmsg)
        if t is not None:
            return t
    return None


def _one(st: _Log, n: int, raw: str, line: str) -> None:
    """One non-blank line (kmsg records already in dmesg form): what the parser reads itself (Xids,
    health, links, IOMMU...), else, past a substring gate, what the catalogues explain."""
    if "NVRM:" in line or "kernel:" in line or "mlx5_core" in line or "nvidia-nvswitch" in line or _STAMP_RE.match(raw) \
            or _KERNELISH_RE.search(line):
        st.kernel += 1
    gated = gate(line) or (n <= st.ev.aer_until and "]" in line)
    if not _known(st, n, raw, line) and gated:
        st.ev.line(n, raw)


def _known(st: _Log, n: int, raw: str, line: str) -> bool:
    """True when the line is one this module records itself."""
    if "NVRM" in line:
        return _nvrm(st, n, raw, line)
    if "SXid" in line:
        m = _SXID_RE.search(line)
        if m:
            st.sxids_total += 1
            if len(st.sxids) < st.cap:
                st.sxids.append(SXid(int(m[2]), m[1].lower(), n, line[:MAX_TEXT]))
        return m is not None
    if "mlx5_core" in line and _mlx5(st, n, raw, line):
        return True
    if "limited by" in line or "GPU reset executed:" in line:
        return _pcie_or_reset(st, n, raw, line)
    if "DMAR" in line or "AMD-Vi" in line or "iommu" in line or "command line" in line:
        return _iommu_line(st.iommu, line, n, st.cap)
    return False


def _mlx5(st: _Log, n: int, raw: str, line: str) -> bool:
    """An mlx5_core health report or a port's link change."""
    if "health" in line or "synd 0x" in line or "Fatal error" in line:
        m = _MLX_HEALTH_RE.search(line)
        if m:
            _health(st, m, n, raw, line)
            return True
    if "Link " in line:
        m = _MLX_LINK_RE.search(line)
        if m:
            st.links_total += 1
            if len(st.links) < st.link_cap:
                state = "down" if m[3].lower() == "down" else "up"
                st.links.append(LinkEvent(m[1].lower(), m[2], state, n, _time_s(raw)))
            return True
    return False


def _pcie_or_reset(st: _Log, n: int, raw: str, line: str) -> bool:
    """A device's PCIe link "limited by" notice, or a GPU reset the driver executed."""
    if "limited by" in line and "available PCIe bandwidth" in line:
        m = _LIMIT_RE.search(line)
        if m and len(st.limits) < MAX_EVENTS and not any(x.device == m[2].lower() for x in st.limits):
            st.limits.append(_limit(m, n, line))
        return m is not None
    if "GPU reset executed:" in line:
        m = _RESET_RE.search(line)
        if m and m[2] == "true" and len(st.resets) < st.cap:
            st.resets.append((m[1], n, _time_s(raw), line[:MAX_TEXT]))
        return m is not None
    return False


def _health(st: _Log, m: "re.Match[str]", n: int, raw: str, line: str) -> None:
    st.health_total += 1
    if len(st.health) >= st.cap:
        return
    if m[3]:
        kind, synd, sev = "health_issue", m[3].strip(), m[5]
    elif m[6]:
        kind, synd, sev = "syndrome", m[6].lower(), None
    elif m[8]:
        kind, synd, sev = "fatal", m[8], None
    elif m[9]:  # the driver's own recovery (reload of the firmware) ended
        kind, synd, sev = ("recovered" if m[9] == "succeeded" else "recovery_failed"), None, None
    else:
        kind, synd, sev = "miss_count", None, None
    st.health.append(NicHealth(m[1].lower(), kind, n, _time_s(raw), line[:MAX_TEXT], synd, sev))


def _nvrm(st: _Log, n: int, raw: str, line: str) -> bool:
    """An NVIDIA driver line: an Xid, a GPU off the bus, the driver's load, a GPU's UUID (each regex
    tried only where the words it cannot match without are in the line)."""
    m = _XID_RE.search(line) if "Xid" in line else None
    if m:
        xid = int(m[2])
        st.xids_total += 1
        st.counts[xid] = st.counts.get(xid, 0) + 1
        if len(st.xids) < st.cap or xid == 79:
            cause = _CAUSE_RE.search(m[3])
            act = _ACTION_RE.search(m[3]) if xid == 154 else None
            t = _time_s(raw)
            if len(st.xids) < st.cap:
                st.xids.append(Xid(xid, _bus(m[1]), n, line[:MAX_TEXT], int(cause[1]) if cause else None, t,
                                   act[2].strip() if act else None))
            if xid == 79:
                _fallen(st.fallen, st.fallen_seen, _bus(m[1]), n, line, t)
        return True
    fallen = "fallen off the bus" in line
    m = search_after(line, _FALLEN_AT_RE, _FALLEN_WORDS_RE) if fallen else None
    if m:
        _fallen(st.fallen, st.fallen_seen, _bus(m[0][1]), n, line, _time_s(raw))
        return True
    m = _GPU_NOTICE_RE.search(line) if "The NVIDIA GPU" in line else None
    if m:
        if fallen:  # a kmsg record holds the whole notice on one line
            _fallen(st.fallen, st.fallen_seen, _bus(m[1]), n, line, _time_s(raw))
        else:
            st.notice = (_bus(m[1]), n, raw)
        return True
    if st.notice is not None and fallen and n - st.notice[1] <= 3:
        first = st.notice[2]
        _fallen(st.fallen, st.fallen_seen, st.notice[0], st.notice[1], first.strip(), _time_s(first))
        st.notice = None
        return True
    if "loading NVIDIA" in line:
        m = search_after(line, _DRIVER_HEAD_RE, _DRIVER_RE)
        if m:
            st.driver = m[1][1]
            st.loads += 1
            st.previous_load = st.loaded[0] if st.loaded else None
            st.loaded = (n, _time_s(raw))
            st.before_load = _block.lines_before(st, n)
        return True
    if "GPU at PCI:" in line:
        m = _UUID_AT_RE.search(line)
        if m and len(st.uuids) < MAX_EVENTS:
            st.uuids[m[2]] = (m[1].lower(), n)
        return m is not None
    return False


def _iommu_line(iommu: dict, line: str, n: int, cap: int = MAX_EVENTS) -> bool:
    """The IOMMU's mode, its being on, the command line and translation faults (DMAR / AMD-Vi lines)."""
    m = _IOMMU_DOMAIN_RE.search(line)
    if m:
        iommu["domain"] = m[1]
        return True
    m = _CMDLINE_RE.search(line)
    if m:
        if iommu["cmdline"] is None:
            iommu["cmdline"] = m[1].strip()[:4096]
        return True
    if _FAULT_RE.search(line):
        iommu["total"] += 1
        d = _FAULT_DEV_RE.search(line)
        dev = None
        if d:
            dev = (d[1] or d[2] or f"{d[3]}:{d[4]}.{d[5]}").lower()
            dev = dev if dev.count(":") == 2 else f"0000:{dev}"
        if len(iommu["faults"]) < cap and "handling fault" not in line:
            iommu["faults"].append(Event(dev, n, line[:MAX_TEXT]))
        return True
    if _IOMMU_ON_RE.search(line):
        iommu["enabled"] = True
        return True
    return False


def _fallen(out: list[Event], seen: set[str], bus: str, n: int, line: str, t: Optional[float] = None) -> None:
    if bus not in seen and len(out) < MAX_EVENTS:
        seen.add(bus)
        out.append(Event(bus, n, line[:MAX_TEXT], t))


from . import _kernel_log_block as _block  # noqa: E402 (it reads this module's matchers)
from .sniff.kernel_log import _elision, sniff  # _elision: tests/hostile/test_regex_n4ghi.py
