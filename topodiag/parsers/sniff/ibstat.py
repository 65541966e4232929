"""Whether a text looks like ibstat's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._ladder import ladder

_NODE = r"(CA|Switch|Router|iWARP RNIC|\?\?\?)"
_SNIFF_CA = re.compile(rf"^[ \t`]*{_NODE}:? '[^']*'[ \t`]*\r?\n(?:[^\n]*\n){{0,2}}?[ \t`]*{_NODE} type:", re.M)
_SNIFF_PANIC = re.compile(r"ibpanic: \[[0-9]{1,18}\] main: (?:stat of IB device|'[^']*' IB device can't be found|can't)")
_SNIFF_PORT = re.compile(r"^[ \t]*Physical state: \w{1,40}[ \t\r]*\n[ \t]*Rate: [0-9.]+", re.M)


def sniff(text: str) -> float:
    """0.95 for "CA 'x'" followed by "CA type:", 0.9 for ibstat's ibpanic, 0.7 for a bare port block."""
    return ladder(text, ((0.95, _SNIFF_CA), (0.9, _SNIFF_PANIC), (0.7, _SNIFF_PORT)))
