"""Whether a text looks like mlnx_qos's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations


def sniff(text: str) -> float:
    """0.9 with a trust line and a PFC configuration; 0.5 for the mlnx_qos command with either."""
    try:
        trust = "Priority trust state" in text
        pfc = "PFC configuration" in text
        if trust and pfc:
            return 0.9
        if (trust or pfc) and "mlnx_qos" in text:
            return 0.5
    except Exception:  # pragma: no cover
        return 0.0
    return 0.0
