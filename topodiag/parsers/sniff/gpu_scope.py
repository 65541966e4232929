"""Whether a text looks like gpu_scope's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations


def sniff(text: str) -> float:
    try:
        return 0.95 if '"probe": "gpu_scope"' in text[:2000] else 0.0
    except Exception:
        return 0.0
