"""A sniff as data: a ladder of patterns, the first rung found giving the score. It imports nothing:
a sniff module on the prolog path (the IB ones) takes no other sniff's patterns with it."""

from __future__ import annotations

from typing import Sequence

# A rung: (score, a compiled pattern), or (score, (pattern, pattern, ...)) where all must find something.
Rung = tuple


def ladder(text: str, rungs: Sequence[Rung]) -> float:
    """The score of the first rung whose pattern -- or every pattern of whose tuple, searched in order
    -- finds something in `text`; 0.0 where none does. (A search over a str does not raise: the
    `try`/`except Exception` each sniff wrapped around its searches was never taken.)"""
    for score, found in rungs:
        if found.__class__ is tuple:
            if all(p.search(text) for p in found):
                return score
        elif found.search(text):
            return score
    return 0.0
