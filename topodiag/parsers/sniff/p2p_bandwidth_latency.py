"""Whether a text looks like p2p_bandwidth_latency's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

_ACCESS_RE = re.compile(r"Device\s*=\s*(\d+)\s+(CAN|CANNOT)\s+Access\s+Peer\s+Device\s*=\s*(\d+)", re.I)


def sniff(text: str) -> float:
    """0.9 with the test's banner or a P2P=Enabled/Disabled matrix title; 0.5 for Device=a CAN Access
    Peer Device=b lines alone."""
    try:
        if "P2P (Peer-to-Peer) GPU Bandwidth Latency Test" in text:
            return 0.9
        if re.search(r"(?m)^[ \t]*(?:Unidirectional|Bidirectional)[ \t]+P2P=(?:Enabled|Disabled)[ \t]+Bandwidth", text) \
                or re.search(r"(?m)^[ \t]*P2P Connectivity Matrix", text):
            return 0.9
        if _ACCESS_RE.search(text):
            return 0.5
    except Exception:
        return 0.0
    return 0.0
