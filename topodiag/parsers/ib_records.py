"""Records shared by the InfiniBand parsers (ibstat, ibv_devinfo, ibstatus) and their vocabulary.

The three tools print the same facts in three dialects ("Active" / "PORT_ACTIVE (4)" / "4: ACTIVE",
"0x7425540300353ded" / "7425:5403:0035:3ded"). Every parser builds the same frozen records from
them, normalised so rules compare like with like, with the printed form kept where it differs.
This module defines no SOURCE: it is not a parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional

from .base import ParseError, note
from .sniff._masks import MASKED_GUID, MASKED_LID

# -- records ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gid:
    """One entry of a port's GID table (ibv_devinfo -v): `GID[  3]: ::ffff:200.0.209.6, RoCE v2`."""

    index: int
    gid: str | None  # as printed (full or inet_ntop-compressed form); None when redacted
    type: str | None  # "IB", "RoCE v1", "RoCE v2" as printed; None when the tool prints no type


@dataclass(frozen=True)
class Port:
    """One HCA port. Fields a tool does not print are None (or () for gids)."""

    port: int | None  # None only in a fragment that lacks the port header
    state: str | None  # Down | Initializing | Armed | Active | ActiveDefer
    state_raw: str | None
    physical_state: str | None  # Sleep | Polling | Disabled | PortConfigurationTraining | LinkUp | ...
    physical_state_raw: str | None
    rate_gbps: float | None
    rate_raw: str | None  # ibstat "40 (FDR10)", ibstatus "100 Gb/sec (4X EDR)"; None for ibv_devinfo
    link_layer: str | None  # InfiniBand | Ethernet
    base_lid: int | None
    sm_lid: int | None
    lmc: int | None
    port_guid: str | None  # 0x + 16 lowercase hex digits
    capability_mask: str | None  # 0x + 8 lowercase hex digits (ibstat / ibv_devinfo -v port_cap_flags)
    default_gid: str | None  # ibstatus
    active_mtu: int | None  # ibv_devinfo, bytes
    max_mtu: int | None
    active_width: str | None  # ibv_devinfo -v: "4X"
    active_speed_gbps: float | None  # ibv_devinfo -v: per-lane speed
    gids: tuple[Gid, ...]
    line_no: int  # line of the port header (or of its first fact in a fragment)


@dataclass(frozen=True)
class CA:
    """One channel adapter (HCA, or a switch / router where ibstat says so)."""

    name: str | None  # None only in a fragment that lacks the device header
    node_type: str | None  # ibstat: "CA", "Switch", "Router", "iWARP RNIC"
    type: str | None  # "MT4129"; ibv_devinfo: "MT<vendor_part_id>" for Mellanox/NVIDIA vendor ids
    num_ports: int | None  # ibstat "Number of ports", ibv_devinfo "phys_port_cnt"
    firmware: str | None
    hardware_version: str | None  # as printed ("0", "0x0")
    node_guid: str | None  # 0x + 16 lowercase hex digits
    system_guid: str | None
    transport: str | None  # ibv_devinfo: "InfiniBand", "iWARP", ...
    vendor_id: str | None  # ibv_devinfo: "0x02c9"
    vendor_part_id: int | None
    board_id: str | None
    printed_by: str  # the tool whose block format this record came from
    line_no: int
    ports: tuple[Port, ...]


@dataclass(frozen=True)
class ErrorLine:
    """A line where the tool reported a failure (ibpanic, Fatal error, Failed to ...)."""

    line_no: int
    text: str


@dataclass(frozen=True)
class ToolError(ErrorLine):
    """An error line read through the producers' catalogues (topodiag/catalogues): its class (JSON
    "class"), entry id and severity; class None when no entry explains it."""

    class_: Optional[str] = None
    entry: Optional[str] = None
    severity: Optional[str] = None


# -- vocabulary ------------------------------------------------------------------------------

_STATE_BY_WORD = {
    "DOWN": "Down",
    "INIT": "Initializing",
    "INITIALIZING": "Initializing",
    "INITIALIZE": "Initializing",
    "ARMED": "Armed",
    "ACTIVE": "Active",
    "ACTIVEDEFER": "ActiveDefer",
}
_STATE_BY_NUMBER = {1: "Down", 2: "Initializing", 3: "Armed", 4: "Active", 5: "ActiveDefer"}

