"""Whether a text looks like lspci_vvv's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

_BDF = r"(?:([0-9a-fA-F]{4}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])"
_HEADER_RE = re.compile(r"^" + _BDF + r" ([0-9A-Za-z][^:]{2,60}): (.*)$")


def sniff(text: str) -> float:
    """0.9 for LnkSta/ACSCtl lines with lspci device lines, 0.8 for a grepped paste of them."""
    try:
        head = text[:65536]
        if not any(k in head for k in ("ACSCtl:", "LnkSta:", "LnkCap:", "ACSCap:")):
            return 0.0
        for line in head.splitlines()[:400]:
            if _HEADER_RE.match(line.strip()):
                return 0.9
        return 0.8
    except Exception:
        return 0.0
