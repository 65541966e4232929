"""Parser for `nvidia-smi nvlink -s` / `nvidia-smi nvlink --status` (per-link NVLink state and speed).

Reads one block per GPU, a header then one line per link (TAB+space or 9 spaces before 'Link'):

    GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)
             Link 0: 26.562 GB/s
             Link 3: <inactive>
    GPU 2: NVIDIA RTX A6000 (UUID: GPU-02c05ee3-bdb5-aac7-f9e8-a4c8f3f725b3)
    NVML: Unable to retrieve NVLink information as all links are inActive

The NVML line means that GPU has no active link (not an error); newer drivers print
"Device does not have or support Nvlink" for a GPU without NVLink. Speeds are printed one-way per
link ("25.781 GB/s" V100, "25 GB/s" A100 on newer drivers, "26.562 GB/s" H100, "53.125 GB/s" GB200).
Pasted outputs carry elision lines ('...', '....', '[...]'): the GPU they interrupt is marked
`truncated`, so a rule never concludes a GPU has only the links shown. Output of the other
`nvidia-smi nvlink` modes (-c capabilities, -e error counters, -R remote, -p, -gt, -info) is refused
with a ParseError that names the mode.

JSON: {source: "nvidia_smi_nvlink_s",
       gpus: [{index, name, uuid (null when redacted or absent), line_no,
               links: [{link, active, speed_gbps (float or null), state ("active" | "inactive" |
                        the printed text lowercased, e.g. "disabled"), line_no}],
               all_links_inactive (NVML said so, or every shown link is inactive and none elided),
               nvlink_unsupported ("Device does not have or support Nvlink"),
               message (the NVML / driver line printed instead of links, or null),
               truncated (links of this GPU elided, or the output ended inside it)}],
       elided (any elision marker), elided_gpu_indices (GPU indices an elision marker hid, where
       the shown indices tell: a leading '....' before GPU 3 hides 0-2), truncated (the output ends
       inside its last GPU's block: cut off there, so GPUs after it may be unshown), errors [{line_no, text}]
       (nvidia-smi failures such as "Unable to determine the device handle ..."), notes [strings]}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from . import _tool_failures
from .base import ParseError, ParserInfo, clean_lines, iter_clean_lines
from .nvidia_smi_gpu_blocks import (ALL_INACTIVE_RE, ELISION_RE, ERROR_RE, match_header,
                                    LINK_FRAGMENT_RE, UNSUPPORTED_RE, UUID_OK_RE, ErrorLine, other_modes)
from .nvidia_smi_gpu_blocks import SNIFF_HEADER as _SNIFF_HEADER

INFO = ParserInfo(
    source="nvidia_smi_nvlink_s",
    tool="nvidia-smi nvlink -s",
    description="per-link NVLink state and speed",
    argv=("nvidia-smi", "nvlink", "-s"),
    timeout_s=30.0,
)
SOURCE = INFO.source

PARTIAL_SPEED_RE = re.compile(r"^[0-9]{1,6}(?:\.[0-9]{0,6})?\s*(?:G|GB|GB/)?$", re.I)  # "26.5", "26.562 GB/" cut off
LINK_RE = re.compile(r"^Link\s+([0-9]{1,4})\s*:\s*(.*)$")
SPEED_RE = re.compile(r"^([0-9]{1,6}(?:\.[0-9]{1,6})?)\s*GB/s$", re.I)
INACTIVE_RE = re.compile(r"^<?\s*in-?active\s*>?$", re.I)

# Lines of the other `nvidia-smi nvlink` modes, and how to name them in the refusal.
OTHER_MODES: tuple[tuple[re.Pattern[str], str], ...] = other_modes("s")

_SNIFF_STATUS = re.compile(r"^[ \t]*Link [0-9]{1,4}: (?:[0-9]{1,6}(?:\.[0-9]{1,6})? GB/s|<inactive>)[ \t\r]*$", re.M)
_SNIFF_OTHER = re.compile(
    r"^[ \t]*(?:Link [0-9]{1,4}, (?:P2P is supported|Access to system memory supported|SLI is supported): |"
    r"Link [0-9]{1,4}: (?:Replay|Recovery|CRC) Errors: |Link [0-9]{1,4}: Remote Device |Link [0-9]{1,4}: Data [TR]x: |"
    r"NVLE: |Firmware Version:)", re.M)


@dataclass(frozen=True)
class Link:
    link: int
    active: bool
    speed_gbps: float | None  # one-way per-link figure as printed
    state: str  # "active", "inactive", or the printed text lowercased ("disabled", "n/a")
    line_no: int


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    uuid: str | None
    line_no: int
    links: tuple[Link, ...]
    all_links_inactive: bool
    nvlink_unsupported: bool
    message: str | None
    truncated: bool


@dataclass(frozen=True)
class NvlinkStatus:
    source: str = SOURCE
    gpus: tuple[Gpu, ...] = ()
    elided: bool = False
    elided_gpu_indices: tuple[int, ...] = ()
    truncated: bool = False
    errors: tuple[ErrorLine, ...] = ()
    unrecognised: tuple[ErrorLine, ...] = ()  # error lines no catalogue entry explains (SYS004)
    notes: tuple[str, ...] = ()


def _other_mode(line: str) -> str | None:
    for pattern, name in OTHER_MODES:
        if pattern.search(line):
            return name
    return None


def _new_gpu(index: int, name: str, uuid_raw: str | None, line_no: int, notes: list[str]) -> dict[str, Any]:
    uuid: str | None = None
    if uuid_raw is not None:
        uuid_raw = uuid_raw.strip()
        if UUID_OK_RE.match(uuid_raw):
            uuid = uuid_raw
        else:
            notes.append(f"line {line_no}: GPU {index} UUID redacted or unreadable ('{uuid_raw[:40]}'): uuid is null")
    return {"index": index, "name": name.strip(), "uuid": uuid, "line_no": line_no, "links": [],
            "all_inactive": False, "unsupported": False, "message": None, "truncated": False,
            "content": 0, "other": 0, "pending_elision": False}


def _apply_message(gpu: dict[str, Any], text: str) -> bool:
    """Record an NVML / driver line that replaces a GPU's links; False when it is not one."""
    if ALL_INACTIVE_RE.search(text):
        gpu["all_inactive"] = True
    elif UNSUPPORTED_RE.search(text):
        gpu["unsupported"] = True
    else:
        return False
    gpu["message"] = text.strip()
    gpu["content"] += 1
    return True