_PHYS_BY_WORD = {
    "SLEEP": "Sleep",
    "POLLING": "Polling",
    "DISABLED": "Disabled",
    "PORTCONFIGURATIONTRAINING": "PortConfigurationTraining",
    "PORTCONFIGURATIONTRAINNING": "PortConfigurationTraining",  # rdma-core's spelling
    "LINKUP": "LinkUp",
    "LINKERRORRECOVERY": "LinkErrorRecovery",
    "PHYTEST": "PhyTest",
}
_PHYS_BY_NUMBER = {
    1: "Sleep",
    2: "Polling",
    3: "Disabled",
    4: "PortConfigurationTraining",
    5: "LinkUp",
    6: "LinkErrorRecovery",
    7: "PhyTest",
}

_NUM_PREFIX = re.compile(r"^([0-9]{1,18})\s*:\s*(.*)$")  # sysfs "4: ACTIVE"
# verbs "PORT_ACTIVE (4)"; greedy and stripped in code (`(.*?)\s*\(` let two runs share the blanks)
_NUM_SUFFIX = re.compile(r"^(.*)\(([0-9]{1,18})\)$")


def _split_code(raw: str) -> tuple[str, int | None]:
    text = raw.strip()
    m = _NUM_PREFIX.match(text)
    if m:
        return m.group(2), int(m.group(1))
    m = _NUM_SUFFIX.match(text)
    if m:
        return m.group(1).rstrip(), int(m.group(2))
    return text, None


def _word_key(text: str) -> str:
    return re.sub(r"[^A-Z]", "", text.upper())


def norm_state(raw: str | None) -> str | None:
    """'Active', 'PORT_ACTIVE (4)', '4: ACTIVE' -> 'Active'; None when unrecognised."""
    if raw is None:
        return None
    word, num = _split_code(raw)
    key = _word_key(word)
    if key.startswith("PORT"):
        key = key[4:]
    if key in _STATE_BY_WORD:
        return _STATE_BY_WORD[key]
    return _STATE_BY_NUMBER.get(num) if num is not None and not key else None


def norm_physical_state(raw: str | None) -> str | None:
    """'LinkUp', 'LINK_UP (5)', '5: LinkUp' -> 'LinkUp'; None when unrecognised."""
    if raw is None:
        return None
    word, num = _split_code(raw)
    key = _word_key(word)
    if key in _PHYS_BY_WORD:
        return _PHYS_BY_WORD[key]
    return _PHYS_BY_NUMBER.get(num) if num is not None and not key else None


def norm_link_layer(raw: str | None) -> str | None:
    """'InfiniBand' / 'IB' -> 'InfiniBand', 'Ethernet' / 'ETH' -> 'Ethernet', else None."""
    if raw is None:
        return None
    key = _word_key(raw)
    if key in ("INFINIBAND", "IB"):
        return "InfiniBand"
    if key in ("ETHERNET", "ETH"):
        return "Ethernet"
    return None


_HEX = re.compile(r"^(?:0x)?([0-9a-fA-F]+)$")


def norm_guid(raw: str) -> str | None:
    """'0x7425540300353ded' or 'a088:c203:0030:9a0d' -> '0x...' (16 lowercase hex digits)."""
    text = raw.strip()
    if re.fullmatch(r"[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4}){3}", text):
        return "0x" + "".join(part.zfill(4) for part in text.split(":")).lower()
    m = _HEX.match(text)
    if m and len(m.group(1)) <= 16:
        return "0x" + m.group(1).lower().zfill(16)
    return None


def norm_mask(raw: str) -> str | None:
    """'0xa750e848' -> '0xa750e848' (8 lowercase hex digits), None when not hex."""
    m = re.fullmatch(r"0x([0-9a-fA-F]{1,8})", raw.strip())
    return "0x" + m.group(1).lower().zfill(8) if m else None


