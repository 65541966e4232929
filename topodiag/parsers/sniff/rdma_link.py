"""Whether a text looks like rdma_link's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._ladder import ladder

_SNIFF_TEXT = re.compile(
    r"^[ \t>`]*(?:link[ \t]+[^\s/]{1,256}/[0-9]{1,9}:?|[0-9]{1,9}/[0-9]{1,9}:[ \t]+[^\s/]{1,256}/[0-9]{1,9}:)[ \t]+"
    r"(?:subnet_prefix|lid|sm_lid|state|physical_state|netdev)\s", re.M)  # one line: [ \t], bounded names
_SNIFF_JSON = re.compile(r"\"ifname\"\s*:\s*\"[^\"]*\"\s*,\s*\"port\"\s*:|\"port\"\s*:\s*[0-9]+\s*,\s*\"ifname\"")
_SNIFF_JSON_STATE = re.compile(r"\"physical_state\"\s*:\s*\"[A-Z_]+\"")


def sniff(text: str) -> float:
    """0.9 for a `link <dev>/<port> state|subnet_prefix ...` line (either text form), 0.85 for
    rdma -j link JSON (objects with ifname, port and physical_state)."""
    return ladder(text, ((0.9, _SNIFF_TEXT), (0.85, (_SNIFF_JSON, _SNIFF_JSON_STATE))))
