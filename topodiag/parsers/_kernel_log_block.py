"""The kernel_log parser's pass over its lines, a block at a time (up to 65,536 lines / 4 MiB; the first
blocks smaller), at the cost of finding the lines that matter.

A block is read by distinct texts (`_fast`; line by line, `_slow`, only when its keys do not line up
with its lines). Each line's key is its text with the leading time stamp taken off (a dmesg
"[ 12.345678]", a syslog "Mon DD HH:MM:SS" before "<host> kernel:", a /dev/kmsg record's
"prio,seq,usec,flags;"), found for the whole block at once with each distinct text's count
(_kernel_log_keys.py `digest`: one pass in C where the install compiled it, else one regex). What a
line does is described once per key (`describe`, _kernel_log_desc.py, which mirrors kernel_log._one
without doing anything; memoised across blocks, MEMO_CAP keys at most):

- a line whose effect is only counters (one of a kind whose list is already full, a line that names
  no driver, a catalogue event once MAX_EVENTS are kept) is counted by its key's count;
- the lines whose effect depends on their place (a driver load, a GPU's UUID, an Xid or an event while
  its list fills, a GPU's "fallen off the bus" notice, the first /dev/kmsg record, rsyslog "#012"
  lines...) are read in line order by the line-by-line code (kernel_log._line);
- an AER report's line opens a window of continuation lines (AER_TAIL): its place is kept, and the
  window's lines that name no driver but hold a "]" are read in order too.

Two lines of one key differ only in the digits of their stamp, which only a recorded entry reads
(its time_s), and recorded entries are always read in order. The stamps of the LOOKBACK_LINES lines
before a block are kept (hist), so a driver load finds the stamps of the lines before it
(`lines_before`) without a per-line deque. `Reader` takes a log pushed a line at a time (the dmesg
section of an nvidia-bug-report). A helper module, no parser.
"""

from __future__ import annotations

import re
from collections import Counter
from heapq import heappop, heappush
from itertools import compress
from typing import Iterable, Iterator, Optional

from . import _kernel_log_re as K
from ..scan.chunks import bounded_put
from ._kernel_log_desc import BLANK, KNOWN, NOTHING, ORDERED, _event, describe  # noqa: F401 (this module's names too)
from ._kernel_log_events import AER_TAIL, split
from ._kernel_log_keys import _DMESG_KEY_RE, _KEY_RE, digest, digest_py  # noqa: F401 (this module's names too)
from .base import HEADER_END, HEADER_PREFIX

BLOCK_CHARS = 1 << 22  # characters of lines per block
BLOCK_LINES = 1 << 16
# The first blocks are small, then each twice the last: a block's lines are counted by key only for
# the lists already full when it begins, and the lists fill within the first few hundred driver lines.
FIRST_BLOCK_LINES = 1 << 10
FIRST_BLOCK_CHARS = 1 << 16
# The lines before a block whose stamps the look-backs read (st.hist) are kept whole (cut to their
# STAMP_CHARS first characters where they are read) while they hold at most this many characters
HIST_CHARS = 1 << 20
MEMO_CAP = 8192  # distinct keys remembered across blocks
MEMO_KEY_CHARS = 512  # longer texts are described again in each block, not remembered
LINE_LIMIT = 1 << 20  # the loader's (topodiag/load/files.py): a longer line is cut there
_LINE_END = re.compile(r"\r\n|\r|\n")

_memo: dict = {}


def array_of(tag: int) -> bytes:
    """The bytes of `tag` as an item of the digest's array of tags."""
    from array import array

    return array("I", (tag,)).tobytes()


def blocks(lines: Iterable[str]) -> Iterator[list]:
    """Lists of lines (no terminators) of at most BLOCK_LINES lines / about BLOCK_CHARS characters."""
    most = FIRST_BLOCK_LINES
    if isinstance(lines, list):
        i = 0
        while i < len(lines):
            yield lines[i:i + most]
            i, most = i + most, min(most * 2, BLOCK_LINES)
        return
    it = iter(lines)
    while True:
        block, size = [], 0
        for raw in it:
            block.append(raw)
            size += len(raw)
            if size >= BLOCK_CHARS or len(block) >= most:
                break
        if not block:
            return
        yield block
        most = min(most * 2, BLOCK_LINES)


