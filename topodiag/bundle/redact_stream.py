"""Redaction of large members (a job's NCCL log, gigabytes of it) as a stream: memory flat in the
member's size, and every per-line step in C, because a log repeats itself (benchmarks/redaction.py
measures it; issue 11 asks for 50 MB/s on the 2-core development machine).

A large member is read twice, a block of whole lines (BLOCK_BYTES) at a time, as bytes (split at
b"\n", which no UTF-8 sequence holds; a block is checked to be UTF-8 by bytes.isascii, or else by
decoding it, and to hold no NUL byte). Both passes cut a block with one re.split (_PREFIX_B) at
every NCCL prefix: bodies (a prefixed line's message and the unprefixed lines after it), the
launcher's wrapper with its line break ("0: ", "[1,0]<stdout>:"), the host, and ":pid:tid [dev] "
(numbers, never identifiers, and what makes lines distinct: they are never looked at).

The first pass (`scan`) takes the hosts of the prefixes and reads the distinct body lines not seen
before for the other places a host is named (peers NCCL names in a message body `remote peer
HOST<port>`, nccl-tests device lines `... on HOST device N`, shell prompts, prefixes this split does
not take: a time stamp before the host, a non-ASCII name); a set, so a big member's halves are
scanned in two processes. The second (`redact_file`) writes the redacted copy: the bodies and hosts
not in their tables yet are redacted (a body line by line through the message table: the
Redactor's full passes, topodiag/bundle/redact.py, run once per distinct line or host, over a batch
of them at once: the batch is the distinct texts as the lines of one text; no pattern matches across
a newline, so it is each line's redaction; were the line count to change, each is redacted alone);
both columns are mapped through their tables (map over a dict, in C) and the block is written as
the join of the parts.

The tokens are the Redactor's, so a value gets the same token here as in every other member (a
batch runs the passes in their fixed order over many lines, so tokens of the 64-bit map that
IPv6, GUID and EUI-64 passes share may be numbered in another order than line by line: the same
value still gets one token). The Python work is per distinct body and host, not per line or
byte. The tables are bounded (CACHE_ENTRIES entries, CACHE_CHARS characters; emptied when full),
so memory stays flat whatever the log holds.

Splitting a line into prefix and message changes nothing the passes see: an identifier never holds
"] ", a prefix is split off only in the NCCL shape, and a wrapper is digits and punctuation only.
"""

from __future__ import annotations

import os
import re
import time
from collections import deque
from operator import itemgetter
from typing import Callable, Optional

from ..errors import RedactionError
from ..scan.workers import fork_ok, one_worker_pool, release
from .shown import PATH_SHOWN, shown

LARGE_MEMBER_BYTES = 1 << 20  # members from this size are streamed (smaller ones are read whole)
BLOCK_BYTES = 1 << 22
PARALLEL_SCAN_BYTES: Optional[int] = 32 << 20  # members from this size are scanned in two processes (None: never)
CACHE_ENTRIES = 200_000
CACHE_CHARS = 32 << 20  # a table is emptied past this many characters of keys
BATCH = 4096  # texts per run of the passes (the Redactor's placeholders hold about a million tokens)

