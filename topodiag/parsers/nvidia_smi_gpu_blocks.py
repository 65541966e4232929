"""What the `nvidia-smi nvlink` modes share: one block per GPU under a 'GPU n: <name> (UUID: ...)' header.

Every mode (-s, -e, -c, -info, -R, ...) prints the same header, the same NVML / driver line in place of a
GPU's links, and gets pasted with the same elision markers ('...', '[...]'); the modes differ only in
the lines under a header. This module holds the shared regexes, the table of mode signatures (so each
parser refuses the other modes by name), and `Walker` / `walk`, the one block walker: the -e, -c, -gt
and -info parsers drive it with their own line reader, `nvidia_smi_nvlink_s` subclasses it where link
status differs. The records the parsers freeze the blocks into, and every note sentence, are in
`_nvidia_smi_records`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from .base import ParseError
from . import _tool_failures
from .ib_records import ToolError
from ._nvidia_smi_records import smi_note
from .sniff._common import ALL_INACTIVE_RE, UNSUPPORTED_RE

# "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)" possibly followed by an NVML message on the same line.
# The header is split with str.find, not one regex: `:\s*(.*?)\s*\(UUID:\s*([^)]*?)\s*\)` let three runs
# share the same blanks and took minutes on a 5 KB line of blanks (cubic backtracking).
GPU_LEAD_RE = re.compile(r"GPU[ \t]+([0-9]{1,6}):")


@dataclass(frozen=True)
class Header:
    """A 'GPU n: <name> (UUID: <uuid>) <rest>' line: `closed` False when it was cut inside its UUID
    (uuid_raw is then None), `bare` when no '(UUID' is printed (name is then the whole rest)."""
    index: int
    name: str
    uuid_raw: str | None
    rest: str
    closed: bool
    bare: bool


def match_header(line: str) -> Header | None:
    """Read a GPU header from a stripped line in linear time; None when the line is not one."""
    m = GPU_LEAD_RE.match(line)
    if m is None:
        return None
    index, body = int(m.group(1)), line[m.end():]
    at = body.find("(UUID:")
    close = body.find(")", at + 6) if at >= 0 else -1
    if at >= 0 and close >= 0:  # the first '(UUID:' with a ')' after it (no later one then has one)
        return Header(index, body[:at].strip(), body[at + 6:close].strip(), body[close + 1:].strip(), True, False)
    last_close = body.rfind(")")
    at = body.find("(UUID", last_close + 1)
    if at >= 0:  # cut before its ')': the first '(UUID' after the last ')'
        return Header(index, body[:at].strip(), None, "", False, False)
    name = body.strip()
    return Header(index, name, None, "", True, True) if name else None
ELISION_RE = re.compile(r"^(?:\.{2,}|\u2026+|\[\s*(?:\.{2,}|\u2026)\s*\]|\(\s*\.{2,}\s*\)|<snip>|\[snip\])$", re.I)
ERROR_RE = re.compile(r"^(?:Unable to determine|Failed to|Unable to|Error:|NVML:|No devices were found|"
                      r"NVIDIA-SMI has failed|Make sure that the latest NVIDIA driver)", re.I)
LINK_FRAGMENT_RE = re.compile(r"^(?:L|Li|Lin|Link|Link\s+[0-9]{1,4}:?)$")
UUID_OK_RE = re.compile(r"^(?:GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


# No two runs over the same blanks side by side (`,\s*.*`, `\s*:?\s*` were quadratic on a run of tabs).
# What each `nvidia-smi nvlink` mode prints under a GPU header: (mode key, a line of that mode, its name).
# A parser refuses the text of the others by name. The order is the one `nvidia_smi_nvlink_s` always
# used (first match wins); "s" is last because that parser excludes itself.
MODES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("c", re.compile(r"^Link\s+[0-9]+\s*,.*supported\s*:\s*(?:true|false)$", re.I),
     "`nvidia-smi nvlink -c` (capabilities)"),
    ("e", re.compile(r"^Link\s+[0-9]+\s*:\s*(?:Replay|Recovery|CRC|Flit CRC|Data CRC|ECC)\s+Errors?\s*:", re.I),
     "`nvidia-smi nvlink -e` (error counters)"),
    ("ec", re.compile(r"^Link\s+[0-9]+\s*:\s*Lane\s+[0-9]+", re.I), "`nvidia-smi nvlink -ec` (per-lane CRC error counters)"),
    ("R", re.compile(r"^Link\s+[0-9]+\s*:\s*Remote Device\b", re.I), "`nvidia-smi nvlink -R` (remote link info)"),
    ("p", re.compile(r"^Link\s+[0-9]+\s*:\s*(?:Remote (?:PCI Bus ID|info pci_dev)(?:\s*:)?\s*)?"
                     r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$", re.I),
     "`nvidia-smi nvlink -p` (remote PCI bus ids)"),
    ("gt", re.compile(r"^Link\s+[0-9]+\s*:\s*(?:Data|Raw)\s+[TR]x\s*:", re.I), "`nvidia-smi nvlink -gt` (throughput counters)"),
    ("g", re.compile(r"^Link\s+[0-9]+\s*,\s*[TR]x[0-9]?\s*:", re.I), "`nvidia-smi nvlink -g` (utilization counters)"),
    ("info", re.compile(r"^(?:NVLE|NVLink Encryption)\s*:|^Firmware Version\s*:|^(?:MSE|NETIR(?: [A-Z]+)?)\s*:\s*[0-9]+:[0-9]+:[0-9]+$"),
     "`nvidia-smi nvlink -info` (encryption and firmware)"),
    ("s", re.compile(r"^Link\s+[0-9]{1,4}\s*:\s*(?:[0-9]{1,6}(?:\.[0-9]{1,6})?\s*GB/s|<\s*in-?active\s*>)$", re.I),
     "`nvidia-smi nvlink -s` (link status)"),
)


def other_modes(own: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    """The (pattern, name) pairs of every mode but `own`, in table order."""
    return tuple((pattern, name) for key, pattern, name in MODES if key != own)


ErrorLine = ToolError  # a failure line, with its nvidia-smi catalogue class (topodiag/catalogues)


@dataclass
class GpuBlock:
    """One GPU's block while it is being read; each parser freezes it into its own record."""
    index: int | None  # None: link lines with no 'GPU n:' header above them
    model: str | None  # the product name of the header
    uuid: str | None
    line_no: int
    truncated: bool = False
    all_inactive: bool = False
    unsupported: bool = False
    message: str | None = None
    content: int = 0  # lines of this mode (and an NVML message) read into the block
    other: int = 0  # lines of another nvlink mode seen in the block
    pending_elision: bool = False
    data: dict[str, Any] = field(default_factory=dict)  # the parser's own accumulators

    @property
    def label(self) -> str:
        return f"GPU {self.index}" if self.index is not None else "the GPU without header"


