"""Whether a text looks like iblinkinfo's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._ladder import ladder
from ._masks import MASKED_GUID, MASKED_LID

_SNIFF_LINK = re.compile(
    rf"^[ \t`]*(?:(?:0x[0-9a-fA-F]{{16}}|{MASKED_GUID})[ \t]+(?:\"[^\"\n]{{0,200}}\"[ \t]+)?)?"
    rf"(?:[0-9]{{1,9}}|{MASKED_LID})[ \t]+[0-9]{{1,5}}\[[ 0-9]{{0,5}}\][ \t]*==\(",
    re.M,
)
_SNIFF_HEADER = re.compile(r"^[ \t`]*(?:CA|Switch|Router): [^\n]{0,300}:[ \t]*\r?$", re.M)
_SNIFF_OWN_FAILURE = re.compile(r"^iblinkinfo: iberror: ", re.M)
# a port line under a node header; port lines alone; only its failure ("iblinkinfo: iberror: failed:
# ..."): parsed as errors, no fabric
_RUNGS = ((0.95, (_SNIFF_LINK, _SNIFF_HEADER)), (0.9, _SNIFF_LINK), (0.6, _SNIFF_OWN_FAILURE))


def sniff(text: str) -> float:
    """0.95 for a node header and a "==(...)==>" port line, 0.9 for port lines alone."""
    return ladder(text[:65536], _RUNGS)
