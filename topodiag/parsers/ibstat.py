"""Parser for `ibstat` (infiniband-diags): one block per CA, one sub-block per port.

    CA 'mlx5_0'
            CA type: MT4129
            Number of ports: 1
            Firmware version: 28.43.2026
            Hardware version: 0
            Node GUID: 0xa088c2030074cfda
            System image GUID: 0xa088c2030074cfda
            Port 1:
                    State: Active
                    Physical state: LinkUp
                    Rate: 400
                    Base lid: 50
                    LMC: 0
                    SM lid: 1
                    Capability mask: 0xa751e848
                    Port GUID: 0xa088c2030074cfda
                    Link layer: InfiniBand
    ibpanic: [1400444] main: stat of IB device 'mlx5_8' failed: No such file or directory

Also read: `ibstat <ca> <port>` ("CA: 'mlx5_0'" then an unindented port block), `ibstat -s` (CA
headers only), switches ("Switch 'x'" / "Switch type:"), "Rate: 40 (FDR10)", "Rate: 2.5",
pastes that lost their indentation or kept Markdown backticks, and shell prompts / prose between
outputs (skipped). ibstat aborts at the first device it cannot stat ("ibpanic: ... stat of IB
device ... failed"); what it printed before is kept and the ibpanic/ibwarn/iberror line goes to
`errors`. `ibstatus` blocks pasted in the same text are read too (their CA has
`printed_by: "ibstatus"`), since both describe the same ports.

JSON: {source: "ibstat", cas: [CA], errors: [{line_no, text}]}; CA and Port as in ib_records:
CA name, node_type, type ("MT4129"), num_ports, firmware, hardware_version, node_guid /
system_guid ("0x" + 16 hex), ports [{port, state ("Active" ...), state_raw, physical_state
("LinkUp" ...), physical_state_raw, rate_gbps (400.0), rate_raw ("400"), link_layer, base_lid,
lmc, sm_lid, capability_mask, port_guid, line_no}]; fields ibstat never prints are None.
`ibstat -l` / `ibstat -p` (bare names / GUIDs) carry no structure and are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from . import ibstatus
from . import _tool_failures
from .base import ParseError, ParserInfo, clean_lines, iter_clean_lines
from .ib_records import (
    CA,
    CaPass,
    ErrorLine,
    InferredLinkLayer,
    infer_link_layers,
    is_redacted,
    is_trace,
    redaction_note,
    trace_note,
    not_this_tool,
    leading_number,
    norm_guid,
    norm_link_layer,
    norm_mask,
    norm_physical_state,
    norm_state,
    parse_int,
    set_once,
)
from .sniff.ibstat import _NODE, sniff

INFO = ParserInfo(
    source="ibstat",
    tool="ibstat",
    description="each HCA's ports: state, physical state, rate, link layer, firmware (partial output too)",
    argv=("ibstat",),
    timeout_s=15.0,
)
SOURCE = INFO.source

CA_RE = re.compile(rf"^{_NODE}(:?) '([^']*)'$")
TYPE_RE = re.compile(rf"^{_NODE} type:\s*(.*)$")
PORT_RE = re.compile(r"^Port ([0-9]{1,18}):$")
CA_KEYS = {
    "Number of ports": "num_ports",
    "Firmware version": "firmware",
    "Hardware version": "hardware_version",
    "Node GUID": "node_guid",
    "System image GUID": "system_guid",
}
PORT_KEYS = ("State", "Physical state", "Rate", "Base lid", "LMC", "SM lid", "Capability mask", "Port GUID",
             "Link layer")
FIELD_RE = re.compile(r"^(" + "|".join(map(re.escape, [*CA_KEYS, *PORT_KEYS])) + r"):\s*(.*)$")
_FIELD_NAMES = {**CA_KEYS, "State": "state", "Physical state": "physical_state", "Rate": "rate_gbps",
                "Base lid": "base_lid", "LMC": "lmc", "SM lid": "sm_lid", "Capability mask": "capability_mask",
                "Port GUID": "port_guid", "Link layer": "link_layer"}
ERROR_RE = re.compile(r"^(?:ibpanic:|ibwarn:|iberror:|ibstat: |\S+: iberror:)")


@dataclass(frozen=True)
class IbstatReport:
    source: str = SOURCE
    cas: tuple[CA, ...] = ()
    errors: tuple[ErrorLine, ...] = ()
    unrecognised: tuple[ErrorLine, ...] = ()  # error lines no catalogue entry explains (SYS004)
    incomplete: bool = False  # ibstat stopped (ibpanic): CAs after the failing one are not listed
    inferred: tuple[InferredLinkLayer, ...] = ()
    notes: tuple[str, ...] = ()


def _need(value: Any, what: str, key: str, raw: str, line_no: int) -> Any:
    if value is None:
        raise ParseError(f"expected {what} after '{key}:', found '{raw[:40]}'", line_no)
    return value


def _ca_field(ca: dict[str, Any], key: str, value: str, line_no: int) -> None:
    field = CA_KEYS[key]
    if field == "num_ports":
        set_once(ca, field, _need(parse_int(value), "a port count", key, value, line_no))
    elif field in ("node_guid", "system_guid"):
        set_once(ca, field, _need(norm_guid(value), "a GUID such as '0x0c42a10300a58684'", key, value, line_no))
    elif value:
        set_once(ca, field, value)


def _port_field(port: dict[str, Any], key: str, value: str, line_no: int) -> None:
    if not value:
        return
    if key == "State":
        set_once(port, "state_raw", value)
        set_once(port, "state", norm_state(value))
    elif key == "Physical state":
        set_once(port, "physical_state_raw", value)
        set_once(port, "physical_state", norm_physical_state(value))
    elif key == "Rate":
        set_once(port, "rate_raw", value)
        set_once(port, "rate_gbps", _need(leading_number(value), "a rate in Gb/s such as '200'", key, value, line_no))
    elif key in ("Base lid", "SM lid", "LMC"):
        field = {"Base lid": "base_lid", "SM lid": "sm_lid", "LMC": "lmc"}[key]
        set_once(port, field, _need(parse_int(value), "an integer", key, value, line_no))
    elif key == "Capability mask":
        set_once(port, "capability_mask", _need(norm_mask(value), "a mask such as '0xa651e848'", key, value, line_no))
    elif key == "Port GUID":
        set_once(port, "port_guid", _need(norm_guid(value), "a GUID such as '0x0c42a10300a58684'", key, value, line_no))
    elif key == "Link layer":
        set_once(port, "link_layer", norm_link_layer(value))


class _Reader(CaPass):
    """One pass over the lines (read), then finish (validate, assemble)."""

    def __init__(self) -> None:
        super().__init__(SOURCE)
        self.st_port: dict[str, Any] | None = None  # current ibstatus port, when its blocks are pasted in
        self.own_error = False
        self.traces: list[int] = []

    def feed(self, line_no: int, raw: str) -> None:
        line = self.see(line_no, raw)
        if not line:
            return
        m = CA_RE.match(line)
        if m:
            self.open_ca(m.group(3), line_no)["node_type"] = m.group(1) if m.group(1) != "???" else None
            self.st_port = None
            return
        m = PORT_RE.match(line)
        if m:
            self.open_port(int(m.group(1)), line_no)
            self.st_port = None
            return
        if ERROR_RE.match(line):
            self._error(line_no, line)
            return
        m = TYPE_RE.match(line)
        if m:
            self._type(m, line_no)
            return
        m = FIELD_RE.match(line)
        if m:
            self._field(m.group(1), m.group(2).strip(), line_no)
        else:
            self._ibstatus(line_no, line)
        # anything else (prompts, prose, other tools' output) is skipped

    def _error(self, line_no: int, line: str) -> None:
        if is_trace(line):
            self.traces.append(line_no)
        else:
            self.errors.append(_tool_failures.classify(SOURCE, line_no, line))
        self.own_error = self.own_error or line.startswith(("ibpanic:", "ibwarn:"))

    def _type(self, m: re.Match[str], line_no: int) -> None:
        if self.ca is not None and is_redacted(m.group(2)):
            self.notes.append(redaction_note(line_no, f"{m.group(1)} type", m.group(2), "type"))
        elif self.ca is not None and m.group(2):
            set_once(self.ca, "type", m.group(2))

    def _field(self, key: str, value: str, line_no: int) -> None:
        if is_redacted(value):
            self.notes.append(redaction_note(line_no, key, value, _FIELD_NAMES[key]))
        elif key in CA_KEYS:
            if self.ca is not None:
                _ca_field(self.ca, key, value, line_no)
        elif self.port is not None:
            _port_field(self.port, key, value, line_no)

    def _ibstatus(self, line_no: int, line: str) -> None:
        """`ibstatus` blocks pasted in the same text."""
        m = ibstatus.HEADER_RE.match(line)
        if m:
            self.st_port = ibstatus.start_block(self.cas, m, line_no)
            self.ca = self.port = None
            return
        m = ibstatus.FIELD_RE.match(line)
        if m and self.st_port is not None:
            ibstatus.apply_field(self.st_port, m.group(1), m.group(2), line_no, self.notes)

    def finish(self) -> IbstatReport:
        """Validate (ParseError for text without a CA, a port state or ibstat's own failure) and assemble."""
        if not self.own_error and not any(
                c["name"] is not None or any(p["state_raw"] or p["physical_state_raw"] for p in c["ports"])
                for c in self.cas):
            raise not_this_tool(self.first_text, "ibstat", "\"CA '<name>'\" blocks", "a \"CA '<name>'\" line")
        inferred = infer_link_layers(self.cas, self.notes)
        if self.traces:
            self.notes.append(trace_note(self.traces))
        return IbstatReport(cas=self.frozen_cas(), errors=tuple(self.errors),
                            unrecognised=_tool_failures.unrecognised(self.errors),
                            incomplete=any(e.text.startswith("ibpanic:") for e in self.errors), inferred=inferred,
                            notes=tuple(self.notes))


def _parse(lines: Iterable[str]) -> IbstatReport:
    reader = _Reader()
    for line_no, raw in enumerate(lines, 1):
        reader.feed(line_no, raw)
    return reader.finish()


def parse(text: str) -> IbstatReport:
    """ibstat output -> IbstatReport; ParseError when the text holds no ibstat CA, port or ibpanic."""
    return _parse(clean_lines(text))


def parse_lines(lines: Iterable[str]) -> IbstatReport:
    """Streaming form of parse for an iterable of raw lines."""
    return _parse(iter_clean_lines(lines))
