"""Parser for `mlnx_qos -i <netdev>` (MLNX_OFED / mlnx-tools): the QoS of a RoCE port: the trust
mode (pcp or dscp), the DSCP-to-priority map, which priorities have PFC, and the traffic classes.

    DCBX mode: OS controlled
    Priority trust state: dscp
    dscp2prio mapping:
            prio:0 dscp:07,06,05,04,03,02,01,00,
            ...
            prio:3 dscp:31,30,29,28,27,26,25,24,
    Cable len: 7
    PFC configuration:
            priority    0   1   2   3   4   5   6   7
            enabled     0   0   0   1   0   0   0   0
    tc: 0 ratelimit: unlimited, tsa: vendor
             priority:  1

Several runs in one paste are kept apart: a new section starts at a `mlnx_qos -i IF` command line
(its interface named) or at a second "DCBX mode" / "Priority trust state" line. A shortened paste
("dscp2prio mapping:  prio:0 dscp:07,...,00   prio:5 dscp:59", "PFC configuration:  enabled 0 0 0
0 0 1 0 0") is read the way a person reads it.

JSON: {source, sections: [{interface (null when the paste does not name it), dcbx_mode, trust
("pcp" | "dscp" | raw), dscp2prio {dscp: prio}, pfc_enabled [8 bools] | null, pfc_buffer [8 ints] |
null, tcs: [{tc, ratelimit, tsa, priorities}], line_no, trust_line, pfc_line}]}. ParseError when
there is neither a trust line nor a PFC configuration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .base import ParseError, ParserInfo, clean_lines, search_after
from .sniff.mlnx_qos import sniff

INFO = ParserInfo(
    source="mlnx_qos",
    tool="mlnx_qos -i <netdev>",
    description="RoCE port QoS (mlnx_qos): trust mode pcp/dscp, DSCP-to-priority map, PFC-enabled priorities",
    # live: once per RoCE interface ("{netdev}": topodiag/live/netdevs.py), 10 s each (a Python tool), 30 s in all
    argv=("mlnx_qos", "-i", "{netdev}"),
    timeout_s=30.0,
)
SOURCE = INFO.source

# "mlnx_qos [options] -i IF", read as the command word then its -i option (base.search_after: one
# regex with a lazy run of options was quadratic on a line repeating "mlnx_qos x": 88 KB took 11 s)
CMD_RE = re.compile(r"\bmlnx_qos\s")
IFACE_RE = re.compile(r"(?<!\S)(?:-i|--interface)[\s=]+(?P<ifname>[A-Za-z0-9_.@\-]{1,40})")
# Never two blank runs side by side and no lazy run before `\s*$` (issue 16: each is quadratic on
# widened blanks).
DCBX_RE = re.compile(r"^\s*DCBX mode:[ \t]*(?P<mode>(?:\S(?:.*\S)?)?)[ \t\r]*$")
TRUST_RE = re.compile(r"^\s*Priority trust (?:state|mode):\s*(?P<trust>\S+)")
# "prio:N dscp:<list>", the list cut in code (prio_dscp_lists): `dscp:[ \t]*(?P<list>...)(?=[ \t]+prio:|[ \t\r]*$)`
# rescanned the blanks after 'dscp:' in its lookahead at every step (quadratic on a run of tabs).
PRIO_DSCP_HEAD_RE = re.compile(r"prio:[ \t]*(?P<prio>[0-7])[ \t]+dscp:")
_DSCP_LIST_CHARS = frozenset(" \t0123456789,.")
_BLANK_TAIL_RE = re.compile(r"[ \t\r]*\Z")
PFC_HEAD_RE = re.compile(r"^\s*PFC configuration:\s*(?P<rest>.*)$")
ROW_RE = re.compile(r"^\s*(?P<name>priority|enabled|buffer)[ \t]+(?P<values>[0-9]+(?:[ \t]*[0-9]+){0,7})[ \t\r]*$")
INLINE_ENABLED_RE = re.compile(r"\benabled\s+(?P<values>(?:[01]\s+){7}[01])\b")
# the rate limit is stripped in code: `ratelimit:\s*(?P<rl>[^,]*)` took the blanks two ways (quadratic)
TC_RE = re.compile(r"^\s*tc:\s*(?P<tc>\d)\s+ratelimit:(?P<rl>[^,]*),\s*tsa:\s*(?P<tsa>\S+)")
TC_PRIO_RE = re.compile(r"^\s*priority:[ \t]*(?P<list>[0-9](?:[ \t]*[0-9])*)[ \t\r]*$")


@dataclass(frozen=True)
class TrafficClass:
    tc: int
    ratelimit: str
    tsa: str
    priorities: tuple


@dataclass(frozen=True)
class QosSection:
    interface: Optional[str]
    dcbx_mode: Optional[str]
    trust: Optional[str]
    dscp2prio: dict
    pfc_enabled: Optional[tuple]
    pfc_buffer: Optional[tuple]
    tcs: tuple
    line_no: int
    trust_line: Optional[int]
    pfc_line: Optional[int]


@dataclass(frozen=True)
class MlnxQos:
    source: str = SOURCE
    sections: tuple = ()


@dataclass
class _Section:
    line_no: int
    interface: Optional[str] = None
    dcbx_mode: Optional[str] = None
    trust: Optional[str] = None
    dscp2prio: dict = field(default_factory=dict)
    pfc_enabled: Optional[tuple] = None
    pfc_buffer: Optional[tuple] = None
    tcs: list = field(default_factory=list)
    trust_line: Optional[int] = None
    pfc_line: Optional[int] = None

    def has_data(self) -> bool:
        return self.trust is not None or self.pfc_enabled is not None

    def freeze(self) -> QosSection:
        return QosSection(self.interface, self.dcbx_mode, self.trust, dict(sorted(self.dscp2prio.items())),
                          self.pfc_enabled, self.pfc_buffer, tuple(self.tcs), self.line_no, self.trust_line,
                          self.pfc_line)


def prio_dscp_lists(line: str) -> list[tuple[int, str]]:
    """Each 'prio:N dscp:<list>' of a line as (N, list): the list is blanks and [0-9,.] up to a blank run
    before the next 'prio:', or to the end of the line (blanks and CR after it allowed); anything else
    after 'dscp:' makes that pair no pair. Linear: each character is looked at a bounded number of times."""
    found = []
    for head in PRIO_DSCP_HEAD_RE.finditer(line):
        start = head.end()
        end = start
        while end < len(line) and line[end] in _DSCP_LIST_CHARS:
            end += 1
        if line.startswith("prio:", end):
            if end == start or line[end - 1] not in " \t":  # the next pair needs a blank before it
                continue
        elif end < len(line) and _BLANK_TAIL_RE.match(line, end) is None:
            continue
        found.append((int(head.group("prio")), line[start:end].strip(" \t")))
    return found


def _dscps(raw: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d{1,2}", raw) if int(x) < 64]


class _Reader:
    def __init__(self) -> None:
        self.sections: list[_Section] = []
        self.cur: Optional[_Section] = None
        self.pending_if: Optional[str] = None
        self.in_pfc = False

    def new(self, n: int) -> _Section:
        if self.cur is not None and self.cur.has_data():
            self.sections.append(self.cur)
        self.cur = _Section(n, interface=self.pending_if)
        self.in_pfc = False
        return self.cur

    def section(self, n: int) -> _Section:
        return self.cur if self.cur is not None else self.new(n)

    def line(self, n: int, line: str) -> None:
        m = search_after(line, CMD_RE, IFACE_RE)
        if m:
            self.pending_if = m[1].group("ifname")
            self.new(n)
            return
        m = DCBX_RE.match(line)
        if m:
            s = self.cur if self.cur is not None and self.cur.dcbx_mode is None and self.cur.trust is None else self.new(n)
            s.dcbx_mode = m.group("mode")[:60]
            return
        m = TRUST_RE.match(line)
        if m:
            s = self.cur if self.cur is not None and self.cur.trust is None else self.new(n)
            s.trust = m.group("trust").lower()[:20]
            s.trust_line = n
            return
        if self._pfc(n, line) or self._tc(line):
            return
        for prio, raw in prio_dscp_lists(line):
            for d in _dscps(raw):
                self.section(n).dscp2prio[d] = prio

    def _pfc(self, n: int, line: str) -> bool:
        m = PFC_HEAD_RE.match(line)
        if m:
            s = self.section(n)
            s.pfc_line = n
            self.in_pfc = True
            inline = INLINE_ENABLED_RE.search(m.group("rest"))
            if inline:
                s.pfc_enabled = tuple(v == "1" for v in inline.group("values").split())
            return True
        m = ROW_RE.match(line) if self.in_pfc else None
        if m:
            values = [int(v) for v in m.group("values").split()]
            if m.group("name") == "enabled" and len(values) == 8:
                self.section(n).pfc_enabled = tuple(v != 0 for v in values)
            elif m.group("name") == "buffer" and len(values) == 8:
                self.section(n).pfc_buffer = tuple(values)
            return True
        if self.in_pfc and line.strip() and not line.startswith((" ", "\t")):
            self.in_pfc = False
        return False

    def _tc(self, line: str) -> bool:
        m = TC_RE.match(line)
        if m and self.cur is not None:
            self.cur.tcs.append(TrafficClass(int(m.group("tc")), m.group("rl").strip()[:40], m.group("tsa")[:20], ()))
            return True
        m = TC_PRIO_RE.match(line)
        if m and self.cur is not None and self.cur.tcs:
            last = self.cur.tcs[-1]
            prios = tuple(int(p) for p in m.group("list").split() if p.isdigit() and int(p) < 8)
            self.cur.tcs[-1] = TrafficClass(last.tc, last.ratelimit, last.tsa, last.priorities + prios)
            return True
        return False


def parse(text: str) -> MlnxQos:
    reader = _Reader()
    first = None
    for n, line in enumerate(clean_lines(text), 1):
        if first is None and line.strip():
            first = (n, line.strip())
        reader.line(n, line)
    if reader.cur is not None and reader.cur.has_data():
        reader.sections.append(reader.cur)
    if not reader.sections:
        if first is None:
            raise ParseError("expected mlnx_qos output (Priority trust state, PFC configuration), found no text", 0)
        raise ParseError(f"expected mlnx_qos output (Priority trust state, PFC configuration), found '{first[1][:60]}'",
                         first[0])
    return MlnxQos(sections=tuple(s.freeze() for s in reader.sections))
