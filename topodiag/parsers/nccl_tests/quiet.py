"""Lines of other programs found in bulk (issue 29): a training job's progress bars are counted by a
C-level pass over a chunk's picked lines, never decoded or fed one by one, with the count
`Parser.feed` gives them; its other lines of no effect ("step 12 | train loss ...") are left out by a
pass over the lines' first bytes and a few substring searches (`split_no_effect`, below).

What `feed` does with a picked line that holds "%|" (a tqdm bar redraw: each carriage return ends a
line), once the parser has its first text (`first_text`): when the line holds no " NCCL INFO " or
" NCCL TRACE " (`feed`'s first test) and no failure mark in its first LONG_LINE characters
(parsers/_foreign.py `skip`), it counts it in `foreign` and reads nothing else of it. Here a line is
counted that way when, in bytes, it holds "%|", neither tag and none of the failure words (`fails`,
found in bytes by stream.py; its length does not matter: a line longer than LONG_LINE is counted too):
"%|", the tags and those words are ASCII, so the decoded line holds them where the bytes do (an ASCII
byte is never part of an invalid sequence that decoding replaces; stripping trailing blanks can only
take a tag away), and neither the strip of blanks nor of a launcher prefix can take a "%" or a "|" off
it. Every other line goes to `feed` as before.

An NCCL WARN line once the WARN list is full and the facts the parser reads from NCCL lines are known
is settled in `ChunkReader._each` by `dropped_warn` (a few substring tests on its bytes): all `feed`
would do is count it in `lists_dropped`. Past the cut, with the list full when a chunk starts, the
chunk's such lines are taken out and counted at once (`split_dropped_warns`: the same tests, as maps).
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re

from ...scan import lines as _linescan
from .. import nccl_tests_failures as _failures
from .._foreign import LONG_LINE

BAR = b"%|"
_INFO, _TRACE = _linescan.INFO_TAG, _linescan.TRACE_TAG
_TAGS = (_INFO, _TRACE)

# The failure words (nccl_tests_failures.FAIL_WORDS), looked for in a chunk's picked lines joined: each
# word stands for a part of it that starts with a byte logs hold few of, and the parts that start with
# the same byte are looked for at once (the compiled `distinct_after`: a memmem pass that only counts,
# ~0.3-0.5 ms a group over 4 MB where `word in blob` takes 1-2 ms a word). Only the words of a group
# found are then looked for one by one. (A part found where its word is not only costs that look; a
# word is never missed: its part is in it.)
_PART = {b"FAILED": b"AILED", b"Aborted": b"Aborted", b"MPI_ABORT": b"ABORT",
         b"Segmentation fault": b"mentation fault", b"terminate called": b"minate called", b"core dumped": b"mped",
         b"Test timeout": b"Test timeout", b"exited on signal": b"xited on signal", b" failure": b" failure"}
assert set(_PART) == set(_failures.FAIL_WORDS) and all(part in word for word, part in _PART.items())
_GROUPS = tuple((tuple(_PART[w] for w in words), words) for words in (
    tuple(w for w in _PART if _PART[w][:1] == first) for first in dict.fromkeys(part[:1] for part in _PART.values())))


# Without the compiled module: each word stands for a run of its letters (`LETTERS`: the word's
# longest, no blank in it), the bytes no such run holds deleted first but the newlines (one C-level
# translate: blanks, digits and punctuation go, so a results row or a progress bar leaves a tenth of
# itself or less), the runs looked for in what is left, and the word of a run found there in that
# run's line itself (`fail_positions`). (Deleting bytes never splits a run, whose bytes are all kept,
# so a word in the lines is never missed; it may join two pieces into one, which the second look
# turns down.)
LETTERS = {w: max(w.split(), key=len) for w in _failures.FAIL_WORDS}
assert all(run in word and run.isalpha() or run == b"MPI_ABORT" for word, run in LETTERS.items())
_NOT_IN_RUNS = bytes(set(range(256)) - set(b"".join(LETTERS.values())) - {10})


def fail_words(blob: bytes) -> list[bytes]:
    """The failure words `blob` holds (in FAIL_WORDS' order within each group): the compiled scan's
    grouped passes; without it, the words of the lines `fail_positions` finds (a word holds no
    newline: it is in the blob where it is in one of its lines)."""
    c = _linescan.compiled
    if c is None:
        lines = blob.split(b"\n")
        found = [lines[k] for k in fail_positions(lines, blob)]
        return [w for w in _failures.FAIL_WORDS if any(line.find(w) >= 0 for line in found)]
    out: list[bytes] = []
    for parts, words in _GROUPS:
        if c.distinct_after(blob, parts, 0, 0)[1]:
            out += words if parts == words else [w for w in words if c.distinct_after(blob, (w,), 0, 0)[1]]
    return out


def fail_positions(picked: list[bytes], blob: bytes) -> set[int]:
    """The positions of the lines (`picked`, joined by newlines in `blob`) that hold a failure word.
    Compiled: the words `fail_words` finds, each place's line by the newlines counted from the place
    before (one pass over the blob at most). Without it: each word's run of letters (`LETTERS`) looked
    for in the blob with every byte but the runs' letters and the newlines deleted (an eighth of a busy
    log's blob), its line counted there, and the word itself looked for in that line; the rest of a
    line is passed over once it is settled. (A word in a line always leaves its run there, whole, on
    that line: a candidate is never missed, and the look in the line itself turns down the runs that
    the deletion joined.)"""
    if _linescan.compiled is not None:
        present = fail_words(blob)
        if not present:
            return set()
        places = []
        for w in present:
            pos = blob.find(w)
            while pos >= 0:
                places.append(pos)
                pos = blob.find(w, pos + 1)
        at = set()
        line = last = 0
        for pos in sorted(places):
            line += blob.count(b"\n", last, pos)
            last = pos
            at.add(line)
        return at
    return fail_lines_in(blob.translate(None, _NOT_IN_RUNS), picked, set())


def fail_lines_in(small: bytes, lines: list[bytes], found: set) -> set[int]:
    """`found` with the positions of the `lines` that hold a failure word, from `small`: the lines
    joined by newlines, any of their bytes deleted but the letters of the words' runs and the newlines
    (see `fail_positions`; redraws.py keeps a few more)."""
    for w in _failures.FAIL_WORDS:
        found.update(lines_holding(small, LETTERS[w], lines, w, found))
    return found


def lines_holding(small: bytes, run: bytes, lines: list[bytes], word: bytes, done: set) -> list[int]:
    """The positions of the `lines` (not in `done`) that hold `word`, found by its `run` in `small`:
    the lines joined by newlines with bytes no run holds deleted (the newlines kept). Each run found,
    its line counted from the one before, the word looked for in that line, the rest of the line
    passed over (see `fail_positions`)."""
    out = []
    pos = small.find(run)
    line = last = 0
    while pos >= 0:
        line += small.count(b"\n", last, pos)
        last = pos
        if line not in done and lines[line].find(word) >= 0:
            out.append(line)
        end = small.find(b"\n", pos)
        pos = small.find(run, end + 1) if end >= 0 else -1
    return out


def _bar_free(picked: list[bytes], blob: bytes) -> tuple[list[int], list[bytes]]:
    """(positions, lines) of the picked lines that hold no "%|" (and the few that end in it: they go to
    `feed`, which reads them exactly): the compiled line scan over the joined lines, or C-level maps."""
    if _linescan.compiled is not None:
        _, at, loud = _linescan.compiled.lines_without(blob, (BAR,))
        return at, loud
    mask = list(map(operator.not_, map(bytes.count, picked, itertools.repeat(BAR))))  # (count, not `in`: scan/lines.py)
    return list(itertools.compress(range(len(picked)), mask)), list(itertools.compress(picked, mask))


def _is_bar(at: list[int], k: int) -> bool:
    """Whether position `k` of the picked lines is not among the bar-free positions `at` (sorted)."""
    j = bisect.bisect_left(at, k)
    return j == len(at) or at[j] != k


def _odd(keep: list[int], fails: set[int], blob: bytes, at: list[int], picked: list[bytes], untagged: bool) -> bool:
    """Whether some bar line must still be fed: one that may hold a failure mark or holds an INFO/TRACE
    tag (a picked line holds one only where nothing printable follows it: few). Found without a loop over
    the bars: the failure lines and the tags are few. (A bar longer than LONG_LINE is counted all the
    same: `skip` counts a line that holds "%|" or is that long.) `untagged`: the lines are as
    scan/lines.py `untagged` picks them, so only one that ends in a byte outside "!".."~" can hold a
    tag; without the compiled scan only those are looked at (one C-level map over the lines' last
    bytes, where a look for each tag in the blob costs a pass over it)."""
    if any(_is_bar(at, bisect.bisect_left(keep, i)) for i in fails):
        return True
    c = _linescan.compiled
    if c is not None and not c.distinct_after(blob, _TAGS, 0, 0)[1]:
        return False
    if c is None and untagged and all(picked):
        ends = bytes(map(operator.itemgetter(-1), picked)).translate(_linescan.NOT_PRINTABLE)
        j = ends.find(1)
        while j >= 0:
            line = picked[j]
            if line.find(BAR) >= 0 and (line.find(_INFO) >= 0 or line.find(_TRACE) >= 0):
                return True
            j = ends.find(1, j + 1)
        return False
    for tag in _TAGS:
        pos = blob.find(tag)
        while pos >= 0:
            start = blob.rfind(b"\n", 0, pos) + 1
            end = blob.find(b"\n", pos)
            if blob.find(BAR, start, len(blob) if end < 0 else end) >= 0:
                return True
            pos = blob.find(tag, pos + 1)
    return False


def split_bars(keep: list[int], picked: list[bytes], fails: set[int], blob: bytes,
               untagged: bool = False) -> tuple[list[int], list[bytes], int]:
    """(keep, picked) without the bar lines `feed` would only count (see above), and how many those are.
    `blob`: the picked lines joined by newlines; `fails`: the indices (in the chunk) of the lines that may
    hold a failure mark; `untagged`: the lines are as scan/lines.py `untagged` picks them (see `_odd`)."""
    if BAR not in blob:
        return keep, picked, 0
    at, loud = _bar_free(picked, blob)
    if len(at) == len(picked):
        return keep, picked, 0
    if _odd(keep, fails, blob, at, picked, untagged):
        at = [k for k, line in enumerate(picked)
              if not (BAR in line and _INFO not in line and _TRACE not in line and keep[k] not in fails)]
        loud = [picked[k] for k in at]
    return [keep[k] for k in at], loud, len(picked) - len(at)


_WARN = b" NCCL WARN "


def dropped_warn(line: bytes) -> bool:
    """Whether `feed` would only count this line in `lists_dropped` once the WARN list is full and the
    parser knows the NCCL version, nranks and its first text (the caller's to check): an NCCL WARN line
    (" NCCL WARN " in it and neither "NCCL INFO" nor "NCCL TRACE": the first match of its pattern is the
    WARN), no "%|", at most LONG_LINE bytes (else `feed` may count it as another program's line)."""
    return (len(line) <= LONG_LINE and line.find(_WARN) >= 0 and line.find(b"NCCL INFO") < 0
            and line.find(b"NCCL TRACE") < 0 and line.find(BAR) < 0)  # (find, not `in`: see scan/lines.py)


_WARN_READ = (b"NCCL INFO", b"NCCL TRACE", BAR)  # a WARN line that holds one is read by `feed`


def split_dropped_warns(keep: list[int], picked: list[bytes]) -> tuple[list[int], list[bytes], int]:
    """(keep, picked) without the lines `dropped_warn` takes, and how many those are: C-level maps over
    the lines, then over the WARN lines (the same tests as `dropped_warn`; where none of the WARN lines
    is too long or holds a needle that makes `feed` read it, found in their joined bytes, all are taken)."""
    at = list(itertools.compress(range(len(picked)), map(bytes.count, picked, itertools.repeat(_WARN))))
    if not at:
        return keep, picked, 0
    warns = [picked[k] for k in at]
    blob = b"\n".join(warns)
    if max(map(len, warns)) > LONG_LINE or any(blob.find(x) >= 0 for x in _WARN_READ):
        ok = map(LONG_LINE.__ge__, map(len, warns))
        for needle in _WARN_READ:
            ok = map(operator.and_, ok, map(operator.not_, map(bytes.count, warns, itertools.repeat(needle))))
        at = list(itertools.compress(at, list(ok)))
    mask = bytearray(b"\x01") * len(picked)
    n = len(at)
    for k in at:
        mask[k] = 0
    if not n:
        return keep, picked, 0
    return list(itertools.compress(keep, mask)), list(itertools.compress(picked, mask)), n


# Lines of no effect (a training loop's "step 12 | train loss 0.5 | lr 3e-4" lines, a launcher's or a
# framework's chatter): once the parser has its first text, `feed` does nothing with a line that holds no
# "NCCL", no "_perf", no word of a catalogued failure line (nccl_tests_failures.HINT_RE: its literals,
# "[Ii]nvalid" as "nvalid"), no "%|", no failure word, is no longer than LONG_LINE, and whose first byte
# can start neither a row's size or a cell (a digit, "+", "-", ".", and "nan", "inf", "N/A": n, N, i, I),
# a comment ("#"), a launcher prefix ("0: ", "[0]") nor a blank to strip (see `_no_effect` in stream.py,
# which settles the same lines one by one past the cut). The first bytes are tested at once (one byte
# string of them, translated), the words in the joined candidates.
_HINTS = tuple(part.replace("[Ii]", "").encode() for part in _failures.HINT_RE.pattern.split("|"))
assert all(h and h.replace(b" ", b"").replace(b"#", b"").replace(b"=", b"").replace(b"_", b"").isalnum()
           for h in _HINTS), _HINTS  # literals: the pattern holds no other class or operator
_MARKS = _HINTS + (b"NCCL", b"_perf", BAR)
_FIRST = bytes(c for c in range(0x21, 0x7F) if chr(c) not in "0123456789+-.#[nNiI")
_CAN_BE_QUIET = bytes(1 if c in _FIRST else 0 for c in range(256))
_FLIP = bytes([1, 0]) + bytes(254)


# Each mark stands for its longest run without a blank or a digit (`_MARK_RUNS`): the candidates'
# blob with every byte no run holds deleted, the newlines kept (half of a training job's "step 12 |
# train loss 0.5" line goes), is searched for the runs, each run's line counted there, and the mark
# itself looked for in that line -- as the failure words are (`fail_positions`): a mark in a line
# leaves its run whole on that line, so none is missed, and the look in the line turns down the runs
# that the deletion joined.
_MARK_RUNS = {m: max(re.split(rb"[ 0-9]+", m), key=len) for m in _MARKS}
assert all(run and run in mark for mark, run in _MARK_RUNS.items())
_NOT_IN_MARK_RUNS = bytes(set(range(256)) - set(b"".join(_MARK_RUNS.values())) - {10})


def _loud(keep: list[int], fails: set[int], at: list[int], cands: list[bytes]) -> set[int]:
    """Which candidates (positions in `cands`) `feed` must still read: too long, a mark in them, or one
    that may hold a failure mark. The marks are looked for in the lines that are not too long only
    (those are read whatever they hold: a 256 KiB line of JSON among a chunk's candidates was scanned
    once for each of the two dozen marks)."""
    loud: set[int] = set()
    short, where = cands, None
    if max(map(len, cands)) > LONG_LINE:
        fits = list(map(LONG_LINE.__ge__, map(len, cands)))
        loud.update(itertools.compress(range(len(cands)), map(operator.not_, fits)))
        where = list(itertools.compress(range(len(cands)), fits))
        short = list(itertools.compress(cands, fits))
    if short:
        small = b"\n".join(short).translate(None, _NOT_IN_MARK_RUNS)
        marked: set[int] = set()  # (positions in `short`)
        for mark in _MARKS:
            marked.update(lines_holding(small, _MARK_RUNS[mark], short, mark, marked))
        loud.update(marked if where is None else map(where.__getitem__, marked))
    for i in fails:
        j = bisect.bisect_left(at, bisect.bisect_left(keep, i))
        if j < len(at) and keep[at[j]] == i:
            loud.add(j)
    return loud


def split_no_effect(keep: list[int], picked: list[bytes], fails: set[int]) -> tuple[list[int], list[bytes], int]:
    """(keep, picked) without the lines of no effect (see above), and how many those are."""
    if not picked:
        return keep, picked, 0
    heads = bytes(map(operator.itemgetter(0), picked)).translate(_CAN_BE_QUIET)
    if 1 not in heads:
        return keep, picked, 0
    at = list(itertools.compress(range(len(picked)), heads))
    cands = [picked[k] for k in at]
    loud = _loud(keep, fails, at, cands)
    if len(loud) == len(at):
        return keep, picked, 0
    mask = bytearray(len(picked))
    for j, k in enumerate(at):
        if j not in loud:
            mask[k] = 1
    kept = bytes(mask).translate(_FLIP)
    return list(itertools.compress(keep, kept)), list(itertools.compress(picked, kept)), len(at) - len(loud)
