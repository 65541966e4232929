"""Whether a text looks like nccl_debug's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

_BARE_SNIFF_RE = re.compile(r"^[ \t>`*-]{0,8}[0-9]{1,7}\[[0-9a-fA-Fx]{0,16}\] -> [0-9]{1,7}\[[0-9a-fA-Fx]{0,16}\]"
                            r"(?: \[(?:send|receive)\])? via [A-Za-z]", re.M)
# A line is [ \t], never \s: in re.M, `^\s*` runs over the newlines after every line start (quadratic
# on a file of blank lines).
_SNIFF_VERSION = re.compile(r"^[ \t]*NCCL version [0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,4}", re.M)


def sniff(text: str) -> float:
    """0.8 when NCCL INFO/WARN lines or c10d watchdog NCCL lines appear; 0.5 for a banner alone, an
    application's "NCCL error in: ..." line, or for connection lines quoted without their tag ("9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA"); else 0."""
    try:
        if "NCCL INFO" in text or "NCCL WARN" in text:
            return 0.8
        if "ProcessGroupNCCL" in text and ("Watchdog" in text or "NCCL work" in text):
            return 0.8
        if _SNIFF_VERSION.search(text):
            return 0.5
        if "NCCL error in: " in text:  # an application's NCCL error (PyTorch), with its "Last error:" detail
            return 0.5
        if _BARE_SNIFF_RE.search(text):  # connection lines quoted without their tag
            return 0.5
    except Exception:
        return 0.0
    return 0.0
