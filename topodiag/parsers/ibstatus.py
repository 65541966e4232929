"""Parser for `ibstatus` (infiniband-diags shell script over /sys/class/infiniband).

Reads one block per port, as the script prints it:

    Infiniband device 'mlx5_0' port 1 status:
            default gid:     fe80:0000:0000:0000:8ae9:a4ff:fe9c:7f1a
            base lid:        0x0
            sm lid:          0x0
            state:           4: ACTIVE
            phys state:      5: LinkUp
            rate:            100 Gb/sec (4X EDR)
            link_layer:      Ethernet

and the script's failure, which is information too (no RDMA device registered):

    Fatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)

That parses to zero CAs and one entry in `errors`, not to a ParseError: a rule reports it.

JSON: {source: "ibstatus", cas: [CA], errors: [{line_no, text}]} with CA / Port as in
ib_records (one record per device, its ports in printed order). Per port ibstatus gives:
`state` ("4: ACTIVE" -> "Active", `state_raw` as printed), `physical_state` ("5: LinkUp" ->
"LinkUp"), `rate_gbps` ("100 Gb/sec (4X EDR)" -> 100.0, `rate_raw` as printed), `link_layer`
(the script prints "IB" when sysfs lacks the file -> "InfiniBand"), `base_lid` / `sm_lid` (hex
"0x0" -> int), `default_gid`. A value the script printed as "unknown" is None. CA-level fields
(type, firmware, GUIDs) are not printed by ibstatus and are None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from . import _tool_failures
from .base import ParseError, ParserInfo, clean_lines, iter_clean_lines
from .ib_records import (
    CA,
    ErrorLine,
    InferredLinkLayer,
    freeze_ca,
    infer_link_layers,
    is_redacted,
    redaction_note,
    not_this_tool,
    leading_number,
    new_ca,
    new_port,
    norm_link_layer,
    norm_physical_state,
    norm_state,
    parse_int,
    set_once,
    strip_paste,
)
from .sniff.ibstatus import _SNIFF_FATAL, sniff

INFO = ParserInfo(
    source="ibstatus",
    tool="ibstatus",
    description="each port's state, physical state, rate and link layer (the sysfs script)",
)
SOURCE = INFO.source

HEADER_RE = re.compile(r"^Infiniband device '([^']*)' port ([0-9]{1,18}) status:$")
FIELD_RE = re.compile(r"^(default gid|base lid|sm lid|state|phys state|rate|link_layer):\s*(.*)$")
ERROR_RE = re.compile(r"^(?:Fatal error:|cat: /sys/class/infiniband)")


@dataclass(frozen=True)
class IbstatusReport:
    source: str = SOURCE
    cas: tuple[CA, ...] = ()
    errors: tuple[ErrorLine, ...] = ()
    unrecognised: tuple[ErrorLine, ...] = ()  # error lines no catalogue entry explains (SYS004)
    inferred: tuple[InferredLinkLayer, ...] = ()
    notes: tuple[str, ...] = ()


_FIELDS = {"default gid": "default_gid", "base lid": "base_lid", "sm lid": "sm_lid", "state": "state",
           "phys state": "physical_state", "rate": "rate_gbps", "link_layer": "link_layer"}


def start_block(cas: list[dict[str, Any]], m: re.Match[str], line_no: int) -> dict[str, Any]:
    """Open the port draft for an 'Infiniband device ... status:' header (shared with ibstat)."""
    name, port = m.group(1), int(m.group(2))
    ca = cas[-1] if cas and cas[-1]["name"] == name and cas[-1]["printed_by"] == SOURCE else None
    if ca is None:
        ca = new_ca(name, SOURCE, line_no)
        cas.append(ca)
    draft = new_port(port, line_no)
    ca["ports"].append(draft)
    return draft


def apply_field(port: dict[str, Any], key: str, value: str, line_no: int, notes: list[str] | None = None) -> None:
    """Record one 'key: value' line of an ibstatus block in the port draft (a redacted value: a note)."""
    value = value.strip()
    if not value or value == "unknown":
        return
    if is_redacted(value):
        if notes is not None:
            notes.append(redaction_note(line_no, key, value, _FIELDS[key]))
        return
    if key == "default gid":
        set_once(port, "default_gid", value)
    elif key in ("base lid", "sm lid"):
        lid = parse_int(value)
        if lid is None:
            raise ParseError(f"expected a LID such as '0x1a' after '{key}:', found '{value}'", line_no)
        set_once(port, "base_lid" if key == "base lid" else "sm_lid", lid)
    elif key == "state":
        set_once(port, "state_raw", value)
        set_once(port, "state", norm_state(value))
    elif key == "phys state":
        set_once(port, "physical_state_raw", value)
        set_once(port, "physical_state", norm_physical_state(value))
    elif key == "rate":
        set_once(port, "rate_raw", value)
        set_once(port, "rate_gbps", leading_number(value))
    elif key == "link_layer":
        set_once(port, "link_layer", norm_link_layer(value))


def _parse(lines: Iterable[str]) -> IbstatusReport:
    cas: list[dict[str, Any]] = []
    errors: list[ErrorLine] = []
    port: dict[str, Any] | None = None
    first_text: tuple[int, str] | None = None
    notes: list[str] = []
    own_error = False  # an error only ibstatus prints, so an error-only text is still ibstatus'
    for line_no, raw in enumerate(lines, 1):
        line = strip_paste(raw)
        if not line:
            continue
        if first_text is None:
            first_text = (line_no, line)
        m = HEADER_RE.match(line)
        if m:
            port = start_block(cas, m, line_no)
            continue
        if ERROR_RE.match(line):
            errors.append(_tool_failures.classify(SOURCE, line_no, line))
            own_error = own_error or bool(_SNIFF_FATAL.search(line)) or line.startswith("cat: ")
            continue
        m = FIELD_RE.match(line)
        if m and port is not None:
            apply_field(port, m.group(1), m.group(2), line_no, notes)
        # anything else (prompts, prose, other tools' output) is not ibstatus' and is skipped
    if not cas and not own_error:
        raise not_this_tool(first_text, "ibstatus", "'Infiniband device ... status:' blocks",
                            "an \"Infiniband device '<dev>' port <n> status:\" line")
    inferred = infer_link_layers(cas, notes)
    return IbstatusReport(cas=tuple(freeze_ca(c) for c in cas), errors=tuple(errors), unrecognised=_tool_failures.unrecognised(errors), inferred=inferred,
                          notes=tuple(notes))


def parse(text: str) -> IbstatusReport:
    """ibstatus output -> IbstatusReport; ParseError when the text holds no ibstatus block or error."""
    return _parse(clean_lines(text))


def parse_lines(lines: Iterable[str]) -> IbstatusReport:
    """Streaming form of parse for an iterable of raw lines."""
    return _parse(iter_clean_lines(lines))
