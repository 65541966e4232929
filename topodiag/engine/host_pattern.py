"""Host patterns of a site config: shell globs and node ranges, matched without a regex engine.

    gpu017             the host itself
    gpu*   *.rack3     `*` any run of characters, `?` one character
    n0[a-c]  x[!0-9]   a class of characters (`!` or `^` first negates it)
    gpu[001-064,100]   a node range, as NHC, Slurm and ClusterShell write them: numbers and ranges
                       between brackets. A zero-padded lower bound fixes the width (`[001-064]`:
                       gpu001 to gpu064, never gpu1); an unpadded one means the number as written
                       (`[1-64]`: gpu1 to gpu64, not gpu01). Several ranges in one pattern are fine
                       (`rack[1-2]-n[01-16]`). Brackets of digits only are always a range:
                       `[13]` is the number 13; write `[1,3]` for "1 or 3".

A pattern matches the whole host name, case-sensitively. Nothing is expanded: a range is a list
of (low, high, width) intervals and a run of digits in the host is tested against it, so
`[0-99999999999999]` costs what `[0-9]` costs. Matching walks the host once, keeping the set of
pattern positions it can be at (a glob's `*` never backtracks): at most (pattern tokens x host
characters x a range's digit count) steps. A pattern is at most MAX_PATTERN characters; a host
longer than MAX_HOST (no DNS name is) matches no pattern.

Old site configs used `/regex/` patterns. `from_regex` translates the simple ones into a glob:
`^` and `$` anchors (a missing one becomes `*`), literal characters and escaped punctuation (`\\.`),
`.` (`?`), `.*` (`*`), `.+` (`?*`), `\\d` and classes without a repeat (`[0-9]`, `[a-z]`, `[^0-9]`).
Any other regex (`+` or `{m,n}` after anything but `.`, groups, `|`, `\\w`, flags, lookarounds...)
is refused in one line that says how to write it as a glob or a range.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Optional

MAX_PATTERN = 1000  # characters of one pattern
MAX_HOST = 253  # a DNS name's length
LIT, ANY, STAR, CLASS, RANGE = "lit", "any", "star", "class", "range"
_RANGE_CHARS = frozenset("0123456789,- ")
HOW = ("write a glob or a node range instead: * any run, ? one character, [a-z] a class, "
       "gpu[001-064,100] numbers")


class PatternError(ValueError):
    """A host pattern that cannot be used (one line, without the file and key)."""


@dataclass(frozen=True)
class Range:
    """`[001-064,100]`: the widths it allows, each with its disjoint sorted (low, high) intervals."""

    spec: str
    by_width: tuple[tuple[int, tuple[int, ...], tuple[int, ...]], ...]  # (width, lows, highs)
    digits: int  # the most digits a number of this range is written with

    @classmethod
    def parse(cls, spec: str) -> "Range":
        groups: dict[int, list[tuple[int, int]]] = {}
        digits = 0
        for part in spec.replace(" ", "").split(","):
            lo, dash, hi = part.partition("-")
            hi = hi if dash else lo
            if not (lo.isdigit() and hi.isdigit() and lo.isascii() and hi.isascii()):
                raise PatternError(f"[{spec}] is not a list of numbers and ranges like 001-064,100")
            if int(hi) < int(lo):
                raise PatternError(f"[{spec}]: {lo}-{hi} runs backwards")
            width = len(lo) if lo.startswith("0") and len(lo) > 1 else 1
            groups.setdefault(width, []).append((int(lo), int(hi)))
            digits = max(digits, width, len(str(int(hi))))
        return cls(spec, tuple((w, *_merged(iv)) for w, iv in sorted(groups.items())), digits)

    def holds(self, run: str) -> bool:
        """Whether a run of digits is one of this range's numbers, written as the range writes it."""
        value = int(run)
        padded = len(run) > 1 and run[0] == "0"
        for width, lows, highs in self.by_width:
            if (width != len(run)) if padded else (width > len(run)):
                continue
            i = bisect.bisect_right(lows, value) - 1
            if i >= 0 and value <= highs[i]:
                return True
        return False

    def ends(self, host: str, start: int):
        """Where a number of this range that starts at `start` can end."""
        end = start
        while end < len(host) and end - start < self.digits and "0" <= host[end] <= "9":
            end += 1
            if self.holds(host[start:end]):
                yield end


