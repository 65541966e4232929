"""The scanner of an NCCL_DEBUG log: one engine over bytes, a chunk of whole lines at a time.

A chunk (about CHUNK bytes, cut after a newline) gets one line scan and Python sees only what
carries facts: `digest(chunk)` is the state-free bulk of the work. The scan (lines.py
`tagged`: compiled C where the install could build it, a pure-Python twin otherwise,
the same values) gives the line and tag counts, the (host, device) of the line prefixes, each
distinct INFO/TRACE tag text with its count and first place -- the bulk of a big log is a few hundred
texts repeated by every rank, so each "8[0] -> 15[7] via P2P/IPC" connection text or fact message is
looked at once --, the per-QP lines, the untagged marks and the WARN lines by place; `digest` adds
the connection counts (CONN_RE on each distinct text) and the GPU Direct RDMA marks.
`feed` reads the distinct texts that are fact lines (SCAN_RE says which, and where the message
starts), the per-QP lines, WARN and untagged lines, decodes only those and hands them to `Facts`
(facts.py).

Text is this engine's input too: `parse(text)` and `parse_lines(lines)` encode each chunk as UTF-8
and read the bytes, so there is one engine and one set of decisions. A chunk holding a byte that is
not ASCII is decoded ("replace"), normalised and encoded again before it is read, so the result is
always that of the decoded text (`parse_binary(f) == parse(f.read().decode("utf-8", "replace"))`).

`digest` depends on nothing but its chunk, so a caller may compute it elsewhere -- the loader maps
it over the chunks of a big file in a worker process (topodiag/scan/parallel.py) -- and pass each
chunk with its digest to `parse_chunks`, which merges them in order. The parser itself starts no
process and no thread.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from typing import BinaryIO, Iterable, Iterator, Optional

from ...scan import chunks as _chunks
from . import lines as _linescan
from ...scan.chunks import CHUNK
from ..base import ANSI_B_RE, ANSI_RE
from . import classify
from .facts import Facts
from .kinds import scan_starts
from .records import MAX_CACHE, MAX_GDR_LINES, MAX_LIST, MAX_TEXT, LogLine, Result

# connection lines, keyed with their channel number: one group, so no tuple per line
CONN_RE = re.compile(rb"NCCL INFO ((?:Channel|Ring|CollNet) [^:\n]*: [^\n]*|\d{1,7}\[[0-9a-fA-Fx]{0,16}\] -> [^\n]*)")
# A paste that kept only connection lines, cut after their tag or with no tag at all
# ("9[1a000] -> 2[6b000] [receive] via NET/IB/1", as people quote them in a thread): read in a chunk
# that holds no "NCCL" at all, so a real log never pays for it.
BARE_CONN_RE = re.compile(rb"(?m)^[ \t>`*-]{0,8}(\d{1,7}\[[0-9a-fA-Fx]{0,16}\] -> \d{1,7}\[[0-9a-fA-Fx]{0,16}\]"
                          rb"(?: \[(?:send|receive)\])? via [^\n]*)")
# Which INFO/TRACE tag texts are fact lines: matched at each distinct tag text the line scan gives
# (and at each per-QP line), group 1 is the message Facts reads -- proxy, topology-dump and tuning
# chatter is never looked at. The starts come from kinds.py, the table Facts dispatches on too. The
# other alternatives (WARN, a bare TRACE, the untagged marks failure/error/version) leave group 1
# empty: the scan finds those by place. The per-QP lines of NET/IB ("NET/IB: NCCL Dev 0 IbDev 0 Port
# 1 qpn 576 mtu 3 GID 3 (...)") are fact lines: `_facts` reads them by QP_RE.
_STARTS = scan_starts()
# NCCL 2.28+ puts "[Rank N] " before some INIT messages ("NCCL INFO [Rank 0] ncclCommInitRankConfig comm
# 0x.. rank 0 nranks 16 ..."): the message read starts after it.
SCAN_RE = re.compile(rb"NCCL (?:(?:INFO |TRACE )(?:\[Rank [0-9]{1,9}\] )?((?:" + _STARTS + rb")[^\n]*)"
                     rb"|WAR(?=N)|TRACE|failure|error|version)")
# NCCL's per-QP line in each era (src/transport/net_ib.cc, net_ib/connect.cc), matched at the message:
#   2.3-2.18  "NET/IB: Dev 0 Port 1 qpn 3038 mtu 5 LID 37" | "... mtu 5 GID 3 (0/..)"
#   2.19      "NET/IB: Dev 0 Port 1 qpn 364 mtu 5 query_ece={...} GID 3 (0/..)"
#   2.20-2.29 "NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 576 mtu 3 GID 3 (0/..) fifoRkey=.." ("NCCL MergedDev"
#             when devices are merged; "LID 37 subnet-prefix .. FLID .." on IB; 2.20-2.26 put query_ece before GID)
#   2.30      "NET/IB: ncclIbConnect: NCCL Dev 0 IbDev 0 Port 1 qp_num 576 mtu 3 GID 3 (..)"
# Every run is bounded and the alternatives part at fixed words: linear on any line.
QP_RE = re.compile(rb"NET/IB: (?:[A-Za-z_][A-Za-z0-9_]{0,48}: )?(?:(NCCL (?:Merged)?Dev|Dev) ([0-9]{1,6}) )?"
                   rb"(?:I[bB]Dev ([0-9]{1,6}) )?Port ([0-9]{1,4}) qp(?:n|_num) [0-9]{1,12} mtu ([0-9]{1,3}) "
                   rb"(?:query_ece=\{[^}\n]{0,300}\} )?(LID|GID) (-?[0-9]{1,12})")
# INFO wording that may signal a fault (classify.py decides, through the catalogue, once per distinct text)
FAULT_RE = re.compile(rb"[Ff]ail|[Ee]rror|[Uu]nable|[Cc]ould not|[Tt]ime ?out|timed out|[Aa]bort")
WARN = b"NCCL WARN"
TRACE = b"NCCL TRACE"
GDR = b"GPU Direct RDMA"

# (lines, has "NCCL", INFO, WARN, TRACE counts, [(connection text, count)], mark bits, {(host, device)
#  or raw prefix}, {tag text: [count, first place]}, [places of per-QP tags], [places of untagged
#  marks], ({the WARN lines' prefixes, as the INFO ones}, {each line's first WARN tag's text to the end
#  of its line: [count, first place]}))
Digest = tuple


def normalise(raw: bytes) -> bytes:
    """CRLF and lone CR to LF, ANSI colour codes out, tabs to spaces. A chunk that is not ASCII is
    decoded first ("replace") and encoded back, so its bytes are those of the decoded text (valid
    UTF-8 with nothing to change is returned as it is: the same bytes)."""
    return _normalised(raw)[0]


def _normalised(raw: bytes) -> tuple[bytes, int]:
    """(`normalise(raw)`, its digest bit: 16 the chunk was already normal, 32 it is ASCII or valid UTF-8,
    so that `_normalise_ascii` gives the same bytes; 0 neither)."""
    if not raw.isascii():
        if valid_utf8(raw):  # what changes (CR, ANSI codes, tabs) is ASCII, never inside a character
            c = _normalise_ascii(raw)
            return c, 16 if c is raw else 32
        return _normalise_text(raw), 0
    c = _normalise_ascii(raw)
    return c, 16 if c is raw else 32


def _normalise_text(raw: bytes) -> bytes:
    """`normalise` of bytes that are not valid UTF-8: decoded ("replace"), edited, encoded back."""
    text = raw.decode("utf-8", "replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in text:
        text = ANSI_RE.sub("", text)
    if "\t" in text:
        text = text.replace("\t", " ")
    return text.encode("utf-8")


UTF8_BLOCK = 1 << 14  # (measured: 4-16 KiB blocks check a 4 MiB chunk in 0.8 ms, 256 KiB ones in 6)


def valid_utf8(raw: bytes, block: int = UTF8_BLOCK) -> bool:
    """Whether `raw.decode("utf-8")` succeeds, the chunk decoded only where it is not ASCII: block by
    block, each run of blocks that are not all ASCII decoded alone (a chunk holds a few characters
    that are not ASCII, so this is a copy of it, not a str four times its size). Why it is the same:
    a byte below 0x80 is a whole character in UTF-8 and never part of another, so no character spans
    a cut made just after or just before such a byte, and bytes are valid UTF-8 exactly when the
    pieces they are cut into there are; a run of blocks is cut from the rest where an ASCII block
    ends before it and starts after it (or the chunk does)."""
    n = len(raw)
    i = 0
    while i < n:
        j = i + block
        if raw[i:j].isascii():
            i = j
            continue
        while j < n and not raw[j:j + block].isascii():
            j += block
        try:
            str(memoryview(raw)[i:j], "utf-8")  # (decoded where it lies: no copy of the run first)
        except UnicodeDecodeError:
            return False
        i = j
    return True


def _normalise_ascii(raw: bytes) -> bytes:
    """`normalise` of ASCII or valid UTF-8 bytes: the same edits on the bytes (ANSI_RE matches ASCII only)."""
    raw = _chunks.newlines(raw)
    if b"\x1b" in raw:
        raw = ANSI_B_RE.sub(b"", raw)
    if b"\t" in raw:
        raw = raw.replace(b"\t", b" ")
    return raw


def digest(raw: bytes) -> Digest:
    """The state-free passes over one chunk as read (it is normalised here): (lines, has "NCCL",
    "NCCL INFO "/"NCCL WARN"/"NCCL TRACE" counts, the connection texts with their counts in order of
    first appearance, bits: GPU Direct RDMA 1 any / 2 Enabled / 4 Disabled, 16 the chunk is already
    normal (normalise would return it unchanged), 32 it is not but is ASCII or
    valid UTF-8 (its merge normalises it without checking again), what the prefixes of its
    INFO/TRACE lines name (the text before the line's first tag: (host, device) pairs, or the raw text
    where it is not ASCII), distinct, in order, then the line scan's tag texts, per-QP places, untagged
    marks and WARN lines: see Digest). All but the connection counts and the mark bits come from the
    line scan (lines.py `tagged`). A chunk without "NCCL" has no counts, unless it
    holds bare connection lines (BARE_CONN_RE): those are its connections and its INFO count."""
    return _digest_normal(raw)[1]


def _digest_normal(raw: bytes) -> tuple[bytes, Digest]:
    """(the chunk normalised, `digest(raw)`): `feed` of a chunk digested here reads the bytes that the
    digest read, not a second normalisation of them (a progress-bar log's every chunk has carriage
    returns to make newlines)."""
    c, same = _normalised(raw)
    if b"NCCL" not in c:
        bare = list(Counter(BARE_CONN_RE.findall(c)).items()) if b"] -> " in c and b" via " in c else []
        # a chunk of bare connection lines counts them as its NCCL lines (the INFO slot)
        return c, (c.count(b"\n"), bool(bare), sum(n for _, n in bare), 0, 0, bare, same, {}, {}, [], [], ({}, {}))
    marks = same
    if GDR in c:
        marks |= 1 | (2 if b"GPU Direct RDMA Enabled" in c else 0) | (4 if b"GPU Direct RDMA Disabled" in c else 0)
    n_lines, n_info, n_warn, n_trace, prefixes, messages, per_line, mark_at, warns = _linescan.tagged(c)
    conns = []
    for key, (cnt, _) in messages.items():
        m = CONN_RE.match(key)
        if m is not None:
            conns.append((m.group(1), cnt))
    return c, (n_lines, True, n_info, n_warn, n_trace, conns, marks, prefixes, messages, per_line, mark_at, warns)


class _LineNo:
    """Line numbers of increasing positions in a chunk, counted incrementally."""

    def __init__(self, chunk: bytes, base: int) -> None:
        self.chunk, self.pos, self.line = chunk, 0, base + 1

    def at(self, pos: int) -> int:
        if pos < self.pos:
            self.pos, self.line = 0, self.line - self.chunk.count(b"\n", 0, self.pos)
        self.line += self.chunk.count(b"\n", self.pos, pos)
        self.pos = pos
        return self.line


def _line_at(chunk: bytes, pos: int) -> tuple[int, int]:
    ls = chunk.rfind(b"\n", 0, pos) + 1
    le = chunk.find(b"\n", pos)
    return ls, (le if le >= 0 else len(chunk))


def _text(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def feed(st: Facts, raw: bytes, dg: Optional[Digest] = None) -> None:
    """Read one chunk of whole lines (the last chunk may end without a newline) into `st`.

    `dg` is `digest(raw)` when it was computed elsewhere (it is computed here otherwise)."""
    c = None
    if dg is None:
        c, dg = _digest_normal(raw)
    n_lines, has_nccl, n_info, n_warn, n_trace, items, marks, prefixes, messages, per_line, marked, warns = dg
    if c is None:
        c = raw if marks & 16 else _normalise_ascii(raw) if marks & 32 else normalise(raw)
    base = st.n
    st.n += n_lines
    if not c.endswith(b"\n"):
        st.partial = True
    st.last_error_done = -1  # (set by the carry below for this chunk only)
    if st.last_error_carry is not None:  # an "NCCL error in:" line near the end of the chunk before
        _carried_last_error(st, c)  # (its detail needs no "NCCL" in this chunk)
    if not has_nccl:
        st.flush_errors()
        return
    st.nccl += n_info + n_warn + n_trace
    _hosts(st, prefixes)  # the hosts and devices of the chunk's INFO/TRACE lines
    if not messages:  # (bare connection lines: no tag text)
        for conn, cnt in items:
            st.count_connections(c, base, conn, cnt)
    if marks & 1:
        _gdr(st, c, base, marks)
    _facts(st, c, base, messages, per_line, dict(items) if messages else None)
    _warns(st, c, base, warns)
    if not n_warn and not n_info and b"WARN " in c:  # NCCL 1.x-2.2's WARN: a log with no tag at all
        _old_warns(st, c, base)
    # NCCL lines without a tag: banner, watchdog, failures (the lines of the marks found, tagged ones
    # left out there)
    if marked:
        _untagged(st, c, base, marked)
    st.flush_errors()


def _hosts(st: Facts, prefixes) -> None:
    """The hosts and devices line prefixes name: (host, device) pairs, or raw prefixes (not ASCII)."""
    pseen_b, hd_seen = st.prefix_seen_b, st.host_devs_b
    # (the pairs seen before passed over by a C-level filter, lazily: a pair added below is seen by
    # the keys after it, as a loop's test would see it)
    for key in itertools.filterfalse(hd_seen.__contains__, prefixes):
        if key.__class__ is tuple:
            if len(hd_seen) >= MAX_CACHE:
                hd_seen.clear()
            hd_seen.add(key)
            st.host_dev(key[0].decode("ascii"), key[1])
        elif key not in pseen_b:
            _new_prefix(st, key)


def _warns(st: Facts, c: bytes, base: int, warns) -> None:
    """The chunk's WARN lines (the first tag of each line): by their distinct texts once no list they
    would join has room (Facts.warns_counted: counts, failed plugins; their hosts from the prefixes'
    keys), else line by line (Facts.warn), as every line was read before the lists filled."""
    prefixes, texts = warns
    if not texts:
        return
    if st.warns_counted((_text(t), n) for t, (n, _) in texts.items()):  # (decoded only when asked)
        _hosts(st, prefixes)
        return
    for pos, ls, le, i in _linescan.warn_lines(c):
        st.warn(base + i + 1, _text(c[ls:le]).strip(), _text(c[ls:pos]))


def _old_warns(st: Facts, c: bytes, base: int) -> None:
    """NCCL 1.x's `WARN file.cu:123 message` and 2.0-2.2's `host:pid:tid [0] file.cu:123 WARN message`."""
    ln = _LineNo(c, base)
    for pos, pre, msg in classify.old_warns(c):
        ls, le = _line_at(c, pos)
        line = _text(c[ls:le]).strip()
        st.nccl += 1
        st.warnings_total += 1
        if len(st.warnings) < MAX_LIST:
            st.warnings.append(LogLine(ln.at(ls), line[:MAX_TEXT]))
        st.failure(ln.at(ls), line, msg)


def _gdr(st: Facts, c: bytes, base: int, marks: int) -> None:
    """GPU Direct RDMA evidence: Enabled / Disabled, and the first lines that say so."""
    if marks & 2:
        st.gdr_on = True
    if marks & 4:
        st.gdr_off = True
    if len(st.gdr_lines) < MAX_GDR_LINES:
        ln = _LineNo(c, base)
        pos = c.find(GDR)
        while pos >= 0 and len(st.gdr_lines) < MAX_GDR_LINES:
            ls, le = _line_at(c, pos)
            st.gdr_lines.append(LogLine(ln.at(ls), _text(c[ls:le]).strip()[:MAX_TEXT]))
            pos = c.find(GDR, le)


def _facts(st: Facts, c: bytes, base: int, messages: dict, per_line: list[int], conns: Optional[dict] = None) -> None:
    """The fact lines, given to Facts: the distinct tag texts of the chunk (each read once: SCAN_RE
    says whether it is a fact line and where its message starts) and the per-QP lines, one by one.
    Every effect of a fact line is idempotent (a "Connected NVLS" line excepted: `_fact` says so, and
    it is read once per line) and the hosts of the chunk's lines are already recorded (`feed`, from
    the digest's prefixes), so a tag text read before, or whose message is known, does nothing more.
    The connection texts (`conns`: the text after "NCCL INFO " -> its count) are counted at their turn
    among the texts, in the order their first lines come: what is kept first (a rank's bus id, the hosts
    of a capped list) is then what the lines say first, however the file is cut into chunks."""
    done = st.tag_texts_b
    lines = _LineNo(c, base)  # line numbers of the per-QP lines that start a qp_mtus entry
    for key, (cnt, pos) in messages.items():
        if conns:
            n_conn = conns.get(key[10:])
            if n_conn is not None:
                st.count_connections(c, base, key[10:], n_conn)
        if _mem(key) in done:
            continue
        m = SCAN_RE.match(key)
        msg_b = m.group(1) if m is not None else None
        if FAULT_RE.search(key) is not None and key.startswith(b"NCCL INFO "):  # once per distinct text
            ls, le = _line_at(c, pos)
            st.fault_info(lines.at(pos), _text(c[ls:le]).strip(), _text(key[10:]).strip())
        final = msg_b is None or _fact(st, c, lines, pos, msg_b)
        if not final:  # a text that counts on every line (Connected NVLS): read once per line
            for _ in range(cnt - 1):
                _fact(st, c, lines, pos, msg_b)
        else:
            if len(done) >= MAX_CACHE:
                done.clear()
            done.add(_mem(key))
    for pos in per_line:
        m = SCAN_RE.match(c, pos)
        if m is not None and m.group(1) is not None:
            _fact(st, c, lines, pos, m.group(1))


MEM_KEY = 256  # a text longer than this is remembered by (length, hash), not kept (N11: memory grew with them)


def _mem(text):
    """What the sets of texts read before keep of a text: itself when short, else (length, hash): the
    sets hold up to MAX_CACHE texts, which a log of long distinct lines made hundreds of MB."""
    return text if len(text) <= MEM_KEY else (len(text), hash(text))


def _fact(st: Facts, c: bytes, lines: "_LineNo", start: int, msg_b: bytes) -> bool:
    """One fact message, its tag at `start`; True when reading the same text again would do nothing."""
    seen_b = st.seen_msgs_b
    if _mem(msg_b) in seen_b:  # a message known (never a per-QP line: those are not kept there)
        return True
    if msg_b.startswith(b"NET/IB: ") and (b" qpn " in msg_b or b" qp_num " in msg_b) and \
            _qp(st, c, lines, start, msg_b):
        return False
    kb = None
    if msg_b[-1] > 32 and msg_b.startswith((b"comm ", b"ncclComm")):
        # the key Facts.comm reads (from " rank ": a function name before "comm" changes nothing
        # in it; the message has nothing to strip): a known key only sets init_complete
        r = msg_b.find(b" rank ")
        e = msg_b.find(b" commId", r)
        kb = msg_b[r:e] if e > 0 else msg_b[r:]
        if kb in st.comm_seen_b:
            if b"Init COMPLETE" in msg_b:
                st.init_complete = True
            return True
    seen = st.seen_msgs
    msg = _text(msg_b)
    if _mem(msg) in seen:
        return True
    if len(seen) >= MAX_CACHE:
        seen.clear()
        seen_b.clear()
    nvls = msg.startswith("Connected NVLS")
    if not nvls:
        seen.add(_mem(msg))
        seen_b.add(_mem(msg_b))
    st.info(_text(c[c.rfind(b"\n", 0, start) + 1 : start]), msg.strip())
    if kb is not None and _text(kb) in st.comm_seen:
        st.comm_seen_b.add(kb)
    return not nvls


def _new_prefix(st: Facts, pre_b: bytes) -> None:
    """A line prefix not seen as bytes yet: its host and device (Facts.prefix, unless known as text)."""
    pre = _text(pre_b)
    if pre not in st.prefix_cache:
        st.prefix(pre)
    st.prefix_seen_b.add(pre_b)


def _qp(st: Facts, c: bytes, lines: _LineNo, start: int, msg_b: bytes) -> bool:
    """A per-QP line of NET/IB (QP_RE): counted under its (host, devices, port, link layer, MTU); its
    GID index is the log's when none is known yet, as for any line with "GID N (" (the 2.3-2.19 "Dev N
    Port" lines excepted, which the scan skipped before it read them). An ECE line of a QP ("qpn 576
    set_ece={...}") says nothing more than its prefix's host. False: not such a line, read as any
    (or, from `_facts`, a line whose reading changes something each time)."""
    m = QP_RE.match(msg_b)
    if m is None:
        return b"_ece={" in msg_b  # (its host is recorded with every line's: `feed`)
    pre_b = c[c.rfind(b"\n", 0, start) + 1 : start]
    fields = m.group(2, 3, 4, 5, 6)
    seen = st.qp_seen_b
    key = seen.get((pre_b, fields))
    if key is None:
        net_dev, ib_dev, port, mtu, lid = fields
        if net_dev is None and ib_dev is None:
            return False
        key = st.qp_key(_text(pre_b), int(net_dev) if net_dev is not None else None,
                        int(ib_dev) if ib_dev is not None else None, int(port),
                        "IB" if lid == b"LID" else "RoCE", int(mtu), lambda: lines.at(start))
        if key is None:  # the table is full: the line is only counted among NCCL's
            return True
        if len(seen) >= MAX_CACHE:
            seen.clear()
        seen[(pre_b, fields)] = key
    st.qp_mtus[key][0] += 1
    if st.gid is None and m.group(6) == b"GID" and m.group(1) != b"Dev" and m.group(7)[:1] != b"-" \
            and msg_b[m.end():m.end() + 2] == b" (":
        st.gid = int(m.group(7))
    return True


def _untagged(st: Facts, c: bytes, base: int, marked: list[int]) -> None:
    """Lines with an untagged mark (banner, c10d watchdog, nccl-tests / PyTorch failures), each once:
    the lines of the marks the line scan found (`marked`: "NCCL failure", "NCCL error", "NCCL
    version" and the "NCCL" of each "ProcessGroupNCCL" that starts no tag, with no INFO, WARN or TRACE
    tag before them on their line: lines.py `_MARK_RE`; a line with a tag after its mark is left out
    here, as is one whose "ProcessGroupNCCL" starts a tag or lies after one). A line's number is
    counted only while a list it may join
    has room (the errors, the unrecognised lines: `_lines_kept`); past that, nothing keeps it. (Tests
    by `find`, not `in`: see topodiag/scan/lines.py.)"""
    starts: set[int] = {c.rfind(b"\n", 0, pos) + 1 for pos in marked}
    ln = _LineNo(c, base) if _lines_kept(st) else None
    done, st.last_error_done = st.last_error_done, -1  # the last "Last error:" read (-1: none in this chunk)
    banners = st.banners_b  # a bare banner line read before does nothing more than count again
    end = len(c)
    for ls in sorted(starts):
        le = c.find(b"\n", ls)
        if le < 0:
            le = end
        line = c[ls:le]
        if line.find(b"NCCL INFO") >= 0 or line.find(WARN) >= 0 or line.find(TRACE) >= 0:
            continue
        if line in banners:
            st.nccl += 1
            continue
        line_no = ln.at(ls) if ln is not None else 0
        if st.other(line_no, _text(line).strip()):
            st.nccl += 1
            error = line.find(b"NCCL error") >= 0
            if error:
                done = _last_error(st, c, ls, le, line_no, done)
            if not error and line.find(b"ProcessGroupNCCL") < 0 and line.find(b"NCCL failure") < 0:
                if len(banners) >= MAX_CACHE:
                    banners.clear()
                banners.add(line)  # Facts.other read it as a banner: the first version wins


def _lines_kept(st: Facts) -> bool:
    """Whether a line `_untagged` reads may still be kept with its number: the errors list has room
    (Facts.add_error, Facts.failure; it only grows) or the unrecognised one had room when the chunk
    began (Facts.unrecognised_room: it stays full once full). Else each such line is only counted,
    and its number -- a pass over the chunk up to it -- is not needed (a log of a cluster's jobs
    appended: hundreds of watchdog and error lines a chunk once the lists are full)."""
    return len(st.errors) < MAX_LIST or st.unrecognised_room


def _last_error(st: Facts, c: bytes, ls: int, le: int, line_no: int, done: int) -> int:
    """The detail an application prints after "Last error:" (ncclGetLastError: NCCL's last WARN text),
    a few lines below its "NCCL error in: ..." line (at `ls`, line `line_no`); each read once."""
    got = classify.last_error_after(c, le)
    if got is None and le + classify.LAST_ERROR_WINDOW > len(c):  # its detail may be in the next chunk
        st.last_error_carry = (line_no, c[le:])
    if got is None or got[0] <= done:
        return done
    pos, at, detail = got
    dls, dle = _line_at(c, at)
    st.failure(line_no + c.count(b"\n", ls, dls), _text(c[dls:dle]).strip(), detail, "last_error")
    return pos


def _carried_last_error(st: Facts, c: bytes) -> None:
    """The "Last error:" detail of an "NCCL error in:" line that ended the chunk before (its line number
    and the bytes after it: `_last_error`), looked for in those bytes and the start of this chunk; the
    place of a "Last error:" read here is kept so that this chunk's own error lines do not read it again."""
    line_no, tail = st.last_error_carry
    st.last_error_carry = None
    joined = tail + c[:classify.LAST_ERROR_WINDOW]
    got = classify.last_error_after(joined, 0)
    if got is None:
        return
    pos, at, detail = got
    dls = joined.rfind(b"\n", 0, at) + 1
    dle = joined.find(b"\n", at)
    st.failure(line_no + joined.count(b"\n", 0, dls), _text(joined[dls:len(joined) if dle < 0 else dle]).strip(),
               detail, "last_error")
    if pos >= len(tail):
        st.last_error_done = pos - len(tail)


# ---- cutting input into chunks, and the entry points ------------------------------------------------

def iter_chunks(handle: BinaryIO) -> Iterator[bytes]:
    """Chunks of whole lines of about CHUNK bytes from a file opened "rb" (topodiag/scan/chunks.py)."""
    return _chunks.iter_chunks(handle, CHUNK)


class ChunkReader:
    """The in-order merge as an object: `feed(chunk, digest=None)` chunk after chunk, then `result()`.
    How the loader reads one file once for every parser that reads it (topodiag/scan/onepass.py)."""

    def __init__(self) -> None:
        self.st = Facts()

    def feed(self, chunk: bytes, dg: Optional[Digest] = None) -> None:
        feed(self.st, chunk, dg)

    def result(self) -> Result:
        """The Result (ParseError when no NCCL line was seen); call once."""
        if self.st.partial:
            self.st.n += 1
        return self.st.result()


def parse_chunks(chunks: Iterable) -> Result:
    """Merge chunks of whole lines, in order, into one Result. Each item is a chunk (bytes) or a pair
    (chunk, its digest or None): how the loader passes digests computed in a worker process."""
    return _chunks.feed_all(ChunkReader(), chunks)


def parse_binary(handle: BinaryIO) -> Result:
    """Parse an NCCL_DEBUG log from a file opened in binary mode, in constant memory; the result is
    `parse(data.decode("utf-8", "replace"))`."""
    return parse_chunks(iter_chunks(handle))


def parse_lines(lines: Iterable) -> Result:
    """Parse an iterable of log lines (an open file, text or binary, a list, a generator) in constant
    memory: lines are gathered into chunks of about CHUNK characters."""
    if callable(getattr(lines, "read", None)):
        return parse_chunks(iter_chunks(lines))  # type: ignore[arg-type]
    return parse_chunks(_chunks.line_chunks(lines, CHUNK))


def parse(text: str) -> Result:
    """Parse a whole NCCL_DEBUG log held in memory (the same engine, over its UTF-8 bytes)."""
    return parse_chunks(_chunks.text_chunks(text, CHUNK))
