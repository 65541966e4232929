"""What the nvidia-smi parsers share: the records of the `nvidia-smi nvlink` modes, and every note
sentence of the family under a stable id.

Records: each `nvidia-smi nvlink` mode prints the same GPU header and the same NVML line in place of a
GPU's links, so its GPU record is the same head (index, name, uuid, line_no) and tail
(all_links_inactive, nvlink_unsupported, message, truncated) around the mode's own fields; its link
record is the link number and the line around the mode's values; its result the GPUs, the elision
facts and the failure lines. `gpu_record`, `link_record` and `result_record` build those (field order
is the JSON key order, kept as the parsers always printed it); `gpu_from_block` and `result_from_walk`
fill them from what the block walker read. The records of the other nvidia-smi outputs sit beside them:
the topo -m device and path (TopoDevice, TopoLink), the topo -p2p cell (P2PCell) and legend entry, and
the -q GPU with its PCIe link and fabric block (SmiGpu, PcieLink, Fabric). Every result keeps the
tool's failure lines as ToolError records (topodiag/catalogues: nvidia-smi).

Notes: a note is a sentence a parser appends to its result's `notes` for a reader (a cut line, a
redacted UUID, a repaired cell). The sentences live in parsers/notes.toml ([nvidia_smi]), one template per id, so the same event reads
the same in every parser and a test or a tool can tell which note it is by its id (`note_id`).
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field, make_dataclass
from typing import Any, Optional

from . import _tool_failures
from .base import note, note_table
from .ib_records import ToolError

# id -> template (str.format fields): the [nvidia_smi] table of parsers/notes.toml, where every parser's
# notes live.
NOTES: dict[str, str] = note_table()["nvidia_smi"]


def smi_note(note_id: str, **fields: object) -> str:
    """The sentence of the family's note `note_id` with its fields filled in."""
    return note("nvidia_smi", note_id, **fields)


def _literals(template: str) -> list[str]:
    """The fixed text of a template between its fields: 'row {label} (line {line})' -> ['row ', ' (line ', ')']."""
    parts = [""]
    for literal, name, _, _ in string.Formatter().parse(template):
        parts[-1] += literal
        if name is not None:
            parts.append("")
    return parts


def _fits(sentence: str, parts: list[str]) -> bool:
    """Whether the sentence is the literals in order with any text between them (str.find, linear)."""
    if len(parts) == 1:
        return sentence == parts[0]
    head, *middle, tail = parts
    if not sentence.startswith(head) or not sentence.endswith(tail) or len(sentence) < len(head) + len(tail):
        return False
    at, stop = len(head), len(sentence) - len(tail)
    for part in middle:
        found = sentence.find(part, at, stop)
        if found < 0:
            return False
        at = found + len(part)
    return True


def note_id(sentence: str) -> str | None:
    """The id of the template a note sentence was rendered from (the first that fits), or None."""
    return next((key for key, template in NOTES.items() if _fits(sentence, _literals(template))), None)


# -- records of the `nvidia-smi nvlink` modes ---------------------------------------------------------------

_GPU_HEAD: list[tuple[str, Any]] = [
    ("index", Optional[int]),  # None: link lines pasted without a 'GPU n:' header
    ("model", Optional[str]),  # the product name the header prints (NVIDIA H100 80GB HBM3)
    ("uuid", Optional[str]),  # None when redacted, unreadable or absent
    ("line_no", int),
]
_GPU_TAIL: list[tuple[str, Any]] = [
    ("all_links_inactive", bool),  # NVML said so
    ("nvlink_unsupported", bool),  # "Device does not have or support Nvlink"
    ("message", Optional[str]),  # the NVML / driver line printed instead of links
    ("truncated", bool),  # links elided, or the output ended inside the block
]


def _record(name: str, module: str, fields_: list, doc: str) -> type:
    cls = make_dataclass(name, fields_, frozen=True)
    cls.__module__, cls.__doc__ = module, doc
    return cls


def gpu_record(module: str, *fields_: tuple[str, Any]) -> type:
    """The GPU record of one `nvidia-smi nvlink` mode: the shared head, the mode's fields, the shared tail."""
    return _record("Gpu", module, [*_GPU_HEAD, *fields_, *_GPU_TAIL],
                   "One GPU block: its header, the mode's values, and what the NVML line or a cut said.")


