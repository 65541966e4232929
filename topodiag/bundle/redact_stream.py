"""Redaction of large members (a job's NCCL log, gigabytes of it) as a stream: memory flat in the
member's size, and every per-line step in C, because a log repeats itself (benchmarks/redaction.py:
~29 MB/s on the 2-core development machine, issue 11 asks for 50).

A large member is read twice, a block of whole lines (BLOCK_BYTES) at a time, as bytes (split at
b"\n", which no UTF-8 sequence holds; a block is checked to be UTF-8 by bytes.isascii, or else by
decoding it, and to hold no NUL byte). The first pass (`scan`) finds the host names it names
(NCCL line prefixes `host:pid:tid [dev]`, however wrapped, peers NCCL names in a message
body `remote peer HOST<port>`, nccl-tests device lines `... on HOST device N`, shell prompts) in
the block's lines not seen before; the second (`redact_file`) writes the redacted copy. Per block, in the second pass:

1. the block's lines (bytes.split) and, of its distinct lines (dict.fromkeys), those not in the
   line table (found in C: the dict less the table's keys): a log repeats whole lines;
2. only those lines are decoded and cut by one re.split (_SPLIT_RE) at every line start into the
   line's message and its NCCL prefix's parts: the wrapper a launcher adds ("0: ",
   "[1,0]<stdout>:"), the host, and ":pid:tid [dev] " (numbers, never identifiers, and what makes
   prefixes distinct: they are never looked at);
3. the column of messages and the column of hosts are redacted through their tables: the
   Redactor's full passes (topodiag/bundle/redact.py) run once per distinct message or host, and
   over a batch of them at once (the batch is the distinct texts as the lines of one text: no
   pattern matches across a newline, so it is each line's redaction; were the line count to
   change, each is redacted alone); then both columns are mapped back (map over a dict, in C) and
   joined, which gives the new lines of the line table;
4. the block is written as a join over the line table.

The tokens are the Redactor's, so a value gets the same token here as in every other member (a
batch runs the passes in their fixed order over many lines, so tokens of the 64-bit map that
IPv6, GUID and EUI-64 passes share may be numbered in another order than line by line: the same
value still gets one token). The Python work is per distinct message and host, not per line or
byte. The tables are bounded (CACHE_ENTRIES entries, CACHE_CHARS characters; emptied when full),
so memory stays flat whatever the log holds.

Splitting a line into prefix and message changes nothing the passes see: an identifier never holds
"] ", a prefix is split off only in the NCCL shape, and a wrapper is digits and punctuation only.
"""

from __future__ import annotations

import re
from collections import deque
from operator import itemgetter
from typing import Callable

from ..errors import RedactionError
from .shown import PATH_SHOWN, shown

LARGE_MEMBER_BYTES = 1 << 20  # members from this size are streamed (smaller ones are read whole)
BLOCK_BYTES = 1 << 22
CACHE_ENTRIES = 200_000
CACHE_CHARS = 32 << 20  # a table is emptied past this many characters of keys
BATCH = 4096  # texts per run of the passes (the Redactor's placeholders hold about a million tokens)

# What a launcher or a paste puts before an NCCL prefix and holds no identifier.
_WRAP = r"\[\d+\] |\d+: |\[\d+,\d+\]<std(?:out|err)>: ?"
_HOST = r"[A-Za-z0-9][\w.-]*"
_NUMBERS = r":\d+:\d+[ \t]+\[\d*\] "
# A line start, then (optional) its NCCL prefix in parts: the wrapper, the host, ":pid:tid [dev] ".
# Every line start matches, so re.split gives per line: message, "\n", wrapper, host, numbers (the
# prefix groups None where the line has none, the message then the whole line).
_SPLIT_RE = re.compile(rf"(\n)(?:({_WRAP})?({_HOST})({_NUMBERS}))?")
_STRIDE = 5
# First pass, one regex: the host of a prefix _SPLIT_RE splits, or else the head of a line (up to
# where an NCCL prefix ends: "[2026-04-28 14:14:48] host:pid:tid [0] ") for _HEAD_HOST_RE.
_SCAN_RE = re.compile(rf"\n(?:(?:{_WRAP})?({_HOST}){_NUMBERS}|([^\n]*?:\d+:\d+[ \t]+\[[^\]\n]*\] ))")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_HEAD_HOST_RE = re.compile(r"(?<![\w.-])([A-Za-z0-9][\w.-]*):\d+:\d+[ \t]+\[")
_PEER_NAME = r"[ \t]+([A-Za-z][\w-]*(?:\.[A-Za-z0-9][\w-]*)*)<\d{1,5}>"
_PEER_HOST_RES = (re.compile("peer" + _PEER_NAME), re.compile("connect to" + _PEER_NAME),
                  re.compile("connecting to" + _PEER_NAME))