def _link(m: re.Match[str], line_no: int) -> Link:
    number, value = int(m.group(1)), m.group(2).strip()
    speed = SPEED_RE.match(value)
    if speed:
        return Link(number, True, float(speed.group(1)), "active", line_no)
    if INACTIVE_RE.match(value):
        return Link(number, False, None, "inactive", line_no)
    state = value.strip("<>").strip().lower()[:40] or "unknown"
    return Link(number, False, None, state, line_no)


def _freeze(gpu: dict[str, Any]) -> Gpu:
    links = tuple(gpu["links"])
    all_inactive = gpu["all_inactive"] or (bool(links) and not gpu["truncated"] and not any(l.active for l in links))
    return Gpu(gpu["index"], gpu["name"], gpu["uuid"], gpu["line_no"], links, all_inactive,
               gpu["unsupported"], gpu["message"], gpu["truncated"])


def _ends_inside(cur: dict[str, Any], last_kind: str, last_line: str, notes: list[str]) -> bool:
    """Whether the output ends inside the last GPU's block (marking that GPU truncated): inside a link's
    speed, at an elision marker, after the header alone, or in a cut-off line. Then GPUs after it may
    exist that the output does not show."""
    if last_kind == "partial":
        cut = cur["links"].pop()  # the output ends inside this link's speed: "Link 5: 26.5"
        notes.append(f"line {cut.line_no}: output ends inside GPU {cur['index']} link {cut.link}: "
                     "that link and any after it are not shown")
    elif cur["pending_elision"] or (last_kind == "elision" and cur["truncated"]):
        pass  # the output ends with an elision marker inside this GPU
    elif cur["content"] == 0 and cur["other"] == 0:
        if not cur["truncated"]:
            notes.append(f"line {cur['line_no']}: output ends after GPU {cur['index']} header: its links are not shown")
    elif last_kind == "junk" and cur["links"] and LINK_FRAGMENT_RE.match(last_line):
        notes.append(f"GPU {cur['index']}: output ends in a cut-off line '{last_line}': links after it may be missing")
    else:
        return False
    cur["truncated"] = True
    return True