def link_record(module: str, *fields_: tuple[str, Any]) -> type:
    """The link record of one mode: the link number, the mode's values, the line it was read from."""
    return _record("Link", module, [("link", int), *fields_, ("line_no", int)],
                   "One NVLink of a GPU block, as the mode prints it.")


def result_record(name: str, module: str, source: str, after_gpus: tuple = (), after_elided: tuple = ()) -> type:
    """A mode's result: its GPUs, the elision facts and the failure lines; `after_gpus` and `after_elided`
    are (name, type, default) fields of the mode's own, placed where it always printed them."""
    fields_ = [("source", str, field(default=source)), ("gpus", tuple, field(default=())), *after_gpus,
               ("elided", bool, field(default=False)),  # any elision marker
               ("elided_gpu_indices", tuple, field(default=())),  # GPUs an elision marker hid
               *after_elided,
               ("errors", tuple, field(default=())),  # nvidia-smi's failure lines (ToolError)
               ("unrecognised", tuple, field(default=())),  # failure lines no catalogue entry explains (SYS004)
               ("notes", tuple, field(default=()))]
    return _record(name, module, fields_, f"What {source} read: GPU blocks, elisions, failure lines and notes.")


def gpu_from_block(cls: type, block: Any, *values: Any, all_inactive: Optional[bool] = None) -> Any:
    """A mode's GPU record from a walked block (nvidia_smi_gpu_blocks.GpuBlock) and the mode's values."""
    return cls(block.index, block.model, block.uuid, block.line_no, *values,
               block.all_inactive if all_inactive is None else all_inactive, block.unsupported, block.message,
               block.truncated)


def result_from_walk(cls: type, walk: Any, gpus: tuple, notes: list[str], **extra: Any) -> Any:
    """A mode's result from the walk (nvidia_smi_gpu_blocks.Walk), its GPU records and notes."""
    errors: tuple[ToolError, ...] = tuple(walk.errors)
    return cls(gpus=gpus, elided=walk.elided, elided_gpu_indices=walk.elided_gpu_indices, errors=errors,
               unrecognised=_tool_failures.unrecognised(errors), notes=tuple(notes), **extra)


# -- records of `nvidia-smi topo -m`, `topo -p2p` and `nvidia-smi -q` ---------------------------------------


@dataclass(frozen=True)
class TopoDevice:
    """A device of the topo -m matrix (nvidia_smi_topo_m.Device)."""
    name: str
    kind: str  # "gpu" | "nic"
    device: Optional[str]
    cpu_affinity: Optional[str]
    numa_affinity: Optional[str]
    numa_node: Optional[int]
    gpu_numa_id: Optional[str]
    line_no: Optional[int]


@dataclass(frozen=True)
class TopoLink:
    """The path type between two devices of the topo -m matrix, a before b (nvidia_smi_topo_m.Link)."""
    a: str
    b: str
    type: str
    line_no: int


@dataclass(frozen=True)
class P2PCell:
    """The P2P status from src to dst, one cell of the topo -p2p matrix (nvidia_smi_topo_p2p.Cell)."""
    src: str
    dst: str
    status: str
    ok: bool
    line_no: int


@dataclass(frozen=True)
class LegendEntry:
    """A 'CODE = meaning' line of a matrix's Legend block."""
    code: str
    meaning: str


@dataclass(frozen=True)
class PcieLink:
    """A GPU's PCIe link, generation and width, max and current (nvidia-smi -q "GPU Link Info")."""
    max_gen: Optional[int]
    current_gen: Optional[int]
    max_width: Optional[int]
    current_width: Optional[int]
    line_no: Optional[int]


@dataclass(frozen=True)
class Fabric:
    """A GPU's NVLink fabric block (nvidia-smi -q "Fabric")."""
    state: Optional[str]
    status: Optional[str]
    clique_id: Optional[str]
    cluster_uuid: Optional[str]
    health: dict
    line_no: int


@dataclass(frozen=True)
class SmiGpu:
    """One GPU of an nvidia-smi -q report (index: its order in the report)."""
    index: int
    bus_id: Optional[str]
    model: Optional[str]  # "Product Name"
    uuid: Optional[str]
    serial: Optional[str]
    line_no: Optional[int]
    pcie: PcieLink
    fabric: Optional[Fabric]
