"""The chunk engine: the same Parser (assemble.py), fed only the lines that can change its result.

A big NCCL_DEBUG log is mostly "NCCL INFO" lines, of which this parser reads two facts (the NCCL
version, nranks) and only until it has them. `digest(chunk)` is the state-free half, done with C-level
passes over the chunk's bytes: it splits the chunk into lines and keeps (index, bytes) of each line
that `Parser.feed` could act on: every non-empty line that is not an INFO/TRACE line. While the
parser lacks its first text, the NCCL version or nranks, `ChunkReader` adds the chunk's first
INFO/TRACE line and its first INFO/TRACE line whose text holds an NCCL version, and one that holds
an nranks (a later one cannot change what the first set).
Of the lines picked, those `feed` would only count or do nothing with are left out in bulk (quiet.py:
a training job's progress bars, counted; its other lines of no effect), and an NCCL WARN line past the
WARN list's cap is counted from its bytes (`_each`).
`ChunkReader.feed` decodes those lines and feeds them, with their line numbers, to the same Parser
the line path uses, so the result is `parse(text)`'s. An INFO/TRACE line is left out only when a
printable ASCII character follows its last tag (_linescan.untagged keeps the others), so the line `feed`
would see, stripped of trailing blanks, still holds the tag and is routed the same way.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
from typing import Optional

from ...scan import chunks as _chunks, lines as _linescan
from .. import nccl_tests_failures as _failures
from ..base import ANSI_B_RE
from . import quiet as _quiet, redraws as _redraws
from .assemble import NOTHING, Parser, replay
from .read import (_DEVICE_RE, _NCCL_VERSION_RE, _NRANKS_RE, _SRUN_RE, _USING_RE, _WS_S, _plain_shape,
                   _wrong)
from .records import Limits, NcclTestsReport

_INFO_B, _TRACE_B = _linescan.INFO_TAG, _linescan.TRACE_TAG
_WARN_B = b" NCCL WARN "

Digest = tuple  # (lines in the chunk, [indices of the lines picked], [their bytes], {indices of those with a failure
#                   word}, progress-bar lines counted and left out of those picked, lines of no effect left out)


def _normal(raw: bytes) -> bytes:
    """CRLF and lone CR to LF, ANSI codes out: what clean_lines does, on bytes (the patterns are ASCII,
    so the bytes of the cleaned text are the cleaned bytes)."""
    raw = _chunks.newlines(raw)
    if b"\x1b" in raw:
        raw = ANSI_B_RE.sub(b"", raw)
    return raw


def _has_tag(line: bytes) -> bool:
    return _INFO_B in line or _TRACE_B in line


def _first_info_facts(c: bytes, lines: list[bytes], mark: bytes, regex: re.Pattern, n: int = 2) -> list[int]:
    """Indices of the chunk's first `n` INFO/TRACE lines whose text `regex` finds something in."""
    found: list[int] = []
    pos = c.find(mark)
    while pos >= 0:
        i = c.count(b"\n", 0, pos)
        line = lines[i]
        if _has_tag(line) and regex.search(line.decode("utf-8", "replace").rstrip()):
            found.append(i)
            if len(found) == n:
                break
        nl = c.find(b"\n", pos)
        if nl < 0:
            break
        pos = c.find(mark, nl + 1)
    return found


def _fail_lines(keep: list[int], picked, blob: bytes) -> set[int]:
    """Indices (in the chunk) of the picked lines that hold one of the failure words (FAIL_WORDS, found in
    bytes: the words are ASCII), searched in the picked lines only (`blob`: joined by newlines; quiet.py
    `fail_positions`)."""
    return set(map(keep.__getitem__, _quiet.fail_positions(picked, blob)))


def _lines_of(raw: bytes) -> tuple[bytes, list[bytes]]:
    c = _normal(raw)
    lines = c.split(b"\n")
    if c.endswith(b"\n"):
        lines.pop()
    return c, lines


