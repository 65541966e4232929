"""Whether a text looks like nvml's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

_SNIFF = re.compile(r'"probe"\s*:\s*"nvml"')


def sniff(text: str) -> float:
    """0.95 for a JSON object whose first keys include "probe": "nvml"; 0 otherwise."""
    try:
        head = text[:4096]
        if head.lstrip().startswith("{") and _SNIFF.search(head):
            return 0.95
    except Exception:  # pragma: no cover - str methods on str do not raise
        return 0.0
    return 0.0
