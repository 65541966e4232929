"""Whether a text looks like sysfs_infiniband's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

_SNIFF_PROBE = re.compile(r'"probe"\s*:\s*"(?:sysfs|pyverbs)"')
_SNIFF_SECTION = re.compile(r'"infiniband"\s*:\s*\[')


def sniff(text: str) -> float:
    """0.95 for a "probe": "sysfs" / "pyverbs" key, 0.5 for an "infiniband": [ section in JSON."""
    try:
        if _SNIFF_PROBE.search(text):
            return 0.95
        if text.lstrip().startswith("{") and _SNIFF_SECTION.search(text):
            return 0.5
    except Exception:  # pragma: no cover - regex search on str does not raise
        return 0.0
    return 0.0
