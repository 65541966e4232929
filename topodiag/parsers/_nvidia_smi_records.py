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
redacted UUID, a repaired cell). The sentences live here, one template per id, so the same event reads
the same in every parser and a test or a tool can tell which note it is by its id (`note_id`).
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field, make_dataclass
from typing import Any, Optional

from . import _tool_failures
from .ib_records import ToolError

# id -> template (str.format fields). Shared ones first, then by parser.
NOTES: dict[str, str] = {
    # the `nvidia-smi nvlink` block walker (nvidia_smi_gpu_blocks), every mode
    "uuid_unreadable": "line {line}: GPU {index} UUID redacted or unreadable ('{uuid}'): uuid is null",
    "header_cut_in_uuid": "line {line}: GPU {index} header cut off inside its UUID",
    "text_after_header": "line {line}: text after GPU {index} header skipped: '{text}'",
    "elision_marker": "line {line}: elision marker '{marker}': output not shown in full",
    "no_header": ("line {line}: {expect} with no 'GPU n:' header above them (a paste without its header): GPU "
                  "index, name and uuid are null"),
    "message_not_alone": "line {line}: '{text}' is not under a GPU header without links: skipped",
    "incomplete_line": "line {line}: '{text}' is not a complete line of {cmd}: skipped",
    "ends_inside_line": ("line {line}: output ends inside {gpu} ('{text}' is cut off): that line and any after "
                         "it are not shown"),
    "ends_after_header": "line {line}: output ends after {gpu} header: its links are not shown",
    "ends_in_fragment": "{gpu}: output ends in a cut-off line '{text}': links after it may be missing",
    "only_other_mode": "line {line}: {gpu} block holds only other `nvidia-smi nvlink` output: skipped",
    "other_mode_skipped": "line {line}: {mode} lines skipped: not {what}",
    # nvidia_smi_nvlink_s
    "link_before_header": "line {line}: 'Link' line before any 'GPU n:' header skipped",
    "link_state_not_speed": ("line {line}: GPU {index} link {link} state '{state}' is not a speed: not counted as "
                             "active"),
    "ends_inside_link": ("line {line}: output ends inside GPU {index} link {link}: that link and any after it are "
                         "not shown"),
    # a named value under a link (nvidia_smi_nvlink_e counters, nvidia_smi_nvlink_c capabilities)
    "named_value_twice": "line {line}: {gpu} link {link} '{name}' printed twice: the later value kept",
    "counter_not_number": "line {line}: {gpu} link {link} '{name}' value '{value}' is not a number: null",
    "capability_not_bool": "line {line}: {gpu} link {link} '{name}' is '{value}', not true/false: null",
    # nvidia_smi_nvlink_gt
    "throughput_not_count": "line {line}: {gpu} link {link} {kind} {way} value '{value}' is not a count: null",
    "throughput_unit": "line {line}: {gpu} link {link} {kind} {way} printed in {unit}: converted to KiB",
    "throughput_twice": "line {line}: {gpu} link {link} {way} printed twice: the later value kept",
    "throughput_one_way": "{gpu}: link(s) {links} print only one of Tx/Rx",
    # nvidia_smi_nvlink_info
    "nvle_not_understood": "{gpu}: NVLink encryption state '{state}' not understood: nvle_enabled is null",
    # nvidia_smi_topo_p2p
    "p2p_row_cut": "row {label} (line {line}) has {n} of {total} cells (cut?)",
    "p2p_rows_without_column": ("rows for {rows} have no header column (header cut?): their cells are read by "
                                "position"),
    "p2p_no_row": "no row for {gpus}: cells from those GPUs are unknown",
    "p2p_asymmetric": "asymmetric P2P status: {pairs}",
    "p2p_unknown_codes": "status code(s) {codes} are not in nvidia-smi's P2P legend",
    # nvidia_smi_topo_m
    "topo_header_column_ignored": "header column '{column}' (line {line}) is not a device or affinity column: ignored",
    "topo_row_cut": "row {label} (line {line}) has {n} of {total} path cells{rest}: the rest is missing (cut?)",
    "topo_elided_rows": "elision line(s) in the matrix ({lines}): rows may be missing",
    "topo_affinity_glued": ("{names}: CPU and NUMA affinity printed without a separator ('{raw}'); read as CPU "
                            "'{cpu}', NUMA '{numa}'"),
    "topo_affinity_absent": "{names}: no value under '{column}'",
    "topo_affinity_cut": "{names}: row ends before {columns} (cut?)",
    "topo_affinity_bad": "{names}: {column} '{value}' is not {what} (cut by the terminal?): left out",
    "topo_affinity_tail": ("{names}: CPU Affinity '{cpu}' is the tail of '{longer}' (same NUMA affinity) and looks "
                           "cut: left out"),
    "topo_nic_legend_twice": "NIC Legend names {nic} twice ('{first}', then '{then}' at line {line}): kept the first",
    "topo_header_cut": ("the header (line {line}) names {n} devices but rows also list {extra}: its right-hand "
                        "columns were cut (terminal width?); links of those devices come from their own rows only, "
                        "and CPU affinity may be incomplete"),
    "topo_no_row": "no matrix row for {devices}: links of {which} come from the other rows only",
    "topo_second_matrix": "another matrix header at line {line}: only the first matrix (line {header_line}) is read",
    "topo_row_after_matrix": "line {line} looks like a matrix row after the matrix ended: ignored",
    "topo_no_nic_legend": "no 'NIC Legend:' entries: the RDMA device names of {nics} are unknown{cut}",
    "topo_nic_unnamed": "the NIC Legend does not name {nics}",
    "topo_nic_stray": "the NIC Legend names {nics}, which the matrix does not show",
    "topo_mirror_disagrees": ("{a}-{b}: row {a} says {mine} (line {mine_line}), row {b} says {mirror} "
                              "(line {mirror_line}): kept {mine}"),
    "topo_no_cell": "no cell for {n} pair(s): {pairs}",
    "topo_unknown_types": ("path type(s) {types} are not in nvidia-smi's legend (X, SYS/SOC, NODE, PHB, PXB, PIX, "
                           "NV#)"),
    "topo_types_not_in_legend": "path type(s) {types} used in the matrix but not in its Legend block",
}


def note(note_id: str, **fields: object) -> str:
    """The sentence of note `note_id` with its fields filled in."""
    return NOTES[note_id].format(**fields)


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
    ("name", Optional[str]),
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
    return cls(block.index, block.name, block.uuid, block.line_no, *values,
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
    product_name: Optional[str]
    uuid: Optional[str]
    serial: Optional[str]
    line_no: Optional[int]
    pcie: PcieLink
    fabric: Optional[Fabric]