_DEVICE_HOST_RE = re.compile(r"#[ \t]*Rank[ \t]+\d+[^\n]*?[ \t]on[ \t]+([A-Za-z0-9][\w.-]*)[ \t]+device")


def _blocks(path: str):
    """The file's bytes, a block of whole lines at a time (never decoded whole: a line is split at
    b"\n", which no UTF-8 sequence holds); RedactionError when it is not text (a NUL byte, or not
    UTF-8: checked per block, by bytes.isascii, C at memory speed, or else by decoding it)."""
    tail = b""
    with open(path, "rb") as fh:
        while True:
            raw = fh.read(BLOCK_BYTES)
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


def scan(path: str, prompt_hosts: Callable[[str], list[str]]) -> set[str]:
    """The host names a large member names, and a check that it is text (first pass). A log repeats
    its lines: each block's distinct lines not seen before (set operations, in C) are the only
    text the patterns run over, each pattern once over all of them (C as well)."""
    found: set[str] = set()
    heads: set[str] = set()
    seen: set[str] = set()
    for block in _blocks(path):
        new = set(block.split(b"\n"))
        new.difference_update(seen)
        if len(seen) + len(new) > CACHE_ENTRIES:
            seen.clear()
        seen.update(new)
        text = (b"\n" + b"\n".join(new) + b"\n").decode("utf-8")
        hosts_heads = _SCAN_RE.findall(text)
        found.update(map(_FIRST, hosts_heads))
        heads.update(map(_SECOND, hosts_heads))
        if len(heads) > CACHE_ENTRIES:
            found.update(m[1] for h in heads for m in _HEAD_HOST_RE.finditer(h))
            heads.clear()
        if "Rank" in text:
            found.update(_DEVICE_HOST_RE.findall(text))
        if "<" in text:  # NCCL naming a peer by name in a message body (each regex starts with a literal)
            for rx in _PEER_HOST_RES:
                found.update(rx.findall(text))
        if "@" in text:  # a prompt: only the lines that hold an '@' (few) are read
            found.update(prompt_hosts("\n".join(_lines_with(text, "@"))))
    found.update(m[1] for h in heads for m in _HEAD_HOST_RE.finditer(h))
    found.discard("")
    return found


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


def redact_lines(lines: list[str], messages: Table, hosts: Table) -> list[str]:
    """The redaction of each of `lines` (no newline in them): one re.split cuts them all into
    messages and prefix parts, the two columns are redacted through their tables and mapped back."""
    parts = _SPLIT_RE.split("\n" + "\n".join(lines))
    col = parts[0::_STRIDE]
    messages.fill(col)
    parts[0::_STRIDE] = map(messages.got.__getitem__, col)
    col = parts[3::_STRIDE]
    hosts.fill([h for h in col if h is not None])
    got = hosts.got
    got[None] = None
    try:
        parts[3::_STRIDE] = map(got.__getitem__, col)
    finally:
        del got[None]
    return "".join(filter(None, parts)).split("\n")[1:]


def redact_file(src: str, dst: str, redact: Callable[[str], str]) -> None:
    """Write the redacted copy of a large text member (second pass), a block of lines at a time
    (the steps in the module's docstring)."""
    messages, hosts = Table(redact), Table(redact)
    table: dict[bytes, bytes] = {}
    with open(dst, "wb") as out:
        for block in _blocks(src):
            lines = block.split(b"\n")
            missing = _missing(lines, table)
            if len(table) + len(missing) > CACHE_ENTRIES:
                table.clear()
                missing = list(dict.fromkeys(lines))
            if missing:
                red = redact_lines(b"\n".join(missing).decode("utf-8").split("\n"), messages, hosts)
                red = "\n".join(red).encode("utf-8").split(b"\n")
                if len(red) != len(missing):  # never: no token holds a newline
                    raise RedactionError(f"{shown(src, PATH_SHOWN)}: redaction changed the line count")
                table.update(zip(missing, red))
            out.write(b"\n".join(map(table.__getitem__, lines)))


def _missing(column: list, table: dict) -> list:
    """The distinct items of `column` not in `table`, in order of first appearance (in C: a dict of
    them, less the keys the table holds)."""
    new = dict.fromkeys(column)
    deque(map(new.pop, new.keys() & table.keys()), maxlen=0)
    return list(new)
