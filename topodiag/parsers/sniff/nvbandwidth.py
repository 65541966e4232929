"""Whether a text looks like nvbandwidth's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

def sniff(text: str) -> float:
    """0.9 with the version banner or a "Running <testcase>." line followed by a memcpy title; 0 else."""
    try:
        if re.search(r"(?m)^[ \t]*nvbandwidth Version:", text):
            return 0.9
        if re.search(r"(?m)^[ \t]*(?:>[ \t]*)?Running [a-z_]{1,80}_(?:ce|sm|copy)\.?[ \t\r]*$", text) and "bandwidth (GB/s)" in text:
            return 0.9
        if re.search(r"(?m)^[ \t]*SUM [a-z_]{1,80}_(?:ce|sm|copy) [0-9]", text) and re.search(r"(?m)^[ \t]*memcpy (?:CE|SM) ", text):
            return 0.9
    except Exception:
        return 0.0
    return 0.0
