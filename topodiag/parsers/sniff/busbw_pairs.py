"""Whether a text looks like busbw_pairs's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re
from typing import Optional

# Linear on any line: no two runs that can match the same blank stand side by side (`\s*\|?\s*` is
# quadratic on a line of blanks, `\s*(?:GB/s)?\s*\|?\s*` of degree four), blanks are [ \t], digits [0-9],
# and the figure is set off from the second host by a blank or a separator.
_HOST = r"[A-Za-z][A-Za-z0-9_.:-]{0,254}[A-Za-z0-9]"
_SEP = r"[ \t]*(?:,|<->|<=>|->|&|\+|/|\band\b|\|)[ \t]*|[ \t]+"
PAIR_RE = re.compile(rf"^[ \t]*(?:\|[ \t]*)?({_HOST})(?:{_SEP})({_HOST})(?:[ \t]*[|:,][ \t]*|[ \t]+)"
                     r"([0-9]{1,12}(?:\.[0-9]{1,12})?)[ \t]*(?:GB/s[ \t]*)?(?:\|[ \t]*)?(?:#[ \t]*(.*))?$")
MAX_LINE = 1024  # a pair line is two host names and a figure: longer lines are not pair lines


def _match(line: str) -> Optional[re.Match]:
    if len(line) > MAX_LINE:
        return None
    m = PAIR_RE.match(line)
    if m is None or m[1] == m[2]:
        return None
    if m[1].lower() in ("gpu", "nic", "rank", "size", "node", "host") or m[2].lower() in ("gpu", "nic", "rank"):
        return None
    return m


def sniff(text: str) -> float:
    """0.7 when most non-blank lines (at least three) are pair lines, else 0."""
    try:
        lines = [ln for ln in text.splitlines()[:400] if ln.strip() and not ln.lstrip().startswith(("#", "```", "$"))]
        hits = sum(1 for ln in lines if _match(ln))
        return 0.7 if hits >= 3 and hits * 10 >= len(lines) * 6 else 0.0
    except Exception:
        return 0.0