def feed(st, block: list, line, dg: Optional[tuple] = None) -> None:
    """Read one block of lines into the pass's state `st` (kernel_log._Log); `line(st, n, raw)` reads
    one line in order (kernel_log._line). `dg`: the block's keys as `digest` gives them (computed in a
    worker, _kernel_log_par.py), or None to find them here."""
    st.block = block
    if dg is not None and dg[0] == len(block):
        _by_keys(st, block, dg[1], dg[2], line)
    elif not _fast(st, block, "\n".join(block), line):
        _slow(st, block, st.block_base, line)
    base = st.block_base
    st.block_base = base + len(block)
    st.lines = st.block_base
    keep = K.LOOKBACK_LINES + 1
    tail = block[-keep:]
    if sum(map(len, tail)) > HIST_CHARS:  # only their stamps kept: memory stays flat
        tail = [raw[:K.STAMP_CHARS] for raw in tail]
    st.hist = (st.hist + tail)[-keep:] if len(tail) < keep else tail
    st.hist_base = st.block_base - len(st.hist) + 1
    st.block = []


def lines_before(st, n: int) -> tuple:
    """Where the stamps of the lines up to line `n` of the block being read are, since the previous
    driver load (st.previous_load), at most LOOKBACK_LINES + 1 of them (what a per-line deque held):
    references to the lists that hold them (no copy: a log may load the driver thousands of times)."""
    lo = max((st.previous_load or st.origin) + 1, n - K.LOOKBACK_LINES, st.origin + 1)
    return lo, n, st.hist, st.hist_base, st.block, st.block_base


def stamps_before(where) -> list:
    """(line number, stamp) of the lines `lines_before` names."""
    if where is None:
        return []
    lo, n, hist, hist_base, block, base = where
    out = []
    if lo <= base:
        first = max(lo, hist_base)
        out = [(first + k, s[:K.STAMP_CHARS]) for k, s in enumerate(hist[first - hist_base:])]
    start = max(lo, base + 1)
    out += [(j, block[j - base - 1][:K.STAMP_CHARS]) for j in range(start, n + 1)]
    return out


def _slow(st, block: list, base: int, line) -> None:
    """The block line by line."""
    for i, raw in enumerate(block):
        line(st, base + i + 1, raw)


def _fast(st, block: list, text: str, line) -> bool:
    """The block by distinct keys (see the module's docstring); False when the keys do not line up
    with the lines (the caller then reads it line by line)."""
    dg = digest(text)
    if dg is None or dg[0] != len(block):
        return False
    _by_keys(st, block, dg[1], dg[2], line)
    return True


def _last(tags, tag: int, count: int) -> int:
    """The index of the last line of the key tagged `tag` (the index of its first line) that has
    `count` lines in the block (`tags`: the digest's array of each line's tag)."""
    if count == 1:
        return tag
    data, item = tags.tobytes(), array_of(tag)
    k = data.rfind(item)
    while k % tags.itemsize:  # inside two items: the last whole one is before it
        k = data.rfind(item, 0, k + tags.itemsize - 1)
    return k // tags.itemsize


