"""Whether a text looks like ethtool_stats's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

CMD_RE = re.compile(r"\bethtool\s+(?:-S|--statistics)\s+(?P<ifname>[A-Za-z0-9_.@\-]{1,40})")
# one pattern for a line and, multi-line, for sniffing a text (bounded, no two blank runs side by side)
_HEADER = r"^[ \t]*NIC statistics(?:[ \t]*\([^)\n]{0,80}\))?[ \t]*:[ \t\r]*$"
_SNIFF_HEADER_RE = re.compile(_HEADER, re.M)


def sniff(text: str) -> float:
    """0.85 for a "NIC statistics:" header, 0.5 for an `ethtool -S` command line."""
    try:
        if _SNIFF_HEADER_RE.search(text):
            return 0.85
        if CMD_RE.search(text):
            return 0.5
    except Exception:  # pragma: no cover
        return 0.0
    return 0.0
