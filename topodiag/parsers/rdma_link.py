"""Parser for `rdma link show` (iproute2's RDMA tool): one line per RDMA port.

Reads the lines iproute2 prints since 5.5 (fields are printed only when the kernel reports them;
note the trailing blank some versions leave on each line):

    link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev p1p1
    link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 3 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP
    link mlx5_1/1 subnet_prefix fe80:0000:0000:0000 lid 65535 sm_lid 0 lmc 0 state DOWN physical_state DISABLED
    link rxe_0/1 state ACTIVE physical_state LINK_UP netdev p1p1

the older form (iproute2 before 5.5, still shipped by some vendor builds), which leads with the
RDMA device index:

    8/1: mlx5_bond_0/1: state ACTIVE physical_state LINK_UP netdev reth0

`rdma -d link show` adds `netdev_index N` and a `    caps: <SM, ...>` line after each port; a
`rdma link show mlx5_0/1` prints the one line. JSON (`rdma -j link show`, pretty with `-p`) is an
array of objects: `{"ifindex":0,"ifname":"mlx5_0","port":1,"subnet_prefix":"fe80:...","lid":3,
"sm_lid":1,"lmc":0,"state":"ACTIVE","physical_state":"LINK_UP","netdev":"ib0","netdev_index":5}`
(before iproute2 5.5 `ifname` was "mlx5_0/1"). Shell prompts, Markdown fences, prose and other
tools' output around the lines are skipped (so are `> ` quote marks); rdma's own failures ("Wrong device name") are kept in
`errors`.

JSON: {source: "rdma_link", form: "text" | "json", links: [RdmaLink], errors: [{line_no, text}],
notes: [str]} with per link, in printed order:
  device, port            "mlx5_0", 1 (device None when it was redacted)
  state, state_raw        "ACTIVE" -> "Active" (Down / Initializing / Armed / Active / ActiveDefer,
                          as the IB tools' records say it); raw as printed
  physical_state(_raw)    "LINK_UP" -> "LinkUp", "POLLING" -> "Polling", "DISABLED" -> "Disabled";
                          iproute2 prints physical state 4 (PortConfigurationTraining) as "ARMED"
  netdev, netdev_index    the Ethernet / IPoIB interface of the port, if the kernel reports one
  subnet_prefix, lid, sm_lid, lmc   printed for InfiniBand ports only
  link_layer              inferred, since the tool does not print it: "InfiniBand" when a
                          subnet_prefix or lid is printed (the kernel reports those only for ports
                          that speak the InfiniBand protocol), else "Ethernet" when a netdev is
                          printed (RoCE, iWARP and the software devices), else None
  software                True when the device name is that of a software RDMA device (rxe*: Soft
                          RoCE, siw*: Soft iWARP): RDMA emulated by the CPU over an ordinary NIC.
                          A heuristic: `rdma link add NAME type rxe` lets NAME be anything, but
                          tools and guides name them rxe* / siw*
  dev_index               the RDMA device index (old text form and JSON "ifindex")
  caps                    the port capability flags `-d` prints, () otherwise
  line_no                 the line of the port (in JSON: of its object's "{")
A value shown redacted ("...", "xxxx", "<redacted>", "*") is None. A line printed twice for one
port (several runs pasted together) stays twice in `links`; a note says so, and the model takes
the last one as the port's current state.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Iterable

from .base import is_digits, ParseError, ParserInfo, clean_lines, iter_clean_lines, note
from .ib_records import ErrorLine, norm_physical_state, norm_state, not_this_tool, strip_paste
from .sniff.rdma_link import _SNIFF_JSON, sniff

INFO = ParserInfo(
    source="rdma_link",
    tool="rdma link show",
    description="RDMA ports (iproute2): device/port, state, physical state, netdev, LIDs",
    argv=(),  # not run live yet: on a host without ib_core, `rdma` exits 1 ("Failed to open NETLINK_RDMA
    # socket"), which must read as "not available", not as a failed source (SYS001): see CONTRIBUTING.md
    timeout_s=10.0,
)
SOURCE = INFO.source

# `link mlx5_0/1 ...` (some vendor builds print `link mlx5_0/1: ...`) and `8/1: mlx5_0/1: ...`.
LINK_RE = re.compile(r"^link\s+(?P<dev>[^\s/]+)/(?P<port>[0-9]{1,9}):?(?:\s+(?P<rest>.*))?$")
OLD_LINK_RE = re.compile(
    r"^(?P<idx>[0-9]{1,9})/[0-9]{1,9}:\s+(?P<dev>[^\s/]+)/(?P<port>[0-9]{1,9}):(?:\s+(?P<rest>.*))?$")
CAPS_RE = re.compile(r"^\\?\s*caps:\s*<(?P<caps>[^>]*)>?$")
# Searched for from 'caps:' on (the blanks and backslash before it are taken back in code): a search
# for `\\?\s*caps:` tried every blank of a line as a start and ran over the rest (quadratic).
INLINE_CAPS_RE = re.compile(r"caps:\s*<(?P<caps>[^>]*)>?")
OWN_ERROR_RE = re.compile(
    r"^(?:Wrong device name|This tool doesn't support switches yet|Unknown parameter\b"
    r"|Object \"[^\"]*\" is unknown, try \"rdma help\"|(?:-?\S+: )?rdma: (?:command )?not found)")
JSON_START_RE = re.compile(r"^(?:\[\s*(?:\{|\]|$)|\{\s*(?:\"|$))")
REDACTED_RE = re.compile(r"^(?:\.{2,}|\u2026|[xX]{2,}|\*+|<[^<>]*>|\[[^\[\]]*\]|redacted|hidden|n/a)$", re.I)

NUMERIC_KEYS = ("lid", "sm_lid", "lmc", "netdev_index")
TEXT_KEYS = ("subnet_prefix", "state", "physical_state", "netdev")
KEY_ALIASES = {"lm": "lmc"}  # a shortened form seen in hand-copied output
KNOWN_KEYS = frozenset(NUMERIC_KEYS + TEXT_KEYS) | frozenset(KEY_ALIASES)
SOFTWARE_RE = re.compile(r"^(?:rxe|siw)", re.I)

# iproute2's names for physical states that the IB tools spell differently.
_PHYS_EXTRA = {"ARMED": "PortConfigurationTraining", "LINK_ERROR_RECOVER": "LinkErrorRecovery"}

SNIFF_LIMIT = 64 * 1024


@dataclass(frozen=True)
class RdmaLink:
    """One RDMA port as `rdma link show` printed it. Fields the tool did not print are None."""

    device: str | None
    port: int
    state: str | None  # Down | Initializing | Armed | Active | ActiveDefer
    state_raw: str | None  # "ACTIVE"
    physical_state: str | None  # Sleep | Polling | Disabled | PortConfigurationTraining | LinkUp | ...
    physical_state_raw: str | None  # "LINK_UP"
    netdev: str | None
    netdev_index: int | None
    subnet_prefix: str | None  # "fe80:0000:0000:0000", as printed
    lid: int | None
    sm_lid: int | None
    lmc: int | None
    link_layer: str | None  # inferred: InfiniBand | Ethernet | None (see the module docstring)
    software: bool  # rxe* / siw*: software RDMA over an ordinary NIC
    dev_index: int | None
    caps: tuple[str, ...]
    line_no: int


@dataclass(frozen=True)
class RdmaLinks:
    source: str = SOURCE
    form: str = "text"  # "text" | "json"
    links: tuple[RdmaLink, ...] = ()
    errors: tuple[ErrorLine, ...] = ()
    notes: tuple[str, ...] = ()


# -- values ------------------------------------------------------------------------------------

def _redacted(value: Any) -> bool:
    return isinstance(value, str) and bool(REDACTED_RE.match(value.strip()))


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list, bool)):
        return None
    text = str(value).strip()
    return None if not text or _redacted(text) else text


def _number(key: str, value: Any, line_no: int) -> int | None:
    if value is None or _redacted(value):
        return None
    if isinstance(value, bool):
        raise ParseError(f"expected a number for '{key}', found {value!r}", line_no)
    if isinstance(value, int):
        return value
    text = str(value).strip()
    if re.fullmatch(r"[0-9]{1,18}", text):
        return int(text)
    if re.fullmatch(r"0[xX][0-9a-fA-F]{1,16}", text):
        return int(text, 16)
    raise ParseError(f"expected a number after '{key}', found '{text[:40]}'", line_no)


def _physical(raw: str | None) -> str | None:
    if raw is None:
        return None
    key = raw.strip().upper()
    return _PHYS_EXTRA.get(key) or norm_physical_state(raw)


def _link_layer(printed: set[str]) -> str | None:
    if "subnet_prefix" in printed or "lid" in printed or "sm_lid" in printed:
        return "InfiniBand"
    if "netdev" in printed:
        return "Ethernet"
    return None


def _make_link(device: str | None, port: int, fields: dict[str, Any], printed: set[str],
               dev_index: int | None, caps: tuple[str, ...], line_no: int) -> RdmaLink:
    state_raw = _text(fields.get("state"))
    phys_raw = _text(fields.get("physical_state"))
    return RdmaLink(
        device=device,
        port=port,
        state=norm_state(state_raw),
        state_raw=state_raw,
        physical_state=_physical(phys_raw),
        physical_state_raw=phys_raw,
        netdev=_text(fields.get("netdev")),
        netdev_index=_number("netdev_index", fields.get("netdev_index"), line_no),
        subnet_prefix=_text(fields.get("subnet_prefix")),
        lid=_number("lid", fields.get("lid"), line_no),
        sm_lid=_number("sm_lid", fields.get("sm_lid"), line_no),
        lmc=_number("lmc", fields.get("lmc"), line_no),
        link_layer=_link_layer(printed),
        software=bool(device and SOFTWARE_RE.match(device)),
        dev_index=dev_index,
        caps=caps,
        line_no=line_no,
    )


def _caps(text: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in text.split(",") if c.strip())


# -- text form ---------------------------------------------------------------------------------

def _split_fields(rest: str, line_no: int, notes: list[str]) -> tuple[dict[str, Any], set[str]] | None:
    """'state ACTIVE physical_state LINK_UP netdev p1p1' -> ({state: ACTIVE, ...}, printed keys);
    None when the text after the port does not start with a field of the tool (prose)."""
    tokens = rest.split()
    if not tokens or tokens[0] not in KNOWN_KEYS:
        return None
    fields: dict[str, Any] = {}
    printed: set[str] = set()
    i = 0
    while i < len(tokens):
        key = tokens[i]
        has_value = i + 1 < len(tokens) and tokens[i + 1] not in KNOWN_KEYS
        value = tokens[i + 1] if has_value else None
        i += 2 if has_value else 1
        if key in KNOWN_KEYS:
            key = KEY_ALIASES.get(key, key)
            printed.add(key)
            if value is None:
                notes.append(note("rdma_link", "field-without-value", line=line_no, key=key))
            elif key in fields:
                notes.append(note("rdma_link", "field-twice", line=line_no, key=key))
                continue
            fields[key] = value
        else:
            notes.append(note("rdma_link", "field-unknown", line=line_no, key=key[:40]))
    return fields, printed


def _text_line(line: str, line_no: int, notes: list[str]) -> RdmaLink | None:
    m = LINK_RE.match(line) or OLD_LINK_RE.match(line)
    if not m:
        return None
    rest = m.group("rest") or ""
    caps: tuple[str, ...] = ()
    cm = INLINE_CAPS_RE.search(rest)
    if cm:  # `rdma -o -d link`: the caps on the same line
        caps = _caps(cm.group("caps"))
        rest = rest[: cm.start()].rstrip()
        rest = rest[:-1].rstrip() if rest.endswith("\\") else rest
    split = _split_fields(rest, line_no, notes)
    if split is None:
        return None
    fields, printed = split
    dev = m.group("dev")
    device = None if _redacted(dev) else dev
    if device is None:
        notes.append(note("rdma_link", "device-redacted", line=line_no))
    idx = int(m.group("idx")) if "idx" in m.groupdict() and m.group("idx") else None
    return _make_link(device, int(m.group("port")), fields, printed, idx, caps, line_no)


# -- JSON form ---------------------------------------------------------------------------------

def _object_lines(text: str, start: int, end: int, first_line: int) -> list[int]:
    """Line numbers of the '{' opening each element of the JSON array text[start:end]."""
    out: list[int] = []
    depth = 0
    in_str = esc = False
    line = first_line
    for ch in text[start:end]:
        if ch == "\n":
            line += 1
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "[{":
            if ch == "{" and depth == 1:
                out.append(line)
            depth += 1
        elif ch in "]}":
            depth -= 1
    return out


def _json_items(lines: list[str], start_idx: int) -> tuple[list[Any], list[int]] | None:
    """Read: the elements of the JSON array (or the one object) starting at lines[start_idx] and the
    line of each; None when it is not JSON at all."""
    text = "\n".join(lines[start_idx:])
    offset = len(text) - len(text.lstrip())
    try:
        value, end = json.JSONDecoder().raw_decode(text, offset)
    except (ValueError, RecursionError) as exc:
        if _SNIFF_JSON.search(text[:SNIFF_LIMIT]):
            raise ParseError(f"rdma -j link output that is not valid JSON: {str(exc)[:80]}",
                             start_idx + 1) from None
        return None
    first_line = start_idx + 1
    if isinstance(value, dict):
        return [value], [first_line + text[:offset].count("\n")]
    if isinstance(value, list):
        return value, _object_lines(text, offset, end, first_line)
    raise ParseError("expected a JSON array of rdma links", first_line)


def _json_link(item: Any, line_no: int) -> RdmaLink | None:
    """Assemble: one element as a link; None when it has no ifname, port or link field."""
    if not isinstance(item, dict):
        return None
    name = item.get("ifname")
    port = item.get("port")
    if not isinstance(name, str) or not name:
        return None
    dev, _, port_text = name.partition("/")  # before iproute2 5.5: "ifname": "mlx5_0/1"
    if port is None and is_digits(port_text):
        port = int(port_text)
    if isinstance(port, str) and is_digits(port):
        port = int(port)
    if not isinstance(port, int) or isinstance(port, bool) or not (
            {"state", "physical_state", "netdev", "lid", "subnet_prefix"} & item.keys()):
        return None
    printed = {k for k in item if item[k] is not None}
    device = None if _redacted(dev) else dev
    caps_value = item.get("caps")
    caps = tuple(str(c) for c in caps_value) if isinstance(caps_value, list) else ()
    dev_index = item.get("ifindex") if isinstance(item.get("ifindex"), int) else None
    return _make_link(device, port, item, printed, dev_index, caps, line_no)


def _json_links(lines: list[str], start_idx: int, notes: list[str]) -> list[RdmaLink] | None:
    """The links of the JSON array starting at lines[start_idx]; None when it is not JSON at all."""
    read = _json_items(lines, start_idx)
    if read is None:
        return None
    items, line_nos = read
    first_line = start_idx + 1
    links: list[RdmaLink] = []
    for k, item in enumerate(items):
        link = _json_link(item, line_nos[k] if k < len(line_nos) else first_line)
        if link is not None:
            links.append(link)
    skipped = len(items) - len(links)
    if skipped:
        notes.append(note("rdma_link", "json-elements-skipped", skipped=skipped))
    if items and not links:  # validate
        raise ParseError("expected rdma -j link objects (ifname, port, state, physical_state), "
                         "found JSON of another tool", first_line)
    return links


# -- both --------------------------------------------------------------------------------------

def _duplicates(links: list[RdmaLink], notes: list[str]) -> None:
    seen: dict[tuple[str | None, int], list[int]] = {}
    for link in links:
        seen.setdefault((link.device, link.port), []).append(link.line_no)
    for (dev, port), line_nos in seen.items():
        if len(line_nos) > 1 and dev is not None:
            notes.append(note("rdma_link", "port-printed-again", device=dev, port=port, times=len(line_nos),
                              lines=", ".join(map(str, line_nos))))


def _parse(lines_in: Iterable[str]) -> RdmaLinks:
    lines = list(lines_in)
    links: list[RdmaLink] = []
    errors: list[ErrorLine] = []
    notes: list[str] = []
    first_text: tuple[int, str] | None = None
    json_start: int | None = None
    own_error = False
    for i, raw in enumerate(lines):
        line_no = i + 1
        line = strip_paste(raw)
        if line.startswith(">"):  # a quoted reply: "> link mlx5_0/1 ..."
            line = strip_paste(line.lstrip("> "))
        if not line:
            continue
        if first_text is None:
            first_text = (line_no, line)
        link = _text_line(line, line_no, notes)
        if link is not None:
            links.append(link)
            continue
        cm = CAPS_RE.match(line)
        if cm and links and links[-1].line_no >= line_no - 2 and not links[-1].caps:
            links[-1] = replace(links[-1], caps=_caps(cm.group("caps")))
            continue
        if OWN_ERROR_RE.match(line):
            errors.append(ErrorLine(line_no, line))
            own_error = True
            continue
        if json_start is None and JSON_START_RE.match(line):
            json_start = i
        # anything else (prompts, prose, other tools' output) is not rdma's and is skipped
    form = "text"
    found = _json_links(lines, json_start, notes) if not links and json_start is not None else None
    if found is not None:
        form, links = "json", found
        if not links:
            notes.append(note("rdma_link", "json-no-link"))
    elif not links and not own_error:
        raise not_this_tool(first_text, "rdma link show", "'link <dev>/<port> state ...' lines",
                            "a 'link <dev>/<port> state ...' line")
    _duplicates(links, notes)
    return RdmaLinks(form=form, links=tuple(links), errors=tuple(errors), notes=tuple(notes))


def parse(text: str) -> RdmaLinks:
    """`rdma link show` output (text or JSON) -> RdmaLinks; ParseError when the text holds none."""
    return _parse(clean_lines(text))


def parse_lines(lines: Iterable[str]) -> RdmaLinks:
    """Form of parse for an iterable of raw lines (the output is small: it is read whole)."""
    return _parse(iter_clean_lines(lines))