# What a launcher or a paste puts before an NCCL prefix and holds no identifier.
_WRAP = r"\[\d+\] |\d+: |\[\d+,\d+\]<std(?:out|err)>: ?"
_HOST = r"[A-Za-z0-9][\w.-]*"
_NUMBERS = r":\d+:\d+[ \t]+\[\d*\] "
# The same prefix over a block's bytes (ASCII host and digits: a prefix this does not split stays in
# its line, which the text patterns then read whole): re.split gives body, "\n" + wrapper, host,
# ":pid:tid [dev] ", body... A body is the message of a prefixed line and the unprefixed lines after it.
_PREFIX_B = re.compile(rb"(\n(?:" + _WRAP.encode() + rb")?)(" + _HOST.encode() + rb")(" + _NUMBERS.encode() + rb")")
_B_STRIDE = 4
# The first pass needs only the hosts and the bodies: one group splits faster (body, host, body...).
_HOSTS_B = re.compile(rb"\n(?:" + _WRAP.encode() + rb")?(" + _HOST.encode() + rb")" + _NUMBERS.encode())
# First pass, one regex: the host of a prefix _PREFIX_B splits, or else the head of a line (up to
# where an NCCL prefix ends: "[2026-04-28 14:14:48] host:pid:tid [0] ") for _HEAD_HOST_RE.
_SCAN_RE = re.compile(rf"\n(?:(?:{_WRAP})?({_HOST}){_NUMBERS}|([^\n]*?:\d+:\d+[ \t]+\[[^\]\n]*\] ))")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_HEAD_HOST_RE = re.compile(r"(?<![\w.-])([A-Za-z0-9][\w.-]*):\d+:\d+[ \t]+\[")
_PEER_NAME = r"[ \t]+([A-Za-z][\w-]*(?:\.[A-Za-z0-9][\w-]*)*)<\d{1,5}>"
_PEER_HOST_RES = (re.compile("peer" + _PEER_NAME), re.compile("connect to" + _PEER_NAME),
                  re.compile("connecting to" + _PEER_NAME))
_DEVICE_HOST_RE = re.compile(r"#[ \t]*Rank[ \t]+\d+[^\n]*?[ \t]on[ \t]+([A-Za-z0-9][\w.-]*)[ \t]+device")


def _blocks(path: str, start: int = 0, stop: Optional[int] = None):
    """The file's bytes (from `start`, a line start, to `stop` or its end), a block of whole lines at
    a time (never decoded whole: a line is split at b"\n", which no UTF-8 sequence holds);
    RedactionError when it is not text (a NUL byte, or not UTF-8: checked per block, by
    bytes.isascii, C at memory speed, or else by decoding it)."""
    tail = b""
    with open(path, "rb") as fh:
        fh.seek(start)
        left = None if stop is None else stop - start
        while True:
            raw = fh.read(BLOCK_BYTES if left is None else min(BLOCK_BYTES, left))
            if left is not None:
                left -= len(raw)
            if b"\0" in raw:
                raise RedactionError(f"{shown(path, PATH_SHOWN)}: binary (a NUL byte): not UTF-8 text")
            block = tail + raw
            cut = block.rfind(b"\n") + 1 if raw else len(block)
            tail = block[cut:]
            block = block[:cut]
            if not block.isascii():
                try:
                    block.decode("utf-8")
                except UnicodeDecodeError:
                    raise RedactionError(f"{shown(path, PATH_SHOWN)}: binary: not UTF-8 text") from None
            if block:
                yield block
            if not raw:
                return


class DeadlinePassed(RedactionError):
    """collect --deadline passed during the first (scanning) pass of a large member."""


DEADLINE_MESSAGE = "redaction did not finish before the --deadline: nothing was written (give a larger --deadline for big logs)"


def check_deadline(deadline: Optional[float]) -> None:
    """DeadlinePassed once time.monotonic() is past `deadline` (None: no deadline)."""
    if deadline is not None and time.monotonic() > deadline:
        raise DeadlinePassed(DEADLINE_MESSAGE)


def scan(path: str, prompt_hosts: Callable[[str], list[str]], deadline: Optional[float] = None) -> set[str]:
    """The host names a large member names, and a check that it is text (first pass). A set does not
    depend on the order it was found in: a big member's second half is scanned in a worker process
    while this one scans the first (`_halves`), on a machine with two CPUs and no other thread."""
    cut = _halves(path)
    if cut is not None:
        pool = one_worker_pool()
        if pool is not None:
            idle = False
            try:
                try:
                    second = pool.submit(_scan_range, path, prompt_hosts, cut, None, deadline)
                except Exception:  # a pool that cannot start: one process
                    second = None
                first = _scan_range(path, prompt_hosts, 0, cut, deadline)
                if second is not None:
                    try:
                        hosts = second.result()
                        idle = True
                        return first | hosts
                    except RedactionError:
                        idle = True
                        raise
                    except Exception:  # a worker that died: its half here
                        pass
                return first | _scan_range(path, prompt_hosts, cut, None, deadline)
            finally:
                release(pool, idle)
    return _scan_range(path, prompt_hosts, 0, None, deadline)