def _by_keys(st, block: list, distinct: list, tags, line) -> None:
    """The block by distinct keys: `distinct` (key, tag, count, index of a line of it), `tags` each
    line's tag (the index of its key's first line: `digest`)."""
    full = _full(st)
    # ordered: {tag: (kflag, desc, its own description) or None}; windowed: {tag: key}
    ordered, windowed, aer = {}, {}, set()
    left: dict = {}  # the lines of each _CAPPED ordered tag not read yet
    loads, uuids = [], []
    memo_get, plain, kernel = _memo.get, not st.kmsg, 0
    for key, tag, c, at in distinct:
        got = memo_get(key) if plain and not key[3] else None  # what _key_desc gives then, when known
        kflag, desc = got if got is not None else _key_desc(st, key, block[at])
        if desc[0] in _ONLY_COUNTS:  # its lines count as kernel lines, nothing else (_count)
            if desc[0] == "plain" and desc[1] and memo_get(("w", key)) is not NOTHING:
                windowed[tag] = key
            kernel += kflag * c
        elif desc[0] in ("load", "uuid"):
            at = _last(tags, tag, c)  # the index of its last line
            (loads if desc[0] == "load" else uuids).append((tag, key, at, desc, kflag, c))
        elif not _count(st, desc, c, full):
            if desc[0] in _CAPPED:  # (the line's own description, not a /dev/kmsg record's dmesg form's)
                ordered[tag], left[tag] = (kflag, desc, not key[3]), c
            else:
                ordered[tag] = None
        else:
            st.kernel += kflag * c
            if desc[0] == "aer":
                aer.add(tag)
    st.kernel += kernel
    if loads:
        _loads(st, block, tags, loads)
    if uuids:
        _uuids(st, uuids, ordered)
    if ordered or aer or st.ev.aer_until > st.block_base:
        _in_order(st, block, tags, ordered, windowed, aer, line, left)


def _loads(st, block: list, tags, loads: list) -> None:
    """The block's driver loads (`loads`: (tag, key, index of its last line, ("load", version), kflag,
    count) of each key) read by key: kernel_log._nvrm's effect of them all at once (the count, the last
    one's version, line and time, the line of the one before it, the stamps before the last). A
    /dev/kmsg record's time is read from its dmesg form, as kernel_log._line writes it."""
    at, version, key = max((x[2], x[3][1], x[1]) for x in loads)
    total = sum(x[5] for x in loads)
    st.kernel += sum(x[4] * x[5] for x in loads)
    st.loads += total
    if total > 1:  # the load before the last is in this block: the nearest line of a load's key
        ids, j = {x[0] for x in loads}, at - 1
        while tags[j] not in ids:
            j -= 1
        st.previous_load = st.block_base + j + 1
    else:
        st.previous_load = st.loaded[0] if st.loaded else None
    n = st.block_base + at + 1
    st.driver = version
    raw = block[at]
    if key[3]:  # a record, read once a record turned kmsg on (_key_desc): its time in microseconds
        m = K._KMSG_RE.match(raw)
        raw = f"[{int(m[3]) / 1e6:.6f}] "
    st.loaded = (n, K.time_s(raw))
    st.before_load = lines_before(st, n)


def _uuids(st, uuids: list, ordered: dict) -> None:
    """The block's "NVRM: GPU at PCI:<bus>: GPU-<uuid>" lines (`uuids`: as `_loads` has them) of a
    UUID already recorded, read by key: the map keeps each UUID where it was first put and the bus and
    line of its last line while it holds fewer than MAX_EVENTS (kernel_log._nvrm), so the last line of
    each UUID in the block is what counts, where no new UUID of the block can fill the map. A new
    UUID's lines are read in order."""
    room = len(st.uuids) + len(uuids) < K.MAX_EVENTS  # the block's new UUIDs cannot fill the map
    full = len(st.uuids) >= K.MAX_EVENTS
    last: dict = {}
    for tag, _key, at, desc, kflag, c in uuids:
        uuid = desc[1]
        if uuid not in st.uuids or not (room or full):
            ordered[tag] = None
            continue
        st.kernel += kflag * c
        if room and (uuid not in last or at > last[uuid][0]):
            last[uuid] = (at, desc[2])
    for uuid, (at, bus) in last.items():
        st.uuids[uuid] = (bus, st.block_base + at + 1)


# The descriptions whose lines only count as kernel lines, whatever the state (_count)
_ONLY_COUNTS = frozenset({"nothing", "blank", "plain", "known"})