def parse_int(raw: str) -> int | None:
    """Decimal ('65535') or hex ('0x0', '0x00'); None when neither."""
    text = raw.strip()
    if re.fullmatch(r"[0-9]{1,18}", text):
        return int(text)
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", text):
        return int(text, 16)
    return None


def leading_number(raw: str) -> float | None:
    """The number a value starts with: '40 (FDR10)' -> 40.0, '100 Gb/sec (4X EDR)' -> 100.0."""
    m = re.match(r"\s*([0-9]{1,18}(?:\.[0-9]{1,18})?)", raw)
    return float(m.group(1)) if m else None


# -- redaction ------------------------------------------------------------------------------
# What people put in place of an identifier before pasting: "...", "xxxx", "XXXX", "<redacted>",
# "REDACTED", "*", "****", "[hidden]", or a value only partly masked ("0x7cfe900300xxxxxx",
# "fe80::xxxx:xxxx", "b8:ce:f6:**:**:**"). Such a field is read as None (not known), never as an error.

_MASK_TOKEN = re.compile(
    r"^(?:\.{2,}|\u2026|[xX]{2,}|\*+|#+|<[^<>]{0,40}>|\[[^\[\]]{0,40}\]|\([^()]{0,40}\)"
    r"|redacted|hidden|removed|masked|omitted|n/?a)$", re.I)
_PARTLY_MASKED = re.compile(r"^(?:0x)?[0-9a-fA-F:.]*(?:[xX]{2,}|\*{2,}|\.{3}|\u2026)[0-9a-fA-FxX*:.\u2026]*$")
MAX_MASKED = 64  # a partly masked identifier (GID, GUID, MAC, address) is shorter
_MASKED_IPV4 = re.compile(r"^(?=[^xX*]*[xX*])(?:[0-9]{1,3}|[xX]{1,3}|\*{1,3})(?:\.(?:[0-9]{1,3}|[xX]{1,3}|\*{1,3})){3}$")


def masked_note(field: str, seen: dict[str, list[int]]) -> list[str]:
    """One note per masked form of a field, naming it and the lines it stands on:
    "lines 4, 9: LID redacted ('xxx'): read as null"."""
    return [note("ib_records", "masked-lines", lines=_shown(lines), field=field, raw=raw[:40]) if len(lines) > 1
            else note("ib_records", "masked-line", lines=_shown(lines), field=field, raw=raw[:40])
            for raw, lines in seen.items()]


def _shown(lines: list[int]) -> str:
    """'4, 9, 12' (the first 8 line numbers, then 'and N more')."""
    return ", ".join(map(str, lines[:8])) + (f" and {len(lines) - 8} more" if len(lines) > 8 else "")


def is_redacted(raw: str | None) -> bool:
    """True for a value masked before pasting: '...', 'xxxx', '<redacted>', '****', '0x7cfe9003xxxxxxxx'."""
    if raw is None:
        return False
    text = raw.strip().strip("`'\"").strip()
    if not text:
        return False
    if _MASK_TOKEN.match(text) or _MASKED_IPV4.match(text) or _MASK_TOKEN.match(text[2:] if text[:2] in ("0x", "0X") else ""):
        return True
    if len(text) > MAX_MASKED:  # no identifier is that long; its classes overlap (quadratic on a run of dots)
        return False
    return bool(_PARTLY_MASKED.match(text)) and not re.fullmatch(r"(?:0x)?[0-9a-fA-F:.]+", text)


def redaction_note(line_no: int, key: str, raw: str, field: str) -> str:
    """The note a parser keeps for a redacted field: 'line 9: Node GUID redacted ('...'): node_guid is null'."""
    return note("ib_records", "redacted", line=line_no, key=key, raw=raw.strip()[:40], field=field)


# -- debug traces ------------------------------------------------------------------------------
_FAILURE_WORDS = re.compile(r"fail|error|can'?t|cannot|unable|not found|no such|invalid|timed? ?out|denied|refused", re.I)


def is_trace(line: str) -> bool:
    """An `ibwarn:` line that traces what the tool did (`ibstat -d`, umad debug: 'ibwarn: [168988]
    umad_get_ca: opened mlx4_0') rather than reporting a failure: not a tool error."""
    return line.startswith("ibwarn:") and not _FAILURE_WORDS.search(line)