def digest(raw: bytes, bulk: bool = True) -> Digest:
    """The state-free half of reading one chunk of whole lines (see above): (its line count, the
    indices of the lines the parser could act on, their bytes, the indices of those that may hold a
    failure mark, the count of progress-bar lines left out of them, the count of lines of no effect left
    out). The lines are picked in one pass (topodiag/scan/lines.py `untagged`: compiled, or C-level
    map/compress passes), not a Python loop; the bar lines that `feed` would only count and the lines
    it would do nothing with are found in a few more (quiet.py `split_bars`, `split_no_effect`; `bulk`
    False: kept, as the parser needs them before its first text); without the compiled scan, a chunk
    of a training job's bar redraws has its runs of carriage returns settled first (redraws.py: the
    same digest). The INFO/TRACE lines that hold facts are added by `ChunkReader` while the parser
    lacks them."""
    got = _redraws.untagged(raw) if bulk and _redraws.worth_it(raw) else None
    if got is None:
        (n, keep, picked), redrawn = _linescan.untagged(_normal(raw)), 0
    else:
        n, keep, picked, redrawn = got
    blob = b"\n".join(picked)
    fails = _fail_lines(keep, picked, blob)
    if not bulk:
        return n, keep, picked, fails, 0, 0
    keep, picked, n_bars = _quiet.split_bars(keep, picked, fails, blob, untagged=True)
    keep, picked, n_quiet = _quiet.split_no_effect(keep, picked, fails)
    return n, keep, picked, fails, redrawn + n_bars, n_quiet


def _fact_lines(raw: bytes) -> tuple[list[int], list[bytes]]:
    """The chunk's first INFO/TRACE line (it may be the file's first text), its first two INFO/TRACE
    lines whose text holds an NCCL version and its first two that hold an nranks: the parser reads them
    while it lacks those (a later one cannot change what the first set; the second is there for a first
    that the parser skips unread: the file's first text line, when it is a progress bar or a giant
    line, parsers/_foreign.py -- only that line can be an INFO line skipped so)."""
    c, lines = _lines_of(raw)
    found = sorted({i for i in (_first_info(lines), *_first_info_facts(c, lines, b"NCCL version", _NCCL_VERSION_RE),
                                *_first_info_facts(c, lines, b"nranks ", _NRANKS_RE)) if i is not None})
    return found, [lines[i] for i in found]


def _first_info(lines: list[bytes]) -> Optional[int]:
    for i, line in enumerate(lines):
        if _has_tag(line):
            return i
    return None


# Past the cut (runs not kept: every run from then on is only counted), the lines of a big log are
# mostly results rows and rank lines whose only effect is a count. `_counted` settles those in bytes,
# for a line with no failure word and no "NCCL": a plain results row of the current layout (the
# layout's row pattern over printable ASCII with tab/space separators) is counted as `row` counts it;
# an ASCII rank line (_DEVICE_RE over bytes; none of the separators \x1c-\x1f that text patterns take
# for blanks) is counted and "# Using devices" sets `banner`, as `comment` does; a bare "#", the lines
# around a results header, and a line whose first character can start neither a row, a launcher
# prefix nor a cell (and holds no "_perf") do nothing in `feed` either. Any other line goes to `feed`.
_SEP_B = re.compile(rb"[\x1c-\x1f]")  # blanks to str.split and re's \s over text, not over bytes
_HINT_B = re.compile(_failures.HINT_RE.pattern.encode())  # a word of a catalogued failure line
_SRUN_B = re.compile(_SRUN_RE.pattern.encode())
_DEVICE_B = re.compile(_DEVICE_RE.pattern.encode())
_USING_B = re.compile(_USING_RE.pattern.encode())
# the lines around a results header that say nothing to the parser: "#   out-of-place   in-place" above
# it, "#  (B)  (elements) ... (us)  (GB/s)" under it
_UNITS_B = re.compile(rb"#\s*(?:\(B\)|out-of-place)\s")