# Whether each of the parser's lists holds all it keeps (its lines then only count)
# (the lists of repeated events hold st.cap entries: kernel_log._Log)
_FULL = {"xid": lambda st: len(st.xids) >= st.cap, "sxid": lambda st: len(st.sxids) >= st.cap,
         "health": lambda st: len(st.health) >= st.cap, "link": lambda st: len(st.links) >= st.link_cap,
         "fault": lambda st: len(st.iommu["faults"]) >= st.cap,
         "event": lambda st: len(st.ev.events) >= st.cap,
         "unrec": lambda st: len(st.ev.unrecognised) >= st.cap,
         "limits": lambda st: len(st.limits) >= K.MAX_EVENTS, "cmdline": lambda st: st.iommu["cmdline"] is not None}


def _full(st) -> dict:
    """Which of the parser's lists hold all they keep (their lines then only count), at once."""
    return {kind: full(st) for kind, full in _FULL.items()}


class _FullNow:
    """`_full` read off the state as each flag is asked (one line read in order: `_count_now`)."""

    __slots__ = ("st",)

    def __init__(self, st) -> None:
        self.st = st

    def __getitem__(self, kind: str) -> bool:
        return _FULL[kind](self.st)

    def get(self, kind: str, default: bool = False) -> bool:
        full = _FULL.get(kind)
        return full(self.st) if full is not None else default


def _count(st, desc: tuple, c: int, full: dict, dry: bool = False) -> bool:
    """Apply `c` lines of a description whose effect is only counters; False when it is not (then
    nothing is applied). `dry`: only say whether it is."""
    kind = desc[0]
    if kind in ("nothing", "blank", "plain", "known"):
        return True
    if kind == "ordered":
        return False
    if kind == "multi":  # an rsyslog line of lines: counted when each of its lines is
        if not all(_count(st, d, 0, full, True) for d in desc[1]):
            return False
        if not dry:
            for d in desc[1]:
                _count(st, d, c, full)
        return True
    if kind == "xid":
        if not full["xid"] or (desc[1] == 79 and not _seen_off(st, desc[2])):
            return False
        if not dry:
            st.xids_total += c
            st.counts[desc[1]] = st.counts.get(desc[1], 0) + c
        return True
    if kind in ("event", "aer"):  # an AER line's place (its window) is kept by _in_order
        if kind == "aer" and desc[2]:
            return True
        if not full["event"]:
            return False
        if not dry:
            st.ev.total += c
            st.ev.counts[desc[1]] = st.ev.counts.get(desc[1], 0) + c
        return True
    return _count_other(st, kind, desc, c, full, dry)


def _seen_off(st, bus: str) -> bool:
    """Whether a GPU off the bus at `bus` is recorded already (or the list is full): another report
    of it then does nothing (kernel_log._fallen)."""
    return bus in st.fallen_seen or len(st.fallen) >= K.MAX_EVENTS


def _count_other(st, kind: str, desc: tuple, c: int, full: dict, dry: bool) -> bool:
    if kind == "fallen":
        return _seen_off(st, desc[1])
    if kind == "reset":  # recorded while the list fills, when the reset succeeded
        return not desc[1] or len(st.resets) >= st.cap
    if kind == "enabled":
        if not dry:
            st.iommu["enabled"] = True
        return True
    if kind == "limit":
        return full["limits"] or any(x.device == desc[1] for x in st.limits)
    if kind == "cmdline":
        return full["cmdline"]
    if kind == "fault":
        if not (full["fault"] or desc[1]):
            return False
        if not dry:
            st.iommu["total"] += c
        return True
    if not full.get(kind, False):
        return False
    if dry:
        return True
    if kind == "sxid":
        st.sxids_total += c
    elif kind == "health":
        st.health_total += c
    elif kind == "link":
        st.links_total += c
    elif kind == "unrec":
        st.ev.unrecognised_total += c
    return True


