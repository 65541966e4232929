"""Whether a text looks like ib_counters's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

_SNIFF_PROBE = re.compile(r'"probe"\s*:\s*"ib_counters"')
_SNIFF_PORT = re.compile(r"infiniband/[A-Za-z0-9_.\-]+/ports/\d+/(?:hw_)?counters\b")
_SNIFF_ECN = re.compile(r"/class/net/[^/\s]+/ecn/roce_(?:np|rp)/enable/")
_SNIFF_PERF = re.compile(r"#\s*Port (?:extended )?counters:\s*Lid\s+\d+\s+port\s+\d+")


def sniff(text: str) -> float:
    """0.95 for the probe JSON, 0.9 for sysfs port counter paths, 0.85 for perfquery's counters header,
    0.7 for RoCE ECN switch paths."""
    try:
        if _SNIFF_PROBE.search(text):
            return 0.95
        if _SNIFF_PORT.search(text):
            return 0.9
        if _SNIFF_PERF.search(text):
            return 0.85
        if _SNIFF_ECN.search(text):
            return 0.7
    except Exception:  # pragma: no cover - regex search on str does not raise
        return 0.0
    return 0.0