# The same decisions over whole lines, for a chunk's lines at once (`_sieve`: one C-level map of a
# regex's fullmatch over a list of lines): each pattern takes only lines `_counted` settles the same way
# with the same effect, and leaves the rest to it. In one pass: a bare "#" and the lines around a
# results header (no effect), rank lines (banner, devices_dropped), "# Using devices" (banner). Rows of
# the layout in force: _plain_shape's row pattern for it (`_right_row_b`), region by region between
# the lines that may change the layout (a results header holds "count"). (Lines of text whose first
# character can start neither a row, a launcher prefix nor a cell are left to `_counted` and the memo:
# a pattern for them, with its look-aheads for "NCCL" and "_perf", cost more than it saved.)
_ASCII_S = r"(?!.*NCCL)(?=[\x00-\x1b\x20-\x7f]*\Z)"  # no "NCCL", ASCII, none of \x1c-\x1f (as `_counted` asks)
_QUIET_B = re.compile((_WS_S + r"#(?:" + _WS_S + r"|\s*(?:\(B\)|out-of-place)\s+\S.*)").encode())
# (the checks that read the whole line come after a literal start that few lines have, and that holds
# no "NCCL" and nothing but ASCII blanks and letters: a line that fails early costs little)
assert _DEVICE_RE.pattern.startswith(r"^#\s*Rank")
_RANK_B = re.compile((_WS_S + r"#\s*Rank" + _ASCII_S + _DEVICE_RE.pattern[len(r"^#\s*Rank"):]).encode())
_USING_LINE_B = re.compile((_WS_S + r"#\s*Using devices\b" + _ASCII_S + r".*").encode())
# (the three patterns' common start matched once; each ends in an empty group named for its kind: the
# last group a match closes, its `lastgroup`)
_SETTLED_PREFIX = (_WS_S + "#").encode()
assert all(r.pattern.startswith(_SETTLED_PREFIX) for r in (_QUIET_B, _RANK_B, _USING_LINE_B))
_SETTLED_B = re.compile(_SETTLED_PREFIX + b"(?:" + b"|".join(
    b"(?:" + r.pattern[len(_SETTLED_PREFIX):] + b")(?P<" + kind + b">)"
    for r, kind in ((_QUIET_B, b"quiet"), (_RANK_B, b"rank"), (_USING_LINE_B, b"using"))) + b")")


def _sieve(regex: re.Pattern, at: list[int], lines: list[bytes],
           spared: list[int] = ()) -> tuple[list[int], list[bytes], list[re.Match]]:
    """(indices, lines) of the lines `regex` does not fullmatch or that are `spared` (positions in
    `lines`), and the matches of the others."""
    hit = list(map(regex.fullmatch, lines))
    for k in spared:
        hit[k] = None
    return _split_hits(at, lines, hit)


def _split_hits(at: list[int], lines: list[bytes], hit: list) -> tuple[list[int], list[bytes], list]:
    """(indices, lines) of the lines whose `hit` is false, and the true hits."""
    if not any(hit):
        return at, lines, []
    miss = list(map(operator.not_, hit))
    return list(itertools.compress(at, miss)), list(itertools.compress(lines, miss)), list(itertools.compress(hit, hit))


# The plain rows of a big log come in few shapes: the same columns at the same widths, only their
# digits differ (the 1 GB log: 114 shapes among 210k rows of 60 chunks). A row pattern of
# `_right_row_b` answers alike for every line of one shape -- the line with its digits 1-9 made "1"
# (`_SHAPE`): its only literal digit is the 0 of a #wrong cell, and each of its classes holds all ten
# digits or none (`shape_blind`, checked on the pattern) -- so each shape is matched once, the
# pattern's answer kept (`_rows_sieve`), at most SHAPES_CAP of them a layout, for SHAPE_LAYOUTS
# layouts at most (a log has a few; a bounded ~1 MB whatever the log holds).
_SHAPE = bytes.maketrans(b"123456789", b"111111111")
SHAPES_CAP = 1024
SHAPE_LAYOUTS = 8
_BLIND_CLASSES = frozenset((rb"[0-9]", rb"[A-Za-z0-9_]", rb"[!-~]", rb"[A-Za-z]", rb"[ \t]", rb"[eE]", rb"[-+]"))


def shape_blind(pattern: bytes) -> bool:
    """Whether `pattern` (bytes) answers alike for lines that differ only in which of 1-9 their
    digits are: outside its classes no digit but 0 (escapes aside), and each class one of
    _BLIND_CLASSES or one with no digit in it."""
    rest = re.sub(rb"\\x[0-9a-fA-F]{2}|\\.", b"", pattern)
    classes = re.findall(rb"\[[^\]]*\]", rest)
    if any(c not in _BLIND_CLASSES and re.search(rb"[0-9]|-", c[1:-1].lstrip(b"^")) for c in classes):
        return False
    return not re.search(rb"[1-9]", re.sub(rb"\[[^\]]*\]", b"", rest))


def _rows_sieve(regex: re.Pattern, at: list[int], lines: list[bytes], shapes: dict) -> tuple[list[int], list[bytes], list]:
    """`_sieve(regex, at, lines)` through `shapes` (a line's shape -> whether `regex` fullmatches it):
    the lines of a shape not seen yet are matched, the others looked up."""
    keys = list(map(bytes.translate, lines, itertools.repeat(_SHAPE)))
    hit = list(map(shapes.get, keys))
    for k in [k for k, h in enumerate(hit) if h is None]:
        h = hit[k] = regex.fullmatch(lines[k]) is not None
        if len(shapes) < SHAPES_CAP:
            shapes[keys[k]] = h
    return _split_hits(at, lines, hit)


