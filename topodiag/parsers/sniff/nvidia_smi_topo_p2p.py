"""Whether a text looks like nvidia_smi_topo_p2p's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ..base import ANSI_RE
from ._ladder import ladder

# [ \t], never \s, in a re.M pattern: `^\s*` runs over the newlines after every line start (quadratic).
_SNIFF_LEGEND = re.compile(r"^[ \t]*(?:OK[ \t]+= Status Ok|CNS[ \t]+= Chipset not supported)[ \t\r]*$", re.M)
_SNIFF_ROW = re.compile(r"^[ \t]*GPU[0-9]+[ \t]+(?:X[ \t]+(?:OK|CNS|GNS|TNS|NS|DR|U)|(?:OK|CNS|GNS|TNS|NS|DR|U)"
                        r"[ \t]+X)(?:[ \t]|$)", re.M)
_SNIFF_HEAD = re.compile(r"^[ \t]*GPU0(?:[ \t]+GPU[0-9]+)*[ \t]*$", re.M)


def sniff(text: str) -> float:
    """0.95 for the P2P legend ('OK   = Status Ok'), 0.9 for a 'GPU0  X  OK' row under a GPU-only header."""
    if "\x1b" in text:
        text = ANSI_RE.sub("", text)
    return ladder(text, ((0.95, _SNIFF_LEGEND), (0.9, (_SNIFF_ROW, _SNIFF_HEAD))))