def trace_note(lines: list[int]) -> str:
    """One note for the trace lines a parser skipped."""
    if len(lines) > 1:
        return note("ib_records", "trace-lines", lines=_shown(lines))
    return note("ib_records", "trace-line", lines=_shown(lines))


# -- link layer not printed -------------------------------------------------------------------

def interface_id(text: str | None) -> str | None:
    """The 16 hex digits of an EUI-64 interface id: a port GUID ('0x5aa2e1fffedae626') or the low
    half of a GID ('fe80:0000:0000:0000:5aa2:e1ff:feda:e626', 'fe80::5aa2:e1ff:feda:e626')."""
    if not text:
        return None
    t = text.strip().lower()
    if t.startswith("0x"):
        digits = t[2:]
        return digits.zfill(16) if re.fullmatch(r"[0-9a-f]{1,16}", digits) else None
    if ":" not in t:
        return None
    try:
        import ipaddress

        return f"{int(ipaddress.IPv6Address(t)) & 0xFFFFFFFFFFFFFFFF:016x}"
    except ValueError:
        return None


def is_mac_derived(text: str | None) -> bool:
    """A port GUID / GID whose interface id is built from a MAC (EUI-64: ff:fe in its middle), as
    RoCE ports' are; InfiniBand port GUIDs are burnt in by the vendor (…0300… for NVIDIA/Mellanox)."""
    iid = interface_id(text)
    return iid is not None and iid[6:10] == "fffe" and iid != "0" * 16


@dataclass(frozen=True)
class InferredLinkLayer:
    """A port whose link layer the tool did not print and the parser inferred (see infer_link_layers)."""

    ca: str | None
    port: int | None
    link_layer: str
    because: str
    line_no: int


def infer_link_layers(cas: list[dict[str, Any]], notes: list[str]) -> tuple[InferredLinkLayer, ...]:
    """Fill `link_layer` = "Ethernet" for a port that printed no link layer line (a cut paste, an old
    ibstatus or ibstat, an old ibv_devinfo) when the facts say RoCE: base LID 0, SM LID 0 and a
    MAC-derived (EUI-64) GID or port GUID (or, for an Active port that prints no port GUID, node GUID). Returns what was inferred and from what; a note says so too."""
    out = []
    for ca in cas:
        for port in ca["ports"]:
            if port.get("link_layer") is not None or port.get("base_lid") != 0 or port.get("sm_lid") != 0:
                continue
            gid0 = next((g.gid for g in port.get("gids") or () if g.index == 0), None)
            # ibv_devinfo without -v prints no port GUID: an Active port (an InfiniBand one always has
            # a LID once Active) may stand on its CA's node GUID (a RoCE CA's is MAC-derived too)
            node = ca.get("node_guid") if port.get("port_guid") is None and port.get("state") == "Active" else None
            ident = next((v for v in (port.get("default_gid"), gid0, port.get("port_guid"), node)
                          if is_mac_derived(v)), None)
            if ident is None:
                continue
            port["link_layer"] = "Ethernet"
            out.append(InferredLinkLayer(ca.get("name"), port.get("port"), "Ethernet",
                                         f"base lid 0, SM lid 0, MAC-derived GID/GUID {ident}", port["line_no"]))
            notes.append(note("ib_records", "link-layer-inferred", line=port["line_no"], ca=ca.get("name") or "a CA",
                              port=port.get("port"), ident=ident))
    return tuple(out)


# -- drafts: mutable while a parser reads, frozen at the end -----------------------------------

PORT_FIELDS = (
    "state", "state_raw", "physical_state", "physical_state_raw", "rate_gbps", "rate_raw",
    "link_layer", "base_lid", "sm_lid", "lmc", "port_guid", "capability_mask", "default_gid",
    "active_mtu", "max_mtu", "active_width", "active_speed_gbps",
)
CA_FIELDS = (
    "node_type", "type", "num_ports", "firmware", "hardware_version", "node_guid", "system_guid",
    "transport", "vendor_id", "vendor_part_id", "board_id",
)


