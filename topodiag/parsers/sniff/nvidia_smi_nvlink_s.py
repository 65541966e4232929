"""Whether a text looks like nvidia_smi_nvlink_s's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._common import ALL_INACTIVE_RE, UNSUPPORTED_RE, SNIFF_HEADER as _SNIFF_HEADER, sniff_failure

SOURCE = "nvidia_smi_nvlink_s"

_SNIFF_STATUS = re.compile(r"^[ \t]*Link [0-9]{1,4}: (?:[0-9]{1,6}(?:\.[0-9]{1,6})? GB/s|<inactive>)[ \t\r]*$", re.M)
_SNIFF_OTHER = re.compile(
    r"^[ \t]*(?:Link [0-9]{1,4}, (?:P2P is supported|Access to system memory supported|SLI is supported): |"
    r"Link [0-9]{1,4}: (?:Replay|Recovery|CRC) Errors: |Link [0-9]{1,4}: Remote Device |Link [0-9]{1,4}: Data [TR]x: |"
    r"NVLE: |Firmware Version:)", re.M)


def sniff(text: str) -> float:
    """0.95 for link status lines under a GPU header, 0.9 for the NVML all-inactive line, 0.6 for
    another `nvidia-smi nvlink` mode (so parsing it gives the clear refusal), else 0."""
    try:
        header = _SNIFF_HEADER.search(text) is not None
        if _SNIFF_STATUS.search(text):
            return 0.95 if header else 0.8
        if ALL_INACTIVE_RE.search(text):
            return 0.9
        if header and UNSUPPORTED_RE.search(text):
            return 0.85
        if _SNIFF_OTHER.search(text):
            return 0.6 if header else 0.5
        if sniff_failure(text[:8192], SOURCE):
            return 0.4  # only nvidia-smi's failure (nvidia_smi_q scores it higher)
    except Exception:  # pragma: no cover - regex search on str does not raise
        return 0.0
    return 0.0
