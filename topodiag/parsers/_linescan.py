"""Two whole-chunk line scans of the NCCL log readers, compiled where the build could compile them.

`tagged(chunk)` serves the NCCL_DEBUG reader (nccl_debug/reader.py), `untagged(chunk)` the nccl-tests
reader (nccl_tests.py). Each is one pass of memchr/memmem in topodiag/_cscan.c, which the wheel
build compiles when a C compiler is there (hatch_build.py); without it the pure-Python twins below
give the same values (tests/parsers/test_linescan.py compares the two on every fixture and on generated
text), only slower. `COMPILED` says which one runs; `TOPODIAG_PURE=1` in the environment forces the
Python twins (how the tests compare them, and a way out should the compiled one ever misbehave).

A chunk is bytes of whole lines as the readers cut them (topodiag/parsers/_chunks.py), already
normalised (CR and ANSI codes out).
"""

from __future__ import annotations

import bisect
import collections
import itertools
import operator
import os
import re

from .nccl_debug.facts import PREFIX_RE
from .nccl_debug.prefix import first_prefix

try:  # the compiled twin: absent where the build had no C compiler
    from .. import _cscan as _compiled
except ImportError:  # pragma: no cover - depends on the build
    _compiled = None

INFO_TAG = b" NCCL INFO "  # the tags of the lines the nccl-tests reader leaves out (nccl_tests.py too)
TRACE_TAG = b" NCCL TRACE "
# a tagged line that the nccl-tests reader still reads: nothing printable after its last tag
_INFO_END_RE = re.compile(rb" NCCL (?:INFO|TRACE) [^!-~\n]*$", re.M)
_TAG_SPLIT_RE = re.compile(rb"NCCL (?:INFO|TRACE) ")


def tagged_py(c: bytes) -> tuple[int, int, int, int, dict, dict, list, list, list]:
    """(lines, "NCCL INFO" count, "NCCL WARN" count, "NCCL TRACE" count, prefixes, messages, per_line,
    marks, warns): the count of "\\n" and of each tag anywhere; the texts before the first "NCCL INFO " or
    "NCCL TRACE " of each line, distinct, in order of first appearance, as dict keys (values None),
    each as `prefix_key` gives it; the first TAGS_PER_LINE such tags of each line with their text to
    the end of the line (of a line's second tag and on: its first LATER_TEXT_MAX bytes at most): the
    distinct texts, from the tag on, in order of first appearance, each with [its count, the position
    of its first tag] (`messages`), except those whose text (past a "[Rank N] ")
    starts with "NET/IB: ", read line by line: the positions of their tags (`per_line`); the positions of
    "NCCL failure", "NCCL error" and "NCCL version" with no "NCCL INFO", "NCCL WARN" or "NCCL TRACE"
    before them on their line (`marks`); (position, line start, line end, line index in the chunk) of
    the first "NCCL WARN" of each line (`warns`)."""
    pieces = c.split(b"NCCL INFO ") if b"NCCL TRACE " not in c else None
    messages, per_line, one_per_line = _messages(c, pieces)
    marks, warns = _marks_warns(c)
    return (c.count(b"\n"), c.count(b"NCCL INFO"), c.count(b"NCCL WARN"), c.count(b"NCCL TRACE"),
            _prefix_keys(c, pieces, len(pieces) - 1 if one_per_line else None), messages, per_line, marks, warns)


def _prefix_keys(c: bytes, pieces, n_tags) -> dict:
    """The prefixes of `tagged_py`, with C-level passes: the chunk cut at its tags (`pieces`: at each
    "NCCL INFO ", or None when it holds "NCCL TRACE "), the text after each piece's last newline; an
    ASCII prefix's pid and tid set to 0 before it is read (PREFIX_RE finds the same host and device in
    it: they are never the host, see _PID_TID_B), so that thousands of pid/tid prefixes are read as the
    few they stand for. When each tagged line holds one "NCCL INFO " (n_tags of them) and every one of
    them starts with a plain `host:pid:tid [dev] ` (_PLAIN_PREFIX_B: what PREFIX_RE reads as that host
    and device), the pairs are read off those lines in one `findall`."""
    if n_tags is not None and c.count(b"] NCCL INFO ") == n_tags:  # (a cheap test first: each tag after "] ")
        first = _PLAIN_FIRST_B.match(c)
        found = ([first.groups()] if first else []) + _PLAIN_PREFIX_B.findall(c)
        if len(found) == n_tags:
            return dict.fromkeys((host, int(dev)) for host, dev in dict.fromkeys(found))
    if pieces is None:
        pieces = _TAG_SPLIT_RE.split(c)
    if len(pieces) < 2:
        return {}
    # piece i ends with the text before tag i on its line; tag i is its line's first when piece i
    # holds a newline (or i is 0)
    parts = list(map(bytes.rpartition, pieces[:-1], itertools.repeat(b"\n")))
    raw = {parts[0][2]: None}
    raw.update(dict.fromkeys(itertools.compress(map(operator.itemgetter(2), parts), map(operator.itemgetter(1), parts))))
    joined = b"\n".join(raw)
    if joined.isascii():
        canon = dict.fromkeys(_PID_TID_B.sub(b":0:0", joined).split(b"\n"))
    else:
        canon = dict.fromkeys(_PID_TID_B.sub(b":0:0", r) if r.isascii() else r for r in raw)
    keys = list(map(prefix_key, canon))
    if any(k.__class__ is bytes and k.isascii() for k in keys):  # handed back as they are: each raw text
        keys = list(map(prefix_key, raw))
    return dict.fromkeys(k for k in keys if k is not None)