def _merged(intervals: list[tuple[int, int]]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    lows: list[int] = []
    highs: list[int] = []
    for lo, hi in sorted(intervals):
        if highs and lo <= highs[-1] + 1:
            highs[-1] = max(highs[-1], hi)
        else:
            lows.append(lo)
            highs.append(hi)
    return tuple(lows), tuple(highs)


@dataclass(frozen=True)
class Glob:
    """A parsed host pattern: a tuple of (kind, argument) tokens."""

    text: str
    tokens: tuple = field(repr=False, compare=False, default=())

    @classmethod
    def parse(cls, text: str) -> "Glob":
        if len(text) > MAX_PATTERN:
            raise PatternError(f"longer than {MAX_PATTERN} characters")
        tokens: list[tuple[str, object]] = []
        i = 0
        while i < len(text):
            c = text[i]
            if c == "[":
                i, token = _bracket(text, i)
            else:
                token = (STAR, None) if c == "*" else (ANY, None) if c == "?" else (LIT, c)
                i += 1
            if not (token[0] == STAR and tokens and tokens[-1][0] == STAR):  # ** is *
                tokens.append(token)
        return cls(text, tuple(tokens))

    def matches(self, host: str) -> bool:
        return self.run(host)[0]

    def run(self, host: str) -> tuple[bool, int]:
        """(whether the whole host matches, the steps it took: one per pattern position visited)."""
        if len(host) > MAX_HOST:
            return False, 0
        n, last = len(host), len(self.tokens)
        reach: list[set[int]] = [set() for _ in range(n + 1)]
        reach[0].add(0)
        steps = 0
        for i in range(n + 1):
            todo = list(reach[i])
            while todo:
                t = todo.pop()
                steps += 1
                if t == last:
                    continue
                for j, nxt in self._moves(t, host, i):
                    if nxt not in reach[j]:
                        reach[j].add(nxt)
                        if j == i:
                            todo.append(nxt)
        return last in reach[n], steps

    def _moves(self, t: int, host: str, i: int):
        """(host position, pattern position) pairs reachable from pattern position t at host position i."""
        kind, arg = self.tokens[t]
        if kind == STAR:
            yield i, t + 1
            if i < len(host):
                yield i + 1, t
        elif i >= len(host):
            return
        elif kind == RANGE:
            for end in arg.ends(host, i):  # type: ignore[union-attr]
                yield end, t + 1
        elif kind == ANY or (kind == LIT and host[i] == arg) or (kind == CLASS and _in_class(arg, host[i])):
            yield i + 1, t + 1


def _bracket(text: str, i: int) -> tuple[int, tuple[str, object]]:
    """The token of the bracket that opens at text[i], and where the text goes on after it."""
    start = i + 1
    if start < len(text) and text[start] in "!^":
        start += 1
    close = text.find("]", start + 1 if start < len(text) and text[start] == "]" else start)
    if close < 0:
        raise PatternError(f"the [ at character {i + 1} is never closed")
    body = text[i + 1:close]
    if not body:
        raise PatternError(f"[] at character {i + 1} is empty")
    if set(body) <= _RANGE_CHARS and any(c.isdigit() for c in body):
        return close + 1, (RANGE, Range.parse(body))
    negate = body[0] in "!^"
    items = body[1:] if negate else body
    return close + 1, (CLASS, (negate, tuple(_spans(items))))


def _in_class(arg, c: str) -> bool:
    negate, spans = arg
    return any(lo <= c <= hi for lo, hi in spans) != negate


# --- old /regex/ patterns -------------------------------------------------------------------------

_ESCAPED_LITERALS = frozenset(".-_:/+@#%=,~")
_REGEX_META = frozenset("()|+?*{}\\^$[]")


class _NoGlob(Exception):
    """Why a regex has no exact glob."""


def from_regex(body: str) -> str:
    """The glob that matches what the simple regex `body` matches (searched, as `re.search` did);
    PatternError, saying how to write it instead, for a regex that has no glob form."""
    start = body.startswith("^")
    end = body.endswith("$") and not body.endswith("\\$")
    core = body[1 if start else 0:len(body) - 1 if end else len(body)]
    out: list[str] = []
    i = 0
    try:
        while i < len(core):
            i, piece = _regex_atom(core, i)
            out.append(piece)
    except _NoGlob as exc:
        hint = _loose(body)
        raise PatternError(f"/regex/ patterns are no longer read and this one has no exact glob ({exc}); {HOW}"
                           + (f"; the nearest glob, broader, is {hint}" if hint else "")) from None
    return _squeeze(("" if start else "*") + "".join(out) + ("" if end else "*"))


def _squeeze(glob: str) -> str:
    while "**" in glob:
        glob = glob.replace("**", "*")
    return glob


def _regex_atom(core: str, i: int) -> tuple[int, str]:
    """(where the regex goes on, the glob of its atom at core[i])."""
    c, nxt = core[i], core[i + 1:i + 2]
    if c == "." and nxt in ("*", "+"):
        return i + 2, "*" if nxt == "*" else "?*"
    if c == ".":
        piece, i = "?", i + 1
    elif c == "\\" and nxt == "d":
        piece, i = "[0-9]", i + 2
    elif c == "\\" and nxt and nxt in _ESCAPED_LITERALS:
        piece, i = nxt, i + 2
    elif c == "\\":
        raise _NoGlob(f"\\{nxt} has no glob form")
    elif c == "[":
        i, piece = _regex_class(core, i)
    elif c in _REGEX_META:
        raise _NoGlob("groups and | have no glob form: one [[hosts]] block per alternative" if c in "()|"
                      else f"{c} has no glob form")
    else:
        piece, i = c, i + 1
    if i < len(core) and core[i] in "*+?{":
        raise _NoGlob(f"the repeat {core[i]} has no glob form")
    return i, piece


def _regex_class(core: str, i: int) -> tuple[int, str]:
    """A regex class without a repeat: digits become a range of one-digit numbers, others a glob class."""
    close = core.find("]", i + 2 if core[i + 1:i + 2] in ("]", "^") else i + 1)
    if close < 0:
        raise _NoGlob(f"the [ at character {i + 1} is never closed")
    body = core[i + 1:close]
    negate = body.startswith("^")
    body = (body[1:] if negate else body).replace("\\d", "0-9").replace("\\.", ".")
    literal_dash = body.startswith("-") or body.endswith("-") or "\\-" in body
    body = body.replace("\\-", "")
    if "\\" in body or "[" in body or not body:
        raise _NoGlob("a class with escapes other than \\d, \\. and \\- has no glob form")
    spans = _spans(body.strip("-"))
    text = "".join(a if a == b else f"{a}-{b}" for a, b in spans) + ("-" if literal_dash else "")
    if not negate and all(a.isdigit() and b.isdigit() for a, b in spans) and not literal_dash:
        return close + 1, "[" + ",".join(a if a == b else f"{a}-{b}" for a, b in spans) + "]"
    if not negate and set(text) <= _RANGE_CHARS:
        raise _NoGlob("a class of digits with - , or a blank has no glob form")
    return close + 1, "[" + ("!" if negate else "") + text + "]"


def _spans(body: str) -> list[tuple[str, str]]:
    """"a-c0" -> [("a", "c"), ("0", "0")]."""
    spans = []
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            spans.append((body[k], body[k + 2]))
            k += 3
        else:
            spans.append((body[k], body[k]))
            k += 1
    return spans


def _loose(body: str) -> Optional[str]:
    """A broader glob for a regex of literals, classes and repeats: each repeated atom becomes `*`."""
    if any(c in body for c in "()|"):
        return None
    out = ""
    i = 0
    while i < len(body):
        c = body[i]
        if c == "[":
            close = body.find("]", i + 2)
            if close < 0:
                return None
            atom, i = "?", close + 1
        elif c == "\\":
            nxt = body[i + 1:i + 2]
            if not nxt or (nxt.isalnum() and nxt not in "dwsDWS"):
                return None  # \b, \1, \A...
            atom, i = ("?" if nxt in "dwsDWS" else nxt), i + 2
        else:
            atom, i = ("" if c in "^$" else "?" if c == "." else c), i + 1
        if i < len(body) and body[i] in "*+?{":
            i = (body.find("}", i) + 1 or len(body)) if body[i] == "{" else i + 1
            atom = "*"
        out += atom
    return _squeeze(("" if body.startswith("^") else "*") + out + ("" if body.endswith("$") else "*"))
