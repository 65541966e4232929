"""Whether a text looks like nvidia_smi_nvlink_info's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._common import sniff_mode

_SNIFF_INFO = re.compile(
    r"^[ \t]*(?:(?:NVLE|NVLink Encryption): [A-Za-z]|Firmware Version:[ \t\r]*$|(?:MSE|NETIR)[A-Z ]{0,8}: [0-9]+:[0-9]+:[0-9]+)",
    re.M)


def sniff(text: str) -> float:
    """0.95 for NVLE / firmware lines under a GPU header, 0.7 for them alone, else 0."""
    return sniff_mode(text, _SNIFF_INFO, 0.7)