def _messages(c: bytes, pieces) -> tuple[dict, list, bool]:
    """`messages` and `per_line` of `tagged_py`. A chunk without "NCCL TRACE " whose lines hold one
    "NCCL INFO " each at most (the rule: `findall` of the tag's text to the end of the line then finds
    every tag) takes C-level passes: the texts in order, each tag's place from the lengths of the
    pieces between tags; any other chunk, a loop over its tags. The third value says which."""
    messages: dict = {}
    if pieces is not None:
        texts = _TEXT_RE.findall(c)
        if len(texts) == len(pieces) - 1:
            places = list(map(operator.add, itertools.accumulate(map(len, pieces[:-1])),
                              range(0, 10 * len(texts), 10)))
            counts = collections.Counter(texts)
            nets = {t for t in counts if _NET_IB_TEXT_RE.match(t)}  # read line by line: by place
            per_line: list = []
            if nets:
                net = list(map(nets.__contains__, texts))
                per_line = list(itertools.compress(places, net))
                keep = list(map(operator.not_, net))
                texts, places = list(itertools.compress(texts, keep)), list(itertools.compress(places, keep))
            first = dict(zip(reversed(texts), reversed(places)))  # the first place of each text wins
            for text, count in counts.items():
                if text not in nets:
                    messages[text] = [count, first[text]]
            return messages, per_line, True
    per_line = []
    prev, on_line = 0, 0
    for m in _TAG_RE.finditer(c):
        at = m.start()
        if c.find(b"\n", prev, at) >= 0:  # a new line
            on_line = 0
        prev = at
        on_line += 1
        if on_line > TAGS_PER_LINE:
            continue
        eol = c.find(b"\n", at)
        if eol < 0:
            eol = len(c)
        text = c[at:eol] if on_line == 1 or eol - at <= LATER_TEXT_MAX else c[at:at + LATER_TEXT_MAX]
        if _NET_IB_RE.match(c, m.end()):
            per_line.append(at)
        elif text in messages:
            messages[text][0] += 1
        else:
            messages[text] = [1, at]
    return messages, per_line, False


def _marks_warns(c: bytes) -> tuple[list, list]:
    """`marks` and `warns` of `tagged_py`: each mark checked against the text before it on its line (from
    the previous mark on, when that is on the same line: linear), each WARN line once."""
    marks: list = []
    prev, tagged = -1, False
    places = []
    for word in (b"NCCL failure", b"NCCL error", b"NCCL version"):
        at = c.find(word)
        while at >= 0:
            places.append(at)
            at = c.find(word, at + 1)
    for at in sorted(places):
        if prev >= 0 and c.find(b"\n", prev, at) < 0:  # the same line as the previous mark
            seg = c[prev:at + 1]
        else:
            seg = c[c.rfind(b"\n", max(prev, 0), at) + 1:at + 1]
            tagged = False
        # (to at + 1: "NCCL WARN" may end in the "N" that starts the mark)
        tagged = tagged or b"NCCL INFO" in seg or b"NCCL WARN" in seg or b"NCCL TRACE" in seg
        if not tagged:
            marks.append(at)
        prev = at
    warns: list = []
    line_no, counted = 0, 0
    pos = c.find(b"NCCL WARN")
    while pos >= 0:
        ls = c.rfind(b"\n", 0, pos) + 1
        line_no += c.count(b"\n", counted, ls)
        counted = ls
        eol = c.find(b"\n", pos)
        warns.append((pos, ls, len(c) if eol < 0 else eol, line_no))
        if eol < 0:
            break
        pos = c.find(b"NCCL WARN", eol)
    return marks, warns


# the INFO/TRACE tags of a line whose text is read (each text runs to the end of the line: a line of
# repeated tags would cost its length squared; the output of a few processes run together is read)
TAGS_PER_LINE = 4
LATER_TEXT_MAX = 4096  # the text of a line's second to fourth tag is cut here: a giant line costs itself once
_TAG_RE = re.compile(rb"NCCL (?:INFO|TRACE) ")
_NET_IB_RE = re.compile(rb"(?:\[Rank [0-9]{1,9}\] )?NET/IB: ")
_NET_IB_TEXT_RE = re.compile(rb"NCCL (?:INFO|TRACE) (?:\[Rank [0-9]{1,9}\] )?NET/IB: ")
_TEXT_RE = re.compile(rb"NCCL INFO [^\n]*")
# a line that starts with a plain "host:pid:tid [dev] " before its tag: ASCII, PREFIX_RE's host class
# without controls, blanks between tid and device; the device in 1-9 digits (as the compiled scanner
# reads it); at a line's start after a newline, and at the chunk's start
_PLAIN = (rb"([\x21\x23-\x26\x28-\x39\x3b-\x5a\x5c\x5e\x5f\x61-\x7f]+):[0-9]+:[0-9]+[ \t]+\[([0-9]{1,9})\] "
          rb"NCCL INFO ")
