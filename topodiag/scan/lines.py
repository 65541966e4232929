"""Whole-chunk line scans, compiled where the build could compile them (topodiag/scan/_cscan.c,
hatch_build.py; see _cscan.pyi for its contract).

`untagged(chunk)` serves the nccl-tests reader (nccl_tests.py): the lines without an NCCL INFO/TRACE
tag, in one pass. `compiled` is the C module (or None) whose `tagged` the NCCL_DEBUG reader uses
(parsers/nccl_debug/lines.py holds its pure-Python twin). Without a compiler the pure-Python twins
give the same values (tests/parsers/test_linescan.py compares them on every fixture and on generated
text), only slower. `COMPILED` says which runs; `TOPODIAG_PURE=1` in the environment forces the
Python twins (how the tests compare them, and a way out should the compiled one ever misbehave).

A chunk is bytes of whole lines as topodiag/scan/chunks.py cuts them, already normalised (CR and ANSI
codes out).
"""

from __future__ import annotations

import bisect
import itertools
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


# the INFO/TRACE tags of a line whose text is read (each text runs to the end of the line: a line of
# repeated tags would cost its length squared; the output of a few processes run together is read)
TAGS_PER_LINE = 4
LATER_TEXT_MAX = 4096  # the text of a line's second to fourth tag is cut here: a giant line costs itself once


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
compiled = _compiled if COMPILED else None
untagged = _compiled.untagged if COMPILED else untagged_py


def which() -> str:
    """Which scanner runs, in words (`topodiag --version`): an install without a C compiler or the
    Python headers builds the pure-Python one, and this is where it says so."""
    if COMPILED:
        return "compiled (topodiag/scan/_cscan.c)"
    if _compiled is not None:
        return "pure Python (TOPODIAG_PURE is set, or the compiled module is stale)"
    return "pure Python (not compiled at install: no C compiler or Python headers)"