def _positions(at: list[int], fails: set[int]) -> list[int]:
    """The positions in `at` (sorted indices) of the indices in `fails` that it holds, in order."""
    found = []
    for i in fails:
        k = bisect.bisect_left(at, i)
        if k < len(at) and at[k] == i:
            found.append(k)
    return sorted(found)


_SETTLED, _NO_EFFECT = 1, 2
_KIND = operator.attrgetter("lastgroup")
_ROW_FIRST = frozenset(b"0123456789+.")  # first bytes that can start a row's size or a cell


def _counted(p: Parser, line: bytes, line_no: int) -> int:
    """Whether `line` (of a run not kept) was a rank line or a plain results row, now counted (_SETTLED),
    or a line that does nothing whatever the parser's state (_NO_EFFECT); 0 (False): `feed` reads it."""
    st = line.strip()
    if st[:1].isdigit():  # an srun prefix ("0: "), taken as _strip_prefix takes it, at most twice
        for _ in range(2):
            m = _SRUN_B.match(st)
            if m is None:
                break
            st = st[m.end():].strip()
    first = st[:1]
    if first == b"#":
        return _counted_comment(p, st)
    if first.isdigit():
        return _counted_row(p, st, line_no)
    return _no_effect(st, first)


def _counted_comment(p: Parser, st: bytes) -> int:
    """A comment line past the cut: no effect, a rank line or "# Using devices" (settled), or 0."""
    if st == b"#" or _UNITS_B.match(st):
        return _NO_EFFECT
    if st.find(b"NCCL") >= 0 or not st.isascii() or _SEP_B.search(st):  # bytes and text patterns differ there
        return False
    if _DEVICE_B.match(st):
        p.banner = True
        p.devices_dropped += 1
        return True
    if _USING_B.match(st):
        p.banner = True
        return True
    return False


def _counted_row(p: Parser, st: bytes, line_no: int) -> int:
    """A plain results row of the layout in force past the cut: counted (and its wrong results), or 0."""
    shape = _plain_shape(p.layout) if p.layout is not None else None
    regex = shape[5] if shape is not None else None
    m = regex.fullmatch(st) if regex is not None else None
    if m is None or st.find(b"[") >= 0 or st.find(b"NCCL") >= 0 or m.group(3).lower() in (b"nan", b"inf"):
        return False
    p.cut_row(line_no, any(m.group(i + 1) not in (b"0", b"N/A") and _wrong(m.group(i + 1)) for i in shape[4]))
    return True


def _no_effect(st: bytes, first: bytes) -> int:
    """_NO_EFFECT for a line whose first token can be neither a row's size, a launcher prefix nor a
    cell (and that no failure word or catalogue hint, "_perf" or "NCCL" is in); 0 for the others."""
    if not first or not 32 < first[0] < 127 or first[0] in _ROW_FIRST or st.find(b"_perf") >= 0 or st.find(b"NCCL") >= 0:
        return False
    if _HINT_B.search(st):  # may be a failure line the catalogue knows: `feed` looks
        return False
    second = st[1:2]
    if first == b"[" or first == b"-":
        return 0 if second.isdigit() or second == b"." or st[:4].lower() in (b"-nan", b"-inf") else _NO_EFFECT
    return 0 if st[:3].lower() in (b"nan", b"inf", b"n/a") else _NO_EFFECT


# Without the compiled scan, a chunk this reader digests itself is read PIECE bytes of whole lines at a
# time (`pieces`): its lists of lines (tens of thousands in 4 MiB of an NCCL log) then stay fewer for
# the CPU's caches and the cyclic collector's young generation, read back and forth between the digest
# and the merge. Measured (`feed` of each 4 MiB chunk, the first 400 MB of the NCCL log, three
# pairs): 29.1-30.0 ms a chunk against 30.4-30.8 read whole; the progress-bar log the same (39-40 ms
# either way); with the compiled scan, slower (16.8-17.0 against 16.2 ms), so not there. A digest
# computed elsewhere comes for its whole chunk, and is read so.
PIECE = 2 << 20


