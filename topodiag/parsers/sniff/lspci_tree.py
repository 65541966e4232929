"""Whether a text looks like lspci_tree's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

_SNIFF_RE = re.compile(r"^[ \t]*-(?:\+-)?\[[0-9a-fA-F]{4}:[0-9a-fA-F]{2}\]-[+\\-]", re.M)


def sniff(text: str) -> float:
    """0.9 when a root line ("-[0000:00]-+-", "-+-[0000:00]-+-") starts the tree."""
    try:
        return 0.9 if _SNIFF_RE.search(text[:65536]) else 0.0
    except Exception:
        return 0.0