@dataclass
class Walk:
    """What `walk` read: the GPU blocks with their truncation settled, and the notes on the way."""
    gpus: list[GpuBlock]
    elided: bool = False
    elided_gpu_indices: tuple[int, ...] = ()
    errors: tuple[ErrorLine, ...] = ()
    notes: list[str] = field(default_factory=list)


# read(line, raw, line_no, gpu) -> "content" (read into gpu.data), "partial" (a line of this mode cut
# short, e.g. the last line of a paste: nothing read), or None (not a line of this mode).
ReadFn = Callable[[str, str, int, GpuBlock], "str | None"]


def new_block(index: int | None, model: str | None, uuid_raw: str | None, line_no: int, notes: list[str]) -> GpuBlock:
    uuid: str | None = None
    if uuid_raw is not None:
        uuid_raw = uuid_raw.strip()
        if UUID_OK_RE.match(uuid_raw):
            uuid = uuid_raw
        else:
            notes.append(smi_note("uuid-unreadable", line=line_no, index=index, uuid=uuid_raw[:40]))
    return GpuBlock(index, model.strip() if model is not None else None, uuid, line_no)


def apply_message(gpu: GpuBlock, text: str) -> bool:
    """Record an NVML / driver line that replaces a GPU's links; False when it is not one."""
    if ALL_INACTIVE_RE.search(text):
        gpu.all_inactive = True
    elif UNSUPPORTED_RE.search(text):
        gpu.unsupported = True
    else:
        return False
    gpu.message = text.strip()
    gpu.content += 1
    return True


