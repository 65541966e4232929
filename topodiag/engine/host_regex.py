"""The `/regex/` host patterns of a site config, matched in time linear in the host name.

Python's `re` backtracks: `/(a+)+$/` against `aaaa...a!` takes seconds per 30 characters (issue 16:
34 s for one adversarial config), and adjacent repeats such as `.*.*.*x` are polynomial. A host
pattern is only ever asked "does it occur in this host name", so it is compiled here, from the parse
tree of Python's own regex parser (same syntax, same errors), into a Thompson automaton and run as
a set of states over the host name: at most (pattern states x host characters) steps, no
backtracking, no timeout needed.

What is kept of `re`: literals, `.`, classes (`[a-z0-9-]`, `\\d`, `\\w`, `\\s` and their negations),
groups (capturing or not), alternation, every repeat (`*`, `+`, `?`, `{m,n}`, lazy and possessive
alike: only whether a match exists matters), anchors `^`, `$`, `\\A`, `\\Z`, `\\b`, `\\B`, and the flags
`(?i)`, `(?a)`, `(?s)`, `(?m)`. What is refused, in one line naming the pattern: backreferences,
lookahead and lookbehind, conditionals (they need backtracking), a pattern over MAX_PATTERN
characters or one whose automaton is over MAX_STATES states (`{1000}` repeats copy their group).
A host name longer than MAX_HOST characters (no DNS name is) matches no /regex/ pattern.
"""

from __future__ import annotations

from typing import Callable, Optional

try:  # Python 3.11+
    from re import _constants as C
    from re import _parser as P
except ImportError:  # Python 3.10
    import sre_constants as C  # type: ignore[no-redef]
    import sre_parse as P  # type: ignore[no-redef]

MAX_PATTERN = 1000  # characters of one /regex/
MAX_STATES = 2000  # states of its automaton
MAX_HOST = 253  # a DNS name's length

_I, _S, _M, _A = C.SRE_FLAG_IGNORECASE, C.SRE_FLAG_DOTALL, C.SRE_FLAG_MULTILINE, C.SRE_FLAG_ASCII
_REPEATS = {C.MAX_REPEAT, C.MIN_REPEAT} | ({C.POSSESSIVE_REPEAT} if hasattr(C, "POSSESSIVE_REPEAT") else set())
_ATOMIC = getattr(C, "ATOMIC_GROUP", None)
_ANCHORS = {"AT_BEGINNING", "AT_BEGINNING_STRING", "AT_END", "AT_END_STRING", "AT_BOUNDARY", "AT_NON_BOUNDARY"}


class PatternError(ValueError):
    """A /regex/ host pattern this matcher does not take (one line)."""


def _word(c: str, ascii_only: bool) -> bool:
    return (c.isalnum() and (c.isascii() or not ascii_only)) or c == "_"


def _category(cat, ascii_only: bool) -> Callable[[str], bool]:
    name = str(cat).rsplit("_", 1)[-1].upper() if not hasattr(cat, "name") else cat.name.rsplit("_", 1)[-1]
    neg = "NOT" in str(cat).upper()
    if name == "DIGIT":
        base = (lambda c: "0" <= c <= "9") if ascii_only else str.isdecimal
    elif name == "SPACE":
        base = (lambda c: c in " \t\n\r\f\v") if ascii_only else str.isspace
    elif name == "WORD":
        base = lambda c: _word(c, ascii_only)  # noqa: E731
    else:  # LINEBREAK and kin (not in str patterns)
        base = lambda c: c == "\n"  # noqa: E731
    return (lambda c: not base(c)) if neg else base


def _set(items, flags: int) -> Callable[[str], bool]:
    """A character class ([...]) as a predicate."""
    ascii_only = bool(flags & _A)
    negate = False
    chars: set[str] = set()
    ranges: list[tuple[int, int]] = []
    tests: list[Callable[[str], bool]] = []
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op in (C.LITERAL,) or str(op).startswith("LITERAL"):
            chars.add(chr(av))
        elif op is C.RANGE or str(op).startswith("RANGE"):
            ranges.append(av)
        elif op is C.CATEGORY:
            tests.append(_category(av, ascii_only))
        else:
            raise PatternError(f"{op} in a character class")

    def one(c: str) -> bool:
        if c in chars:
            return True
        o = ord(c)
        return any(lo <= o <= hi for lo, hi in ranges) or any(t(c) for t in tests)

    if flags & _I:
        base = one
        one = lambda c: base(c) or base(c.lower()) or base(c.upper())  # noqa: E731
    return (lambda c: not one(c)) if negate else one


