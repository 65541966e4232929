"""The kernel_log parser's catalogue side: what the NVIDIA driver (NVRM), PCIe AER, mlx5_core, the
IOMMU and nvidia-peermem print, recognised through the catalogues read by "kernel_log"
(topodiag/catalogues/data/{nvrm,aer,mlx5,iommu,peermem}.json).

A line is classified only when a cheap substring gate passes (GATE, or an AER report's continuation
lines); its message is the text after the time stamp, the host and the driver's device prefix, as the
driver printed it:

    [  115.083711] NVRM: GPU6 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP
        -> message "NVRM: _kgspBootGspRm: unexpected WPR2 ..." (the RM's "GPU<n> " is taken off)
    Jan  1 host kernel: pcieport 0000:00:01.1: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)
        -> device "0000:00:01.1", message "AER: PCIe Bus Error: severity=Corrected, ..."
    mlx5_core 0000:3b:00.0: poll_health:800:(pid 0): device's health compromised - reached miss count
        -> device "0000:3b:00.0", message "device's health compromised - reached miss count"

A classified line that is not a continuation (the entry's `consequence`) is an Event; a gated line no
entry explains that reads like a failure is `unrecognised` (SYS004). A helper module, no parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

MAX_EVENTS = 200
MAX_TEXT = 300
SOURCE = "kernel_log"
GATE = ("NVRM", "AER", "PCIe Bus Error", "mlx5_core", "DMAR", "AMD-Vi", "peermem", "smmu", "error status/mask",
        "TLP Header", "nvidia_p2p")


def gate(line: str) -> bool:
    """Whether a line names one of the drivers the catalogues read (GATE; written out: a chain of
    substring tests costs a third of a regex alternation on every line of a log)."""
    return ("NVRM" in line or "AER" in line or "PCIe Bus Error" in line or "mlx5_core" in line or "DMAR" in line
            or "AMD-Vi" in line or "peermem" in line or "smmu" in line or "error status/mask" in line
            or "TLP Header" in line or "nvidia_p2p" in line)

AER_TAIL = 8  # lines after an AER report's head that may continue it ("   [ 0] RxErr", "  device [..]")

# What precedes a kernel message: dmesg "[  12.345]" (or "[  +0.000012]" of dmesg -H/-e), dmesg -T
# "[Mon Jan  1 12:00:00 2024]", dmesg -H "[Aug 4 09:48]", syslog "Jan  1 12:00:00 host kernel:",
# ISO journal "2024-01-01T12:00:00+0000 host kernel:", dmesg --time-format iso, dmesg -x "kern  :err   : ",
# a bare "kernel:", a <N> priority. Taken off up to three times (a syslog line that carries a dmesg stamp).
_PREFIX_RE = re.compile(
    r"^[ \t]*(?:<[0-9]{1,3}>[ \t]*)?(?:"
    r"\[[ \t]*[+-]?[0-9]{1,12}\.[0-9]{1,9}\]"
    r"|\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] [0-9]{4}\]"
    r"|\[[A-Z][a-z]{2}[ \t]{1,2}[0-9]{1,2} [0-9][0-9]:[0-9][0-9]\]"
    r"|[A-Z][a-z]{2} [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] \S{1,64} kernel:"
    r"|[0-9]{4}-[0-9][0-9]-[0-9][0-9][T ][0-9][0-9]:[0-9][0-9]:[0-9][0-9]\S{0,20} \S{1,64} kernel:"
    r"|[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9][,.][0-9]{1,9}[+-][0-9][0-9]:?[0-9][0-9]"
    r"|[a-z]{2,8} {0,3}:[a-z]{2,7} {0,4}:"
    r"|kernel:"
    r"|[^\[\]:]{1,40}:[0-9][0-9]:[0-9][0-9](?:[.,][0-9]{1,9})? \S{1,64} kernel:)[ \t]?")  # a localised syslog date
# "<driver> <domain:bus:dev.fn>[ <netdev or ib device>]: " (dev_printk), then mlx5_core_err's
# "func:line:(pid N): "
_DEVICE_RE = re.compile(r"^([\w.-]{1,40}) ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?: [\w.-]{1,40})?: ?")
_PLATFORM_DEVICE_RE = re.compile(r"^arm-smmu[\w-]{0,8} [\w.:-]{1,60}: ")  # "arm-smmu 15000000.iommu: "
_MLX_FUNC_RE = re.compile(r"^\w{1,60}:[0-9]{1,6}:\(pid [0-9]{1,9}\): ")
# "NVRM: GPU3 func: ..." (the RM names the GPU by its instance) and R515's "NVRM func: ..."
_NVRM_RE = re.compile(r"^NVRM:? (?:GPU[0-9]{1,3} )?(?!GPU )")
_NVRM_DEV_RE = re.compile(r"^NVRM: GPU ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")
_AER_SEVERITY_RE = re.compile(r"(Correct\w*|Uncorrect\w* \((?:Non-)?Fatal\))")


@dataclass(frozen=True)
class KernelEvent:
    """One driver message a catalogue entry explains."""

    line_no: int
    cls: str  # the class (classes.toml): gpu-init-failure, pcie-aer-corrected, nic-health, ...
    entry: str  # the catalogue entry's id
    severity: str
    device: Optional[str]  # the PCI function the line names ("0000:01:00.0"), when it names one
    text: str
    rule: Optional[str] = None  # the rule that reports the class (GPU004, IB017, PCI003)


@dataclass(frozen=True)
class Unrecognised:
    line_no: int
    text: str


@dataclass
class Events:
    """What the catalogue side of one pass collects."""

    events: list = field(default_factory=list)
    total: int = 0
    counts: dict = field(default_factory=dict)  # {class: n}, over every event (beyond the cap too)
    unrecognised: list = field(default_factory=list)
    unrecognised_total: int = 0
    aer_until: int = 0  # the last line that may continue an AER report
    cap: int = MAX_EVENTS  # the events and unrecognised lines kept (kernel_log._Log.cap)

    def line(self, n: int, raw: str, parts: Optional[tuple] = None) -> None:
        """One line of the log (the gate is the caller's: see `gated`); `parts`: its `split`, when known."""
        device, message = parts if parts is not None else split(raw)
        if message is None:
            return
        e, cls, severity, rule = classified(message)
        if e is None:
            if cls:  # catalogues.looks_like_failure
                self.unrecognised_total += 1
                if len(self.unrecognised) < self.cap:
                    self.unrecognised.append(Unrecognised(n, raw.strip()[:MAX_TEXT]))
            return
        if e.id.startswith("aer."):
            self.aer_until = n + AER_TAIL
        if e.consequence:
            return
        self.total += 1
        self.counts[cls] = self.counts.get(cls, 0) + 1
        if len(self.events) < self.cap:
            self.events.append(KernelEvent(n, cls, e.id, severity, device, raw.strip()[:MAX_TEXT], rule))

    def gated(self, n: int, line: str) -> bool:
        """Whether a line is one the catalogues may explain (a cheap substring test)."""
        return gate(line) or (n <= self.aer_until and "]" in line)


CLASSIFIED_CAP = 4096  # messages whose classification is remembered
_classified: dict = {}
_classified_by: list = [None]  # the catalogues the memo is of (for_reader's tuple)


_catalogues: list = [None]  # the catalogues package, imported on the first gated line only


def _load_catalogues():
    from .. import catalogues  # noqa: PLC0415 (loaded on the first gated line only)

    _catalogues[0] = catalogues
    return catalogues


def classified(message: str) -> tuple:
    """(the catalogue entry, its class, severity, rule) of a message, or (None, whether it looks like a
    failure, None, None): catalogues.classify_for and _refine, remembered by message (a log repeats its
    messages: an AER report's lines thousands of times) while the catalogues are the same."""
    catalogues = _catalogues[0] or _load_catalogues()
    cats = catalogues.for_reader(SOURCE)
    if _classified_by[0] is not cats:
        _classified.clear()
        _classified_by[0] = cats
    got = _classified.get(message)
    if got is None:
        hit = catalogues.classify_for(SOURCE, message)
        if hit is None:
            got = (None, catalogues.looks_like_failure(message), None, None)
        else:
            e = hit.entry
            cls, severity = _refine(e, message)
            got = (e, cls, severity, catalogues.classes().get(cls, {}).get("rule") if cls != e.cls else e.rule)
        if len(message) <= 512:
            if len(_classified) >= CLASSIFIED_CAP:
                _classified.clear()
            _classified[message] = got
    return got


def split(raw: str) -> tuple[Optional[str], Optional[str]]:
    """(device, message) of a kernel line: the stamps, host and driver prefix taken off."""
    text = raw.strip()
    for _ in range(3):
        m = _PREFIX_RE.match(text)
        if not m or m.end() == 0:
            break
        text = text[m.end():].lstrip()
    device = None
    m = _DEVICE_RE.match(text)
    if m:
        device = m[2].lower()
        text = text[m.end():]
        f = _MLX_FUNC_RE.match(text)
        if f:
            text = text[f.end():]
    else:
        m = _PLATFORM_DEVICE_RE.match(text)
        text = text[m.end():] if m else text
    if text.startswith("NVRM"):
        d = _NVRM_DEV_RE.match(text)
        if d:
            device = device or d[1].lower()
        else:
            text = _NVRM_RE.sub("NVRM: ", text, count=1)
    text = text.strip()
    return device, (text or None)


_AER_CLASS = {"correct": ("pcie-aer-corrected", "warning"), "nonfatal": ("pcie-aer-uncorrected", "error"),
              "fatal": ("pcie-aer-fatal", "critical")}


def _refine(e, message: str) -> tuple[str, str]:
    """The class and severity of a match: an AER head line is graded by the severity it prints
    ("severity=Corrected", "Uncorrected (Fatal) error received")."""
    if not e.id.startswith("aer.") or e.id.startswith("aer.bit."):
        return e.cls, e.severity
    m = _AER_SEVERITY_RE.search(message)
    if not m:
        return e.cls, e.severity
    word = m[1].lower()
    kind = "correct" if word.startswith("correct") else ("nonfatal" if "non-fatal" in word else "fatal")
    return _AER_CLASS[kind]
