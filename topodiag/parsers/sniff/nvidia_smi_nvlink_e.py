"""Whether a text looks like nvidia_smi_nvlink_e's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._common import sniff_mode

_SNIFF_COUNTER = re.compile(
    r"^[ \t]*Link [0-9]{1,4}: [A-Za-z][A-Za-z0-9 ]{0,60}?(?:Errors|errors|Errors - [0-9]{1,2}|events|discards|packets|"
    r"bytes|BER|Blocks|Lane [0-9]{1,2}|Total): [0-9N]", re.M)


def sniff(text: str) -> float:
    """0.95 for counter lines under a GPU header, 0.8 for counter lines alone, else 0 (the NVML
    all-inactive line alone is every mode's: `nvidia_smi_nvlink_s` claims it)."""
    return sniff_mode(text, _SNIFF_COUNTER)
