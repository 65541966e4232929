"""Parser for `nvidia-smi nvlink -c` / `--capabilities` (what each NVLink supports).

One block per GPU, a header then six 'Link k, <capability>: true|false' lines per link:

    GPU 0: NVIDIA H800 (UUID: GPU-34bf77d1-c686-6821-79a8-32d326c5039c)
             Link 0, P2P is supported: true
             Link 0, Access to system memory supported: true
             Link 0, P2P atomics supported: true
             Link 0, System memory atomics supported: true
             Link 0, SLI is supported: true
             Link 0, Link is supported: false

Capabilities get stable names (p2p_supported, sysmem_access, p2p_atomics, sysmem_atomics, sli,
link_supported; any other printed capability its snake_case name) with the printed name kept. Values
are printed as NVML reports them: 'Link is supported: false' on every link of an H800 / driver 525
and 'true' on an H100 are both real outputs, so a rule should not read it as "link unusable". A GPU
whose links are elided ('...', '[...]') or cut short is `truncated`; the NVML all-inactive line and
"does not have or support Nvlink" are kept as for `nvidia-smi nvlink -s`. Output of the other modes
(-s, -e, -R, -p, -gt, -info ...) is refused with a ParseError naming it.

JSON: {source: "nvidia_smi_nvlink_c",
       gpus: [{index (null: link lines pasted without a 'GPU n:' header), model, uuid (null when redacted
               or absent), line_no,
               links: [{link, capabilities: {<name>: {raw_name, value (true | false | null when neither
                        is printed), line_no}}, line_no}],
               all_links_inactive (NVML said so), nvlink_unsupported, message (that NVML / driver line,
               or null), truncated (links of this GPU elided, or the output ended inside it)}],
       elided, elided_gpu_indices, errors [{line_no, text}] (nvidia-smi failures), notes [strings]}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from ._nvidia_smi_records import gpu_from_block, gpu_record, link_record, smi_note, result_from_walk, result_record
from .base import ParserInfo, clean_lines, iter_clean_lines
from .nvidia_smi_gpu_blocks import GpuBlock, Walk, snake, walk
from .sniff.nvidia_smi_nvlink_c import sniff

INFO = ParserInfo(
    source="nvidia_smi_nvlink_c",
    tool="nvidia-smi nvlink -c",
    description="what each NVLink supports: P2P, system memory access, atomics",
)
SOURCE = INFO.source
MODE_NAME = "`nvidia-smi nvlink -c` (capabilities)"
EXPECT = "'Link <n>, <capability>: true|false' lines"

# The name is everything up to the first ':' and stripped in code (1 to 80 characters):
# `\s*([^:]{1,80}?)\s*:` let three runs share a line's blanks.
CAPABILITY_RE = re.compile(r"^Link[ \t]+([0-9]{1,4})[ \t]*,([^:]*):[ \t]*(.*)$")
LINK_LINE_RE = re.compile(r"^Link\s+[0-9]{1,4}\s*,", re.I)  # a capability line cut before its ':'

# Printed capability (lowercased, ' is ' dropped) -> stable name. nvidia-smi prints NVML's
# nvmlNvLinkCapability_t: P2P_SUPPORTED, SYSMEM_ACCESS, P2P_ATOMICS, SYSMEM_ATOMICS, SLI_BRIDGE, VALID.
NAMES = {
    "p2p supported": "p2p_supported",
    "access to system memory supported": "sysmem_access",
    "p2p atomics supported": "p2p_atomics",
    "system memory atomics supported": "sysmem_atomics",
    "sli supported": "sli",
    "link supported": "link_supported",
}


@dataclass(frozen=True)
class Capability:
    raw_name: str  # as printed: "Access to system memory supported"
    value: bool | None
    line_no: int


Link = link_record(__name__, ("capabilities", dict))
Gpu = gpu_record(__name__, ("links", tuple))
NvlinkCapabilities = result_record("NvlinkCapabilities", __name__, SOURCE)


def capability_name(raw_name: str) -> str:
    """'P2P is supported' -> 'p2p_supported', 'SLI is supported' -> 'sli'."""
    key = re.sub(r"\s+", " ", re.sub(r"\bis\b", " ", raw_name.lower())).strip()
    return NAMES.get(key) or snake(key)


def _read(line: str, raw: str, line_no: int, gpu: GpuBlock) -> str | None:
    m = CAPABILITY_RE.match(line)
    if m is not None and not 0 < len(m.group(2).strip()) <= 80:
        m = None
    if m is None:
        return "partial" if LINK_LINE_RE.match(line) else None
    text = m.group(3).strip().lower()
    if not text or (text not in ("true", "false") and ("true".startswith(text) or "false".startswith(text))):
        return "partial"  # "Link 7, SLI is supported: tr": the value cut off
    link, raw_name = int(m.group(1)), re.sub(r"\s+", " ", m.group(2).strip())
    name = capability_name(raw_name)
    value = {"true": True, "false": False}.get(text)
    links: dict[int, dict] = gpu.data.setdefault("links", {})
    entry = links.setdefault(link, {"line_no": line_no, "capabilities": {}})
    notes: list[str] = gpu.data.setdefault("notes", [])
    if value is None:
        notes.append(smi_note("capability-not-bool", line=line_no, gpu=gpu.label, link=link, name=raw_name,
                          value=text[:20]))
    if name in entry["capabilities"]:
        notes.append(smi_note("named-value-twice", line=line_no, gpu=gpu.label, link=link, name=raw_name))
    entry["capabilities"][name] = Capability(raw_name, value, line_no)
    return "content"


def _freeze(g: GpuBlock) -> Gpu:
    links = tuple(Link(k, dict(v["capabilities"]), v["line_no"]) for k, v in g.data.get("links", {}).items())
    return gpu_from_block(Gpu, g, links)


def _result(w: Walk) -> NvlinkCapabilities:
    notes = list(w.notes)
    for g in w.gpus:
        notes.extend(g.data.get("notes", ()))
    return result_from_walk(NvlinkCapabilities, w, tuple(_freeze(g) for g in w.gpus), notes)


def parse(text: str) -> NvlinkCapabilities:
    """`nvidia-smi nvlink -c` output -> NvlinkCapabilities; ParseError when the text is not capabilities."""
    return _result(walk(clean_lines(text), _read, "c", MODE_NAME, EXPECT))


def parse_lines(lines: Iterable[str]) -> NvlinkCapabilities:
    """Streaming form of parse for an iterable of raw lines."""
    return _result(walk(iter_clean_lines(lines), _read, "c", MODE_NAME, EXPECT))
