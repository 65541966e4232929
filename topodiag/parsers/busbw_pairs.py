"""Parser for per-pair busbw tables that people make by hand: nccl-tests run on each pair of nodes,
one line per pair with the busbw it reached, to find the node that slows every job it is in.

    se02gn644,se02gn699     49.36
    se02gn632,se02gn641     88.36
    se02gn284,se02gn678     49.28  # crossing TOR
    node-a <-> node-b: 45.1 GB/s
    | node-a | node-b | 180.2 |

A line holds two host names (a letter first; separated by a comma, whitespace, "<->", "<=>", "->",
"&", "+", "/", " and " or table bars) and a number (GB/s; "GB/s" may follow); a `#` comment after it
is kept as the pair's note. Header rows, separators, prompts, fences and prose are skipped. A file
whose lines are mostly other text is not this source (sniff scores how many lines are pairs).

JSON: {source: "busbw_pairs", pairs: [{a, b, busbw_gbps, line_no, note}], hosts: [sorted],
skipped: n}. ParseError when fewer than two pair lines are found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .base import ParseError, ParserInfo
from .sniff.busbw_pairs import _match, sniff

INFO = ParserInfo(
    source="busbw_pairs",
    tool="per-pair nccl-tests busbw table (made by hand: host_a,host_b busbw)",
    description="busbw of nccl-tests run on pairs of nodes, one pair per line: names the slow node",
)
SOURCE = INFO.source

MAX_PAIRS = 100000


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    busbw_gbps: float
    line_no: int
    note: Optional[str] = None


@dataclass(frozen=True)
class BusbwPairs:
    source: str
    pairs: tuple[Pair, ...]
    hosts: tuple[str, ...]
    skipped: int


def parse(text: str) -> BusbwPairs:
    pairs: list[Pair] = []
    skipped = 0
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _match(line)
        if m is None:
            skipped += 1
            continue
        if len(pairs) < MAX_PAIRS:
            pairs.append(Pair(m[1], m[2], float(m[3]), n, (m[4] or "").strip() or None))
    if len(pairs) < 2:
        raise ParseError("expected a per-pair busbw table: lines 'host_a,host_b  busbw' (two host names and "
                         "a GB/s figure), found fewer than two", len(text.splitlines()))
    hosts = sorted({h for p in pairs for h in (p.a, p.b)})
    return BusbwPairs(SOURCE, tuple(pairs), tuple(hosts), skipped)
