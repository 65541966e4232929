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
       gpus: [{index, model, uuid (null when redacted or absent), line_no,
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
from dataclasses import field
from typing import Iterable, Optional

from .base import ParseError, ParserInfo, clean_lines, iter_clean_lines
from ._nvidia_smi_records import gpu_from_block, gpu_record, link_record, smi_note, result_from_walk, result_record
from .nvidia_smi_gpu_blocks import LINK_FRAGMENT_RE, GpuBlock, Walker, other_modes
from .sniff.nvidia_smi_nvlink_s import sniff

INFO = ParserInfo(
    source="nvidia_smi_nvlink_s",
    tool="nvidia-smi nvlink -s",
    description="per-link NVLink state and speed",
    argv=("nvidia-smi", "nvlink", "-s"),
    timeout_s=30.0,
)
SOURCE = INFO.source
MODE_NAME = "`nvidia-smi nvlink -s` (link status)"
EXPECT = "'Link <n>: <speed> GB/s' or '<inactive>' lines"

PARTIAL_SPEED_RE = re.compile(r"^[0-9]{1,6}(?:\.[0-9]{0,6})?\s*(?:G|GB|GB/)?$", re.I)  # "26.5", "26.562 GB/" cut off
LINK_RE = re.compile(r"^Link\s+([0-9]{1,4})\s*:\s*(.*)$")
SPEED_RE = re.compile(r"^([0-9]{1,6}(?:\.[0-9]{1,6})?)\s*GB/s$", re.I)
INACTIVE_RE = re.compile(r"^<?\s*in-?active\s*>?$", re.I)

# Lines of the other `nvidia-smi nvlink` modes, and how to name them in the refusal.
OTHER_MODES: tuple[tuple[re.Pattern[str], str], ...] = other_modes("s")


# speed_gbps: the one-way per-link figure as printed; state: "active", "inactive", or the printed text
# lowercased ("disabled", "n/a")
Link = link_record(__name__, ("active", bool), ("speed_gbps", Optional[float]), ("state", str))
Gpu = gpu_record(__name__, ("links", tuple))
# truncated: the output ends inside its last GPU's block
NvlinkStatus = result_record("NvlinkStatus", __name__, SOURCE,
                             after_elided=(("truncated", bool, field(default=False)),))


def _link(m: re.Match[str], line_no: int) -> Link:
    number, value = int(m.group(1)), m.group(2).strip()
    speed = SPEED_RE.match(value)
    if speed:
        return Link(number, True, float(speed.group(1)), "active", line_no)
    if INACTIVE_RE.match(value):
        return Link(number, False, None, "inactive", line_no)
    state = value.strip("<>").strip().lower()[:40] or "unknown"
    return Link(number, False, None, state, line_no)


def _links(gpu: GpuBlock) -> list[Link]:
    return gpu.data.setdefault("links", [])


class _StatusWalker(Walker):
    """The shared block walker where link status differs: a 'Link' line before any header is skipped
    (not a header-less GPU), a link whose speed is cut off is read (and dropped when the output ends
    in it), and the result says whether the output ends inside its last GPU."""

    def __init__(self) -> None:
        super().__init__(lambda *_: None, "s", MODE_NAME, EXPECT)
        self.no_text = "expected `nvidia-smi nvlink -s` output ('GPU n: ...' then 'Link k: ...'), found no text"
        self.cut_short = False

    def has_lines(self, gpu: GpuBlock) -> bool:
        return bool(_links(gpu))

    def has_content(self, gpu: GpuBlock) -> bool:
        return bool(_links(gpu)) or bool(gpu.message)

    def content(self, line: str, raw: str, line_no: int) -> str | None:
        lm = LINK_RE.match(line)
        if lm is None:
            return None
        if self.cur is None:
            self.notes.append(smi_note("link-before-header", line=line_no))
            return "junk"
        self.took(self.cur)
        _links(self.cur).append(_link(lm, line_no))
        return "partial" if PARTIAL_SPEED_RE.match(lm.group(2).strip()) else "link"

    def end(self) -> None:
        self.cut_short = self.cur is not None and self._ends_inside(self.cur)
        for g in self.gpus:
            for link in _links(g):
                if link.state not in ("active", "inactive"):
                    self.notes.append(smi_note("link-state-not-speed", line=link.line_no, index=g.index, link=link.link,
                                           state=link.state))

    def _ends_inside(self, cur: GpuBlock) -> bool:
        """Whether the output ends inside the last GPU's block (marking that GPU truncated): inside a
        link's speed, at an elision marker, after the header alone, or in a cut-off line. Then GPUs after
        it may exist that the output does not show."""
        if self.last_kind == "partial":
            cut = _links(cur).pop()  # the output ends inside this link's speed: "Link 5: 26.5"
            self.notes.append(smi_note("ends-inside-link", line=cut.line_no, index=cur.index, link=cut.link))
        elif cur.pending_elision or (self.last_kind == "elision" and cur.truncated):
            pass  # the output ends with an elision marker inside this GPU
        elif cur.content == 0 and cur.other == 0:
            if not cur.truncated:
                self.notes.append(smi_note("ends-after-header", line=cur.line_no, gpu=cur.label))
        elif self.last_kind == "junk" and _links(cur) and LINK_FRAGMENT_RE.match(self.last_line):
            self.notes.append(smi_note("ends-in-fragment", gpu=cur.label, text=self.last_line))
        else:
            return False
        cur.truncated = True
        return True


def _freeze(gpu: GpuBlock) -> Gpu:
    links = tuple(_links(gpu))
    all_inactive = gpu.all_inactive or (bool(links) and not gpu.truncated and not any(l.active for l in links))
    return gpu_from_block(Gpu, gpu, links, all_inactive=all_inactive)


def _parse(lines: Iterable[str]) -> NvlinkStatus:
    walker = _StatusWalker()
    w = walker.run(lines)
    return result_from_walk(NvlinkStatus, w, tuple(_freeze(g) for g in w.gpus), w.notes, truncated=walker.cut_short)


def parse(text: str) -> NvlinkStatus:
    """`nvidia-smi nvlink -s` output -> NvlinkStatus; ParseError when the text is not link status."""
    return _parse(clean_lines(text))


def parse_lines(lines: Iterable[str]) -> NvlinkStatus:
    """Streaming form of parse for an iterable of raw lines."""
    return _parse(iter_clean_lines(lines))