class _Nfa:
    """States: ("c", pred, next) | ("e", [next...]) | ("a", kind, next) | ("m",)."""

    def __init__(self) -> None:
        self.states: list = []

    def new(self, state) -> int:
        if len(self.states) >= MAX_STATES:
            raise PatternError(f"more than {MAX_STATES} states (a large {{m,n}} repeat?)")
        self.states.append(state)
        return len(self.states) - 1

    # Each build returns (start, list of (state, slot) holes to patch to what follows).
    def patch(self, holes, target: int) -> None:
        for state, slot in holes:
            s = self.states[state]
            if s[0] == "e":
                s[1][slot] = target
            else:
                s[slot] = target

    def seq(self, items, flags: int):
        start, holes = None, []
        for op, av in items:
            frag = self.item(op, av, flags)
            if frag is None:
                continue
            if start is None:
                start = frag[0]
            else:
                self.patch(holes, frag[0])
            holes = frag[1]
        if start is None:
            e = self.new(["e", [None]])
            return e, [(e, 0)]
        return start, holes

    def char(self, pred, flags: int):
        s = self.new(["c", pred, None])
        return s, [(s, 2)]

    def item(self, op, av, flags: int):
        ignore = bool(flags & _I)
        if op is C.LITERAL or op is C.NOT_LITERAL:
            ch = chr(av)
            if ignore:
                low = ch.lower()
                pred = lambda c, low=low: c.lower() == low  # noqa: E731
            else:
                pred = lambda c, ch=ch: c == ch  # noqa: E731
            if op is C.NOT_LITERAL:
                pred = lambda c, p=pred: not p(c)  # noqa: E731
            return self.char(pred, flags)
        if op is C.ANY:
            return self.char((lambda c: True) if flags & _S else (lambda c: c != "\n"), flags)
        if op is C.IN:
            return self.char(_set(av, flags), flags)
        if op is C.AT:
            if str(av) not in _ANCHORS:
                raise PatternError(f"the anchor {str(av).lower()}")
            s = self.new(["a", (str(av), bool(flags & _M), bool(flags & _A)), None])
            return s, [(s, 2)]
        if op is C.BRANCH:
            starts, holes = [], []
            for alt in av[1]:
                st, h = self.seq(alt, flags)
                starts.append(st)
                holes += h
            return self.new(["e", starts]), holes
        if op is C.SUBPATTERN:
            _, add, rem, sub = av
            return self.seq(sub, (flags | add) & ~rem)
        if _ATOMIC is not None and op is _ATOMIC:
            return self.seq(av, flags)
        if op in _REPEATS:
            lo, hi, sub = av
            return self.repeat(lo, None if hi == C.MAXREPEAT else hi, sub, flags)
        raise PatternError(f"{str(op).lower()} (backreferences, lookarounds and conditionals need backtracking)")

    def repeat(self, lo: int, hi: Optional[int], sub, flags: int):
        start, holes = None, []

        def chain(frag) -> None:
            nonlocal start, holes
            if start is None:
                start = frag[0]
            else:
                self.patch(holes, frag[0])
            holes = frag[1]

        for _ in range(lo):
            chain(self.seq(sub, flags))
        if hi is None:  # a loop: e -> sub -> e, or on
            e = self.new(["e", [None, None]])
            st, h = self.seq(sub, flags)
            self.states[e][1][0] = st
            self.patch(h, e)
            chain((e, [(e, 1)]))
        else:
            optional_holes = []
            for _ in range(hi - lo):  # each optional copy may be skipped to the end
                e = self.new(["e", [None, None]])
                st, h = self.seq(sub, flags)
                self.states[e][1][0] = st
                optional_holes.append((e, 1))
                chain((e, h))
            holes = holes + optional_holes
        if start is None:
            e = self.new(["e", [None]])
            return e, [(e, 0)]
        return start, holes


class HostRegex:
    """A /regex/ host pattern: `search(host)` says whether it occurs in the host name, in linear time."""

    def __init__(self, pattern: str) -> None:
        if len(pattern) > MAX_PATTERN:
            raise PatternError(f"longer than {MAX_PATTERN} characters")
        try:
            tree = P.parse(pattern)
        except (C.error, RecursionError, OverflowError) as exc:
            raise PatternError(f"not a valid regular expression: {exc}") from None
        nfa = _Nfa()
        flags = tree.state.flags
        start, holes = nfa.seq(list(tree), flags)
        nfa.patch(holes, nfa.new(["m"]))
        self.pattern = pattern
        self._states = nfa.states
        self._start = start

    def _close(self, todo: list[int], text: str, pos: int, seen: set[int], out: list[int]) -> bool:
        states = self._states
        while todo:
            i = todo.pop()
            if i in seen:
                continue
            seen.add(i)
            s = states[i]
            kind = s[0]
            if kind == "m":
                return True
            if kind == "e":
                todo.extend(s[1])
            elif kind == "a":
                if _at(s[1], text, pos):
                    todo.append(s[2])
            else:
                out.append(i)
        return False

    def search(self, host: str) -> bool:
        if len(host) > MAX_HOST:
            return False
        states = self._states
        current: list[int] = []
        if self._close([self._start], host, 0, set(), current):
            return True
        for pos, c in enumerate(host):
            nxt: list[int] = []
            seen: set[int] = set()
            todo = [states[i][2] for i in current if states[i][1](c)]
            todo.append(self._start)  # search: a match may start at every position
            if self._close(todo, host, pos + 1, seen, nxt):
                return True
            current = nxt
        return False


def _at(spec, text: str, pos: int) -> bool:
    kind, multiline, ascii_only = spec
    n = len(text)
    if kind == "AT_BEGINNING_STRING":
        return pos == 0
    if kind == "AT_BEGINNING":
        return pos == 0 or (multiline and text[pos - 1] == "\n")
    if kind == "AT_END_STRING":
        return pos == n
    if kind == "AT_END":
        return pos == n or (pos == n - 1 and text[-1] == "\n") or (multiline and text[pos] == "\n")
    before = pos > 0 and _word(text[pos - 1], ascii_only)
    after = pos < n and _word(text[pos], ascii_only)
    return before == after if kind == "AT_NON_BOUNDARY" else before != after
