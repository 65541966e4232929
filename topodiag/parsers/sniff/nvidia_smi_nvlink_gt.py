"""Whether a text looks like nvidia_smi_nvlink_gt's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._common import sniff_mode

_SNIFF_COUNTER = re.compile(r"^[ \t]*Link [0-9]{1,4}: (?:Data|Raw) [TR]x: [0-9]", re.M)


def sniff(text: str) -> float:
    """0.95 for Data/Raw Tx/Rx lines under a GPU header, 0.8 for them alone, else 0."""
    return sniff_mode(text, _SNIFF_COUNTER)