def _in_order(st, block: list, keys: list, ordered: dict, windowed: dict, aer: set, line, left: dict) -> None:
    """The lines of the `ordered` keys, in line order, by the line-by-line code (a key of a kind
    whose list filled since the block began only counted from then on: `_count_now`, its lines left
    in the block (`left`: {tag: lines not read yet}) counted at once, since a list only grows); the
    AER report lines counted by key (`aer`), for the window of continuation lines each opens; and the
    lines that such a window makes the catalogues read (a `windowed` tag, mapped to its key: no driver
    named, a "]")."""
    base, size = st.block_base, len(block)
    counted: set = set()  # the tags whose lines left were counted at once
    direct = _direct(line)
    places = ordered.keys() | aer
    heap = list(compress(range(size), map(places.__contains__, keys))) if places else []
    scanned = -1  # the window is pushed up to this index

    def push_window(after: int) -> int:
        last = min(st.ev.aer_until - base - 1, size - 1)
        for j in range(max(scanned + 1, after + 1), last + 1):
            if keys[j] in windowed:
                heappush(heap, j)
        return max(scanned, last)

    if windowed:
        scanned = push_window(-1)
    pend = -1  # the line whose widening of the window is not pushed yet (pushed once the heap passes `scanned`)
    while heap or pend >= 0:
        if pend >= 0 and (not heap or heap[0] > scanned):
            scanned, pend = push_window(pend), -1
            continue
        i = heappop(heap)
        n = base + i + 1
        until = st.ev.aer_until
        tag = keys[i]
        if tag in ordered:
            kd = ordered[tag]
            if kd is None:
                line(st, n, block[i])
            elif tag in counted:
                pass
            elif _count_now(st, kd, left[tag]):
                counted.add(tag)
            else:
                left[tag] -= 1
                if kd[2] and kd[1][0] in _DIRECT and direct is not None:
                    direct(st, n, block[i], kd[0], kd[1][0])
                else:
                    line(st, n, block[i])
        elif keys[i] in aer:
            st.ev.aer_until = n + AER_TAIL
        elif n <= st.ev.aer_until:
            _window_line(st, n, block[i], windowed[keys[i]])
        if windowed and pend < 0 and st.ev.aer_until > until:
            pend = i


# The kinds of line whose effect only counts once a list is full (or the GPU recorded): such a line
# read in order is only counted from then on (_count_now)
_CAPPED = frozenset({"xid", "sxid", "health", "link", "fault", "event", "unrec", "multi", "reset", "fallen",
                     "limit", "cmdline"})


# The kinds of line that kernel_log._line reads by one recorder, known from their description
# (kernel_log._line_known)
_DIRECT = frozenset({"xid", "sxid", "health", "link", "fault", "reset", "fallen", "limit", "cmdline", "event",
                     "unrec"})


def _direct(line):
    """The reader `line` carries for a line of a _DIRECT kind, known by its own description (its
    `known` attribute: kernel_log._line_known, which reads it by its recorder without the checks
    _line makes to find it), or None: every line then goes to `line`."""
    return getattr(line, "known", None)


def _count_now(st, kd, c: int = 1) -> bool:
    """Count `c` lines of (kflag, description, ...) `kd` (None: not a _CAPPED kind) when, in the state of
    now, their effect is only counters (as `_count` judges a key's lines at a block's start); False
    otherwise (the line is then read by the line-by-line code)."""
    if kd is None or not _count(st, kd[1], c, _FullNow(st)):
        return False
    st.kernel += kd[0] * c
    return True


def _window_line(st, n: int, raw: str, key: tuple) -> None:
    """A line inside an AER report's window, read by the catalogues (_kernel_log_events.Events.line)
    with its (device, message) remembered by key (memo entry ("w", key); NOTHING: a key whose lines do
    nothing there, left out of the windows of the next blocks). Two lines of one key differ only in
    their stamp, which `split` takes off; a /dev/kmsg record's key is not remembered (its prefix has
    more than digits)."""
    if key[3]:
        st.ev.line(n, raw)
        return
    got = _memo.get(("w", key))
    if got is None:
        got = split(raw) if _event(raw) is not NOTHING else NOTHING
        if len(key[4]) <= MEMO_KEY_CHARS:
            bounded_put(_memo, ("w", key), got, MEMO_CAP)
    if got is not NOTHING:
        st.ev.line(n, raw, got)


