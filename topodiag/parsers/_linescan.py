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
import itertools
import operator
import os
import re

try:  # the compiled twin: absent where the build had no C compiler
    from .. import _cscan as _compiled
except ImportError:  # pragma: no cover - depends on the build
    _compiled = None

_INFO_B = b" NCCL INFO "
_TRACE_B = b" NCCL TRACE "
# a tagged line that the nccl-tests reader still reads: nothing printable after its last tag
_INFO_END_RE = re.compile(rb" NCCL (?:INFO|TRACE) [^!-~\n]*$", re.M)
_TAG_SPLIT_RE = re.compile(rb"NCCL (?:INFO|TRACE) ")


def tagged_py(c: bytes) -> tuple[int, int, int, int, dict, dict, list, list, list]:
    """(lines, "NCCL INFO" count, "NCCL WARN" count, "NCCL TRACE" count, prefixes, messages, per_line,
    marks): the count of "\\n" and of each tag anywhere; the texts before the first "NCCL INFO " or
    "NCCL TRACE " of each line, distinct, in order of first appearance, as dict keys (values None),
    each as `prefix_key` gives it; the first TAGS_PER_LINE such tags of each line with their text to
    the end of the line: the distinct texts, from the tag on, in order of first appearance, each with [its
    count, the position of its first tag] (`messages`), except those whose text (past a "[Rank N] ")
    starts with "NET/IB: ", read line by line: the positions of their tags (`per_line`); the positions of
    "NCCL failure", "NCCL error" and "NCCL version" with no "NCCL INFO", "NCCL WARN" or "NCCL TRACE"
    before them on their line (`marks`); (position, line start, line end, line index in the chunk) of
    the first "NCCL WARN" of each line (`warns`)."""
    pieces = c.split(b"NCCL INFO ") if b"NCCL TRACE " not in c else _TAG_SPLIT_RE.split(c)
    keys: dict = {}
    messages: dict = {}
    per_line: list = []
    if len(pieces) > 1:
        # piece i ends with the text before tag i on its line; tag i is its line's first when piece i
        # holds a newline (or i is 0)
        parts = list(map(bytes.rpartition, pieces[:-1], itertools.repeat(b"\n")))
        raw = {parts[0][2]: None}
        raw.update(dict.fromkeys(itertools.compress(map(operator.itemgetter(2), parts), map(operator.itemgetter(1), parts))))
        keys = dict.fromkeys(k for k in map(prefix_key, raw) if k is not None)
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
            text = c[at:] if eol < 0 else c[at:eol]
            if _NET_IB_RE.match(c, m.end()):
                per_line.append(at)
            elif text in messages:
                messages[text][0] += 1
            else:
                messages[text] = [1, at]
    marks: list = []
    warns: list = []
    prev, line_no, tagged, warned = 0, 0, False, False
    for m in _MARK_RE.finditer(c):
        at = m.start()
        nls = c.count(b"\n", prev, at)
        if nls:
            line_no += nls
            tagged = warned = False
        prev = at
        word = m.group(1)
        if word in (b"failure", b"error", b"version"):
            if not tagged:
                marks.append(at)
            continue
        tagged = True
        if word == b"WARN" and not warned:
            warned = True
            eol = c.find(b"\n", at)
            warns.append((at, c.rfind(b"\n", 0, at) + 1, len(c) if eol < 0 else eol, line_no))
    return (c.count(b"\n"), c.count(b"NCCL INFO"), c.count(b"NCCL WARN"), c.count(b"NCCL TRACE"), keys, messages,
            per_line, marks, warns)


# the INFO/TRACE tags of a line whose text is read (each text runs to the end of the line: a line of
# repeated tags would cost its length squared; the output of a few processes run together is read)
TAGS_PER_LINE = 4
_TAG_RE = re.compile(rb"NCCL (?:INFO|TRACE) ")
_NET_IB_RE = re.compile(rb"(?:\[Rank [0-9]{1,9}\] )?NET/IB: ")
# the untagged marks, and the tags before them on a line that make them none ("NCCL " cannot overlap
# itself, so every one of these words is found)
_MARK_RE = re.compile(rb"NCCL (failure|error|version|INFO|WARN|TRACE)")


# nccl_debug/facts.py PREFIX_RE over ASCII bytes: \s of text is [\t\n\v\f\r\x1c-\x1f ] there
_SPACE_B = rb"\t\n\x0b\x0c\r\x1c-\x1f "
PREFIX_B = re.compile(rb"([^" + _SPACE_B + rb":\[\]`'\"]+):[0-9]+:[0-9]+[" + _SPACE_B + rb"]+\[([0-9]+)\]")


def prefix_key(pre: bytes):
    """What stands for a line prefix: for ASCII, the (host bytes, device) that PREFIX_RE finds first in
    it, or None when it finds none; otherwise (or with a device number of over 9 digits) the bytes."""
    if not pre.isascii():
        return pre
    m = PREFIX_B.search(pre)
    if m is None:
        return None
    if len(m.group(2)) > 9:
        return pre
    return m.group(1), int(m.group(2))


def untagged_py(c: bytes) -> tuple[int, list[int], list[bytes]]:
    """(n, keep, picked): the chunk's lines as `c.split(b"\\n")` cuts them (no line after a final
    newline): their count; the indices of the non-empty lines without " NCCL INFO " or " NCCL TRACE "
    and of the lines whose last such tag is followed by nothing but bytes outside "!".."~"; those
    lines."""
    lines = c.split(b"\n")
    if c.endswith(b"\n"):
        lines.pop()
    n = len(lines)
    info = map(operator.contains, lines, itertools.repeat(_INFO_B))
    if _TRACE_B in c:
        info = map(operator.or_, info, map(operator.contains, lines, itertools.repeat(_TRACE_B)))
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
            extra.add(_index(ends, m.start()))
        if extra:
            keep = sorted(set(keep) | extra)
            picked = _pick(lines, keep)
    return n, keep, list(picked)


def _index(ends: list[int], pos: int) -> int:
    return bisect.bisect_right(ends, pos)


def _pick(lines: list[bytes], at: list[int]) -> list[bytes]:
    """The lines at these indices (one C-level call)."""
    if len(at) > 1:
        return list(operator.itemgetter(*at)(lines))
    return [lines[at[0]]] if at else []


COMPILED = _compiled is not None and os.environ.get("TOPODIAG_PURE", "") in ("", "0")
tagged = _compiled.tagged if COMPILED else tagged_py
untagged = _compiled.untagged if COMPILED else untagged_py