class Walker:
    """Reads GPU blocks of one `nvidia-smi nvlink` mode from cleaned lines (ANSI and line ends gone):
    `line` classifies each line (header, elision marker, another mode's line, a line of this mode,
    NVML message, failure line, junk), `end` settles the last block, `result` refuses a text with no
    line of the mode or returns the blocks. A mode reads its own lines with `read` (see ReadFn);
    `nvidia_smi_nvlink_s` subclasses it for the few places where link status differs."""

    def __init__(self, read: ReadFn, own: str, own_name: str, expect: str):
        self.read, self.own_name, self.expect = read, own_name, expect
        self.others = other_modes(own)
        self.cmd, _, self.what = own_name.partition(" (")
        self.no_text = f"expected {self.cmd} output ('GPU n: ...' then {expect}), found no text"
        self.gpus: list[GpuBlock] = []
        self.errors: list[ErrorLine] = []
        self.notes: list[str] = []
        self.hidden: list[int] = []
        self.partials: list[tuple[int, str]] = []
        self.elided = self.leading_elision = False
        self.other_first: tuple[int, str] | None = None
        self.first_text: tuple[int, str] | None = None
        self.last_line, self.last_kind = "", ""
        self.cur: GpuBlock | None = None

    def run(self, lines: Iterable[str]) -> Walk:
        for line_no, raw in enumerate(lines, 1):
            self.line(line_no, raw)
        self.end()
        return self.result()

    def line(self, line_no: int, raw: str) -> None:
        line = raw.strip().strip("`").strip()
        if not line:
            return
        if self.first_text is None:
            self.first_text = (line_no, line)
        self.last_line = line
        header = match_header(line)
        if header is not None:
            self.last_kind = self.header(header, line_no)
        elif ELISION_RE.match(line):
            self.last_kind = self.elision(line, line_no)
        else:
            self.last_kind = (self.other(line, line_no) or self.content(line, raw, line_no)
                              or self.message(line, line_no) or "junk")  # junk: prompts, prose, other output

    def header(self, header: Header, line_no: int) -> str:
        index, cur = header.index, self.cur
        if cur is not None and cur.pending_elision:
            # a marker between two blocks: a jump in the indices hid whole GPUs, else links of the first
            if cur.index is not None and index > cur.index + 1:
                self.hidden.extend(range(cur.index + 1, index))
            else:
                cur.truncated = True
        elif cur is None and self.leading_elision and index > 0:
            self.hidden.extend(range(0, index))
        cur = self.cur = new_block(index, header.name, header.uuid_raw if header.closed else None, line_no,
                                   self.notes)
        self.gpus.append(cur)
        if not header.closed:
            cur.truncated = True
            self.notes.append(smi_note("header-cut-in-uuid", line=line_no, index=index))
        elif header.rest and not apply_message(cur, header.rest):
            self.notes.append(smi_note("text-after-header", line=line_no, index=index, text=header.rest[:60]))
        return "gpu"

    def has_lines(self, gpu: GpuBlock) -> bool:
        """Whether lines of the mode were read into the block (an elision marker after them is pending)."""
        return bool(gpu.content)

    def elision(self, line: str, line_no: int) -> str:
        self.elided = True
        self.notes.append(smi_note("elision-marker", line=line_no, marker=line[:12]))
        if self.cur is None:
            self.leading_elision = True
        elif self.has_lines(self.cur):
            self.cur.pending_elision = True
        else:
            self.cur.truncated = True
        return "elision"

    def other(self, line: str, line_no: int) -> str | None:
        mode = next((name for pattern, name in self.others if pattern.search(line)), None)
        if mode is None:
            return None
        if self.other_first is None:
            self.other_first = (line_no, mode)
        if self.cur is not None:
            self.cur.other += 1
        return "other"

    def content(self, line: str, raw: str, line_no: int) -> str | None:
        target = self.cur if self.cur is not None else GpuBlock(None, None, None, line_no)
        kind = self.read(line, raw, line_no, target)
        if kind == "content":
            if self.cur is None:
                self.cur = target
                self.gpus.append(target)
                self.notes.append(smi_note("no-header", line=line_no, expect=self.expect))
            self.took(self.cur)
            return "content"
        if kind == "partial" and self.cur is not None:
            self.partials.append((line_no, line))
            return "partial"
        return None

    @staticmethod
    def took(gpu: GpuBlock) -> None:
        """A line of the mode was read into the block."""
        if gpu.pending_elision:
            gpu.truncated = True  # lines before and after an elision marker: some were not shown
            gpu.pending_elision = False
        gpu.content += 1

    def message(self, line: str, line_no: int) -> str | None:
        if ALL_INACTIVE_RE.search(line) or UNSUPPORTED_RE.search(line):
            if self.cur is not None and self.cur.content == 0:
                apply_message(self.cur, line)
            else:
                self.notes.append(smi_note("message-not-alone", line=line_no, text=line[:70]))
            return "message"
        if ERROR_RE.match(line):
            self.errors.append(_tool_failures.classify(_tool_failures.NVSMI, line_no, line))
            return "message"
        return None

    def end(self) -> None:
        """Settle the last block: the output may end inside it."""
        cut = self.partials.pop() if self.last_kind == "partial" else None
        self.notes.extend(smi_note("incomplete-line", line=n, text=text[:60], cmd=self.cmd) for n, text in self.partials)
        cur = self.cur
        if cur is None:
            return
        if cut is not None:
            cur.truncated = True
            self.notes.append(smi_note("ends-inside-line", line=cut[0], gpu=cur.label, text=cut[1][:60]))
        elif cur.pending_elision:
            cur.truncated = True  # the output ends with an elision marker inside this GPU
        elif cur.content == 0 and cur.other == 0 and not cur.truncated:
            cur.truncated = True
            self.notes.append(smi_note("ends-after-header", line=cur.line_no, gpu=cur.label))
        elif self.last_kind == "junk" and cur.content and LINK_FRAGMENT_RE.match(self.last_line):
            cur.truncated = True
            self.notes.append(smi_note("ends-in-fragment", gpu=cur.label, text=self.last_line))

    def has_content(self, gpu: GpuBlock) -> bool:
        return bool(gpu.content)

    def refuse(self) -> None:
        """No GPU holds a line of the mode: ParseError naming the other mode when the text is one, else
        saying what it found; returns only for a text that is nvidia-smi's failure lines alone."""
        if self.other_first is not None:
            line_no, mode = self.other_first
            raise ParseError(f"this is {mode} output, not {self.own_name}", line_no)
        if self.gpus:
            raise ParseError(f"expected {self.expect} under the 'GPU n:' headers, found none "
                             "(headers alone are `nvidia-smi -L` output)", self.gpus[0].line_no)
        if self.errors:
            return
        if self.first_text is None:
            raise ParseError(self.no_text, 0)
        line_no, line = self.first_text
        raise ParseError(f"expected a 'GPU <n>: <name> (UUID: ...)' header of {self.cmd}, found '{line[:60]}'",
                         line_no)

    def result(self) -> Walk:
        if not any(self.has_content(g) for g in self.gpus):
            self.refuse()
            return Walk(gpus=[], errors=tuple(self.errors), notes=self.notes)
        kept = []
        for g in self.gpus:
            if g.other and g.content == 0:
                self.notes.append(smi_note("only-other-mode", line=g.line_no, gpu=g.label))
                continue
            kept.append(g)
        if self.other_first is not None:
            self.notes.append(smi_note("other-mode-skipped", line=self.other_first[0], mode=self.other_first[1],
                                   what=self.what.rstrip(")")))
        return Walk(gpus=kept, elided=self.elided, elided_gpu_indices=tuple(sorted(set(self.hidden))),
                    errors=tuple(self.errors), notes=self.notes)


def walk(lines: Iterable[str], read: ReadFn, own: str, own_name: str, expect: str) -> Walk:
    """Read GPU blocks of one `nvidia-smi nvlink` mode from cleaned lines (ANSI and line ends gone).

    own: the mode key in MODES ("e"); own_name: "`nvidia-smi nvlink -e` (error counters)"; expect: the
    lines of the mode, for messages ("'Link <n>: <counter>: <value>' lines"). Raises ParseError when no
    GPU holds a line of the mode: naming the other mode when the text is one, else saying what it found.
    """
    return Walker(read, own, own_name, expect).run(lines)


def snake(name: str) -> str:
    """'Rx remote Errors' -> 'rx_remote_errors', 'FEC Errors - 3' -> 'fec_errors_3'."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:80] or "unnamed"