def _parse(lines: Iterable[str]) -> NvlinkStatus:
    gpus: list[dict[str, Any]] = []
    errors: list[ErrorLine] = []
    notes: list[str] = []
    hidden: list[int] = []
    elided = False
    leading_elision = False  # an elision marker before the first GPU header
    status_lines = 0
    other_first: tuple[int, str] | None = None
    first_text: tuple[int, str] | None = None
    last_line, last_kind = "", ""  # the last non-blank line and what it was
    cur: dict[str, Any] | None = None

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
            if cur is not None and cur["pending_elision"]:
                # an elision marker between two GPU blocks: a jump in the indices means it hid whole GPUs;
                # consecutive indices mean it hid links of the previous GPU
                if index > cur["index"] + 1:
                    hidden.extend(range(cur["index"] + 1, index))
                else:
                    cur["truncated"] = True
            elif cur is None and leading_elision and index > 0:
                hidden.extend(range(0, index))
            cur = _new_gpu(index, header.name, header.uuid_raw if header.closed else None, line_no, notes)
            gpus.append(cur)
            if not header.closed:
                cur["truncated"] = True
                notes.append(f"line {line_no}: GPU {index} header cut off inside its UUID")
            elif header.rest and not _apply_message(cur, header.rest):
                notes.append(f"line {line_no}: text after GPU {index} header skipped: '{header.rest[:60]}'")
            last_kind = "gpu"
            continue
        if ELISION_RE.match(line):
            elided = True
            notes.append(f"line {line_no}: elision marker '{line[:12]}': output not shown in full")
            if cur is None:
                leading_elision = True
            elif cur["links"]:
                cur["pending_elision"] = True
            else:
                cur["truncated"] = True
            last_kind = "elision"
            continue
        mode = _other_mode(line)
        if mode is not None:
            if other_first is None:
                other_first = (line_no, mode)
            if cur is not None:
                cur["other"] += 1
            last_kind = "other"
            continue
        lm = LINK_RE.match(line)
        if lm and cur is not None:
            if cur["pending_elision"]:
                cur["truncated"] = True  # links before and after an elision marker: some were not shown
                cur["pending_elision"] = False
            last_kind = "partial" if PARTIAL_SPEED_RE.match(lm.group(2).strip()) else "link"
            cur["links"].append(_link(lm, line_no))
            cur["content"] += 1
            status_lines += 1
            continue
        if lm:
            notes.append(f"line {line_no}: 'Link' line before any 'GPU n:' header skipped")
            last_kind = "junk"
            continue
        if ALL_INACTIVE_RE.search(line) or UNSUPPORTED_RE.search(line):
            if cur is not None and cur["message"] is None and not cur["links"]:
                _apply_message(cur, line)
            else:
                notes.append(f"line {line_no}: '{line[:70]}' is not under a GPU header without links: skipped")
            last_kind = "message"
            continue
        if ERROR_RE.match(line):
            errors.append(_tool_failures.classify(_tool_failures.NVSMI, line_no, line))
            last_kind = "message"
            continue
        last_kind = "junk"  # prompts, prose, other programs' output: not nvlink's, skipped

    cut_short = cur is not None and _ends_inside(cur, last_kind, last_line, notes)
    for g in gpus:
        for link in g["links"]:
            if link.state not in ("active", "inactive"):
                notes.append(f"line {link.line_no}: GPU {g['index']} link {link.link} state '{link.state}' "
                             "is not a speed: not counted as active")

    if not any(g["links"] or g["message"] for g in gpus):
        if other_first is not None:
            line_no, mode = other_first
            raise ParseError(f"this is {mode} output, not `nvidia-smi nvlink -s` (link status)", line_no)
        if gpus:
            raise ParseError(
                "expected 'Link <n>: <speed> GB/s' or '<inactive>' lines under the 'GPU n:' headers, found none "
                "(headers alone are `nvidia-smi -L` output)", gpus[0]["line_no"])
        if errors:
            return NvlinkStatus(errors=tuple(errors), unrecognised=_tool_failures.unrecognised(errors), notes=tuple(notes))
        if first_text is None:
            raise ParseError("expected `nvidia-smi nvlink -s` output ('GPU n: ...' then 'Link k: ...'), found no text", 0)
        line_no, line = first_text
        raise ParseError(
            f"expected a 'GPU <n>: <name> (UUID: ...)' header of `nvidia-smi nvlink -s`, found '{line[:60]}'", line_no)

    kept = []
    for g in gpus:
        if g["other"] and g["content"] == 0:
            notes.append(f"line {g['line_no']}: GPU {g['index']} block holds only other `nvidia-smi nvlink` output: skipped")
            continue
        kept.append(_freeze(g))
    if other_first is not None:
        notes.append(f"line {other_first[0]}: {other_first[1]} lines skipped: not link status")
    return NvlinkStatus(gpus=tuple(kept), elided=elided, elided_gpu_indices=tuple(sorted(set(hidden))),
                        truncated=cut_short, errors=tuple(errors),
                        unrecognised=_tool_failures.unrecognised(errors), notes=tuple(notes))


def parse(text: str) -> NvlinkStatus:
    """`nvidia-smi nvlink -s` output -> NvlinkStatus; ParseError when the text is not link status."""
    return _parse(clean_lines(text))


def parse_lines(lines: Iterable[str]) -> NvlinkStatus:
    """Streaming form of parse for an iterable of raw lines."""
    return _parse(iter_clean_lines(lines))


def sniff(text: str) -> float:
    """0.95 for link status lines under a GPU header, 0.9 for the NVML all-inactive line, 0.6 for
    another `nvidia-smi nvlink` mode (so parsing it gives the clear refusal), else 0."""
    try:
        header = _SNIFF_HEADER.search(text) is not None
        if _SNIFF_STATUS.search(text):
            return 0.95 if header else 0.8
        if ALL_INACTIVE_RE.search(text):
            return 0.9
        if header and UNSUPPORTED_RE.search(text):
            return 0.85
        if _SNIFF_OTHER.search(text):
            return 0.6 if header else 0.5
        if _tool_failures.sniff_failure(text[:8192], SOURCE):
            return 0.4  # only nvidia-smi's failure (nvidia_smi_q scores it higher)
    except Exception:  # pragma: no cover - regex search on str does not raise
        return 0.0
    return 0.0
