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
are settled as runs. A redraw that holds "%|" is counted, as `split_bars` counts it, when its run holds
no INFO/TRACE tag and no failure word (quiet.py `fail_positions`; the run is then looked at whole: a
tag or a word holds no carriage return, so it is in the run exactly when it is in one of its redraws);
an empty redraw (the carriage return that starts a run, or two together) is a line no reader picks. Every
other line -- the lines without a carriage return, each redraw of a run with a tag or a failure word,
a redraw without "%|" -- goes to the same line scan as before (topodiag/scan/lines.py
`untagged_lines`), with its index among the chunk's lines as `newlines` makes them. So the lines left
and their indices are those `untagged` would pick with the counted redraws taken out, and each of
`digest`'s later steps (the failure lines, the bars, the lines of no effect) decides line by line: the
digest is the same (tests/parsers/test_nccl_tests_redraws.py holds it against the ordinary one).

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
from ..nccl_tests_failures import FAIL_WORDS
from . import quiet as _quiet

CR = b"\r"
SAMPLE = 1 << 18  # bytes at the start of a chunk that decide whether its runs are looked for
# at least one carriage return in them for this many newlines (measured on the progress-bar benchmark's
# chunks with a part of their runs left out: 0.35 CRs a newline 18.5 ms a chunk this way against 19.8
# the ordinary way, 0.18: 17.2 against 16.7; all of them, 1.30: 26.9 against 38.4)
RUNS_MIN = 4


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
    blob = b"\n".join(texts)
    bars = _all_bars(texts, blob)
    extra: list[tuple[int, bytes]] = []  # redraws that go the ordinary way, with their indices
    if bars is None:
        bars, extra = _sorted_out(rl, crs, runs, texts, blob, before)
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


# The runs looked at in one blob (`_all_bars`): each "%|" made two NULs (the same length: a replace that
# copies), then every byte deleted but the NULs, the carriage returns, the newlines and the letters of
# the failure words' runs (quiet.py) and of "NCCL". What is left is about a sixth of the runs: the
# failure words and "NCCL" are looked for there (as quiet.py `fail_positions` does), and with the letters
# deleted too, a redraw without a bar is an empty piece between two carriage returns (or a newline).
_MARK = b"\0\0"
_KEPT = set(b"".join(_quiet.LETTERS.values())) | set(b"NCL\0\r\n")
_NOT_KEPT = bytes(set(range(256)) - _KEPT)
_NOT_SHAPE = bytes(set(range(256)) - set(b"\0\r\n"))


def _all_bars(texts: list[bytes], blob: bytes) -> Optional[int]:
    """How many bars the runs (`texts`, joined by newlines in `blob`) hold, where each redraw holds "%|"
    but the empty first one of a run that starts with a carriage return, and no run holds a failure
    word or "NCCL" (so no INFO/TRACE tag); None otherwise (or where the runs hold a NUL: `_sorted_out`
    then sorts them one by one)."""
    if blob.find(b"\0") >= 0:
        return None
    small = blob.replace(_quiet.BAR, _MARK).translate(None, _NOT_KEPT)
    if small.find(b"NCCL") >= 0:
        return None
    for w in FAIL_WORDS:
        if _quiet.lines_holding(small, _quiet.LETTERS[w], texts, w, set()):
            return None
    # `shape`: the runs' redraws as pieces between carriage returns (the runs between newlines), a
    # bar's piece its NULs, a redraw without "%|" an empty piece. The only empty pieces allowed are
    # the first of the runs whose line starts with a carriage return (tqdm writes one before each
    # redraw: that first redraw is an empty line in the chunk too), so there must be as many empty
    # first pieces as such runs, and no other
    shape = small.translate(None, _NOT_SHAPE)
    if shape[-1:] == CR or shape.find(b"\r\r") >= 0 or shape.find(b"\r\n") >= 0:
        return None
    first_empty = bytes(map(operator.itemgetter(0), texts)).count(13)
    if shape.count(b"\n\r") + (shape[:1] == CR) != first_empty:
        return None
    return shape.count(CR) + len(texts) - first_empty


def _sorted_out(rl: list[bytes], crs: list[int], runs: list[int], texts: list[bytes], blob: bytes,
                before: list[int]) -> tuple[int, list[tuple[int, bytes]]]:
    """(the redraws counted as bars, [(index, redraw)] of the others, sorted): each redraw of a run
    with a failure word or an INFO/TRACE tag, and each other redraw that holds no "%|" and is not empty."""
    mixed = _quiet.fail_positions(texts, blob)  # runs that keep every redraw as a line
    if blob.find(_linescan.INFO_TAG) >= 0 or blob.find(_linescan.TRACE_TAG) >= 0:
        mixed.update(itertools.compress(range(len(texts)), map(operator.or_, map(
            bytes.count, texts, itertools.repeat(_linescan.INFO_TAG)), map(bytes.count, texts, itertools.repeat(_linescan.TRACE_TAG)))))
    plain = runs if not mixed else [r for k, r in enumerate(runs) if k not in mixed]
    redraws = b"\r".join(_linescan.pick(rl, plain)).split(CR) if plain else []
    found = list(map(bytes.find, redraws, itertools.repeat(_quiet.BAR)))
    bars = len(found) - found.count(-1)
    extra: list[tuple[int, bytes]] = []
    for k in sorted(mixed):
        r = runs[k]
        extra += zip(itertools.count(r + before[r]), rl[r].split(CR))
    if bars + redraws.count(b"") < len(redraws):
        first = list(map(operator.add, plain, map(before.__getitem__, plain)))
        index = list(itertools.chain.from_iterable(map(range, first, map(operator.add, first, map(
            (1).__add__, map(crs.__getitem__, plain))))))
        extra += [(index[j], redraws[j]) for j in itertools.compress(range(len(redraws)), map((-1).__eq__, found))
                  if redraws[j]]
    return bars, sorted(extra)


def _merged(at: list[int], lines: list[bytes], extra: list[tuple[int, bytes]]) -> tuple[list[int], list[bytes]]:
    """The lines at indices `at` (increasing) and the `extra` (index, line) pairs (sorted) in one
    increasing order (slices of the long lists between the few extra ones)."""
    out_at: list[int] = []
    out_lines: list[bytes] = []
    prev = 0
    for i, line in extra:
        p = bisect.bisect_left(at, i, prev)
        out_at += at[prev:p]
        out_lines += lines[prev:p]
        out_at.append(i)
        out_lines.append(line)
        prev = p
    return out_at + at[prev:], out_lines + lines[prev:]
