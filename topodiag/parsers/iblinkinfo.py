"""Parser for `iblinkinfo` (infiniband-diags): every port of every node in the fabric, with its
width, lane speed, state and the port at the other end of the cable.

    CA: gpu-v100-3 HCA-1:
          0xb88303ffff7f61c4      6    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       3    3[  ] "MF0;ibswitch254:MQM8700/U1" ( )
    Switch: 0x08c0eb0300add04e Quantum Mellanox Technologies:
              10    5[  ] ==(                Down/ Polling)==>             [  ] "" ( )
              10   21[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>      40    1[  ] "node3 HCA-2" ( Could be 53.125 Gbps)
              10   40[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>       4   40[  ] "MF0;d32-03-1:MQM8700/U1" ( )

A CA line starts with the port GUID, a switch line with the switch LID (the header carries the
switch GUID). iblinkinfo prints the signalling rate of ONE lane ("25.78125 Gbps" is EDR): the
link's nominal data rate is width x lane rate (4X EDR = 100 Gb/s), given here as `rate_gbps`.
"( Could be 53.125 Gbps)" / "(Could be 4X )" is iblinkinfo's own verdict that the link trained
below what both of its ends support. A Down port prints no width or speed (they are undefined
then, IBA C14-24.2.1).

Also read: `iblinkinfo -l` (one line per port: port GUID and node description first; the node
kind is not printed, so `kind` is None), `-p` (" (HOQ:n VL_Stall:n)" after the link), older
builds' narrower columns ("( 4X 10.0 Gbps Active/  LinkUp)"), FDR10 ("10.0 Gbps (FDR10)"),
'"Port not available"', Router nodes, indented or Markdown pastes, "..." elision lines
(`elided`), prompts and prose (skipped), a cut-off last line (kept as far as it goes, with a
note), LIDs and GUIDs masked before pasting ("xxx", "...", "<redacted>", "0x...": null, one note
per masked form naming its lines). ibwarn/ibpanic/iberror lines go to `errors`.

JSON: {source: "iblinkinfo", line_mode, nodes: [Node], elided, notes: [str], errors: [{line_no,
text}]}. Node: kind ("CA" | "Switch" | "Router"; None in -l output), guid (switch header GUID,
"0x" + 16 hex; None for CAs, whose lines carry port GUIDs; in -l output the GUID all its lines
share), description (node description as printed), line_no, links [Link]. Link: port, port_guid
(CA and -l lines), lid (the port's base LID; a switch's LID on switch lines), ext_port, width
("4X" as printed), width_lanes (4), speed_gbps (per-lane signalling rate as printed, 25.78125),
speed_raw ("25.78125 Gbps"), speed_name ("EDR"; SDR DDR QDR FDR10 FDR EDR HDR NDR XDR),
rate_gbps (nominal link data rate: width_lanes x nominal lane rate, 4X EDR = 100.0, 4X FDR =
56.0), state ("Active" ...), state_raw, physical_state ("LinkUp", "Polling" ...),
physical_state_raw, peer {guid (-l only), lid, port, ext_port, description} or None (down / not
available / cut off), could_be (text inside the trailing parentheses, None when empty),
could_be_width ("4X"), could_be_speed_gbps (53.125), could_be_speed_name ("HDR", "FDR10"),
hoq_life, vl_stall_count (-p only), line_no. Width and speed fields are None for Down ports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from . import _tool_failures
from .base import is_digits, ParserInfo, clean_lines, iter_clean_lines, note
from .ib_records import (
    IB_SPEEDS, MASKED_GUID, MASKED_LID, MAX_LINE, ErrorLine, FabricPass, is_redacted, link_rate_gbps, norm_guid,
    norm_physical_state, norm_state, speed_name_of,
)
from .sniff.iblinkinfo import sniff

INFO = ParserInfo(
    source="iblinkinfo",
    tool="iblinkinfo",
    description="every fabric port: width, lane speed, state, physical state and the port at the far end",
)
SOURCE = INFO.source

# -- records ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Peer:
    """The port at the other end of the cable, as iblinkinfo names it."""

    guid: str | None  # its port GUID; printed by `iblinkinfo -l` only
    lid: int | None  # None when redacted ("xxx", "<redacted>")
    port: int
    ext_port: int | None
    description: str  # its node's description (node-name-map applied by the tool)


@dataclass(frozen=True)
class Link:
    """One port line."""

    port: int
    port_guid: str | None  # CA/router lines and -l lines; switch lines print no port GUID
    lid: int | None  # base LID of the port; on switch lines the switch's LID; None when redacted
    ext_port: int | None
    width: str | None  # "4X" as printed; None when not printed (Down) or undefined
    width_lanes: int | None
    speed_gbps: float | None  # per-lane signalling rate as printed (25.78125)
    speed_raw: str | None  # "25.78125 Gbps", "10.0 Gbps (FDR10)"
    speed_name: str | None  # "EDR"
    rate_gbps: float | None  # nominal link data rate: width_lanes x nominal lane rate (4X EDR = 100)
    state: str | None  # Down | Initializing | Armed | Active
    state_raw: str
    physical_state: str | None  # Polling | Disabled | LinkUp | ...
    physical_state_raw: str
    peer: Peer | None
    could_be: str | None  # iblinkinfo's "(Could be 4X Could be 53.125 Gbps)", without parentheses
    could_be_width: str | None
    could_be_speed_gbps: float | None
    could_be_speed_name: str | None  # "HDR"; "FDR10" for "Could be FDR10"
    hoq_life: int | None  # -p
    vl_stall_count: int | None  # -p
    line_no: int


@dataclass(frozen=True)
class Node:
    kind: str | None  # "CA" | "Switch" | "Router"; None when not printed (-l, or a fragment)
    guid: str | None
    description: str | None
    line_no: int
    links: tuple[Link, ...]


@dataclass(frozen=True)
class IblinkinfoReport:
    source: str = SOURCE
    line_mode: bool = False  # `iblinkinfo -l`
    nodes: tuple[Node, ...] = ()
    elided: bool = False  # the text had "..." lines: someone left ports out
    notes: tuple[str, ...] = ()
    errors: tuple[ErrorLine, ...] = ()
    unrecognised: tuple[ErrorLine, ...] = ()  # error lines no catalogue entry explains (SYS004)


# -- grammar --------------------------------------------------------------------------------------

# The description is greedy and stripped in code: `(?P<desc>.*?)\s*:$` let two runs share the blanks
# before the colon (quadratic on a header line followed by blanks).
HEADER_RE = re.compile(rf"^(?P<kind>CA|Switch|Router|\?\?):[ \t]+(?:(?P<guid>0x[0-9a-fA-F]{{16}}|{MASKED_GUID})[ \t]+)?(?P<desc>.*):$")
LINK_RE = re.compile(
    rf"^(?:(?P<lguid>0x[0-9a-fA-F]{{1,16}}|{MASKED_GUID})\s+(?:\"(?P<ldesc>[^\"]*)\"\s+)?)?"
    rf"(?P<lid>[0-9]{{1,9}}|{MASKED_LID})\s+(?P<port>[0-9]{{1,5}})\[\s*(?P<ext>[0-9]{{0,5}})\s*\]\s*"
    r"==\((?P<body>.*)\)==>\s*(?P<remote>.*)$"
)
_HOQ_RE = re.compile(r"\)\s*\(HOQ:([0-9]{1,9})\s+VL_Stall:([0-9]{1,9})\s*$")
_STATE_RE = re.compile(r"(?P<state>[A-Za-z]{1,30}|\?\([0-9]{1,5}\))\s*/\s*(?P<phys>[A-Za-z]{1,40}|\?\([0-9]{1,5}\))\s*$")
_WIDTH_RE = re.compile(r"^(?P<width>[0-9]{1,2}X|undefined\s*\([0-9]{1,5}\)|\?\?)\s*(?P<speed>.*)$")
_SPEED_RE = re.compile(r"^(?P<gbps>[0-9]{1,3}(?:\.[0-9]{1,8})?)\s*Gbps(?:\s*\(\s*(?P<fdr10>FDR10)\s*\))?$")
_REMOTE_RE = re.compile(
    rf"^(?:(?P<rguid>0x[0-9a-fA-F]{{1,16}}|{MASKED_GUID})\s+)?"
    rf"(?P<rlid>[0-9]{{1,9}}|{MASKED_LID})\s+(?P<rport>[0-9]{{1,5}})\[\s*(?P<rext>[0-9]{{0,5}})\s*\]\s*"
    r"\"(?P<rdesc>.*)\"\s*\((?P<could>.*)\)$"
)
_REMOTE_DOWN_RE = re.compile(r"^\[\s*\]\s*\"\"\s*\(\s*\)$")
_REMOTE_NA_RE = re.compile(r"^\"Port not available\"$")
_COULD_WIDTH_RE = re.compile(r"Could be ([0-9]{1,2}X)")
_COULD_SPEED_RE = re.compile(r"Could be ([0-9]{1,3}(?:\.[0-9]{1,8})?) Gbps")
OWN_ERROR_RE = re.compile(r"^iblinkinfo: ")

# Longer lines are not the tool's (two node descriptions of 64 bytes and the columns make ~300).


def _int(text: str | None) -> int | None:
    return int(text) if text and is_digits(text) else None


def _guid(text: str | None) -> str | None:
    """A GUID as '0x' + 16 hex digits; None when absent or redacted ('0xXXXXXXXXXXXXXXXX', '...')."""
    return norm_guid(text) if text and not is_redacted(text) else None


# -- one line ---------------------------------------------------------------------------------


def _masked(masked: dict[str, dict[str, list[int]]], field: str, text: str | None, line_no: int) -> None:
    """Record a redacted LID / GUID for the note ("lines 4, 9: LID redacted ('xxx'): read as null")."""
    if text and (not is_digits(text) if field == "LID" else is_redacted(text)):
        masked[field].setdefault(text, []).append(line_no)


def _link_from_match(m: re.Match[str], line_no: int, notes: list[str],
                     masked: dict[str, dict[str, list[int]]]) -> Link | None:
    """A Link from a LINK_RE match; None (with a note) when the state part is unreadable."""
    body = m.group("body")
    hoq = vls = None
    h = _HOQ_RE.search(body)
    if h:
        hoq, vls = int(h.group(1)), int(h.group(2))
        body = body[: h.start()]
    s = _STATE_RE.search(body)
    if not s:
        notes.append(note("iblinkinfo", "state-unreadable", line=line_no))
        return None
    width = lanes = speed_raw = speed_name = None
    speed_gbps = None
    pre = body[: s.start()].strip()
    w = _WIDTH_RE.match(pre) if pre else None
    if w:
        if is_digits(w.group("width")[0]):
            width = w.group("width")
            lanes = int(width[:-1])
        speed_raw = w.group("speed").strip() or None
    elif pre:
        speed_raw = pre
    if speed_raw:
        sp = _SPEED_RE.match(speed_raw)
        if sp:
            speed_gbps = float(sp.group("gbps"))
            speed_name = "FDR10" if sp.group("fdr10") else speed_name_of(speed_gbps)
    state_raw, phys_raw = s.group("state"), s.group("phys")

    remote = m.group("remote").strip()
    peer = None
    could = could_width = could_speed = could_speed_name = None
    r = _REMOTE_RE.match(remote)
    for field, group in (("LID", "lid"), ("port GUID", "lguid")):
        _masked(masked, field, m.group(group), line_no)
    if r:
        _masked(masked, "LID", r.group("rlid"), line_no)
        _masked(masked, "port GUID", r.group("rguid"), line_no)
        peer = Peer(
            guid=_guid(r.group("rguid")),
            lid=_int(r.group("rlid")),
            port=int(r.group("rport")),
            ext_port=_int(r.group("rext")),
            description=r.group("rdesc"),
        )
        could = r.group("could").strip() or None
        if could:
            cw = _COULD_WIDTH_RE.search(could)
            cs = _COULD_SPEED_RE.search(could)
            could_width = cw.group(1) if cw else None
            could_speed = float(cs.group(1)) if cs else None
            could_speed_name = "FDR10" if "Could be FDR10" in could else speed_name_of(could_speed)
    elif not (_REMOTE_DOWN_RE.match(remote) or _REMOTE_NA_RE.match(remote)):
        notes.append(note("iblinkinfo", "far-end-unreadable", line=line_no, port=m.group("port")))
    return Link(
        port=int(m.group("port")),
        port_guid=_guid(m.group("lguid")),
        lid=_int(m.group("lid")),
        ext_port=_int(m.group("ext")),
        width=width,
        width_lanes=lanes,
        speed_gbps=speed_gbps,
        speed_raw=speed_raw,
        speed_name=speed_name,
        rate_gbps=link_rate_gbps(lanes, speed_name),
        state=norm_state(state_raw),
        state_raw=state_raw,
        physical_state=norm_physical_state(phys_raw),
        physical_state_raw=phys_raw,
        peer=peer,
        could_be=could,
        could_be_width=could_width,
        could_be_speed_gbps=could_speed,
        could_be_speed_name=could_speed_name,
        hoq_life=hoq,
        vl_stall_count=vls,
        line_no=line_no,
    )


SHAPE = ("\"CA: <description>:\" / \"Switch: 0x<guid> <description>:\" headers over "
         "\"==( 4X ... Active/  LinkUp)==>\" port lines")


# -- the whole text -----------------------------------------------------------------------------


def _freeze(n: dict[str, Any]) -> Node:
    return Node(kind=n["kind"], guid=n["guid"], description=n["description"], line_no=n["line_no"],
                links=tuple(n["links"]))


def _close(nodes: list[Node], node: dict[str, Any] | None) -> None:
    if node is not None:
        nodes.append(_freeze(node))


class _Reader(FabricPass):
    """One pass over the lines (read); a node is frozen when the next begins (its draft is the only one held)."""

    def __init__(self) -> None:
        super().__init__(SOURCE, _tool_failures.classify, OWN_ERROR_RE, ("LID", "port GUID", "node GUID"))
        self.nodes: list[Node] = []
        self.node: dict[str, Any] | None = None
        self.line_mode = False

    def feed(self, line_no: int, raw: str) -> None:
        line = self.see(line_no, raw)
        if not line:
            return
        m = HEADER_RE.match(line) if len(line) <= MAX_LINE else None
        if m:
            _masked(self.masked, "node GUID", m.group("guid"), line_no)
            self._open({"kind": m.group("kind") if m.group("kind") != "??" else None, "guid": _guid(m.group("guid")),
                        "description": m.group("desc").rstrip(), "line_no": line_no, "links": []})
        elif "==(" in line:
            self._port_line(line_no, line)
        else:
            self.aside(line_no, line)
        # anything else (prompts, prose, other tools' output) is skipped

    def _open(self, node: dict[str, Any] | None) -> None:
        _close(self.nodes, self.node)
        self.node = node

    def _port_line(self, line_no: int, line: str) -> None:
        if len(line) > MAX_LINE:
            self.notes.append(note("iblinkinfo", "line-too-long", line=line_no, length=len(line)))
            return
        m = LINK_RE.match(line)
        if not m:
            self.notes.append(note("iblinkinfo", "port-line-garbled", line=line_no))
            return
        link = _link_from_match(m, line_no, self.notes, self.masked)
        if link is None:
            return
        node = self.node
        if m.group("ldesc") is not None:  # -l: every line names its node
            self.line_mode = True
            desc = m.group("ldesc").strip()
            if node is None or not node.get("from_line") or node["description"] != desc:
                self._open({"kind": None, "guid": link.port_guid, "description": desc, "line_no": line_no,
                            "links": [], "from_line": True})
            elif node["guid"] != link.port_guid:
                node["guid"] = None  # a CA's ports have GUIDs of their own
        elif node is None or node.get("from_line"):
            self.notes.append(note("iblinkinfo", "ports-before-node", line=line_no))
            self._open({"kind": "Switch" if m.group("lguid") is None else None, "guid": None, "description": None,
                        "line_no": line_no, "links": []})
        self.node["links"].append(link)  # type: ignore[index]

    def finish(self) -> IblinkinfoReport:
        """Validate what was read (ParseError for text without a node or port line) and assemble the report."""
        self._open(None)
        if not self.nodes and not self.own_error:
            raise self.refuse(SHAPE)
        self.note_masked()
        return IblinkinfoReport(line_mode=self.line_mode, nodes=tuple(self.nodes), elided=self.elided,
                                notes=tuple(self.notes), errors=tuple(self.errors),
                                unrecognised=_tool_failures.unrecognised(self.errors))


def _parse(lines: Iterable[str]) -> IblinkinfoReport:
    reader = _Reader()
    for line_no, raw in enumerate(lines, 1):
        reader.feed(line_no, raw)
    return reader.finish()


def parse(text: str) -> IblinkinfoReport:
    """iblinkinfo output -> IblinkinfoReport; ParseError when the text holds no node header or port line."""
    return _parse(clean_lines(text))


def parse_lines(lines: Iterable[str]) -> IblinkinfoReport:
    """Streaming form of parse for an iterable of raw lines."""
    return _parse(iter_clean_lines(lines))
