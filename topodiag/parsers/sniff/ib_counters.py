"""Whether a text looks like ib_counters's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._ladder import ladder

_SNIFF_PROBE = re.compile(r'"probe"\s*:\s*"ib_counters"')
_SNIFF_PORT = re.compile(r"infiniband/[A-Za-z0-9_.\-]+/ports/\d+/(?:hw_)?counters\b")
_SNIFF_ECN = re.compile(r"/class/net/[^/\s]+/ecn/roce_(?:np|rp)/enable/")
_SNIFF_PERF = re.compile(r"#\s*Port (?:extended )?counters:\s*Lid\s+\d+\s+port\s+\d+")


def sniff(text: str) -> float:
    """0.95 for the probe JSON, 0.9 for sysfs port counter paths, 0.85 for perfquery's counters header,
    0.7 for RoCE ECN switch paths."""
    return ladder(text, ((0.95, _SNIFF_PROBE), (0.9, _SNIFF_PORT), (0.85, _SNIFF_PERF), (0.7, _SNIFF_ECN)))