_PLAIN_PREFIX_B = re.compile(rb"\n" + _PLAIN)
_PLAIN_FIRST_B = re.compile(_PLAIN)
# an ASCII prefix's ":pid:tid" before a blank (PREFIX_RE's \s over text). Neither run can be the host
# PREFIX_RE finds (a host is followed by ":digits:digits" and a blank) nor hold one, so with both set to
# 0 it finds the same host and device
_PID_TID_B = re.compile(rb":[0-9]+:[0-9]+(?=[\t\n\x0b\x0c\r\x1c-\x1f ])")


# nccl_debug/facts.py PREFIX_RE over ASCII bytes, made from its pattern: \s of text is
# [\t\n\v\f\r\x1c-\x1f ] over ASCII, and over bytes only what is written out here
_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f "
PREFIX_B = re.compile(PREFIX_RE.pattern.replace(r"[^\s", "[^" + _SPACE).replace(r"\s+", "[" + _SPACE + "]+").encode())
assert "\\s" not in PREFIX_B.pattern.decode(), "PREFIX_RE holds a \\s this translation does not know"


def prefix_key(pre: bytes):
    """What stands for a line prefix: for ASCII, the (host bytes, device) that PREFIX_RE finds first in
    it, or None when it finds none; otherwise (or with a device number of over 9 digits) the bytes."""
    if not pre.isascii():
        return pre
    m = _find_prefix_b(pre)
    if m is None:
        return None
    if len(m[1]) > 9:
        return pre
    return m[0], int(m[1])


_PREFIX_TAIL_B = re.compile(rb":[0-9]+:[0-9]+[" + _SPACE.encode() + rb"]+\[([0-9]+)\]")
_NOT_HOST_B = frozenset(b":[]`'\"" + bytes(range(0x1c, 0x20)) + b" \t\n\x0b\x0c\r")


def _find_prefix_b(pre: bytes):
    """(host, device digits) of the first match of PREFIX_B in `pre` (ASCII), found from the fixed
    tail and a walk back over the host: linear, where PREFIX_B.search is quadratic on a long host run."""
    return first_prefix(pre, _PREFIX_TAIL_B, _NOT_HOST_B.__contains__)


def untagged_py(c: bytes) -> tuple[int, list[int], list[bytes]]:
    """(n, keep, picked): the chunk's lines as `c.split(b"\\n")` cuts them (no line after a final
    newline): their count; the indices of the non-empty lines without " NCCL INFO " or " NCCL TRACE "
    and of the lines whose last such tag is followed by nothing but bytes outside "!".."~"; those
    lines."""
    lines = c.split(b"\n")
    if c.endswith(b"\n"):
        lines.pop()
    n = len(lines)
    info = map(operator.contains, lines, itertools.repeat(INFO_TAG))
    if TRACE_TAG in c:
        info = map(operator.or_, info, map(operator.contains, lines, itertools.repeat(TRACE_TAG)))
    keep = list(itertools.compress(range(n), map(operator.not_, info)))
    picked = _pick(lines, keep)
    if not all(picked):  # an empty line is never one
        ok = list(map(bool, picked))
        keep, picked = list(itertools.compress(keep, ok)), list(itertools.compress(picked, ok))
    if len(keep) < n:  # tagged lines with nothing printable after the tag
        extra = set()
        ends = None
        for m in _INFO_END_RE.finditer(c):
            if ends is None:
                ends = list(itertools.accumulate(map(len, lines)))
                ends = list(map(operator.add, ends, range(n)))
            extra.add(bisect.bisect_right(ends, m.start()))
        if extra:
            keep = sorted(set(keep) | extra)
            picked = _pick(lines, keep)
    return n, keep, list(picked)


def _pick(lines: list[bytes], at: list[int]) -> list[bytes]:
    """The lines at these indices (one C-level call)."""
    if len(at) > 1:
        return list(operator.itemgetter(*at)(lines))
    return [lines[at[0]]] if at else []


# the compiled module is used when it shares the twins' limits (a module built from an older source,
# left beside a newer checkout, is not) and TOPODIAG_PURE does not ask for the twins
COMPILED = (_compiled is not None and os.environ.get("TOPODIAG_PURE", "") in ("", "0")
            and getattr(_compiled, "TAGS_PER_LINE", None) == TAGS_PER_LINE
            and getattr(_compiled, "LATER_TEXT_MAX", None) == LATER_TEXT_MAX)
tagged = _compiled.tagged if COMPILED else tagged_py
untagged = _compiled.untagged if COMPILED else untagged_py