def pieces(chunk: bytes, size: int):
    """`chunk` (whole lines) cut after a newline at `size` bytes or more, then every `size` on; the last
    piece at most 1.5 `size`, or longer where no newline comes after a cut's place."""
    start, n = 0, len(chunk)
    while n - start >= size + size // 2:
        cut = chunk.find(b"\n", start + size - 1) + 1
        if cut <= 0:
            break
        yield chunk[start:cut]
        start = cut
    if start < n or not n:
        yield chunk[start:] if start else chunk


class ChunkReader:
    """Chunks of whole lines in order (`feed(chunk, digest=None)`), then `result()`. A chunk may end
    mid-line (a giant line cut by the chunker): the rest of it waits for the next chunk."""

    def __init__(self, lim: Limits) -> None:
        self.lim = lim
        self.p = Parser(lim)
        self.n = 0
        self.carry = b""
        self.memo: dict[bytes, tuple] = {}  # past the cut: a line -> its effect (see `_each`)
        self.shapes: dict = {}  # past the cut: a row pattern -> {a line's shape: a plain row?} (`_rows_sieve`)

    def feed(self, chunk: bytes, dg: Optional[Digest] = None) -> None:
        if self.carry or not chunk.endswith(b"\n"):
            chunk, dg = self.carry + chunk, None
            end = len(chunk) - 1 if chunk.endswith(b"\r") else len(chunk)  # a CR may pair with the next LF
            cut = max(chunk.rfind(b"\n", 0, end), chunk.rfind(b"\r", 0, end)) + 1
            chunk, self.carry = chunk[:cut], chunk[cut:]
            if not chunk:
                return
        if dg is None and len(chunk) >= 2 * PIECE and _linescan.compiled is None:
            for piece in pieces(chunk, PIECE):  # (whole lines each: the result is that of smaller chunks)
                self._lines(piece, digest(piece))
            return
        self._lines(chunk, digest(chunk) if dg is None else dg)

    def _lines(self, chunk: bytes, dg: Digest) -> None:
        p = self.p
        if (dg[4] or dg[5]) and p.first_text is None:  # the lines left out may hold the first text
            dg = digest(chunk, bulk=False)
        n, keep, picked, fails, n_bars, _ = dg
        p.foreign += n_bars
        if p.first_text is None or p.nccl_line_version is None or p.info_nranks is None:
            more, lines = _fact_lines(chunk)  # INFO/TRACE lines the parser may still read
            new = set(more) - set(keep)
            if new:
                merged = dict(zip(more, lines))
                merged.update(zip(keep, picked))
                keep = sorted(merged)
                picked = [merged[i] for i in keep]
                fails = fails | new  # feed looks for failure marks itself in these
        base = self.n + 1
        if p.first_text is None and keep:
            keep, picked = self._first_text(base, keep, picked, fails)
        if p.cut_run is not None and len(keep) > self.lim.bulk_min:
            self._past_the_cut(base, keep, picked, fails)
        else:
            self._each(base, keep, picked, fails)
        self.n += n

    def _first_text(self, base: int, keep: list[int], picked: list[bytes], fails: set[int]) -> tuple[list, list]:
        """The lines up to the file's first text fed one by one; the rest without the bars (counted) and
        the lines of no effect after it (quiet.py), as `digest` leaves them out of the later chunks."""
        k = 0
        while self.p.first_text is None and k < len(keep):
            self._each(base, keep[k:k + 1], picked[k:k + 1], fails)
            k += 1
        keep, picked, n_bars = _quiet.split_bars(keep[k:], picked[k:], fails, b"\n".join(picked[k:]))
        self.p.foreign += n_bars
        keep, picked, _ = _quiet.split_no_effect(keep, picked, fails)
        return keep, picked

    def _each(self, base: int, keep, picked, fails) -> None:
        """Lines one by one; past the cut, a line fed before whose effect was recorded (`Parser.op`:
        the banner, header and summary lines a cluster's runs repeat; a line of text that does nothing
        or is only counted, its list full) is replayed without being read again (`replay`), and
        `_counted` settles most of the others."""
        p = self.p
        feed = p.feed
        memo = self.memo
        warn_full = self._warn_full()
        for i, line in zip(keep, picked):
            if line.find(_WARN_B) >= 0 and (warn_full or (warn_full := self._warn_full())) and _quiet.dropped_warn(line):
                p.lists_dropped += 1
                continue
            if p.cut_run is None or i in fails:
                feed(base + i, line.decode("utf-8", "replace").rstrip(), i in fails)
                continue
            op = memo.get(line)
            if op is not None:
                replay(p, op)
                continue
            settled = _counted(p, line, base + i)  # the bulk past the cut
            if settled:
                if settled == _NO_EFFECT:
                    _chunks.bounded_put(memo, line, NOTHING, self.lim.memo_cap)
                continue
            p.op = None
            feed(base + i, line.decode("utf-8", "replace").rstrip(), False)
            if p.op is not None:
                _chunks.bounded_put(memo, line, p.op, self.lim.memo_cap)

    def _warn_full(self) -> bool:
        """The WARN list full and the NCCL facts known: a WARN line is only counted (quiet.py)."""
        p = self.p
        return (len(p.warnings) >= self.lim.list_cap and p.first_text is not None
                and p.nccl_line_version is not None and p.info_nranks is not None)

    def _past_the_cut(self, base: int, keep: list[int], picked, fails: set[int]) -> None:
        """A chunk's lines past the cut: what `_each` does, with the lines of no effect, the rank lines
        and the plain rows of the layout in force settled in bulk (`_sieve`); the rest, in order, by
        `_each`. Lines that may hold a failure mark go to `_each` (they are never sieved); with the WARN
        list full, the WARN lines `_each` would only count are counted first (quiet.py)."""
        p = self.p
        at, lines = keep, picked
        if self._warn_full():  # the WARN lines `_each` would only count, counted at once
            at, lines, n_warns = _quiet.split_dropped_warns(at, lines)
            p.lists_dropped += n_warns
        at, lines, settled = _sieve(_SETTLED_B, at, lines, _positions(at, fails))  # one pass; then which
        if settled:  # which kind each: the three exclude each other
            kinds = list(map(_KIND, settled))
            n_using, n_rank = kinds.count("using"), kinds.count("rank")
            p.devices_dropped += n_rank
            if n_rank or n_using:
                p.banner = True
        at, lines = self._without_nothing(at, lines, fails)
        breaks = list(itertools.compress(range(len(lines)), map(bytes.count, lines, itertools.repeat(b"count"))))
        if fails:
            breaks = sorted(set(breaks).union(_positions(at, fails)))
        # Regions of lines under one layout: a break ends one unless it is a line fed before (not one
        # that may hold a failure mark) whose recorded effect leaves the layout in force as it is.
        memo = self.memo
        start = 0
        for b in breaks:
            op = memo.get(lines[b]) if at[b] not in fails else None
            if op is not None and (op[0] != "header" or op[1] is None or not (op[2] or p.layout is None)
                                   or op[1] == p.layout):
                continue
            self._region(base, at[start:b], lines[start:b], fails)
            self._each(base, at[b:b + 1], lines[b:b + 1], fails)
            start = b + 1
        self._region(base, at[start:], lines[start:], fails)

    def _without_nothing(self, at: list[int], lines: list[bytes], fails: set[int]) -> tuple[list[int], list[bytes]]:
        """The lines without those whose recorded effect is nothing (`_each` would replay NOTHING: a
        line's memo is never read where it may hold a failure mark, so those stay)."""
        mask = bytearray(map(operator.is_not, map(self.memo.get, lines), itertools.repeat(NOTHING)))
        for k in _positions(at, fails):
            mask[k] = 1
        if all(mask):
            return at, lines
        return list(itertools.compress(at, mask)), list(itertools.compress(lines, mask))

    def _region(self, base: int, at: list[int], lines: list[bytes], fails: set[int]) -> None:
        """Lines under one layout: its plain rows counted at once, the others one by one in order."""
        if not lines:
            return
        p = self.p
        right = _plain_shape(p.layout)[6] if p.layout is not None else None
        if right is not None:
            shapes = self.shapes.get(right)
            if shapes is None:  # (a layout's first region: shapes kept for the first SHAPE_LAYOUTS)
                shapes = {} if len(self.shapes) < SHAPE_LAYOUTS and shape_blind(right.pattern) else False
                if len(self.shapes) < 64:
                    self.shapes[right] = shapes
            at, lines, rows = _sieve(right, at, lines) if shapes is False else _rows_sieve(right, at, lines, shapes)
            p.rows_cut += len(rows)
        self._each(base, at, lines, fails)

    def result(self) -> NcclTestsReport:
        """The report (ParseError as `parse` raises it); call once."""
        if self.carry:
            self._lines(self.carry, digest(self.carry))
            self.carry = b""
        return self.p.finish()

