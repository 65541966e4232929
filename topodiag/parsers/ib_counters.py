"""IB / RoCE port counters, netdev MTU and RoCE ECN switches, as sysfs shows them: pasted `grep` or
`cat` loops over sysfs, or the counters probe's JSON (topodiag.live.ib_counters_probe).

Text forms read (each line where a person pastes it; prompts, fences, CRLF and ANSI tolerated):

    /sys/class/infiniband/mlx5_0/ports/1/counters/link_downed:1          grep . <files>  (or "path value")
    /sys/class/infiniband/i40iw0/ports/1/counters/symbol_error:N/A (no PMA)   (unreadable: null)
    /sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence:0
    /sys/class/net/ens1f0np0/mtu:9000
    /sys/class/net/ens1f0np0/ecn/roce_np/enable/3:1

`perfquery [-x] [-C ca] [lid port]` (its names mapped to the sysfs ones: LinkDownedCounter ->
link_downed ...; the port named by the CA of -C, else "lid <N>"), and a loop that prints
`=== ./name ===` then the value, under a prompt whose directory names the
port (`/sys/class/infiniband/mlx5_1/ports/1/counters$ for file in ...`). When the same counter of a
port appears twice, the second reading is a second sample; a `sleep N` between them (as typed in the
paste) states the window, otherwise the window is unknown (rates are then not computed; a counter
that must stay zero and grew is still a fact).

The probe's JSON (schema_version 1):

    {"probe": "ib_counters", "schema_version": 1, "ok": true, "error": null, "hostname": "n1",
     "interval_s": 10.0 | null,
     "samples": [{"ports": [{"device": "mlx5_0", "port": 1, "link_layer": "InfiniBand",
                             "rate_gbps": 400.0, "counters": {"symbol_error": 0, ...},
                             "hw_counters": {...}}]}, ...],          one or two samples
     "netdevs": [{"name": "ens1f0np0", "device": "mlx5_0", "mtu": 9000,
                  "ecn": {"roce_np": {"3": true}, "roce_rp": {"3": true}}}]}

JSON: {source, probe ("ib_counters" | null for text), schema_version, ok, error, hostname,
interval_s, samples (1 or 2), ports: [{device, port, link_layer, rate_gbps, counters {name: int |
null}, hw_counters, before_counters, before_hw_counters (the first sample when there are two, else
null), line_no}], netdevs: [{name, device, mtu, ecn_np {prio: bool}, ecn_rp, line_no}], errors:
[{line_no, text}]}. Ports in the order first seen. ParseError for text with no counter, MTU or ECN
line, and for a JSON that is not this probe's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from .base import ParseError, ParserInfo, clean_lines, probe_object, search_after
from .ib_records import ErrorLine
from .sniff.ib_counters import sniff

INFO = ParserInfo(
    source="ib_counters",
    tool="grep . /sys/class/infiniband/*/ports/*/{counters,hw_counters}/* /sys/class/net/*/mtu",
    description="IB/RoCE port error counters (sysfs counters/, hw_counters/), netdev MTU and RoCE ECN "
                "switches; one snapshot or two samples",
    timeout_s=5.0,
    prolog_safe=True,
    probe="ib_counters",
)
SOURCE = INFO.source
SCHEMA_VERSION = 1
MAX_VALUE = 1 << 64

_NAME = r"[A-Za-z][A-Za-z0-9_]{0,80}"
# Never two blank runs side by side, and a value read greedily to its last non-blank: a lazy value
# followed by `\s*$` rescans the blanks after it at every step (quadratic on widened blanks). The path
# starts after a blank, a quote or a slash, seen by a lookbehind: `(?:^|[\s'"])(?:\S*?/)?infiniband/`
# matched the same lines but tried every quote of a line of quotes to its end (quadratic).
PORT_LINE_RE = re.compile(
    r"(?:^|(?<=[\s'\"/]))infiniband/(?P<dev>[A-Za-z0-9_.\-]{1,40})/ports/(?P<port>\d{1,3})/"
    r"(?P<kind>counters|hw_counters)/(?P<name>" + _NAME + r")(?:[ \t]*[:=][ \t]*|[ \t]+)(?P<value>\S(?:.*\S)?)[ \t\r]*$")
NET_LINE_RE = re.compile(
    r"(?:^|(?<=[\s'\"/]))class/net/(?P<ifname>[A-Za-z0-9_.@\-]{1,40})/"
    r"(?:(?P<mtu>mtu)|ecn/roce_(?P<side>np|rp)/enable/(?P<prio>[0-7]))(?:[ \t]*[:=][ \t]*|[ \t]+)(?P<value>\S+)[ \t\r]*$")
CWD_RE = re.compile(r"infiniband/(?P<dev>[A-Za-z0-9_.\-]{1,40})/ports/(?P<port>\d{1,3})/(?P<kind>counters|hw_counters)\b")
HEADING_RE = re.compile(r"^\s*=+\s*(?:\./)?(?P<name>" + _NAME + r")\s*=+\s*$")
SLEEP_RE = re.compile(r"\bsleep\s+(\d{1,6}(?:\.\d{1,3})?)\b")
INT_RE = re.compile(r"^\d{1,20}$")
PERF_HEAD_RE = re.compile(r"^#\s*Port (?:extended )?counters:\s*Lid\s+(?P<lid>\d{1,5})\s+port\s+(?P<port>\d{1,3})")
PERF_LINE_RE = re.compile(r"^(?P<name>[A-Za-z][A-Za-z0-9]{1,40}):\.*(?P<value>\S{1,24})\s*$")
PERF_CMD_RE = re.compile(r"\bperfquery\b")
PERF_CA_RE = re.compile(r"(?:-C|--Ca)\s+(?P<ca>[A-Za-z0-9_.\-]{1,40})")
# perfquery's names -> the sysfs counter names
PERF_NAMES = {
    "SymbolErrorCounter": "symbol_error", "LinkErrorRecoveryCounter": "link_error_recovery",
    "LinkDownedCounter": "link_downed", "PortRcvErrors": "port_rcv_errors",
    "PortRcvRemotePhysicalErrors": "port_rcv_remote_physical_errors",
    "PortRcvSwitchRelayErrors": "port_rcv_switch_relay_errors", "PortXmitDiscards": "port_xmit_discards",
    "PortXmitConstraintErrors": "port_xmit_constraint_errors",
    "PortRcvConstraintErrors": "port_rcv_constraint_errors", "LocalLinkIntegrityErrors": "local_link_integrity_errors",
    "ExcessiveBufferOverrunErrors": "excessive_buffer_overrun_errors", "VL15Dropped": "VL15_dropped",
    "PortXmitWait": "port_xmit_wait", "PortXmitData": "port_xmit_data", "PortRcvData": "port_rcv_data",
    "PortXmitPkts": "port_xmit_packets", "PortRcvPkts": "port_rcv_packets",
}


@dataclass(frozen=True)
class PortCounters:
    device: str
    port: Optional[int]
    link_layer: Optional[str]
    rate_gbps: Optional[float]
    counters: dict
    hw_counters: dict
    before_counters: Optional[dict]
    before_hw_counters: Optional[dict]
    line_no: int


@dataclass(frozen=True)
class NetdevConf:
    name: str
    device: Optional[str]
    mtu: Optional[int]
    ecn_np: dict
    ecn_rp: dict
    line_no: int


@dataclass(frozen=True)
class IbCounters:
    source: str = SOURCE
    probe: Optional[str] = None
    schema_version: int = SCHEMA_VERSION
    ok: bool = True
    error: Optional[str] = None
    hostname: Optional[str] = None
    interval_s: Optional[float] = None
    samples: int = 1
    ports: tuple = ()
    netdevs: tuple = ()
    errors: tuple = ()


def _value(raw: str) -> tuple[bool, Optional[int]]:
    """(is a counter reading, its value): '15' -> (True, 15); 'N/A (no PMA)' -> (True, None)."""
    raw = raw.strip().strip("'\"")
    if INT_RE.match(raw):
        value = int(raw)
        return True, value if value < MAX_VALUE else None
    if raw.upper().startswith("N/A"):
        return True, None
    return False, None


@dataclass
class _Port:
    device: str
    port: Optional[int]
    line_no: int
    samples: list = field(default_factory=lambda: [({}, {})])
    link_layer: Optional[str] = None
    rate_gbps: Optional[float] = None

    def put(self, kind: str, name: str, value: Optional[int]) -> bool:
        """Record a reading; True when it starts a new sample (the name was read already)."""
        table = self.samples[-1][0 if kind == "counters" else 1]
        started = False
        if name in table:
            self.samples.append(({}, {}))
            table = self.samples[-1][0 if kind == "counters" else 1]
            started = True
        table[name] = value
        return started

    def freeze(self) -> PortCounters:
        first, last = self.samples[0], self.samples[-1]
        two = len(self.samples) > 1
        counters = {**first[0], **last[0]} if two else dict(first[0])
        hw = {**first[1], **last[1]} if two else dict(first[1])
        return PortCounters(self.device, self.port, self.link_layer, self.rate_gbps, counters, hw,
                            dict(first[0]) if two else None, dict(first[1]) if two else None, self.line_no)


@dataclass
class _Net:
    name: str
    line_no: int
    device: Optional[str] = None
    mtu: Optional[int] = None
    ecn_np: dict = field(default_factory=dict)
    ecn_rp: dict = field(default_factory=dict)

    def freeze(self) -> NetdevConf:
        return NetdevConf(self.name, self.device, self.mtu, dict(sorted(self.ecn_np.items())),
                          dict(sorted(self.ecn_rp.items())), self.line_no)


class _Text:
    def __init__(self) -> None:
        self.ports: dict[tuple, _Port] = {}
        self.nets: dict[str, _Net] = {}
        self.cwd: Optional[tuple] = None
        self.heading: Optional[str] = None
        self.sleeps: list[float] = []
        self.sample_sleep: Optional[float] = None
        self.samples = 1
        self.perf: Optional[_Port] = None
        self.perf_ca: Optional[str] = None

    def port(self, dev: str, port: str, n: int) -> _Port:
        key = (dev, int(port))
        if key not in self.ports:
            self.ports[key] = _Port(dev, int(port), n)
        return self.ports[key]

    def reading(self, p: _Port, kind: str, name: str, value: Optional[int]) -> None:
        if p.put(kind, name, value):
            self.samples = max(self.samples, len(p.samples))
            if self.sample_sleep is None and self.sleeps:
                self.sample_sleep = self.sleeps[-1]

    def line(self, n: int, line: str) -> None:
        if self._perfquery(n, line):
            return
        m = PORT_LINE_RE.search(line)
        if m:
            ok, value = _value(m.group("value"))
            if ok:
                self.reading(self.port(m.group("dev"), m.group("port"), n), m.group("kind"), m.group("name"), value)
                return
        m = NET_LINE_RE.search(line)
        if m and self._net(n, m):
            return
        if self.heading is not None and self.cwd is not None:
            ok, value = _value(line)
            if ok:
                dev, port, kind = self.cwd
                self.reading(self.port(dev, port, n), kind, self.heading, value)
                self.heading = None
                return
        self._context(line)

    def _perfquery(self, n: int, line: str) -> bool:
        """perfquery [-x] [-C ca]: '# Port counters: Lid 10 port 1 ...' then 'LinkDownedCounter:....0'.
        The port is named by its CA when the command gives -C, else as 'lid N' (a LID: redaction maps it)."""
        h = PERF_HEAD_RE.match(line.strip())
        if h:
            self.perf = self.port(self.perf_ca or f"lid {h.group('lid')}", h.group("port"), n)
            return True
        m = PERF_LINE_RE.match(line.strip()) if self.perf is not None else None
        if m:
            name = PERF_NAMES.get(m.group("name"))
            ok, value = _value(m.group("value"))
            if name and ok:
                self.reading(self.perf, "counters", name, value)
            return True
        c = search_after(line, PERF_CMD_RE, PERF_CA_RE)  # "perfquery ... -C ca"
        if c:
            self.perf_ca = c[1].group("ca")
        elif line.strip():
            self.perf = None
        return False

    def _net(self, n: int, m: re.Match) -> bool:
        ok, value = _value(m.group("value"))
        if not ok or value is None:
            return False
        net = self.nets.setdefault(m.group("ifname"), _Net(m.group("ifname"), n))
        if m.group("mtu"):
            net.mtu = value
        else:
            (net.ecn_np if m.group("side") == "np" else net.ecn_rp)[int(m.group("prio"))] = value != 0
        return True

    def _context(self, line: str) -> None:
        h = HEADING_RE.match(line)
        if h:
            self.heading = h.group("name")
            return
        c = CWD_RE.search(line)
        if c:
            self.cwd = (c.group("dev"), c.group("port"), c.group("kind"))
        s = SLEEP_RE.search(line)
        if s and ("$" in line or "#" in line or line.lstrip().startswith("sleep")):
            self.sleeps.append(float(s.group(1)))


def _parse_text(text: str) -> IbCounters:
    reader = _Text()
    first = None
    for n, line in enumerate(clean_lines(text), 1):
        if first is None and line.strip():
            first = (n, line.strip())
        reader.line(n, line)
    if not reader.ports and not reader.nets:
        if first is None:
            raise ParseError("expected sysfs counter lines (…/infiniband/<dev>/ports/<n>/counters/<name>:<value>), "
                             "found no text", 0)
        raise ParseError("expected sysfs counter lines (…/infiniband/<dev>/ports/<n>/counters/<name>:<value>) "
                         f"or /sys/class/net/<if>/mtu, found '{first[1][:60]}'", first[0])
    return IbCounters(
        probe=None,
        interval_s=reader.sample_sleep if reader.samples > 1 else None,
        samples=reader.samples,
        ports=tuple(p.freeze() for p in reader.ports.values()),
        netdevs=tuple(n.freeze() for n in reader.nets.values()),
    )


# -- the probe's JSON ------------------------------------------------------------------------------

def _line_of(lines: list[str], needle: str, start: int) -> int:
    for i in range(max(start, 1) - 1, len(lines)):
        if needle in lines[i]:
            return i + 1
    return start


def _fail(where: str, what: str, line_no: int) -> ParseError:
    return ParseError(f"{where}: expected {what}", line_no)


def _table(raw: Any, where: str, line_no: int) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _fail(where, "an object of counter values", line_no)
    out = {}
    for k, v in raw.items():
        if v is None or (isinstance(v, int) and not isinstance(v, bool) and 0 <= v < MAX_VALUE):
            out[str(k)[:80]] = v
        else:
            raise _fail(f"{where}.{k}", "a non-negative integer or null", line_no)
    return out


def _json_port(raw: Any, where: str, lines: list[str], cursor: int) -> tuple[dict, int]:
    if not isinstance(raw, dict):
        raise _fail(where, "an object", cursor)
    dev = raw.get("device")
    if not isinstance(dev, str) or not dev:
        raise _fail(f"{where}.device", "a device name", cursor)
    port = raw.get("port")
    if port is not None and (not isinstance(port, int) or isinstance(port, bool)):
        raise _fail(f"{where}.port", "an integer", cursor)
    line_no = _line_of(lines, json.dumps(dev), cursor)
    rate = raw.get("rate_gbps")
    if rate is not None and (not isinstance(rate, (int, float)) or isinstance(rate, bool)):
        raise _fail(f"{where}.rate_gbps", "a number", line_no)
    layer = raw.get("link_layer")
    return {"device": dev, "port": port, "line_no": line_no,
            "link_layer": layer if isinstance(layer, str) else None,
            "rate_gbps": float(rate) if rate is not None else None,
            "counters": _table(raw.get("counters"), f"{where}.counters", line_no),
            "hw_counters": _table(raw.get("hw_counters"), f"{where}.hw_counters", line_no)}, line_no


def _json_samples(data: dict, lines: list[str]) -> list[list[dict]]:
    samples = data.get("samples")
    if samples is None:
        return []
    if not isinstance(samples, list) or len(samples) > 2:
        raise _fail("samples", "a list of one or two samples", 1)
    out, cursor = [], 1
    for i, s in enumerate(samples):
        if not isinstance(s, dict) or not isinstance(s.get("ports", []), list):
            raise _fail(f"samples[{i}]", 'an object with a "ports" list', cursor)
        ports = []
        for j, p in enumerate(s.get("ports") or []):
            entry, cursor = _json_port(p, f"samples[{i}].ports[{j}]", lines, cursor)
            ports.append(entry)
        out.append(ports)
    return out


def _json_ports(samples: list[list[dict]]) -> tuple:
    if not samples:
        return ()
    before = {(p["device"], p["port"]): p for p in samples[0]} if len(samples) > 1 else {}
    out = []
    for p in samples[-1]:
        b = before.get((p["device"], p["port"]))
        out.append(PortCounters(p["device"], p["port"], p["link_layer"], p["rate_gbps"], p["counters"],
                                p["hw_counters"], b["counters"] if b else None, b["hw_counters"] if b else None,
                                b["line_no"] if b else p["line_no"]))
    return tuple(out)


def _ecn(raw: Any, where: str, line_no: int) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _fail(where, "an object of priority: true/false", line_no)
    out = {}
    for k, v in raw.items():
        if not (isinstance(k, str) and k.isdigit() and int(k) < 8 and isinstance(v, bool)):
            raise _fail(f"{where}.{k}", "a priority 0-7 with true or false", line_no)
        out[int(k)] = v
    return dict(sorted(out.items()))


def _json_netdevs(data: dict, lines: list[str]) -> tuple:
    raw = data.get("netdevs") or []
    if not isinstance(raw, list):
        raise _fail("netdevs", "a list", 1)
    out = []
    for i, n in enumerate(raw):
        if not isinstance(n, dict) or not isinstance(n.get("name"), str) or not n["name"]:
            raise _fail(f"netdevs[{i}]", "an object with a name", 1)
        line_no = _line_of(lines, json.dumps(n["name"]), 1)
        mtu = n.get("mtu")
        if mtu is not None and (not isinstance(mtu, int) or isinstance(mtu, bool)):
            raise _fail(f"netdevs[{i}].mtu", "an integer or null", line_no)
        ecn = n.get("ecn") or {}
        if not isinstance(ecn, dict):
            raise _fail(f"netdevs[{i}].ecn", "an object", line_no)
        dev = n.get("device")
        out.append(NetdevConf(n["name"], dev if isinstance(dev, str) else None, mtu,
                              _ecn(ecn.get("roce_np"), f"netdevs[{i}].ecn.roce_np", line_no),
                              _ecn(ecn.get("roce_rp"), f"netdevs[{i}].ecn.roce_rp", line_no), line_no))
    return tuple(out)


def _parse_json(text: str) -> IbCounters:
    data = probe_object(text, "ib_counters", "the ib_counters probe JSON")
    lines = text.split("\n")
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= SCHEMA_VERSION:
        raise ParseError(f"ib_counters probe schema_version {version!r}: this topodiag reads 1",
                         _line_of(lines, "schema_version", 1))
    ok = data.get("ok", True)
    error = data.get("error")
    interval = data.get("interval_s")
    if not isinstance(ok, bool) or not (error is None or isinstance(error, str)):
        raise _fail("ok/error", "true or false, and a string or null", 1)
    if interval is not None and (not isinstance(interval, (int, float)) or isinstance(interval, bool) or interval < 0):
        raise _fail("interval_s", "a non-negative number or null", _line_of(lines, "interval_s", 1))
    samples = _json_samples(data, lines)
    host = data.get("hostname")
    errors = (ErrorLine(_line_of(lines, '"error"', 1), f"ib_counters probe: {error or 'not ok'}"),) if (not ok or error) else ()
    return IbCounters(probe="ib_counters", schema_version=version, ok=ok, error=error,
                      hostname=host if isinstance(host, str) else None,
                      interval_s=float(interval) if interval is not None and len(samples) > 1 else None,
                      samples=max(len(samples), 1), ports=_json_ports(samples),
                      netdevs=_json_netdevs(data, lines), errors=errors)


def parse(text: str) -> IbCounters:
    """sysfs counter text or the probe JSON -> IbCounters; ParseError for anything else."""
    if text.lstrip().startswith("{"):
        return _parse_json(text)
    return _parse_text(text)