def new_port(port: int | None, line_no: int) -> dict[str, Any]:
    draft: dict[str, Any] = dict.fromkeys(PORT_FIELDS)
    draft.update(port=port, line_no=line_no, gids=[])
    return draft


def new_ca(name: str | None, printed_by: str, line_no: int) -> dict[str, Any]:
    draft: dict[str, Any] = dict.fromkeys(CA_FIELDS)
    draft.update(name=name, printed_by=printed_by, line_no=line_no, ports=[])
    return draft


def set_once(draft: dict[str, Any], key: str, value: Any) -> None:
    """Keep the first value printed for a field (a repeated key is a paste artefact)."""
    if draft.get(key) is None and value is not None:
        draft[key] = value


def freeze_port(draft: dict[str, Any]) -> Port:
    return Port(
        port=draft["port"],
        **{k: draft[k] for k in PORT_FIELDS},
        gids=tuple(draft["gids"]),
        line_no=draft["line_no"],
    )


def freeze_ca(draft: dict[str, Any]) -> CA:
    return CA(
        name=draft["name"],
        **{k: draft[k] for k in CA_FIELDS},
        printed_by=draft["printed_by"],
        line_no=draft["line_no"],
        ports=tuple(freeze_port(p) for p in draft["ports"]),
    )


def strip_paste(line: str) -> str:
    """A cleaned line without indentation and the Markdown backticks a paste may wrap it in."""
    return line.strip().strip("`").strip()


def not_this_tool(first_text: tuple[int, str] | None, tool: str, blocks: str, line: str) -> ParseError:
    """The ParseError for text in which none of `tool`'s structure was found: it names the first
    non-blank line (or says there was no text), e.g. 'expected a "CA '<name>'" line (ibstat output)'."""
    if first_text is None:
        return ParseError(f"expected {tool} output ({blocks}), found no text", 0)
    line_no, text = first_text
    return ParseError(f"expected {line} ({tool} output), found '{text[:60]}'", line_no)


# -- fabric tools (iblinkinfo, ibnetdiscover) ---------------------------------------------------

ELISION_RE = re.compile(r"^(?:\.{3,}|\u2026|\[\s*\.{3,}\s*\]|\(\s*\.{3,}\s*\)|<\s*snip\s*>|\[\s*snip\s*\])$", re.I)
ERROR_RE = re.compile(r"^(?:ibwarn:|ibpanic:|iberror:|ibdebug:|WARN: |\S{1,40}: iberror:|\S{1,200}\.c:[0-9]{1,6}; )")  # the last: libibnetdisc IBND_ERROR
MAX_LINE = 2048

# name -> (per-lane signalling rate in Gb/s as iblinkinfo prints it, nominal per-lane data rate in
# Gb/s as the 4x link rates count it: 4x EDR = 100, 4x FDR = 56, 4x FDR10 = 40).
IB_SPEEDS: Mapping[str, tuple[float, float]] = MappingProxyType({
    "SDR": (2.5, 2.5),
    "DDR": (5.0, 5.0),
    "QDR": (10.0, 10.0),
    "FDR10": (10.3125, 10.0),
    "FDR": (14.0625, 14.0),
    "EDR": (25.78125, 25.0),
    "HDR": (53.125, 50.0),
    "NDR": (106.25, 100.0),
    "XDR": (212.5, 200.0),
})
_NAME_BY_SIGNALLING = {signalling: name for name, (signalling, _) in IB_SPEEDS.items()}


def speed_name_of(lane_gbps: float | None) -> str | None:
    """25.78125 -> "EDR"; "10.0" is QDR (iblinkinfo marks FDR10 separately); None if unknown."""
    if lane_gbps is None:
        return None
    for signalling, name in _NAME_BY_SIGNALLING.items():
        if abs(lane_gbps - signalling) < 1e-6:
            return name
    return None


def link_rate_gbps(lanes: int | None, speed_name: str | None) -> float | None:
    """Nominal data rate of a link: 4 lanes x EDR -> 100.0; None when either is unknown."""
    if lanes is None or speed_name not in IB_SPEEDS:
        return None
    return lanes * IB_SPEEDS[speed_name][1]


