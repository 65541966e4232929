"""Whether a text looks like ibstatus's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._ladder import ladder

_SNIFF_HEADER = re.compile(r"^[ \t]*`?Infiniband device '[^'\n]{0,256}' port [0-9]{1,18} status:", re.M)
_SNIFF_FATAL = re.compile(r"Fatal error:\s+(?:device '[^']*': sys files not found|No devices)")


def sniff(text: str) -> float:
    """0.9 for an ibstatus port header, 0.85 for the script's 'sys files not found' failure."""
    return ladder(text, ((0.9, _SNIFF_HEADER), (0.85, _SNIFF_FATAL)))