def _halves(path: str) -> Optional[int]:
    """Where a big member's second half starts (a line start), or None: a member under
    PARALLEL_SCAN_BYTES, one CPU, other threads running (a fork beside them can deadlock the child),
    or no line break past the middle."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return None
    if PARALLEL_SCAN_BYTES is None or size < PARALLEL_SCAN_BYTES or not fork_ok():
        return None
    with open(path, "rb") as fh:
        fh.seek(size // 2)
        head = fh.read(1 << 20)
    nl = head.find(b"\n")
    return None if nl < 0 else size // 2 + nl + 1


def _scan_range(path: str, prompt_hosts: Callable[[str], list[str]], start: int, stop: Optional[int],
                deadline: Optional[float] = None) -> set[str]:
    """`scan` over the bytes [start, stop) of the member (stop None: its end). One re.split
    of each block's bytes (_PREFIX_B, C) gives the hosts of its NCCL prefixes and the bodies between
    them; a log repeats its bodies: only the distinct lines of bodies not seen before are text the
    other patterns read (each pattern once over all of them, C as well): a body's first line (a
    prefixed line's message) for peers, device lines and prompts; its other lines (unprefixed) for
    those and for the prefix shapes a split does not take (a stamp before the host, non-ASCII)."""
    found: set[bytes] = set()
    heads: set[str] = set()
    seen_first: set[bytes] = set()
    seen_rest: set[bytes] = set()
    texts: set[str] = set()
    for block in _blocks(path, start, stop):
        check_deadline(deadline)  # D10: per block, not after the whole member
        parts = _HOSTS_B.split(b"\n" + block)
        found.update(parts[1::2])
        firsts: set[bytes] = set()
        rests: set[bytes] = set()
        for body in set(parts[0::2]):
            first, _, rest = body.partition(b"\n")
            firsts.add(first)
            if rest:
                rests.update(rest.split(b"\n"))
        firsts.difference_update(seen_first)
        rests.difference_update(seen_rest)
        if len(seen_first) + len(firsts) > CACHE_ENTRIES:
            seen_first.clear()
        if len(seen_rest) + len(rests) > CACHE_ENTRIES:
            seen_rest.clear()
        seen_first.update(firsts)
        seen_rest.update(rests)
        rest_text = ("\n" + "\n".join(map(bytes.decode, rests)) + "\n") if rests else ""
        hosts_heads = _SCAN_RE.findall(rest_text)
        texts.update(map(_FIRST, hosts_heads))
        heads.update(map(_SECOND, hosts_heads))
        if len(heads) > CACHE_ENTRIES:
            texts.update(m[1] for h in heads for m in _HEAD_HOST_RE.finditer(h))
            heads.clear()
        text = "\n".join(map(bytes.decode, firsts)) + rest_text
        if "Rank" in text:
            texts.update(_DEVICE_HOST_RE.findall(text))
        if "<" in text:  # NCCL naming a peer by name in a message body (each regex starts with a literal)
            for rx in _PEER_HOST_RES:
                texts.update(rx.findall(text))
        if "@" in text:  # a prompt: only the lines that hold an '@' (few) are read
            texts.update(prompt_hosts("\n".join(_lines_with(text, "@"))))
    texts.update(m[1] for h in heads for m in _HEAD_HOST_RE.finditer(h))
    texts.update(map(bytes.decode, found))
    texts.discard("")
    return texts


def _lines_with(text: str, char: str) -> list[str]:
    """The distinct lines of `text` that hold `char` (found by str.find, in C)."""
    out: dict[str, None] = {}
    i = text.find(char)
    while i >= 0:
        start, end = text.rfind("\n", 0, i) + 1, text.find("\n", i)
        end = len(text) if end < 0 else end
        out[text[start:end]] = None
        i = text.find(char, end)
    return list(out)


class Table:
    """text -> its redaction, bounded (CACHE_ENTRIES, CACHE_CHARS); the Redactor's passes run once
    per distinct text, over a batch of texts at a time."""

    def __init__(self, redact: Callable[[str], str]):
        self._redact = redact
        self.got: dict[str, str] = {}
        self._chars = 0

    def fill(self, column: list[str]) -> None:
        """Redact the texts of `column` not in the table yet, in order of first appearance (tokens
        are numbered so), each as the line it is (a newline after it)."""
        got = self.got
        missing = _missing(column, got)
        if not missing:
            return
        size = sum(map(len, missing))
        if len(got) + len(missing) > CACHE_ENTRIES or self._chars + size > CACHE_CHARS:
            got.clear()
            missing = list(dict.fromkeys(column))
            size = sum(map(len, missing))
            self._chars = 0
        self._chars += size
        for i in range(0, len(missing), BATCH):
            batch = missing[i:i + BATCH]
            red = self._redact("\n".join(batch) + "\n").split("\n")
            if len(red) != len(batch) + 1:  # a pass crossed a newline: each alone
                red = [r[:-1] if r.endswith("\n") else r for r in (self._redact(t + "\n") for t in batch)]
            got.update(zip(batch, red))


def redact_file(src: str, dst: str, redact: Callable[[str], str]) -> None:
    """Write the redacted copy of a large text member (second pass), a block of lines at a time:
    one re.split of the block's bytes (_PREFIX_B) into bodies and prefix parts; the bodies and the
    hosts not in their tables yet are redacted (a body line by line through the message table); both
    columns are mapped through their tables (in C) and the block written as the join."""
    messages, hosts = Table(redact), Table(redact)
    bodies: dict[bytes, bytes] = {}
    names: dict[bytes, bytes] = {}
    size = 0
    with open(dst, "wb") as out:
        for block in _blocks(src):
            redact("")  # the Redactor's --deadline, checked per block whatever the tables hold
            parts = _PREFIX_B.split(b"\n" + block)
            col = parts[0::_B_STRIDE]
            missing = _missing(col, bodies)
            if missing:
                more = sum(map(len, missing))
                if len(bodies) + len(missing) > CACHE_ENTRIES or size + more > CACHE_CHARS:
                    bodies.clear()
                    missing = list(dict.fromkeys(col))
                    size, more = 0, sum(map(len, missing))
                size += more
                bodies.update(zip(missing, _redact_bodies(missing, messages)))
            parts[0::_B_STRIDE] = map(bodies.__getitem__, col)
            col = parts[2::_B_STRIDE]
            missing = _missing(col, names)
            if missing:
                if len(names) + len(missing) > CACHE_ENTRIES:
                    names.clear()
                    missing = list(dict.fromkeys(col))
                text = [h.decode("ascii") for h in missing]
                hosts.fill(text)
                names.update(zip(missing, (hosts.got[h].encode("utf-8") for h in text)))
            parts[2::_B_STRIDE] = map(names.__getitem__, col)
            out.write(memoryview(b"".join(parts))[1:])


def _redact_bodies(missing: list[bytes], messages: Table) -> list[bytes]:
    """The redaction of each body (lines without their prefixes), line by line through `messages`."""
    lines = b"\n".join(missing).decode("utf-8").split("\n")
    messages.fill(lines)
    red = "\n".join(map(messages.got.__getitem__, lines)).encode("utf-8").split(b"\n")
    if len(red) != len(lines):  # never: no token holds a newline
        raise RedactionError("redaction changed the line count")
    out, i = [], 0
    for body in missing:
        n = body.count(b"\n") + 1
        out.append(b"\n".join(red[i:i + n]))
        i += n
    return out


def _missing(column: list, table: dict) -> list:
    """The distinct items of `column` not in `table`, in order of first appearance (in C: a dict of
    them, less the keys the table holds)."""
    new = dict.fromkeys(column)
    deque(map(new.pop, new.keys() & table.keys()), maxlen=0)
    return list(new)