def refusal(tool: str, shape: str, first_text: tuple[int, str] | None, head: list[str]) -> ParseError:
    """The ParseError for text without `tool`'s structure. It names what the text looks like when
    another parser recognises it ("ibstat output"), else quotes its first line."""
    if first_text is None:
        return ParseError(f"expected {tool} output ({shape}), found no text", 0)
    line_no, text = first_text
    looks = None
    try:
        from . import detect_all  # late: the package imports this module

        looks = next((name for name, _ in detect_all("\n".join(head)) if name != tool), None)
    except Exception:  # pragma: no cover - detection must not hide the refusal
        looks = None
    found = f"what looks like {looks} output ('{text[:60]}')" if looks else f"'{text[:60]}'"
    return ParseError(f"expected {tool} output ({shape}), found {found}", line_no)


class FabricPass:
    """What iblinkinfo and ibnetdiscover keep while they read, beside the node they are drafting:
    the first text and the head (for the refusal), notes, tool errors, elision marks and the lines
    of redacted identifiers (field -> masked form -> lines). All of it is bounded or part of the result."""

    def __init__(self, source: str, classify: Callable[[str, int, str], ErrorLine], own_error_re: re.Pattern[str],
                 masked_fields: tuple[str, ...]) -> None:
        self.source = source
        self._classify = classify
        self._own_error_re = own_error_re
        self.notes: list[str] = []
        self.errors: list[ErrorLine] = []
        self.masked: dict[str, dict[str, list[int]]] = {field: {} for field in masked_fields}
        self.elided = self.own_error = False
        self.first_text: tuple[int, str] | None = None
        self.head: list[str] = []

    def see(self, line_no: int, raw: str) -> str:
        """The cleaned line ('' for a blank one); the first text and the head are kept."""
        line = strip_paste(raw)
        if line:
            if self.first_text is None:
                self.first_text = (line_no, line)
            if len(self.head) < 200:
                self.head.append(line[:MAX_LINE])
        return line

    def aside(self, line_no: int, line: str) -> bool:
        """True for an elision mark ('...', '<snip>') or a tool's error line, noted or kept as an error."""
        if ELISION_RE.match(line):
            self.elided = True
            self.notes.append(note("ib_records", "elided", line=line_no, text=line))
            return True
        own = bool(self._own_error_re.match(line))
        if own or ERROR_RE.match(line):
            self.errors.append(self._classify(self.source, line_no, line))
            self.own_error = self.own_error or own
            return True
        return False

    def refuse(self, shape: str) -> ParseError:
        return refusal(self.source, shape, self.first_text, self.head)

    def note_masked(self) -> None:
        """One note per masked form of each field (masked_note), after the pass."""
        for field, seen in self.masked.items():
            self.notes.extend(masked_note(field, seen))


class CaPass:
    """What ibstat and ibv_devinfo keep while they read: the CA drafts (a host has a few), the CA and
    port being read, tool errors, notes and the first text (for the refusal)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.cas: list[dict[str, Any]] = []
        self.errors: list[ErrorLine] = []
        self.notes: list[str] = []
        self.first_text: tuple[int, str] | None = None
        self.ca: dict[str, Any] | None = None
        self.port: dict[str, Any] | None = None

    def see(self, line_no: int, raw: str) -> str:
        """The cleaned line ('' for a blank one); the first text is kept."""
        line = strip_paste(raw)
        if line and self.first_text is None:
            self.first_text = (line_no, line)
        return line

    def open_ca(self, name: str | None, line_no: int) -> dict[str, Any]:
        """A new CA draft, now the current one (no current port)."""
        self.ca = new_ca(name, self.source, line_no)
        self.cas.append(self.ca)
        self.port = None
        return self.ca

    def open_port(self, number: int | None, line_no: int) -> dict[str, Any]:
        """A new port draft of the current CA (a nameless CA for a fragment that starts inside one)."""
        ca = self.ca if self.ca is not None else self.open_ca(None, line_no)
        self.port = new_port(number, line_no)
        ca["ports"].append(self.port)
        return self.port

    def frozen_cas(self) -> tuple[CA, ...]:
        return tuple(freeze_ca(c) for c in self.cas)
