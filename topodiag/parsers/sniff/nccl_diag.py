"""Whether a text looks like nccl_diag's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

def sniff(text: str) -> float:
    """0.85 when an NCCL DIAG line appears: above nccl_debug's 0.8, so `parse` names this report; an NCCL log
    holding one is read as both (detection lists both sources)."""
    try:
        return 0.85 if re.search(r"(?m)NCCL DIAG (?:===|\[OK\]|\[INFO\]|NCCL diagnostics)", text) else 0.0
    except Exception:
        return 0.0
