"""What the `nvidia-smi nvlink` modes share: one block per GPU under a 'GPU n: <name> (UUID: ...)' header.

Every mode (-s, -e, -c, -info, -R, ...) prints the same header, the same NVML / driver line in place of a
GPU's links, and gets pasted with the same elision markers ('...', '[...]'); the modes differ only in
the lines under a header. This module holds the shared regexes, the table of mode signatures (so each
parser refuses the other modes by name), and `walk`, the block walker the -e, -c and -info parsers
drive with their own line reader. (`nvidia_smi_nvlink_s` keeps its own walker: it predates this one.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from .base import ParseError
from . import _tool_failures
from .ib_records import ToolError

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
ALL_INACTIVE_RE = re.compile(r"Unable to retrieve NVLink information as all links are in-?active", re.I)
UNSUPPORTED_RE = re.compile(r"does not have or support NVLink", re.I)
ERROR_RE = re.compile(r"^(?:Unable to determine|Failed to|Unable to|Error:|NVML:|No devices were found|"
                      r"NVIDIA-SMI has failed|Make sure that the latest NVIDIA driver)", re.I)
LINK_FRAGMENT_RE = re.compile(r"^(?:L|Li|Lin|Link|Link\s+[0-9]{1,4}:?)$")
UUID_OK_RE = re.compile(r"^(?:GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
SNIFF_HEADER = re.compile(r"^GPU [0-9]{1,6}: [^\n]*\(UUID: ", re.M)


def sniff_mode(text: str, mode_line: "re.Pattern[str]", alone: float = 0.8) -> float:
    """A mode's sniff score: 0.95 when its lines stand under a GPU header, `alone` without one, else 0."""
    if not mode_line.search(text):
        return 0.0
    return 0.95 if SNIFF_HEADER.search(text) else alone

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
    name: str | None
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


def new_block(index: int | None, name: str | None, uuid_raw: str | None, line_no: int, notes: list[str]) -> GpuBlock:
    uuid: str | None = None
    if uuid_raw is not None:
        uuid_raw = uuid_raw.strip()
        if UUID_OK_RE.match(uuid_raw):
            uuid = uuid_raw
        else:
            notes.append(f"line {line_no}: GPU {index} UUID redacted or unreadable ('{uuid_raw[:40]}'): uuid is null")
    return GpuBlock(index, name.strip() if name is not None else None, uuid, line_no)


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


