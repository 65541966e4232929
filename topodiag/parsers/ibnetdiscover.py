"""Parser for `ibnetdiscover` (infiniband-diags): the fabric's topology file, one block per node
with one line per connected port (the tool's tabs shown as spaces).

    vendid=0x2c9
    devid=0xcb20
    sysimgguid=0xec0d9a0300ec8480
    switchguid=0xec0d9a0300ec8480(ec0d9a0300ec8480)
    Switch  36 "S-ec0d9a0300ec8480"         # "SwitchIB Mellanox Technologies" base port 0 lid 23 lmc 0
    [11]    "S-ec0d9a0300ec8200"[11]                # "SwitchIB Mellanox Technologies" lid 25 4xDDR
    [13]    "H-08c0eb0300ddbf02"[1](8c0eb0300ddbf02)                # "gpu045 HCA-1" lid 100 4xEDR

    caguid=0x8f10403960558
    Ca      2 "H-0008f10403960558"          # "MT23108 InfiniHost Mellanox Technologies"
    [1](8f10403960559)      "S-005442ba00003080"[12]                # lid 10 lmc 1 "ISR9024 Voltaire" lid 6 1xSDR

Each connection line ends with the ACTIVE width and speed of the local port ("4xEDR"; "1xSDR" is
a link trained at one lane of four). `rate_gbps` is the nominal link data rate, lanes x nominal
lane rate (4x EDR = 100, 4x NDR = 400). ibnetdiscover prints connected ports only, and no port
state: a missing port is absent, not "Down".

Also read: grouping (-g: "Chassis", "# Spine Nodes", "[ext N]" port numbers), -f (" s=N w=N
v=N" after the speed), Router ("Rt") nodes, "??" / "???" for an unknown width / speed (None),
indented pastes (the man page example), blocks without blank lines between them, a fragment
that starts mid-file, "..." elision lines (`elided`), a cut-off last line (kept as far as it goes,
with a note), node names whose GUID was masked before pasting ("S-xxxxxxxxxxxxxxxx", "S-0x...",
"H-<redacted>", "S-*", or a name masked whole: "*", "<redacted>"; the GUID is null, the name kept
as printed, one note per masked form naming its lines) and masked LIDs ("lid xx": null, noted),
and the ports report of `ibnetdiscover -p`:

    CA   134  1 0x7cfe9003003b4bde 4x EDR - SW  1719 10 0x7cfe9003009ce5b0 ( 'o0001 HCA-1' - 'ib-i1l1s01' )
    SW  2052 37 0x506b4b03005c2740 4x ???                                    'ib-i4l1s01'

The node lists of `ibnetdiscover -l/-S/-H` (and ibhosts / ibswitches / ibnodes) name nodes but no
links: refused with a ParseError that says so.

JSON: {source: "ibnetdiscover", format ("topology" | "ports"), generated_on (the "# Topology file:
generated on" date as printed), from_node_guid, from_port_guid ("# Initiated from node ... port
..."), nodes: [Node], ports: [PortRecord] (-p only), elided, notes: [str], errors: [{line_no,
text}]}. Node: kind ("Switch" | "Ca" | "Rt"), guid ("0x" + 16 hex), name ("S-005442ba00003080" as
printed), nports, description, lid / lmc / port0 ("base" | "enhanced"; switches: port 0), vendid /
devid (as printed, "0x2c9"), sysimgguid, port_guid (switches: from "switchguid=0x..(...)"),
line_no, connections [Connection]. Connection: port, ext_port, port_guid / lid / lmc (CA and
router ports: the local port's own), peer_kind ("Switch" | "Ca" | "Rt", from the S-/H-/R- prefix),
peer_guid (node GUID), peer_name ("H-0008f10403961354"), peer_port, peer_ext_port,
peer_port_guid (printed for CA/router peers), peer_description, peer_lid, width ("4x" as
printed), width_lanes (4), speed ("EDR"; SDR DDR QDR FDR10 FDR EDR HDR NDR XDR), rate_gbps
(100.0), line_no. PortRecord (-p): kind, lid, port, port_guid, width, width_lanes, speed,
rate_gbps, description, peer_kind, peer_lid, peer_port, peer_port_guid, peer_description,
line_no; the peer fields are None for an unconnected port, whose width/speed the tool prints
but which describe no link (rate_gbps None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from . import _tool_failures
from .base import is_digits, ParseError, ParserInfo, clean_lines, iter_clean_lines, note
from .ib_records import (IB_SPEEDS, MASKED_GUID, MASKED_LID, MAX_LINE, ErrorLine, FabricPass, is_redacted,
                         link_rate_gbps, norm_guid)
from .sniff.ibnetdiscover import _HEX, sniff

INFO = ParserInfo(
    source="ibnetdiscover",
    tool="ibnetdiscover",
    description="the fabric's topology file (nodes and their connected ports), or -p port reports",
)
SOURCE = INFO.source

_KIND_BY_PREFIX = {"S": "Switch", "H": "Ca", "R": "Rt"}
_KIND_BY_ABBREV = {"SW": "Switch", "CA": "Ca", "RT": "Rt"}


@dataclass(frozen=True)
class Connection:
    """One "[port] ... # ... 4xEDR" line: a cable from this node's port to a peer's port."""

    port: int
    ext_port: int | None  # -g: external (front panel) port number
    port_guid: str | None  # CA / router ports print their own GUID; switch ports do not
    lid: int | None  # CA / router ports: "# lid 16 lmc 1" (the switch LID is on its Node)
    lmc: int | None
    peer_kind: str | None  # "Switch" | "Ca" | "Rt"
    peer_guid: str | None  # node GUID of the peer
    peer_name: str  # "S-005442ba00003080" as printed
    peer_port: int
    peer_ext_port: int | None
    peer_port_guid: str | None  # printed for CA / router peers
    peer_description: str | None
    peer_lid: int | None
    width: str | None  # "4x" as printed; None for "??" or when cut off
    width_lanes: int | None
    speed: str | None  # "EDR"; None for "???"
    rate_gbps: float | None  # nominal link data rate: lanes x nominal lane rate (4x EDR = 100)
    line_no: int


@dataclass(frozen=True)
class Node:
    kind: str | None  # "Switch" | "Ca" | "Rt"; None (and no guid, name, nports) for connection lines
    guid: str | None  # that a fragment starts with, before any node line
    name: str | None
    nports: int | None
    description: str | None
    lid: int | None  # switches: the LID of port 0
    lmc: int | None
    port0: str | None  # switches: "base" | "enhanced" port 0
    vendid: str | None
    devid: str | None
    sysimgguid: str | None
    port_guid: str | None  # switches: "switchguid=0x...(<port guid>)"
    line_no: int
    connections: tuple[Connection, ...]


@dataclass(frozen=True)
class PortRecord:
    """One line of `ibnetdiscover -p`."""

    kind: str | None
    lid: int
    port: int
    port_guid: str | None
    width: str | None
    width_lanes: int | None
    speed: str | None
    rate_gbps: float | None  # None for an unconnected port
    description: str | None
    peer_kind: str | None
    peer_lid: int | None
    peer_port: int | None
    peer_port_guid: str | None
    peer_description: str | None
    line_no: int


@dataclass(frozen=True)
class IbnetdiscoverReport:
    source: str = SOURCE
    format: str = "topology"  # "topology" | "ports" (-p)
    generated_on: str | None = None
    from_node_guid: str | None = None
    from_port_guid: str | None = None
    nodes: tuple[Node, ...] = ()
    ports: tuple[PortRecord, ...] = ()
    elided: bool = False
    notes: tuple[str, ...] = ()
    errors: tuple[ErrorLine, ...] = ()
    unrecognised: tuple[ErrorLine, ...] = ()  # error lines no catalogue entry explains (SYS004)


# -- grammar --------------------------------------------------------------------------------------

# A node name: "S-<guid>" (S switch, H CA, R router), the GUID possibly masked ("S-xxxxxxxxxxxxxxxx",
# "S-0x...", "H-<redacted>", "S-*"), or a name masked whole ("<redacted>", "*": kind unknown).
def _name_re(guid_group: str) -> str:
    return rf"(?:(?P<prefix>[SHR?])-(?P<{guid_group}>[0-9a-fA-F]{{1,16}}|{MASKED_GUID})|(?P<bare>{MASKED_GUID}))"


_LID = rf"(?:[0-9]{{1,9}}|{MASKED_LID})"
NODE_RE = re.compile(
    r"^(?P<kind>Switch|Ca|Rt)\s+(?P<nports>[0-9]{1,5})\s+\"" + _name_re("guid") + r"\"\s*"
    r"(?:#\s*(?P<comment>.*))?$"
)
_NODE_COMMENT_RE = re.compile(
    rf"^\"(?P<desc>.*)\"(?:\s+(?P<port0>base|enhanced) port 0 lid (?P<lid>{_LID}) lmc (?P<lmc>[0-9]{{1,3}}))?"
)
CONN_RE = re.compile(
    rf"^\[(?P<port>[0-9]{{1,5}})\](?:\[ext (?P<ext>[0-9]{{1,5}})\])?(?:\((?P<pguid>{_HEX})\))?\s*"
    r"\"" + _name_re("peer") + r"\"\[(?P<pport>[0-9]{1,5})\](?:\[ext (?P<pext>[0-9]{1,5})\])?"
    rf"(?:\s*\((?P<ppguid>{_HEX})\))?\s*(?:#\s*(?P<comment>.*))?$"
)
_CONN_COMMENT_RE = re.compile(
    rf"^(?:lid (?P<lid>{_LID}) lmc (?P<lmc>[0-9]{{1,3}})\s+)?\"(?P<desc>.*)\"\s+lid (?P<plid>{_LID})"
    r"(?:\s+(?P<ws>\S+))?"
)
_CONN_LOCAL_RE = re.compile(rf"^lid (?P<lid>{_LID}) lmc (?P<lmc>[0-9]{{1,3}})\s")
_WS_RE = re.compile(r"^(?P<w>[0-9]{1,2}x|\?\?)(?P<s>FDR10|[SDQFEHNX]DR|\?\?\?)$")
KV_RE = re.compile(
    rf"^(?P<key>vendid|devid|sysimgguid|switchguid|caguid|rtguid)=(?P<value>0x[0-9a-fA-F]{{1,16}}|{MASKED_GUID})"
    rf"(?:\((?P<paren>[0-9a-fA-F]{{1,16}}|{MASKED_GUID})\))?\s*(?:#.*)?$"
)
_GENERATED_RE = re.compile(r"^#\s*Topology file: generated on (?P<date>.+)$")
_INITIATED_RE = re.compile(r"^#\s*Initiated from node (?P<node>[0-9a-fA-F]{1,16}) port (?P<port>[0-9a-fA-F]{1,16})")
PORTS_RE = re.compile(
    r"^(?P<kind>SW|CA|RT|\?\?)\s+(?P<lid>[0-9]{1,9})\s+(?P<port>[0-9]{1,5})\s+0x(?P<guid>[0-9a-fA-F]{16})\s+"
    r"(?P<w>[0-9]{1,2}x|\?\?)\s+(?P<s>FDR10|[SDQFEHNX]DR|\?\?\?)(?P<rest>.*)$"
)
_PORTS_PEER_RE = re.compile(
    r"^\s+-\s+(?P<kind>SW|CA|RT|\?\?)\s+(?P<lid>[0-9]{1,9})\s+(?P<port>[0-9]{1,5})\s+0x(?P<guid>[0-9a-fA-F]{16})\s+"
    r"\(\s*'(?P<desc>.*)'\s+-\s+'(?P<pdesc>.*)'\s*\)$"
)
_PORTS_ALONE_RE = re.compile(r"^\s+(?:'(?P<quoted>.*)'|(?P<bare>[^\s'-].*))$")
LIST_RE = re.compile(r"^(?:Switch|Ca|Router|Rt|\?\?\?)\s*:\s*0x[0-9a-fA-F]{16}\s+ports\s+[0-9]{1,5}\b")
OWN_ERROR_RE = re.compile(r"^ibnetdiscover: ")


SHAPE = "'Switch|Ca <ports> \"S-<guid>\" # ...' node lines over '[port] \"S-<guid>\"[port] # ... lid N 4xEDR' lines"


_PLAIN_GUID = re.compile(r"(?:0x)?([0-9a-fA-F]{1,16})")  # the common case: never a masked form


def _guid(text: str | None) -> str | None:
    """A GUID as '0x' + 16 hex digits; None when absent or redacted ('0xXXXXXXXXXXXXXXXX', '...')."""
    if not text:
        return None
    m = _PLAIN_GUID.fullmatch(text)
    if m:  # what norm_guid gives, without the masked-form tests (a fabric has tens of thousands)
        return "0x" + m.group(1).lower().zfill(16)
    return norm_guid(text) if not is_redacted(text) else None


def _lid(text: str | None, masked: dict[str, dict[str, list[int]]], line_no: int) -> int | None:
    """A LID as int; None when absent or masked ("xxx", "<redacted>"; recorded for the note)."""
    if text and not is_digits(text):
        masked["LID"].setdefault(text, []).append(line_no)
    return int(text) if text and is_digits(text) else None


def _name_parts(m: re.Match[str], guid_group: str, masked: dict[str, dict[str, list[int]]], line_no: int
                ) -> tuple[str | None, str | None, str]:
    """(kind, node GUID, name as printed) of a node name; a masked GUID (or whole name) is recorded in
    `masked` for the note and reads as None."""
    if m.group("bare") is not None:
        masked["node GUID"].setdefault(m.group("bare"), []).append(line_no)
        return None, None, m.group("bare")
    prefix, guid = m.group("prefix"), m.group(guid_group)
    if not _PLAIN_GUID.fullmatch(guid) and is_redacted(guid):
        masked["node GUID"].setdefault(f"{prefix}-{guid}", []).append(line_no)
    return _KIND_BY_PREFIX.get(prefix), _guid(guid), f"{prefix}-{guid}"


def _width_speed(ws: str | None) -> tuple[str | None, int | None, str | None]:
    """"4xEDR" -> ("4x", 4, "EDR"); "??" / "???" parts -> None."""
    m = _WS_RE.match(ws or "")
    if not m:
        return None, None, None
    width = m.group("w") if m.group("w") != "??" else None
    speed = m.group("s") if m.group("s") in IB_SPEEDS else None
    return width, int(width[:-1]) if width else None, speed


# -- lines ----------------------------------------------------------------------------------------


def _connection(m: re.Match[str], line_no: int, notes: list[str], masked: dict[str, dict[str, list[int]]]) -> Connection:
    c = _CONN_COMMENT_RE.match(m.group("comment") or "")
    if not c:
        notes.append(note("ibnetdiscover", "connection-end-unreadable", line=line_no, port=m.group("port")))
    width, lanes, speed = _width_speed(c.group("ws") if c else None)
    local = c or _CONN_LOCAL_RE.match(m.group("comment") or "")  # a cut-off line may still hold the local lid
    peer_kind, peer_guid, peer_name = _name_parts(m, "peer", masked, line_no)
    return Connection(
        port=int(m.group("port")),
        ext_port=int(m.group("ext")) if m.group("ext") else None,
        port_guid=_guid(m.group("pguid")),
        lid=_lid(local.group("lid"), masked, line_no) if local else None,
        lmc=int(local.group("lmc")) if local and local.group("lmc") else None,
        peer_kind=peer_kind,
        peer_guid=peer_guid,
        peer_name=peer_name,
        peer_port=int(m.group("pport")),
        peer_ext_port=int(m.group("pext")) if m.group("pext") else None,
        peer_port_guid=_guid(m.group("ppguid")),
        peer_description=c.group("desc") if c else None,
        peer_lid=_lid(c.group("plid"), masked, line_no) if c else None,
        width=width,
        width_lanes=lanes,
        speed=speed,
        rate_gbps=link_rate_gbps(lanes, speed),
        line_no=line_no,
    )


def _port_record(m: re.Match[str], line_no: int, notes: list[str]) -> PortRecord:
    width = m.group("w") if m.group("w") != "??" else None
    lanes = int(width[:-1]) if width else None
    speed = m.group("s") if m.group("s") in IB_SPEEDS else None
    rest = m.group("rest")
    peer = _PORTS_PEER_RE.match(rest)
    alone = None if peer else _PORTS_ALONE_RE.match(rest)
    if peer:
        desc: str | None = peer.group("desc").strip()
    elif alone:
        desc = (alone.group("quoted") if alone.group("quoted") is not None else alone.group("bare")).strip()
    else:
        desc = None
        notes.append(note("ibnetdiscover", "ports-line-end-unreadable", line=line_no))
    return PortRecord(
        kind=_KIND_BY_ABBREV.get(m.group("kind")),
        lid=int(m.group("lid")),
        port=int(m.group("port")),
        port_guid=_guid(m.group("guid")),
        width=width,
        width_lanes=lanes,
        speed=speed,
        rate_gbps=link_rate_gbps(lanes, speed) if peer else None,
        description=desc,
        peer_kind=_KIND_BY_ABBREV.get(peer.group("kind")) if peer else None,
        peer_lid=int(peer.group("lid")) if peer else None,
        peer_port=int(peer.group("port")) if peer else None,
        peer_port_guid=_guid(peer.group("guid")) if peer else None,
        peer_description=peer.group("pdesc").strip() if peer else None,
        line_no=line_no,
    )


def _new_node(m: re.Match[str], pending: dict[str, Any], line_no: int, masked: dict[str, dict[str, list[int]]]) -> dict[str, Any]:
    c = _NODE_COMMENT_RE.match(m.group("comment") or "")
    _kind, guid, name = _name_parts(m, "guid", masked, line_no)
    return {
        "kind": m.group("kind"),
        "guid": guid,
        "name": name,
        "nports": int(m.group("nports")),
        "description": c.group("desc") if c else None,
        "lid": _lid(c.group("lid"), masked, line_no) if c else None,
        "lmc": int(c.group("lmc")) if c and c.group("lmc") else None,
        "port0": c.group("port0") if c else None,
        "vendid": pending.get("vendid"),
        "devid": pending.get("devid"),
        "sysimgguid": _guid(pending.get("sysimgguid")),
        "port_guid": _guid(pending.get("switchguid_port")),
        "line_no": line_no,
        "connections": [],
    }


# -- the whole text -----------------------------------------------------------------------------


def _freeze(n: dict[str, Any]) -> Node:
    return Node(**{k: v for k, v in n.items() if k != "connections"}, connections=tuple(n["connections"]))


_NODE_FIELDS = ("kind", "guid", "name", "nports", "description", "lid", "lmc", "port0", "vendid", "devid",
                "sysimgguid", "port_guid")


class _Reader(FabricPass):
    """One pass over the lines (read); a node is frozen when the next begins, so what is held beyond
    the result is one node's draft and bounded lists, whatever the size of the fabric."""

    def __init__(self) -> None:
        super().__init__(SOURCE, _tool_failures.classify, OWN_ERROR_RE, ("node GUID", "LID"))
        self.nodes: list[Node] = []
        self.ports: list[PortRecord] = []
        self.pending: dict[str, Any] = {}  # vendid=... lines waiting for their node line
        self.node: dict[str, Any] | None = None
        self.meta: dict[str, str | None] = {"generated_on": None, "from_node_guid": None, "from_port_guid": None}
        self.first_list: tuple[int, str] | None = None

    def feed(self, line_no: int, raw: str) -> None:
        line = self.see(line_no, raw)
        if not line:
            return
        if len(line) > MAX_LINE:
            self.notes.append(note("ibnetdiscover", "line-too-long", line=line_no, length=len(line)))
            return
        if line.startswith("["):
            self._connection(line_no, line)
            return
        m = KV_RE.match(line)
        if m:
            self._key_value(m)
            return
        m = NODE_RE.match(line)
        if m:
            self._close()
            self.node = _new_node(m, self.pending, line_no, self.masked)
            self.pending = {}
            return
        m = PORTS_RE.match(line)
        if m:
            self.ports.append(_port_record(m, line_no, self.notes))
        elif line.startswith("#"):
            self._comment(line)
        elif not self.aside(line_no, line) and self.first_list is None and LIST_RE.match(line):
            self.first_list = (line_no, line)
        # anything else (prompts, "Non-Chassis Nodes", chassis lines, prose) is skipped

    def _close(self) -> None:
        if self.node is not None:
            self.nodes.append(_freeze(self.node))
        self.node = None

    def _connection(self, line_no: int, line: str) -> None:
        m = CONN_RE.match(line)
        if not m:
            self.notes.append(note("ibnetdiscover", "connection-garbled", line=line_no))
            return
        if self.node is None:
            self.notes.append(note("ibnetdiscover", "connections-before-node", line=line_no))
            self.node = dict.fromkeys(_NODE_FIELDS)
            self.node.update(line_no=line_no, connections=[])
        self.node["connections"].append(_connection(m, line_no, self.notes, self.masked))

    def _key_value(self, m: re.Match[str]) -> None:
        key = m.group("key")
        if key == "vendid":
            self.pending = {}
        self.pending[key] = None if is_redacted(m.group("value")) else m.group("value").lower()
        if key == "switchguid" and m.group("paren"):
            self.pending["switchguid_port"] = m.group("paren")
        self._close()

    def _comment(self, line: str) -> None:
        g = _GENERATED_RE.match(line)
        if g and self.meta["generated_on"] is None:
            self.meta["generated_on"] = g.group("date").strip()
        i = _INITIATED_RE.match(line)
        if i and self.meta["from_node_guid"] is None:
            self.meta["from_node_guid"] = _guid(i.group("node"))
            self.meta["from_port_guid"] = _guid(i.group("port"))

    def finish(self) -> IbnetdiscoverReport:
        """Validate what was read (ParseError for text without a fabric) and assemble the report."""
        self._close()
        nodes, ports = self.nodes, self.ports
        if not nodes and not ports and not self.own_error:
            if self.first_list is not None:
                raise ParseError(
                    "this is a node list (ibnetdiscover -l/-S/-H, or ibhosts/ibswitches/ibnodes): it names nodes but "
                    f"no links; run ibnetdiscover without -l/-S/-H for the topology ('{self.first_list[1][:60]}')",
                    self.first_list[0],
                )
            raise self.refuse(SHAPE)
        self.note_masked()
        if nodes and ports:
            self.notes.append(note("ibnetdiscover", "topology-and-ports"))
        return IbnetdiscoverReport(
            format="topology" if nodes or not ports else "ports",
            **self.meta,
            nodes=tuple(nodes),
            ports=tuple(ports),
            elided=self.elided,
            notes=tuple(self.notes),
            errors=tuple(self.errors), unrecognised=_tool_failures.unrecognised(self.errors),
        )


def _parse(lines: Iterable[str]) -> IbnetdiscoverReport:
    reader = _Reader()
    for line_no, raw in enumerate(lines, 1):
        reader.feed(line_no, raw)
    return reader.finish()


def parse(text: str) -> IbnetdiscoverReport:
    """ibnetdiscover output -> IbnetdiscoverReport; ParseError when the text holds no node,
    connection or ports-report line (or is only a node list)."""
    return _parse(clean_lines(text))


def parse_lines(lines: Iterable[str]) -> IbnetdiscoverReport:
    """Streaming form of parse for an iterable of raw lines."""
    return _parse(iter_clean_lines(lines))