def _key_desc(st, key: tuple, raw: str) -> tuple:
    """(counts as a kernel line, what the line does) for a key of the block (`raw`: a line of it)."""
    if key[3]:  # a kmsg record: read as its dmesg form once a record was seen (which turns kmsg on)
        if key[1] or not st.kmsg:
            return 0, ORDERED
        m = K._KMSG_RE.match(raw)
        return _described(key, f"[{int(m[3]) / 1e6:.6f}] " + m[4].replace("\\x0a", " ")) if m else (0, ORDERED)
    if st.kmsg and key[4][:1] == " " and not (key[1] or key[2]) and K._KMSG_DICT_RE.match(raw):
        return 0, BLANK  # a record's KEY=value line, skipped
    return _described(key, raw)


def _described(key: tuple, raw: str) -> tuple:
    """(counts as a kernel line, what the line does): memoised by key."""
    got = _memo.get(key)
    if got is None:
        got = describe(raw)
        if len(key[4]) <= MEMO_KEY_CHARS:
            bounded_put(_memo, key, got, MEMO_CAP)
    return got


def read_file(handle, new_state, finish, parse_lines, line, workers=None):
    """kernel_log.parse_binary: the file's text (UTF-8, bad bytes replaced, as the line path decodes
    it) a block at a time, each block fed to one pass; the same result as `parse_lines` over the file's
    lines. A probe's JSON (a first non-blank character "{"), or a line longer than the line path's
    LINE_LIMIT (which it cuts), is read by the line path itself. `workers` (_kernel_log_par) reads a
    big regular file with the blocks' keys found in forked workers, with the same result."""
    import io

    start = handle.tell()
    text = io.TextIOWrapper(handle, encoding="utf-8", errors="replace", newline="")
    try:
        first = text.read(FIRST_BLOCK_CHARS)
        while first and not first.strip():  # the first character that is not a blank decides
            more = text.read(FIRST_BLOCK_CHARS)
            first += more
            if not more:
                break
        parallel = first.lstrip()[:1] != "{" and workers is not None and workers.worth_it(handle, start)
        if first.lstrip()[:1] != "{" and not parallel:
            pending = [first]
            st = new_state()
            try:
                for block in text_blocks(lambda n: pending.pop() if pending else text.read(n)):
                    feed(st, block, line)
                return finish(st)
            except LongLine:
                pass
    finally:
        text.detach()
    handle.seek(start)
    if parallel:  # a big regular file: the blocks' keys found in workers (_kernel_log_par.py)
        got = workers.read(handle, new_state, finish, line)
        if got is not None:
            return got
        handle.seek(start)
    text = io.TextIOWrapper(handle, encoding="utf-8", errors="replace", newline="")
    try:
        return parse_lines(_bounded_lines(text))
    finally:
        text.detach()


def text_blocks(read, size: int = 0) -> Iterator[list]:
    """Blocks of lines from a text stream's `read` (opened with newline=""): lines end at "\\n", "\\r"
    or "\\r\\n" as the line path's readline ends them. Raises _LongLine at a line over LINE_LIMIT
    characters (the caller reads such a file by the line path, which cuts it)."""
    size = size or BLOCK_CHARS
    carry, step = "", FIRST_BLOCK_CHARS
    while True:
        piece = read(step)
        step = min(step * 2, size)
        text = carry + piece if carry else piece
        if not piece:
            if text:
                yield _checked([text], LINE_LIMIT)
            return
        cut = text.rfind("\n") + 1
        if cut == 0:
            cut = text.rfind("\r", 0, len(text) - 1) + 1
        if cut == 0:
            if len(text) > LINE_LIMIT:
                raise LongLine()
            carry = text
            continue
        body, carry = text[:cut], text[cut:]
        lines = _LINE_END.split(body) if "\r" in body else body.split("\n")
        lines.pop()  # the empty string after the last line end
        yield _checked(lines, LINE_LIMIT)