def walk(lines: Iterable[str], read: ReadFn, own: str, own_name: str, expect: str) -> Walk:
    """Read GPU blocks of one `nvidia-smi nvlink` mode from cleaned lines (ANSI and line ends gone).

    own: the mode key in MODES ("e"); own_name: "`nvidia-smi nvlink -e` (error counters)"; expect: the
    lines of the mode, for messages ("'Link <n>: <counter>: <value>' lines"). Raises ParseError when no
    GPU holds a line of the mode: naming the other mode when the text is one, else saying what it found.
    """
    others = other_modes(own)
    cmd, _, what = own_name.partition(" (")
    gpus: list[GpuBlock] = []
    errors: list[ErrorLine] = []
    notes: list[str] = []
    hidden: list[int] = []
    partials: list[tuple[int, str]] = []
    elided = leading_elision = False
    other_first: tuple[int, str] | None = None
    first_text: tuple[int, str] | None = None
    last_line, last_kind = "", ""
    cur: GpuBlock | None = None

    for line_no, raw in enumerate(lines, 1):
        line = raw.strip().strip("`").strip()
        if not line:
            continue
        if first_text is None:
            first_text = (line_no, line)
        last_line = line
        header = match_header(line)
        if header is not None:
            index = header.index
            if cur is not None and cur.pending_elision:
                # a marker between two blocks: a jump in the indices hid whole GPUs, else links of the first
                if cur.index is not None and index > cur.index + 1:
                    hidden.extend(range(cur.index + 1, index))
                else:
                    cur.truncated = True
            elif cur is None and leading_elision and index > 0:
                hidden.extend(range(0, index))
            cur = new_block(index, header.name, header.uuid_raw if header.closed else None, line_no, notes)
            gpus.append(cur)
            if not header.closed:
                cur.truncated = True
                notes.append(f"line {line_no}: GPU {index} header cut off inside its UUID")
            elif header.rest and not apply_message(cur, header.rest):
                notes.append(f"line {line_no}: text after GPU {index} header skipped: '{header.rest[:60]}'")
            last_kind = "gpu"
            continue
        if ELISION_RE.match(line):
            elided = True
            notes.append(f"line {line_no}: elision marker '{line[:12]}': output not shown in full")
            if cur is None:
                leading_elision = True
            elif cur.content:
                cur.pending_elision = True
            else:
                cur.truncated = True
            last_kind = "elision"
            continue
        mode = next((name for pattern, name in others if pattern.search(line)), None)
        if mode is not None:
            if other_first is None:
                other_first = (line_no, mode)
            if cur is not None:
                cur.other += 1
            last_kind = "other"
            continue
        target = cur if cur is not None else GpuBlock(None, None, None, line_no)
        kind = read(line, raw, line_no, target)
        if kind == "content":
            if cur is None:
                cur = target
                gpus.append(cur)
                notes.append(f"line {line_no}: {expect} with no 'GPU n:' header above them (a paste without "
                             "its header): GPU index, name and uuid are null")
            if cur.pending_elision:
                cur.truncated = True  # lines before and after an elision marker: some were not shown
                cur.pending_elision = False
            cur.content += 1
            last_kind = "content"
            continue
        if kind == "partial" and cur is not None:
            partials.append((line_no, line))
            last_kind = "partial"
            continue
        if ALL_INACTIVE_RE.search(line) or UNSUPPORTED_RE.search(line):
            if cur is not None and cur.content == 0:
                apply_message(cur, line)
            else:
                notes.append(f"line {line_no}: '{line[:70]}' is not under a GPU header without links: skipped")
            last_kind = "message"
            continue
        if ERROR_RE.match(line):
            errors.append(_tool_failures.classify(_tool_failures.NVSMI, line_no, line))
            last_kind = "message"
            continue
        last_kind = "junk"  # prompts, prose, other programs' output: not nvlink's, skipped

    cut = partials.pop() if last_kind == "partial" else None
    notes.extend(f"line {n}: '{text[:60]}' is not a complete line of {cmd}: skipped" for n, text in partials)
    if cur is not None:
        if cut is not None:
            cur.truncated = True
            notes.append(f"line {cut[0]}: output ends inside {cur.label} ('{cut[1][:60]}' is cut off): "
                         "that line and any after it are not shown")
        elif cur.pending_elision:
            cur.truncated = True  # the output ends with an elision marker inside this GPU
        elif cur.content == 0 and cur.other == 0 and not cur.truncated:
            cur.truncated = True
            notes.append(f"line {cur.line_no}: output ends after {cur.label} header: its links are not shown")
        elif last_kind == "junk" and cur.content and LINK_FRAGMENT_RE.match(last_line):
            cur.truncated = True
            notes.append(f"{cur.label}: output ends in a cut-off line '{last_line}': links after it may be missing")

    if not any(g.content for g in gpus):
        if other_first is not None:
            line_no, mode = other_first
            raise ParseError(f"this is {mode} output, not {own_name}", line_no)
        if gpus:
            raise ParseError(f"expected {expect} under the 'GPU n:' headers, found none "
                             "(headers alone are `nvidia-smi -L` output)", gpus[0].line_no)
        if errors:
            return Walk(gpus=[], errors=tuple(errors), notes=notes)
        if first_text is None:
            raise ParseError(f"expected {cmd} output ('GPU n: ...' then {expect}), found no text", 0)
        line_no, line = first_text
        raise ParseError(f"expected a 'GPU <n>: <name> (UUID: ...)' header of {cmd}, found '{line[:60]}'", line_no)

    kept = []
    for g in gpus:
        if g.other and g.content == 0:
            notes.append(f"line {g.line_no}: {g.label} block holds only other `nvidia-smi nvlink` output: skipped")
            continue
        kept.append(g)
    if other_first is not None:
        notes.append(f"line {other_first[0]}: {other_first[1]} lines skipped: not {what.rstrip(')')}")
    return Walk(gpus=kept, elided=elided, elided_gpu_indices=tuple(sorted(set(hidden))), errors=tuple(errors),
                notes=notes)


def snake(name: str) -> str:
    """'Rx remote Errors' -> 'rx_remote_errors', 'FEC Errors - 3' -> 'fec_errors_3'."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:80] or "unnamed"
