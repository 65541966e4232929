"""Whether a text looks like ibv_devinfo's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._ladder import ladder

_SNIFF_STRONG = re.compile(r"^[ \t`]*hca_id:[ \t]*\S+", re.M)
# `phys_state:[ \t]+[A-Z_ ]+`: both runs took blanks (quadratic on a line of blanks); the state starts with a letter
_SNIFF_PORT = re.compile(
    r"^[ \t]*(?:GID\[\s*[0-9]{1,18}\]:|state:[ \t]+PORT_[A-Z_]+ \([0-9]\)|phys_state:[ \t]+[A-Z_][A-Z_ ]* \([0-9]\))", re.M)
_SNIFF_LIST = re.compile(r"^[0-9]{1,18} HCAs? found:[ \t]*\r?\n[ \t]+\S", re.M)
_SNIFF_FAIL = re.compile(r"^(?:No IB devices found|Failed to get IB devices list|0 HCAs found:)", re.M)


def sniff(text: str) -> float:
    """0.95 'hca_id:', 0.8 verbs port lines (GID[ n]:, PORT_ACTIVE (4)), 0.7 the -l list, 0.6 its failure."""
    return ladder(text, ((0.95, _SNIFF_STRONG), (0.8, _SNIFF_PORT), (0.7, _SNIFF_LIST), (0.6, _SNIFF_FAIL)))
