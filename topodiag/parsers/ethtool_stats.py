"""Parser for `ethtool -S <netdev>`: a NIC's statistics, one `name: value` a line under "NIC
statistics:". Kept whole (names as the driver prints them: mlx5 `rx_discards_phy`,
`rx_prio3_pause`, `tx_pause_ctrl_phy`, per-queue `rxq0: rx_bytes`, `[0]: rx_bytes`); the RoCE rules
read the pause and discard counters.

    $ ethtool -S ens1f0np0 | grep -E 'pause|discard'
         rx_discards_phy: 0
         rx_prio3_pause: 142

Several outputs in one paste are kept apart: a new section starts at an `ethtool -S IF` command line
(its interface named) or at a second "NIC statistics:" line. A grep'd output without the header
is read when the paste shows the `ethtool -S` command.

JSON: {source, sections: [{interface | null, stats {name: int}, line_no, lines {name: line_no}}]}.
ParseError when there is neither a "NIC statistics:" header nor an `ethtool -S` command with
statistics under it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .base import ParseError, ParserInfo, clean_lines
from .sniff.ethtool_stats import CMD_RE, _HEADER, sniff

INFO = ParserInfo(
    source="ethtool_stats",
    tool="ethtool -S <netdev>",
    description="NIC statistics (ethtool -S): RoCE pause (PFC) and discard counters",
    # live: once per RoCE interface ("{netdev}": topodiag/live/netdevs.py), 5 s each, 15 s in all
    argv=("ethtool", "-S", "{netdev}"),
    timeout_s=15.0,
)
SOURCE = INFO.source

HEADER_RE = re.compile(_HEADER)
INT_RE = re.compile(r"^-?\d{1,20}$")
MAX_STATS = 20000


@dataclass(frozen=True)
class StatsSection:
    interface: Optional[str]
    stats: dict
    line_no: int
    lines: dict


@dataclass(frozen=True)
class EthtoolStats:
    source: str = SOURCE
    sections: tuple = ()


@dataclass
class _Section:
    interface: Optional[str]
    line_no: int
    header: bool = False
    stats: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict)

    def freeze(self) -> StatsSection:
        return StatsSection(self.interface, dict(self.stats), self.line_no, dict(self.lines))


def _stat(line: str) -> Optional[tuple[str, int]]:
    """'     rx_prio3_pause: 142' -> ('rx_prio3_pause', 142); 'rxq0: rx_bytes: 17' keeps 'rxq0: rx_bytes'."""
    if line[:1] not in (" ", "\t"):
        return None
    name, sep, value = line.rpartition(":")
    name, value = name.strip(), value.strip()
    if not sep or not name or len(name) > 120 or not INT_RE.match(value):
        return None
    return name, int(value)


def parse(text: str) -> EthtoolStats:
    sections: list[_Section] = []
    cur: Optional[_Section] = None
    first = None
    for n, line in enumerate(clean_lines(text), 1):
        if first is None and line.strip():
            first = (n, line.strip())
        m = CMD_RE.search(line)
        if m:
            cur = _Section(m.group("ifname"), n)
            sections.append(cur)
            continue
        if HEADER_RE.match(line):
            if cur is None or cur.header or cur.stats:
                cur = _Section(cur.interface if cur is not None and not cur.stats and not cur.header else None, n)
                sections.append(cur)
            cur.header = True
            continue
        stat = _stat(line) if cur is not None and len(cur.stats) < MAX_STATS else None
        if stat is not None:
            cur.stats[stat[0]] = stat[1]
            cur.lines[stat[0]] = n
    found = [s for s in sections if s.stats]
    if not found:
        if first is None:
            raise ParseError("expected ethtool -S output (NIC statistics:), found no text", 0)
        where = next((s.line_no for s in sections), first[0])
        shown = first[1] if not sections else "no statistics under it"
        raise ParseError(f"expected ethtool -S output (NIC statistics: and name: value lines), found '{shown[:60]}'",
                         where)
    return EthtoolStats(sections=tuple(s.freeze() for s in found))
