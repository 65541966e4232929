"""Whole-chunk line scans, compiled where the build could compile them (topodiag/scan/_cscan.c,
hatch_build.py; see _cscan.pyi for its contract).

The compiled module holds two generic primitives, `lines_without(chunk, needles)` and
`distinct_after(chunk, needles, per_line, later_max)`, which know bytes, lines and the needles they
are given and nothing of NCCL; their pure-Python twins are `lines_without_py` and `distinct_after_py`
here. `untagged(chunk)` serves the nccl-tests reader (parsers/nccl_tests/stream.py): the lines without
an NCCL INFO/TRACE tag, in one pass (`lines_without` with the two tags, or its tuned twin
`untagged_py`). `compiled` is the C module (or None) from whose `distinct_after` the NCCL_DEBUG reader
builds its scan (parsers/nccl_debug/lines.py, which holds the pure-Python `tagged_py`). Without a
compiler the pure-Python twins give the same values (tests/parsers/test_linescan.py compares them on
every fixture and on generated text), only slower. The module's third function, `kernel_keys`, is
the kernel log's line key (parsers/_kernel_log_keys.py `digest`; its twin `digest_py` there). `COMPILED` says which runs; `TOPODIAG_PURE=1` in
the environment forces the Python twins (how the tests compare them, and a way out should the
compiled one ever misbehave).

A chunk is bytes of whole lines as topodiag/scan/chunks.py cuts them, already normalised (CR and ANSI
codes out).
"""

from __future__ import annotations

import itertools
from array import array
import operator
import os
import re

try:  # the compiled twin: absent where the build had no C compiler
    from . import _cscan as _compiled
except ImportError:  # pragma: no cover - depends on the build
    _compiled = None

INFO_TAG = b" NCCL INFO "  # the tags of the lines the nccl-tests reader leaves out (nccl_tests.py too)
TRACE_TAG = b" NCCL TRACE "
# a tagged line that the nccl-tests reader still reads: nothing printable after its last tag
_INFO_END_RE = re.compile(rb" NCCL (?:INFO|TRACE) [^!-~\n]*$", re.M)
NOT_PRINTABLE = bytes(0 if 0x21 <= b <= 0x7E else 1 for b in range(256))  # bytes.translate: 1 outside "!".."~"


# the INFO/TRACE tags of a line whose text is read (each text runs to the end of the line: a line of
# repeated tags would cost its length squared; the output of a few processes run together is read)
TAGS_PER_LINE = 4
LATER_TEXT_MAX = 4096  # the text of a line's second to fourth tag is cut here: a giant line costs itself once


def untagged_py(c: bytes) -> tuple[int, list[int], list[bytes]]:
    """(n, keep, picked): the chunk's lines as `c.split(b"\\n")` cuts them (no line after a final
    newline): their count; the indices of the non-empty lines without " NCCL INFO " or " NCCL TRACE "
    and of the lines whose last such tag is followed by nothing but bytes outside "!".."~"; those
    lines. (Every test is a C-level map over the lines; `bytes.count`, not `in`: a `in` test on bytes
    first tries the needle as an int, and the error it raises and clears costs more than the search;
    the count is itself the mask of the lines that hold the needle.)"""
    lines = c.split(b"\n")
    if c.endswith(b"\n"):
        lines.pop()
    keep, picked = untagged_lines_py(lines)
    return len(lines), keep, picked


def untagged_lines_py(lines: list[bytes]) -> tuple[list[int], list[bytes]]:
    """`untagged_py`'s (keep, picked) for a list of lines (none holding a newline) rather than a chunk:
    the positions in `lines` of those it would pick, and those lines."""
    n = len(lines)
    tagged = list(map(bytes.count, lines, itertools.repeat(INFO_TAG)))
    try:  # (the same counts as bytes, their mask by one translate: a map of `not` costs ~0.3 ms more a chunk)
        tagged = bytes(tagged)  # (where it raises, `tagged` stays the list)
        untagged = tagged.translate(_ZERO_ONLY)
    except ValueError:  # a line of 256 tags or more
        untagged = map(operator.not_, tagged)
    keep = list(itertools.compress(range(n), untagged))
    picked = pick(lines, keep)
    # (the TRACE tag looked for in the lines left only: a fifth of a busy log's, where a look over the
    # whole chunk would cost a pass)
    trace = list(map(bytes.count, picked, itertools.repeat(TRACE_TAG)))
    traced: list[int] = []
    if any(trace):
        traced = list(itertools.compress(keep, trace))
        untraced = list(map(operator.not_, trace))
        keep, picked = list(itertools.compress(keep, untraced)), list(itertools.compress(picked, untraced))
    if not all(picked):  # an empty line is never one
        ok = list(map(bool, picked))
        keep, picked = list(itertools.compress(keep, ok)), list(itertools.compress(picked, ok))
    if len(keep) < n:
        extra = _bare_tags(lines, tagged, traced)
        if extra:
            keep = sorted(set(keep).union(extra))
            picked = pick(lines, keep)
    return keep, list(picked)


_ZERO_ONLY = bytes([1]) + bytes(255)  # bytes.translate: 1 where a byte is 0, else 0


