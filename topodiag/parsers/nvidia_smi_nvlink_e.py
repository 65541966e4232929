"""Parser for `nvidia-smi nvlink -e` / `--errorcounters` (per-link NVLink error counters).

One block per GPU, a header then 'Link k: <counter>: <value>' lines (TAB+space or 9 spaces before
'Link', often a blank line between links). V100 to H100 print three counters per link:

    GPU 2: Tesla V100-SXM2-32GB-LS (UUID: GPU-926a4a2e-2909-4d8a-fb23-6d90ed5bcb14)
             Link 0: Replay Errors: 2
             Link 0: Recovery Errors: 0
             Link 0: CRC Errors: 65535

On NVLink 5 GPUs (B200/GB200) newer drivers print others instead (names per NVIDIA's nvidia-smi release
notes, "display NVLink5 error counters", and a field guide quoting driver 595.91.07, where the three
above are absent): 'Tx packets', 'Rx Errors', 'Rx remote Errors', 'Malformed packet Errors', 'Link
recovery failed events', 'Effective Errors', 'Effective BER: 15e-255', 'FEC Errors - 0' .. '- 15',
'Raw BER Lane 0', 'Raw Errors Lane 1' ... Every counter is kept under a snake_case name with the printed
name beside it, and a `kind` that says what a non-zero value means: "error" (a fault count: replay,
recovery, CRC, Rx/Tx errors, discards, link recovery events), "traffic" (packet and byte counts),
"ber" (a bit error rate, 15e-255 being its floor), "fec" (the FEC histogram: bucket 0 counts clean
codewords and reads in the billions on a healthy link), "raw" (pre-FEC lane counters, non-zero on
healthy links) or "other". `nonzero` lists only "error" counters above 0, so a rule can flag a link
without tripping over a healthy NVLink 5 link. A GPU whose links are elided ('...', '[...]') or whose
block the output cuts short is `truncated`. `nvidia-smi nvlink -e -i N` prints the same block for one
GPU. Output of the other modes (-s, -c, -R, -p, -gt, -info ...) is refused with a ParseError naming it.

JSON: {source: "nvidia_smi_nvlink_e",
       gpus: [{index (null: link lines pasted without a 'GPU n:' header), model, uuid (null when redacted
               or absent), line_no,
               links: [{link, counters: {<snake_name>: {raw_name, value (int, float, or null when not a
                        number, e.g. "N/A"), kind, line_no}}, line_no}],
               nonzero: [{link, counter, value, line_no}] ("error" counters above 0),
               all_links_inactive (NVML said so), nvlink_unsupported ("Device does not have or support
               Nvlink"), message (that NVML / driver line, or null),
               truncated (links of this GPU elided, or the output ended inside it)}],
       elided (any elision marker), elided_gpu_indices (GPU indices an elision marker hid),
       errors [{line_no, text}] (nvidia-smi failures), notes [strings]}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from ._nvidia_smi_records import gpu_from_block, gpu_record, link_record, smi_note, result_from_walk, result_record
from .base import ParserInfo, clean_lines, iter_clean_lines
from .nvidia_smi_gpu_blocks import GpuBlock, Walk, snake, walk
from .sniff.nvidia_smi_nvlink_e import sniff

INFO = ParserInfo(
    source="nvidia_smi_nvlink_e",
    tool="nvidia-smi nvlink -e",
    description="per-link NVLink error counters (NVLink 5 names too)",
    argv=("nvidia-smi", "nvlink", "-e"),
    timeout_s=30.0,
)
SOURCE = INFO.source
MODE_NAME = "`nvidia-smi nvlink -e` (error counters)"
EXPECT = "'Link <n>: <counter>: <value>' lines"

COUNTER_RE = re.compile(r"^Link\s+([0-9]{1,4})\s*:\s*([A-Za-z][^:]{0,80}?)\s*:\s*(.*)$")
LINK_LINE_RE = re.compile(r"^Links?\b", re.I)  # a 'Link' line that is not a counter: cut off or hand-written
INT_RE = re.compile(r"^[0-9]{1,30}$")
FLOAT_RE = re.compile(r"^(?:[0-9]{1,30}(?:\.[0-9]{0,30})?|\.[0-9]{1,30})(?:[eE][-+]?[0-9]{1,5})?$")


@dataclass(frozen=True)
class Counter:
    raw_name: str  # as printed: "Rx remote Errors"
    value: int | float | None
    kind: str  # "error" | "traffic" | "ber" | "fec" | "raw" | "other"
    line_no: int


Link = link_record(__name__, ("counters", dict))  # counters by snake_case name: "replay_errors", "fec_errors_0"


@dataclass(frozen=True)
class NonZero:
    link: int
    counter: str
    value: int | float
    line_no: int


Gpu = gpu_record(__name__, ("links", tuple), ("nonzero", tuple))
NvlinkErrors = result_record("NvlinkErrors", __name__, SOURCE)


def counter_kind(name: str) -> str:
    """What a non-zero value of the counter means (see the module docstring)."""
    if re.search(r"(?:^|_)ber(?:_|$)", name):
        return "ber"
    if name.startswith("fec_"):
        return "fec"
    if name.startswith("raw_"):
        return "raw"
    if name.startswith("plr_"):
        return "error" if re.search(r"retry|uncorrect|error|fail", name) else "traffic"
    if name.endswith(("_packets", "_bytes")):
        return "traffic"
    if re.search(r"error|discard|_events$|fail", name):
        return "error"
    return "other"


def _value(text: str) -> int | float | None:
    text = text.strip()
    if INT_RE.match(text):
        return int(text)
    if FLOAT_RE.match(text):
        return float(text)
    return None


def _read(line: str, raw: str, line_no: int, gpu: GpuBlock) -> str | None:
    m = COUNTER_RE.match(line)
    if m is None:
        return "partial" if LINK_LINE_RE.match(line) else None
    text = m.group(3).strip()
    if not text:
        return "partial"  # "Link 17: CRC Errors:" with its value cut off
    link, raw_name = int(m.group(1)), re.sub(r"\s+", " ", m.group(2))
    name = snake(raw_name)
    value = _value(text)
    links: dict[int, dict] = gpu.data.setdefault("links", {})
    entry = links.setdefault(link, {"line_no": line_no, "counters": {}})
    notes: list[str] = gpu.data.setdefault("notes", [])
    if value is None:
        notes.append(smi_note("counter-not-number", line=line_no, gpu=gpu.label, link=link, name=raw_name, value=text[:30]))
    if name in entry["counters"]:
        notes.append(smi_note("named-value-twice", line=line_no, gpu=gpu.label, link=link, name=raw_name))
    entry["counters"][name] = Counter(raw_name, value, counter_kind(name), line_no)
    return "content"


def _freeze(g: GpuBlock) -> Gpu:
    links = tuple(Link(k, dict(v["counters"]), v["line_no"]) for k, v in g.data.get("links", {}).items())
    nonzero = tuple(NonZero(link.link, name, c.value, c.line_no)
                    for link in links for name, c in link.counters.items()
                    if c.kind == "error" and c.value is not None and c.value > 0)
    return gpu_from_block(Gpu, g, links, nonzero)


def _result(w: Walk) -> NvlinkErrors:
    notes = list(w.notes)
    for g in w.gpus:
        notes.extend(g.data.get("notes", ()))
    return result_from_walk(NvlinkErrors, w, tuple(_freeze(g) for g in w.gpus), notes)


def parse(text: str) -> NvlinkErrors:
    """`nvidia-smi nvlink -e` output -> NvlinkErrors; ParseError when the text is not error counters."""
    return _result(walk(clean_lines(text), _read, "e", MODE_NAME, EXPECT))


def parse_lines(lines: Iterable[str]) -> NvlinkErrors:
    """Streaming form of parse for an iterable of raw lines."""
    return _result(walk(iter_clean_lines(lines), _read, "e", MODE_NAME, EXPECT))