def _bounded_lines(handle):
    """The line path's lines (topodiag/load/files.py bounded_lines: a line over LINE_LIMIT is cut)."""
    readline = handle.readline
    while True:
        line = readline(LINE_LIMIT)
        if not line:
            return
        yield line
        while len(line) == LINE_LIMIT and not line.endswith(("\n", "\r")):
            line = readline(LINE_LIMIT)


class LongLine(Exception):
    """A line longer than the line path's LINE_LIMIT."""


def _checked(lines: list, limit: int) -> list:
    if lines and max(map(len, lines)) > limit:
        raise LongLine()
    return lines


class Reader:
    """A kernel log pushed to the parser a line at a time (the dmesg section of an nvidia-bug-report,
    topodiag/load/bug_report.py), read in blocks as it comes: `add` each line (without its "\\n"),
    then `result()`. The same result as `parse_lines` over the lines of the text those lines joined by
    "\\n" make (the loader's lines of a text held whole: "\\r" and "\\r\\n" end a line too, a final empty
    line is none, a leading `#@` header is blanked); a log whose first character is "{" (the probe's
    JSON) is kept and read whole at the end."""

    def __init__(self, state, line, finish, parse_lines):
        self._st, self._line, self._finish, self._parse_lines = state, line, finish, parse_lines
        self._last: Optional[str] = None
        self._buf: list = []
        self._size = 0
        self._most = FIRST_BLOCK_LINES
        self._header = True
        self._probe: Optional[list] = None  # the lines, once the first non-blank one opens a JSON object
        self._seen = False  # a non-blank line was read

    def add(self, line: str) -> None:
        if self._last is not None:
            self._put(self._last, False)
        self._last = line

    def add_lines(self, lines: list) -> None:
        """`add` for each of `lines`; once the first non-blank line is read, a run of lines without
        "\r" goes to the blocks as it is (no per-line work)."""
        if not lines:
            return
        if self._last is not None:
            self._put(self._last, False)
            self._last = None
        body = lines[:-1]
        if self._seen and self._probe is None and not self._header and "\r" not in "\n".join(body):
            self._bulk(body)
        else:
            for line in body:
                self._put(line, False)
        self._last = lines[-1]

    def _bulk(self, lines: list) -> None:
        i = 0
        while i < len(lines):
            take = lines[i:i + self._most - len(self._buf)]
            self._buf += take
            self._size += sum(map(len, take))
            i += len(take)
            if self._size >= BLOCK_CHARS or len(self._buf) >= self._most:
                feed(self._st, self._buf, self._line)
                self._buf, self._size, self._most = [], 0, min(self._most * 2, BLOCK_LINES)

    def result(self):
        """The parser's result (raises its ParseError)."""
        if self._last is not None and self._last != "":
            self._put(self._last, True)
        self._last = None
        if self._probe is not None:
            return self._parse_lines(iter(self._probe))
        if self._buf:
            feed(self._st, self._buf, self._line)
            self._buf = []
        return self._finish(self._st)

    def _put(self, line: str, final: bool) -> None:
        pieces = line.split("\r") if "\r" in line else [line]
        if len(pieces) > 1 and pieces[-1] == "":
            pieces.pop()  # "a\r" then "\n": one line end
        for piece in pieces:
            if self._header:
                if piece.startswith(HEADER_PREFIX):
                    self._header = piece.strip() != HEADER_END
                    piece = ""
                else:
                    self._header = False
            if not self._seen and piece.strip():
                self._seen = True
                if piece.lstrip()[:1] == "{":  # the lines before it are blank: only their count matters
                    self._probe = ["\n"] * self._st.block_base + [p + "\n" for p in self._buf]
                    self._buf = []
            if self._probe is not None:
                self._probe.append(piece + "\n")
                continue
            self._buf.append(piece)
            self._size += len(piece)
            if self._size >= BLOCK_CHARS or len(self._buf) >= self._most:
                feed(self._st, self._buf, self._line)
                self._buf, self._size, self._most = [], 0, min(self._most * 2, BLOCK_LINES)