def _bare_tags(lines: list[bytes], info, traced: list[int]) -> list[int]:
    """Indices of the tagged lines (`info`: each line's count of INFO tags, a list or the same counts as
    bytes; `traced`: the lines with only a TRACE tag) whose last tag is followed by nothing printable.
    Such a line ends in a byte outside "!".."~" (the tag's own last byte, a blank, is one), so only
    those lines are searched."""
    last = bytes(map(operator.itemgetter(-1), itertools.compress(lines, info))).translate(NOT_PRINTABLE)
    extra = []
    j = last.find(1)
    if j >= 0:
        at = list(itertools.compress(range(len(lines)), info))
        while j >= 0:  # (a few lines: found by find, not by a pass over every tagged line)
            if _INFO_END_RE.search(lines[at[j]]):
                extra.append(at[j])
            j = last.find(1, j + 1)
    return extra + [i for i in traced if lines[i][-1] not in _PRINTABLE and _INFO_END_RE.search(lines[i])]


_PRINTABLE = frozenset(range(0x21, 0x7F))


def _check_needles(needles) -> None:
    """The compiled primitives' rule for needles (a ValueError otherwise)."""
    if not isinstance(needles, tuple) or not 1 <= len(needles) <= 8 \
            or not all(isinstance(n, bytes) and n and b"\n" not in n for n in needles):
        raise ValueError("needles: a tuple of 1 to 8 non-empty bytes without a newline")
    if len({n[:1] for n in needles}) != 1:
        raise ValueError("needles: they must share a first byte")


def lines_without_py(c: bytes, needles: tuple) -> tuple[int, list[int], list[bytes]]:
    """The pure-Python twin of the compiled `lines_without` (see _cscan.c): (n, keep, picked), the lines
    as `c.split(b"\\n")` cuts them (no line after a final newline); the indices of the non-empty lines
    holding none of `needles`, and of those that end in a needle (the line's last byte in "!".."~" is
    the needle's last such byte, the needle's bytes after it follow on the line); those lines."""
    _check_needles(needles)
    lines = c.split(b"\n")
    if c.endswith(b"\n"):
        lines.pop()
    keep = []
    for i, line in enumerate(lines):
        if line and (not any(n in line for n in needles) or _ends_in(line, needles)):
            keep.append(i)
    return len(lines), keep, [lines[i] for i in keep]


def _ends_in(line: bytes, needles: tuple) -> bool:
    q = len(line)
    while q and line[q - 1] not in _PRINTABLE:
        q -= 1
    for n in needles:
        lp = len(n)
        while lp and n[lp - 1] not in _PRINTABLE:
            lp -= 1
        if lp and q >= lp and len(line) - q >= len(n) - lp and line[q - lp:q - lp + len(n)] == n:
            return True
    return False


def distinct_after_py(c: bytes, needles: tuple, per_line: int, later_max: int) -> tuple[int, int, dict, dict]:
    """The pure-Python twin of the compiled `distinct_after` (see _cscan.c): (lines, found, before,
    after). The needles are found left to right without overlap (at one place, the first of the tuple
    that matches); `before`: the text before each line's first needle, distinct, in order (values
    None); `after`: the first `per_line` needles of each line with their text to the end of the line
    (a line's second needle and on: `later_max` bytes at most), distinct, in order, each
    [count, position of its first needle]."""
    _check_needles(needles)
    if per_line < 0 or later_max < 0:
        raise ValueError("per_line and later_max: 0 or more")
    rx = re.compile(b"|".join(map(re.escape, needles)))
    before: dict = {}
    after: dict = {}
    found, line_start, taken = 0, 0, 0
    for m in rx.finditer(c):
        t = m.start()
        ls = c.rfind(b"\n", 0, t) + 1
        if ls != line_start:
            line_start, taken = ls, 0
        found += 1
        taken += 1
        if taken > per_line:
            continue
        eol = c.find(b"\n", t)
        eol = len(c) if eol < 0 else eol
        text = c[t:t + later_max] if taken > 1 and eol - t > later_max else c[t:eol]
        if text in after:
            after[text][0] += 1
        else:
            after[text] = [1, t]
        if taken == 1:
            before.setdefault(c[ls:t], None)
    return c.count(b"\n"), found, before, after


def pick(lines: list[bytes], at: list[int]) -> list[bytes]:
    """The lines at these indices (one C-level call)."""
    if len(at) > 1:
        return list(operator.itemgetter(*at)(lines))
    return [lines[at[0]]] if at else []


# the compiled module is used when it holds today's primitives (a module built from an older source,
# left beside a newer checkout, does not) and TOPODIAG_PURE does not ask for the twins
COMPILED = (_compiled is not None and os.environ.get("TOPODIAG_PURE", "") in ("", "0")
            and hasattr(_compiled, "distinct_after") and hasattr(_compiled, "lines_without"))
compiled = _compiled if COMPILED else None
# the kernel log's line keys (parsers/_kernel_log_keys.py `digest`, whose regex is their twin), from a
# module that has them; their tags come as native 32-bit integers, the items of array("I") here
kernel_keys = (_compiled.kernel_keys if COMPILED and hasattr(_compiled, "kernel_keys")
               and array("I").itemsize == 4 else None)
TAGS = (INFO_TAG, TRACE_TAG)


def _untagged_c(c: bytes) -> tuple[int, list[int], list[bytes]]:
    return _compiled.lines_without(c, TAGS)


untagged = _untagged_c if COMPILED else untagged_py


def which() -> str:
    """Which scanner runs, in words (`topodiag --version`): an install without a C compiler or the
    Python headers builds the pure-Python one, and this is where it says so."""
    if COMPILED:
        return "compiled (topodiag/scan/_cscan.c)"
    if _compiled is not None:
        return "pure Python (TOPODIAG_PURE is set, or the compiled module is stale)"
    return "pure Python (not compiled at install: no C compiler or Python headers)"
