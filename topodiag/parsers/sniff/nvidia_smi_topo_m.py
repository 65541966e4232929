"""Whether a text looks like nvidia_smi_topo_m's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ..base import ANSI_RE
from ._common import sniff_failure

SOURCE = "nvidia_smi_topo_m"

_SNIFF_HEADER = re.compile(r"^[ \t]*GPU[0-9]+(?:[ \t]+[\w.:-]+)*[ \t]+CPU Affinity\b", re.M)
_SNIFF_ROW = re.compile(r"^[ \t]*GPU[0-9]+[ \t]+(?:X[ \t]+(?:SYS|SOC|NODE|PHB|PXB|PIX|NV[0-9]+)|"
                        r"(?:SYS|SOC|NODE|PHB|PXB|PIX|NV[0-9]+)[ \t]+X)\b", re.M)
_SNIFF_TOPO_HEAD = re.compile(r"^[ \t]*GPU0[ \t]+(?:GPU1|NIC0|mlx[0-9]_[0-9]+)\b", re.M)
_SNIFF_LEGEND = re.compile(r"NV#\s+= Connection traversing a bonded set of # NVLinks")


def sniff(text: str) -> float:
    """0.95 for a 'GPU0 ... CPU Affinity' header, 0.9 for a 'GPU0  X  NV18' row under a GPU header,
    0.6 for the topo legend's NV# line alone."""
    try:
        if "\x1b" in text:
            text = ANSI_RE.sub("", text)
        if _SNIFF_HEADER.search(text):
            return 0.95
        if _SNIFF_ROW.search(text) and _SNIFF_TOPO_HEAD.search(text):
            return 0.9
        if _SNIFF_LEGEND.search(text):
            return 0.6
        if sniff_failure(text[:8192], SOURCE):
            return 0.4  # only nvidia-smi's failure (nvidia_smi_q scores it higher)
    except Exception:  # pragma: no cover - regex search on str does not raise
        return 0.0
    return 0.0
