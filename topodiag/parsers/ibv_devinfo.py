"""Parser for `ibv_devinfo` (rdma-core / MLNX_OFED libibverbs), plain and `-v`.

    hca_id: mlx5_0
            transport:                      InfiniBand (0)
            fw_ver:                         28.39.2048
            node_guid:                      58a2:e103:002a:09b8
            sys_image_guid:                 58a2:e103:002a:09b8
            vendor_id:                      0x02c9
            vendor_part_id:                 4129
            hw_ver:                         0x0
            board_id:                       MT_0000000838
            phys_port_cnt:                  1
                    port:   1
                            state:                  PORT_DOWN (1)
                            max_mtu:                4096 (5)
                            active_mtu:             4096 (5)
                            sm_lid:                 0
                            port_lid:               65535
                            port_lmc:               0x00
                            link_layer:             InfiniBand
    (-v adds)               active_width:           4X (2)
                            active_speed:           25.0 Gbps (32)
                            phys_state:             LINK_UP (5)
                            GID[  3]:               ::ffff:200.0.209.6, RoCE v2

`-v` also prints device capability blocks (max_qp, device_cap_flags and their flag lists,
MOFED's device_cap_exp_flags, "Unknown flags: 0x...", odp/tso/rss caps): tolerated and skipped.
Also read: `ibv_devinfo -l` ("2 HCAs found:" and the names -> CAs with only a name), fragments
(a device block with no port is a CA with zero ports; port lines with no header go to a CA / port
whose name / number is None), libibverbs warnings and the tool's failures ("No IB devices found",
"Failed to ...") -> `errors`; a text with only such a failure parses to zero CAs.

JSON: {source: "ibv_devinfo", cas: [CA], errors: [{line_no, text}]}, CA / Port as in ib_records.
Mapping: hca_id -> name, fw_ver -> firmware, sys_image_guid -> system_guid, phys_port_cnt ->
num_ports, hw_ver -> hardware_version, transport ("InfiniBand (0)" -> "InfiniBand"), vendor_id,
vendor_part_id, board_id; type = "MT<vendor_part_id>" for Mellanox/NVIDIA vendor ids (what
ibstat's "CA type" shows), else None. GUIDs "a088:c203:0030:9a0d" -> "0xa088c20300309a0d".
Port: state ("PORT_ACTIVE (4)" -> "Active"), physical_state ("LINK_UP (5)" -> "LinkUp"),
port_lid -> base_lid, port_lmc -> lmc, sm_lid, active_mtu / max_mtu (bytes), link_layer,
port_cap_flags -> capability_mask, active_width ("4X"), active_speed_gbps (per lane), rate_gbps =
width x lane speed (-v only; plain output has no rate -> None), gids [{index, gid, type}].
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from . import _tool_failures
from .base import ParseError, ParserInfo, clean_lines, iter_clean_lines
from .ib_records import (
    CA,
    CaPass,
    ErrorLine,
    Gid,
    InferredLinkLayer,
    infer_link_layers,
    is_redacted,
    redaction_note,
    not_this_tool,
    new_ca,
    norm_guid,
    norm_link_layer,
    norm_mask,
    norm_physical_state,
    norm_state,
    parse_int,
    set_once,
)
from .sniff.ibv_devinfo import sniff

INFO = ParserInfo(
    source="ibv_devinfo",
    tool="ibv_devinfo -v",
    description="each HCA's ports as ibstat has them, plus the GID table under -v (plain output too)",
    argv=("ibv_devinfo", "-v"),
    timeout_s=15.0,
)
SOURCE = INFO.source

MELLANOX_VENDOR_IDS = {0x02C9, 0x15B3}  # Mellanox OUI and PCI vendor id (ibstat's "CA type: MT<part>")

KEY_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_ ]*?):\s*(.*)$")
GID_RE = re.compile(r"^GID\[\s*([0-9]{1,18})\]:\s*([^,\s]+)\s*(?:,\s*(.*?))?$")
LIST_RE = re.compile(r"^([0-9]{1,18}) HCAs? found:$")
NAME_RE = re.compile(r"^[A-Za-z0-9_.:-]+$")
VERBS_STATE_RE = re.compile(r"^PORT_[A-Z_]+ \([0-9]{1,18}\)$")
VERBS_PHYS_RE = re.compile(r"^[A-Z][A-Z_ ]+ \([0-9]{1,18}\)$")
ERROR_RE = re.compile(
    r"^(?:libibverbs: |No IB devices found|Failed to |IB device '.*' wasn't found|Invalid port requested)"
)
OWN_ERROR_RE = re.compile(r"^(?:No IB devices found|Failed to get IB devices list|IB device '.*' wasn't found)")

_FIELD_NAMES = {"fw_ver": "firmware", "sys_image_guid": "system_guid", "hw_ver": "hardware_version",
                "phys_port_cnt": "num_ports", "port_lid": "base_lid", "port_lmc": "lmc",
                "port_cap_flags": "capability_mask", "active_speed": "active_speed_gbps",
                "phys_state": "physical_state"}
CA_KEYS = {"transport", "fw_ver", "node_guid", "sys_image_guid", "vendor_id", "vendor_part_id", "hw_ver",
           "board_id", "phys_port_cnt"}
PORT_KEYS = {"state", "max_mtu", "active_mtu", "sm_lid", "port_lid", "port_lmc", "link_layer",
             "port_cap_flags", "active_width", "active_speed", "phys_state"}


@dataclass(frozen=True)
class IbvDevinfoReport:
    source: str = SOURCE
    cas: tuple[CA, ...] = ()
    errors: tuple[ErrorLine, ...] = ()
    unrecognised: tuple[ErrorLine, ...] = ()  # error lines no catalogue entry explains (SYS004)
    inferred: tuple[InferredLinkLayer, ...] = ()
    notes: tuple[str, ...] = ()


def _need(value: Any, what: str, key: str, raw: str, line_no: int) -> Any:
    if value is None:
        raise ParseError(f"expected {what} after '{key}:', found '{raw[:40]}'", line_no)
    return value


_CODE_RE = re.compile(r"\([0-9]{1,18}\)$")


def _code_stripped(value: str) -> str:
    """'InfiniBand (0)' -> 'InfiniBand'."""
    m = _CODE_RE.search(value)  # the blanks before it are stripped in code: a search for `\s*\(...` is quadratic
    return value[: m.start()].rstrip() if m else value


def _ca_field(ca: dict[str, Any], key: str, value: str, line_no: int) -> None:
    if key == "transport":
        set_once(ca, "transport", _code_stripped(value))
    elif key == "fw_ver":
        set_once(ca, "firmware", value)
    elif key in ("node_guid", "sys_image_guid"):
        guid = _need(norm_guid(value), "a GUID such as 'a088:c203:0030:9a0d'", key, value, line_no)
        set_once(ca, "node_guid" if key == "node_guid" else "system_guid", guid)
    elif key == "vendor_id":
        _need(parse_int(value), "a vendor id such as '0x02c9'", key, value, line_no)
        set_once(ca, "vendor_id", value.lower())
    elif key == "vendor_part_id":
        set_once(ca, "vendor_part_id", _need(parse_int(value), "a part number", key, value, line_no))
    elif key == "hw_ver":
        set_once(ca, "hardware_version", value)
    elif key == "board_id":
        set_once(ca, "board_id", value)
    elif key == "phys_port_cnt":
        set_once(ca, "num_ports", _need(parse_int(value), "a port count", key, value, line_no))


def _port_field(port: dict[str, Any], key: str, value: str, line_no: int) -> None:
    if key == "state":
        set_once(port, "state_raw", value)
        set_once(port, "state", norm_state(value))
    elif key == "phys_state":
        set_once(port, "physical_state_raw", value)
        set_once(port, "physical_state", norm_physical_state(value))
    elif key in ("max_mtu", "active_mtu"):
        m = re.match(r"([0-9]{1,18})\b", value)  # "4096 (5)"; "invalid MTU (0)" -> None
        set_once(port, key, int(m.group(1)) if m else None)
    elif key in ("sm_lid", "port_lid", "port_lmc"):
        field = {"sm_lid": "sm_lid", "port_lid": "base_lid", "port_lmc": "lmc"}[key]
        set_once(port, field, _need(parse_int(value), "an integer", key, value, line_no))
    elif key == "link_layer":
        set_once(port, "link_layer", norm_link_layer(value))
    elif key == "port_cap_flags":
        set_once(port, "capability_mask", _need(norm_mask(value), "a mask such as '0x2651e848'", key, value, line_no))
    elif key == "active_width":
        m = re.match(r"([0-9]{1,18})X\b", value)  # "4X (2)"; "invalid widthX (0)" -> None
        set_once(port, "active_width", f"{m.group(1)}X" if m else None)
    elif key == "active_speed":
        m = re.match(r"([0-9]{1,18}(?:\.[0-9]{1,18})?) Gbps\b", value)  # "25.0 Gbps (32)"; "invalid speed (0)" -> None
        set_once(port, "active_speed_gbps", float(m.group(1)) if m else None)


def _finish_ca(ca: dict[str, Any]) -> None:
    vendor = parse_int(ca["vendor_id"]) if ca["vendor_id"] else None
    if ca["type"] is None and vendor in MELLANOX_VENDOR_IDS and ca["vendor_part_id"] is not None:
        ca["type"] = f"MT{ca['vendor_part_id']}"
    for port in ca["ports"]:
        if port["active_width"] and port["active_speed_gbps"] is not None:
            port["rate_gbps"] = int(port["active_width"][:-1]) * port["active_speed_gbps"]


class _Reader(CaPass):
    """One pass over the lines (read), then finish (validate, assemble)."""

    def __init__(self) -> None:
        super().__init__(SOURCE)
        self.listing = False  # inside the name list of `ibv_devinfo -l`
        self.strong = False  # saw something only ibv_devinfo prints

    def current_port(self, line_no: int) -> dict[str, Any]:
        return self.port if self.port is not None else self.open_port(None, line_no)

    def feed(self, line_no: int, raw: str) -> None:
        line = self.see(line_no, raw)
        if not line:
            self.listing = False
            return
        if ERROR_RE.match(line):
            self.errors.append(_tool_failures.classify(SOURCE, line_no, line))
            self.strong = self.strong or bool(OWN_ERROR_RE.match(line))
            return
        if LIST_RE.match(line):
            self.listing = self.strong = True
            self.ca = self.port = None
            return
        if self.listing:
            if NAME_RE.match(line):
                self.cas.append(new_ca(line, SOURCE, line_no))
                return
            self.listing = False
        m = GID_RE.match(line)
        if m:
            self._gid(m, line_no)
            return
        m = KEY_RE.match(line)
        if m:
            self._key(m.group(1), m.group(2).strip(), line_no)
        # else: capability flag lists, "core clock not supported", prose

    def _gid(self, m: re.Match[str], line_no: int) -> None:
        gid = None if is_redacted(m.group(2)) else m.group(2)
        if gid is None:
            self.notes.append(redaction_note(line_no, f"GID[{m.group(1)}]", m.group(2), "gid"))
        self.current_port(line_no)["gids"].append(Gid(int(m.group(1)), gid, m.group(3) or None))
        self.strong = True

    def _key(self, key: str, value: str, line_no: int) -> None:
        if key in CA_KEYS | PORT_KEYS and is_redacted(value):
            self.notes.append(redaction_note(line_no, key, value, _FIELD_NAMES.get(key, key)))
            value = ""  # the CA / port is still opened below; the field stays null
        if key == "hca_id":
            if value:
                self.open_ca(value.split()[0], line_no)
                self.strong = True
        elif key == "port":
            num = parse_int(value)
            if num is not None:
                self.open_port(num, line_no)
        elif key in CA_KEYS and value:
            _ca_field(self.ca if self.ca is not None else self.open_ca(None, line_no), key, value, line_no)
        elif key in PORT_KEYS and value:
            if (key == "state" and VERBS_STATE_RE.match(value)) or (key == "phys_state" and VERBS_PHYS_RE.match(value)):
                self.strong = True
            _port_field(self.current_port(line_no), key, value, line_no)
        # other keys: -v device capabilities (max_qp ...), MOFED extras, prompts ("root@host:~# ...")

    def finish(self) -> IbvDevinfoReport:
        """Validate (ParseError when nothing read is ibv_devinfo's) and assemble the report."""
        if not self.strong:
            raise not_this_tool(self.first_text, "ibv_devinfo", "'hca_id: <device>' blocks",
                                "an 'hca_id: <device>' line")
        for c in self.cas:
            _finish_ca(c)
        inferred = infer_link_layers(self.cas, self.notes)
        return IbvDevinfoReport(cas=self.frozen_cas(), errors=tuple(self.errors),
                                unrecognised=_tool_failures.unrecognised(self.errors), inferred=inferred,
                                notes=tuple(self.notes))


def _parse(lines: Iterable[str]) -> IbvDevinfoReport:
    reader = _Reader()
    for line_no, raw in enumerate(lines, 1):
        reader.feed(line_no, raw)
    return reader.finish()


def parse(text: str) -> IbvDevinfoReport:
    """ibv_devinfo [-v|-l] output -> IbvDevinfoReport; ParseError when nothing in it is ibv_devinfo's."""
    return _parse(clean_lines(text))


def parse_lines(lines: Iterable[str]) -> IbvDevinfoReport:
    """Streaming form of parse for an iterable of raw lines."""
    return _parse(iter_clean_lines(lines))
