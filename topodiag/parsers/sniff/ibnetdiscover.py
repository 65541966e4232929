"""Whether a text looks like ibnetdiscover's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._ladder import ladder
from ._masks import MASKED_GUID

_HEX = rf"(?:(?:0x)?[0-9a-fA-F]{{1,16}}|{MASKED_GUID})"  # a masked port GUID reads as None
_SNIFF_GENERATED = re.compile(r"^[ \t`]*#[ \t]*Topology file: generated on", re.M)
_SNIFF_NAME = rf"\"(?:[SHR]-(?:[0-9a-fA-F]{{16}}|{MASKED_GUID})|{MASKED_GUID})\""
_SNIFF_NODE = re.compile(rf"^[ \t`]*(?:Switch|Ca|Rt)[ \t]+[0-9]{{1,5}}[ \t]+{_SNIFF_NAME}", re.M)
_SNIFF_CONN = re.compile(
    rf"^[ \t`]*\[[0-9]{{1,5}}\](?:\[ext [0-9]{{1,5}}\])?(?:\({_HEX}\))?[ \t]*{_SNIFF_NAME}\[[0-9]{{1,5}}\]", re.M
)
_SNIFF_KV = re.compile(r"^[ \t`]*(?:switchguid|caguid)=0x[0-9a-fA-F]{1,16}", re.M)
_SNIFF_PORTS = re.compile(
    r"^[ \t`]*(?:SW|CA|RT)[ \t]+[0-9]{1,9}[ \t]+[0-9]{1,5}[ \t]+0x[0-9a-fA-F]{16}[ \t]+(?:[0-9]{1,2}x|\?\?)[ \t]+"
    r"(?:FDR10|[SDQFEHNX]DR|\?\?\?)",
    re.M,
)
_SNIFF_LIST = re.compile(r"^[ \t`]*(?:Switch|Ca|Rt|Router)[ \t]*:[ \t]*0x[0-9a-fA-F]{16}[ \t]+ports[ \t]+[0-9]{1,5}", re.M)
_SNIFF_OWN_FAILURE = re.compile(r"^ibnetdiscover: iberror: ", re.M)
# the banner or a node line; connection or ports-report lines; switchguid=/caguid= lines; a node list (so
# the refusal explains it); only its failure ("ibnetdiscover: iberror: failed: ..."): errors, no fabric
_RUNGS = ((0.95, _SNIFF_GENERATED), (0.95, _SNIFF_NODE), (0.85, _SNIFF_CONN), (0.85, _SNIFF_PORTS), (0.8, _SNIFF_KV),
          (0.6, _SNIFF_LIST), (0.6, _SNIFF_OWN_FAILURE))


def sniff(text: str) -> float:
    """0.95 for the "# Topology file" banner or a node line, 0.85 for connection or ports-report
    lines, 0.8 for switchguid=/caguid= lines, 0.6 for a node list (so the refusal explains it)."""
    return ladder(text[:65536], _RUNGS)
