"""A progress bar's redraws, left out before the chunk is cut into lines (issue 29).

A training job's bar redraws itself in place: tqdm writes a carriage return and the bar again at each
update, and a newline only when the bar closes, so a log of the job holds few lines of bars, each of
them dozens of redraws joined by carriage returns. Every reader of the log makes each carriage return a
newline (topodiag/scan/chunks.py `newlines`): each redraw is a line, the line numbers count them, and
`feed` counts each redraw that holds "%|" in `foreign` and reads nothing else of it (quiet.py). Cut
into lines first, the redraws were most of a chunk's lines (29,000 of 49,000 in the progress-bar
benchmark's), and each C-level map of the line scan, the failure words and the bars went over each of
them.

Here the chunk is cut at its newlines only (a tenth of the pieces are runs of redraws) and the runs
are settled as runs, in one blob (`_settled`). A run whose every redraw holds "%|" (but an empty first
one: tqdm writes a carriage return before each redraw, so a run starts with an empty line) and which
holds no INFO/TRACE tag and no failure word is counted, each of its redraws as `split_bars` counts a
bar (a tag or a word holds no carriage return: it is in the run exactly when it is in one of its
redraws); the empty first line is one no reader picks. Every other line -- the lines without a
carriage return, each redraw of a run with a tag, a failure word or a NUL, and the redraws without
"%|" of a run that holds one (tqdm.write's cleared line and its message after it, an empty redraw
between two; the run's bars are counted) -- goes to the same line scan as before
(topodiag/scan/lines.py `untagged_lines_py`), with its index among the chunk's lines as `newlines`
makes them. So the lines left and their indices are those `untagged` would
pick with the counted redraws taken out, and each of `digest`'s later steps (the failure lines, the
bars, the lines of no effect) decides line by line: the digest is the same
(tests/parsers/test_nccl_tests_redraws.py holds it against the ordinary one).

Escape codes (tqdm's coloured bars, a nested bar's cursor moves) are taken out first: the ordinary way
makes the carriage returns newlines and then takes them out, and the two commute, as no code holds a
CR or LF (parsers/base.py ANSI_RE) -- but for a code between a CR and a LF, whose removal makes a CRLF
of a lone CR: that chunk, as any with a CRLF, goes the ordinary way (`newlines` reads a CRLF as one
newline). Used only where it pays: without the compiled line scan (see `untagged`), on a chunk that
ends in a newline and whose first SAMPLE bytes hold at least one carriage return for every RUNS_MIN
newlines.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from typing import Optional

from ...scan import lines as _linescan
from ..base import ANSI_B_RE
from . import quiet as _quiet

CR = b"\r"
SAMPLE = 1 << 18  # bytes at the start of a chunk that decide whether its runs are looked for
# at least one carriage return in them for this many newlines (measured on the progress-bar benchmark's
# chunks with a part of their runs left out: 0.35 CRs a newline 18.5 ms a chunk this way against 19.8
# the ordinary way, 0.18: 17.2 against 16.7; all of them, 1.30: 26.9 against 38.4)
RUNS_MIN = 4
# the chunk goes the ordinary way where more than one run in WHOLE_MAX goes line by line whole (a tag, a
# failure word; measured with tqdm.write's runs sent whole, as they were before ODD_MAX: one run in 50,
# 29.9 ms a chunk against 38.1 the ordinary way; in 10, 33.8 against 38.7; in 6, 37.3 against 38.8; in
# 5, 39.5 against 37.9), or more than one in ODD_MAX holds a redraw without a bar (tqdm.write's cleared
# line and message: one run in 5, 33.9 ms against 40.4; in 2, 39.1 against 41.6; every run, 48.5
# against 44.7)
WHOLE_MAX = 5
ODD_MAX = 1.5


def worth_it(raw: bytes) -> bool:
    """Whether `untagged` is tried on this chunk: carriage returns are common in its first SAMPLE bytes
    (a guess for speed: either way the digest is the same)."""
    cr = raw.count(CR, 0, SAMPLE)
    return cr > 0 and cr * RUNS_MIN >= raw.count(b"\n", 0, SAMPLE)


def untagged(raw: bytes) -> Optional[tuple[int, list[int], list[bytes], int]]:
    """(n, keep, picked, bars) for a chunk as read (not normalised): `untagged(normalised chunk)`'s
    line count, indices and lines (topodiag/scan/lines.py) without the redraws counted as bars, and how
    many those are; None where this does not read the chunk (see above), and with the compiled line
    scan, which cuts and scans the whole chunk in one C pass (19.6 ms a progress-bar benchmark chunk,
    against 22.6 this way) and leaves a line that ends in "%|" to `feed` (quiet.py `_bar_free`), where the
    pure-Python bars, as here, count it."""
    if _linescan.compiled is not None or not raw.endswith(b"\n"):
        return None
    if b"\x1b" in raw:  # (a coloured bar, a nested bar's cursor moves) out first: see above
        raw = ANSI_B_RE.sub(b"", raw)
    rl = raw.split(b"\n")
    rl.pop()
    crs = list(map(bytes.count, rl, itertools.repeat(CR)))
    runs = list(itertools.compress(range(len(rl)), crs))  # the lines with a carriage return
    if not runs:
        return None
    texts = _linescan.pick(rl, runs)
    if 13 in bytes(map(operator.itemgetter(-1), texts)):  # a CRLF (or CR, LF): the ordinary way
        return None
    before = list(itertools.accumulate(crs, initial=0))  # the carriage returns before each line
    bars, whole, odd = _settled(texts)
    if len(whole) * WHOLE_MAX > len(texts) or len(odd) * ODD_MAX > len(texts):  # (the ordinary way is quicker)
        return None
    # the redraws that go line by line, a run at a time: (the index of its first redraw, their indices,
    # them), in order; every redraw of a run in `whole`, those of a run in `odd` that are not bars
    extra = []
    for k in sorted(whole | odd):
        r = runs[k]
        i = r + before[r]
        redraws = rl[r].split(CR)
        if k in whole:
            extra.append((i, range(i, i + len(redraws)), redraws))
            continue
        found = list(map(bytes.find, redraws, itertools.repeat(_quiet.BAR)))
        other = [j for j in itertools.compress(range(len(redraws)), map((-1).__eq__, found)) if redraws[j]]
        bars += len(redraws) - found.count(-1)
        extra.append((i, [i + j for j in other], [redraws[j] for j in other]))
    flat = list(map(operator.not_, crs))
    lines = list(itertools.compress(rl, flat))  # the lines without a carriage return
    if extra:
        at, lines = _merged(list(map(operator.add, itertools.compress(range(len(rl)), flat),
                                     itertools.compress(before, flat))), lines, extra)
        keep, picked = _linescan.untagged_lines_py(lines)
        keep = list(map(at.__getitem__, keep))
    else:
        keep, picked = _linescan.untagged_lines_py(lines)
        keep = list(map(list(itertools.compress(range(len(rl)), flat)).__getitem__, keep))  # (as lines of `rl`)
        keep = list(map(operator.add, keep, map(before.__getitem__, keep)))
    return len(rl) + before[-1], keep, list(picked), bars


# The runs looked at in one blob (`_settled`): each "%|" made two NULs (the same length: a replace that
# copies), then every byte deleted but the NULs, the carriage returns, the newlines and the letters of
# the failure words' runs (quiet.py) and of "NCCL". What is left is about a sixth of the runs: the
# failure words and "NCCL" are looked for there (as quiet.py `fail_positions` does), and with the letters
# deleted too (`shape`), each run is its redraws as pieces between carriage returns, a bar's piece its
# NULs, a redraw without "%|" an empty piece.
_MARK = b"\0\0"
_KEPT = set(b"".join(_quiet.LETTERS.values())) | set(b"NCL\0\r\n")
_NOT_KEPT = bytes(set(range(256)) - _KEPT)
_NOT_SHAPE = bytes(set(range(256)) - set(b"\0\r\n"))
_IS_CR = bytes(1 if b == 13 else 0 for b in range(256))  # bytes.translate: 1 for a carriage return


def _settled(texts: list[bytes]) -> tuple[int, set[int], set[int]]:
    """(the bars of the runs counted at once, the positions in `texts` of the runs whose every redraw
    goes line by line, those of the runs to be looked at a redraw at a time). A run is counted when each
    of its redraws holds "%|" but an empty first one (tqdm writes a carriage return before each redraw:
    a run that starts with one has an empty line first) and it holds no failure word, no "NCCL" (so no
    INFO/TRACE tag) and no NUL (the marks' byte). A run with one of those goes line by line whole; one
    that only holds a redraw without "%|" (tqdm.write's cleared line and its message after it, an empty
    redraw between two) has its bars counted and its other redraws go line by line."""
    blob = b"\n".join(texts)
    mixed: set[int] = set()  # (whole)
    if blob.find(b"\0") >= 0:
        mixed.update(_quiet.lines_holding(blob, b"\0", texts, b"\0", mixed))
    small = blob.replace(_quiet.BAR, _MARK).translate(None, _NOT_KEPT)
    _quiet.fail_lines_in(small, texts, mixed)
    mixed.update(_quiet.lines_holding(small, b"NCCL", texts, b"NCCL", mixed))
    shape = small.translate(None, _NOT_SHAPE)
    firsts = bytes(map(operator.itemgetter(0), texts))
    empty_first = firsts.count(13)
    if shape[-1:] == CR or shape.find(b"\r\r") >= 0 or shape.find(b"\r\n") >= 0 \
            or shape.count(b"\n\r") + (shape[:1] == CR) != empty_first:
        # some run holds a redraw without a bar (but an empty first one): which (C-level maps over the
        # runs' shapes, a few bytes each, none empty: each holds a carriage return): one whose shape
        # starts with a CR where the run does not, ends with one, or holds two together
        pieces = shape.split(b"\n")
        heads = bytes(map(operator.itemgetter(0), pieces)).translate(_IS_CR)
        odd = map(operator.ne, heads, firsts.translate(_IS_CR))
        odd = map(operator.or_, odd, bytes(map(operator.itemgetter(-1), pieces)).translate(_IS_CR))
        odd = map(operator.or_, odd, map((-1).__ne__, map(bytes.find, pieces, itertools.repeat(b"\r\r"))))
        odd = set(itertools.compress(range(len(pieces)), odd)) - mixed
    else:
        odd = set()
    bars = shape.count(CR) + len(texts) - empty_first
    for k in mixed | odd:  # (the redraws of the runs looked at again are no bars counted here)
        bars -= texts[k].count(CR) + (texts[k][0] != 13)
    return bars, mixed, odd


def _merged(at: list[int], lines: list[bytes], extra: list) -> tuple[list[int], list[bytes]]:
    """The lines at indices `at` (increasing) and the `extra` lines of a few runs ((the index of the
    run's first line, the lines' indices, the lines) a run, in order: no index of `at` falls within a
    run) in one increasing order (slices of the long lists between the runs)."""
    out_at: list[int] = []
    out_lines: list[bytes] = []
    prev = 0
    for i, indices, run in extra:
        p = bisect.bisect_left(at, i, prev)
        out_at += at[prev:p]
        out_lines += lines[prev:p]
        out_at += indices
        out_lines += run
        prev = p
    return out_at + at[prev:], out_lines + lines[prev:]
