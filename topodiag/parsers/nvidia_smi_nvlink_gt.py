"""Parser for `nvidia-smi nvlink -gt d` / `-gt r` (NVLink throughput counters, cumulative KiB per link).

`-gt d` counts the data payload, `-gt r` the data plus protocol overhead ("raw"); both print one block
per GPU, a Tx and an Rx line per link (H800, from a public nvidia-smi guide):

    GPU 0: NVIDIA H800 (UUID: GPU-34bf77d1-c686-6821-79a8-32d326c5039c)
             Link 0: Data Tx: 5863784 KiB
             Link 0: Data Rx: 5863677 KiB
    GPU 0: NVIDIA H800 (UUID: GPU-34bf77d1-c686-6821-79a8-32d326c5039c)
             Link 0: Raw Tx: 1933426555 KiB
             Link 0: Raw Rx: 1975423057 KiB

The counters run since the driver loaded (or the last reset): one snapshot says how much went over
each link, not how fast; two snapshots a known time apart give the rate. So this source holds facts
(which links carried traffic, how evenly) and no rule judges a single snapshot. `-i N` prints one
GPU's block. Values are KiB as printed; another unit (MiB, GiB, bytes) is converted to KiB with a note.
A GPU whose links are elided ('...') or whose block the output cuts short is `truncated`; the NVML
all-inactive line and "does not have or support Nvlink" are kept as for `nvidia-smi nvlink -s`; output
of the other modes (-s, -e, -c, -g ...) is refused with a ParseError naming it.

JSON: {source: "nvidia_smi_nvlink_gt",
       gpus: [{index (null: link lines pasted without a 'GPU n:' header), model, uuid (null when redacted
               or absent), line_no, counter ("data" | "raw" | "mixed" when a block holds both | null),
               links: [{link, tx_kib, rx_kib (int or null when that line is absent), line_no}],
               tx_kib_total, rx_kib_total (sums over the links that print both; null when none),
               idle_links [link numbers with Tx and Rx both 0],
               all_links_inactive, nvlink_unsupported, message, truncated}],
       counter ("data" | "raw" | "mixed" | null: over every GPU), elided, elided_gpu_indices,
       errors [{line_no, text}], notes [strings]}
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import Iterable, Optional

from ._nvidia_smi_records import gpu_from_block, gpu_record, link_record, smi_note, result_from_walk, result_record
from .base import ParserInfo, clean_lines, iter_clean_lines
from .nvidia_smi_gpu_blocks import GpuBlock, Walk, walk
from .sniff.nvidia_smi_nvlink_gt import sniff

INFO = ParserInfo(
    source="nvidia_smi_nvlink_gt",
    tool="nvidia-smi nvlink -gt d",
    description="per-link NVLink throughput counters, data (-gt d) or raw (-gt r), in KiB",
)
SOURCE = INFO.source
MODE_NAME = "`nvidia-smi nvlink -gt` (throughput counters)"
EXPECT = "'Link <n>: Data Tx: <n> KiB' lines"

COUNTER_RE = re.compile(r"^Link\s+([0-9]{1,4})\s*:\s*(Data|Raw)\s+([TR]x)\s*:\s*(.*)$", re.I)
VALUE_RE = re.compile(r"^([0-9]{1,30})\s*([KMGT]i?B|B|bytes|KBytes)?$", re.I)
UNIT_KIB = {"kib": 1, "kb": 1, "kbytes": 1, "mib": 1024, "mb": 1024, "gib": 1024 ** 2, "gb": 1024 ** 2,
            "tib": 1024 ** 3, "tb": 1024 ** 3}
PARTIAL_RE = re.compile(r"^Link\s+[0-9]{1,4}\s*(?::\s*(?:(?:Data|Raw)(?:\s+(?:[TR]x?)?)?)?)?$", re.I)  # a line cut off


Link = link_record(__name__, ("tx_kib", Optional[int]), ("rx_kib", Optional[int]))
Gpu = gpu_record(__name__, ("counter", Optional[str]), ("links", tuple), ("tx_kib_total", Optional[int]),
                 ("rx_kib_total", Optional[int]), ("idle_links", tuple))
NvlinkThroughput = result_record("NvlinkThroughput", __name__, SOURCE,
                                 after_gpus=(("counter", Optional[str], field(default=None)),))


def _kib(text: str) -> tuple[int | None, str | None]:
    """'5863784 KiB' -> (5863784, None); '2 MiB' -> (2048, 'MiB'); not a count -> (None, None)."""
    m = VALUE_RE.match(text.strip())
    if m is None:
        return None, None
    n, unit = int(m.group(1)), (m.group(2) or "KiB")
    key = unit.lower()
    if key in ("b", "bytes"):
        return n // 1024, unit
    factor = UNIT_KIB.get(key)
    if factor is None:
        return None, None
    return n * factor, (None if factor == 1 else unit)


def _read(line: str, raw: str, line_no: int, gpu: GpuBlock) -> str | None:
    m = COUNTER_RE.match(line)
    if m is None:
        return "partial" if PARTIAL_RE.match(line) else None
    link, kind, way, text = int(m.group(1)), m.group(2).lower(), m.group(3).lower(), m.group(4).strip()
    if not text:
        return "partial"  # "Link 7: Data Rx:" with its value cut off
    value, unit = _kib(text)
    d = gpu.data
    notes: list[str] = d.setdefault("notes", [])
    if value is None:
        notes.append(smi_note("throughput-not-count", line=line_no, gpu=gpu.label, link=link, kind=m.group(2),
                          way=m.group(3), value=text[:30]))
    elif unit is not None:
        notes.append(smi_note("throughput-unit", line=line_no, gpu=gpu.label, link=link, kind=m.group(2), way=m.group(3),
                          unit=unit))
    d.setdefault("kinds", set()).add(kind)
    entry = d.setdefault("links", {}).setdefault(link, {"line_no": line_no})
    key = "tx" if way == "tx" else "rx"
    if key in entry:
        notes.append(smi_note("throughput-twice", line=line_no, gpu=gpu.label, link=link, way=m.group(3)))
    entry[key] = value
    return "content"


def _counter(kinds: set) -> str | None:
    return None if not kinds else kinds.pop() if len(kinds) == 1 else "mixed"


def _freeze(g: GpuBlock) -> Gpu:
    links = tuple(Link(k, v.get("tx"), v.get("rx"), v["line_no"]) for k, v in sorted(g.data.get("links", {}).items()))
    both = [lk for lk in links if lk.tx_kib is not None and lk.rx_kib is not None]
    idle = tuple(lk.link for lk in both if lk.tx_kib == 0 and lk.rx_kib == 0)
    return gpu_from_block(Gpu, g, _counter(set(g.data.get("kinds", ()))), links,
                          sum(lk.tx_kib for lk in both) if both else None,
                          sum(lk.rx_kib for lk in both) if both else None, idle)


def _result(w: Walk) -> NvlinkThroughput:
    notes = list(w.notes)
    kinds: set = set()
    for g in w.gpus:
        notes.extend(g.data.get("notes", ()))
        kinds |= g.data.get("kinds", set())
    gpus = tuple(_freeze(g) for g in w.gpus)
    for g in gpus:
        half = [lk.link for lk in g.links if (lk.tx_kib is None) != (lk.rx_kib is None)]
        if half and not g.truncated:
            label = f"GPU {g.index}" if g.index is not None else "the GPU without header"
            notes.append(smi_note("throughput-one-way", gpu=label, links=", ".join(map(str, half))))
    return result_from_walk(NvlinkThroughput, w, gpus, notes, counter=_counter(kinds))


def parse(text: str) -> NvlinkThroughput:
    """`nvidia-smi nvlink -gt d|r` output -> NvlinkThroughput; ParseError when the text is not that mode's."""
    return _result(walk(clean_lines(text), _read, "gt", MODE_NAME, EXPECT))


def parse_lines(lines: Iterable[str]) -> NvlinkThroughput:
    """Streaming form of parse for an iterable of raw lines."""
    return _result(walk(iter_clean_lines(lines), _read, "gt", MODE_NAME, EXPECT))
