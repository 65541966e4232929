"""Possessive quantifiers where `re` has them (Python 3.11 and later), greedy ones before.

A few line patterns (the kernel log's line key, _kernel_log_keys.py; the plain rows of nccl-tests,
nccl_tests/read.py) write their runs possessive ("*+", "++", "?+", "{m,n}+"): what follows each run
cannot start inside it, so giving back a character could never lead to a match, and the possessive
form only spares the engine the tries. Python 3.10's `re` refuses that syntax ("multiple repeat"),
and the project supports 3.10 (pyproject.toml), where the pattern is compiled greedy: the same
matches, a little slower (tests/parsers/test_possessive.py holds each such pattern, possessive and
greedy, to the same matches).
"""

from __future__ import annotations

import re
import sys
from typing import AnyStr

SUPPORTED = sys.version_info >= (3, 11)
_BOUNDS = re.compile(r"\{(?:[0-9]+(?:,[0-9]*)?|,[0-9]+)\}")  # {m}, {m,}, {m,n}, {,n}


def possessive(pattern: AnyStr) -> AnyStr:
    """`pattern` as written where `re` reads possessive quantifiers, else `greedy(pattern)`."""
    return pattern if SUPPORTED else greedy(pattern)


def greedy(pattern: AnyStr) -> AnyStr:
    """`pattern` with each possessive quantifier made greedy: the "+" that follows a quantifier ("*",
    "+", "?", "{m,n}") dropped, outside a character class and not escaped."""
    if isinstance(pattern, bytes):
        return greedy(pattern.decode("latin-1")).encode("latin-1")
    out: list[str] = []
    i, n = 0, len(pattern)
    quantified = False  # the last token was a quantifier a "+" would make possessive
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            quantified = False
            continue
        if ch == "[":  # a class, to its closing "]" (a "]" first in it, or after "^", is a member)
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            out.append(pattern[i:j + 1])
            i = j + 1
            quantified = False
            continue
        if ch == "+" and quantified:  # possessive: dropped
            i += 1
            quantified = False
            continue
        if ch in "*+":
            quantified = True
        elif ch == "?":
            # "(?" opens a group's syntax; a "?" after a quantifier makes it lazy (no "+" may follow)
            quantified = not (out and out[-1] == "(") and not quantified
        elif ch == "{" and _BOUNDS.match(pattern, i):
            m = _BOUNDS.match(pattern, i)
            out.append(m.group())
            i = m.end()
            quantified = True
            continue
        else:
            quantified = False
        out.append(ch)
        i += 1
    return "".join(out)
