"""Redaction of large members (a job's NCCL log, gigabytes of it) as a stream: memory flat in the
member's size, and fast, because a log repeats itself.

A large member is read twice, a block of lines at a time. The first pass finds the host names it
names (NCCL line prefixes `host:pid:tid [dev]`, nccl-tests device lines `... on HOST device N`,
shell prompts) and checks it is text (UTF-8, no NUL byte); the second writes the redacted copy. A
log line is its prefix plus a message, and both repeat: a rank writes the same prefix on every
line, and the same message ("Channel 00/0 : 0[0] -> 1[1] via P2P/IPC") recurs across ranks,
rounds and jobs. Each distinct prefix and each distinct message is redacted once by the
Redactor's full passes (topodiag/bundle/redact.py) and then looked up: the tokens are the
Redactor's, so a value gets the same token here as in every other member. A line without such a
prefix is looked up whole. The caches are bounded (CACHE_ENTRIES each, emptied when full), so
memory stays flat whatever the log holds.

Splitting a line into prefix and message changes nothing the passes see: an identifier never
holds "] ", and only a prefix of the NCCL shape (checked once per distinct prefix) is split off.
"""

from __future__ import annotations

import codecs
import re
from typing import Callable, Optional

from ..errors import RedactionError

LARGE_MEMBER_BYTES = 1 << 20  # members from this size are streamed (smaller ones are read whole)
BLOCK_BYTES = 1 << 22
CACHE_ENTRIES = 200_000

# An NCCL line prefix, maybe wrapped ("[155] ", "0: ", "[1,0]<stdout>:"), up to the "] " that ends it.
_NCCL_PREFIX_RE = re.compile(r"(?:[^\n]*?[\s\]>:])?[A-Za-z0-9][\w.-]*:\d+:\d+[ \t]+\[[^\]\n]*\] \Z")
# The same prefix in three parts: what wraps it, the host, and ":pid:tid [dev] " (numbers, never identifiers).
_PREFIX_PARTS_RE = re.compile(r"((?:[^\n]*?[\s\]>:])?)([A-Za-z0-9][\w.-]*)(:\d+:\d+[ \t]+\[\d*\] )\Z")
_BARE_PREFIX_RE = re.compile(r"([A-Za-z0-9][\w.-]*)(:\d+:\d+[ \t]+\[\d*\] )\Z")  # the same, unwrapped
_HEAD_RE = re.compile(r"\n([^\n]*?:\d+:\d+[ \t]+\[[^\]\n]*\] )")  # a line up to where its NCCL prefix ends
_HEAD_HOST_RE = re.compile(r"(?<![\w.-])([A-Za-z0-9][\w.-]*):\d+:\d+[ \t]+\[")
_DEVICE_HOST_RE = re.compile(r"#[ \t]*Rank[ \t]+\d+[^\n]*?[ \t]on[ \t]+([A-Za-z0-9][\w.-]*)[ \t]+device")


def _blocks(path: str):
    """The file's text, a block of whole lines at a time; RedactionError when it is not text."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    tail = ""
    with open(path, "rb") as fh:
        while True:
            raw = fh.read(BLOCK_BYTES)
            if b"\0" in raw:
                raise RedactionError(f"{path}: binary (a NUL byte): not UTF-8 text")
            try:
                text = tail + decoder.decode(raw, final=not raw)
            except UnicodeDecodeError:
                raise RedactionError(f"{path}: binary: not UTF-8 text") from None
            if not raw:
                if text:
                    yield text
                return
            cut = text.rfind("\n") + 1
            tail = text[cut:]
            if cut:
                yield text[:cut]


def scan(path: str, prompt_hosts: Callable[[str], list[str]]) -> set[str]:
    """The host names a large member names, and a check that it is text (first pass). Hosts of NCCL
    prefixes are read from the distinct line heads (whatever wraps them: `0: `, `[1,0]<stdout>:`).
    A log repeats its lines: each block's distinct lines not seen before (set operations, in C) are
    the only text the patterns run over."""
    found: set[str] = set()
    heads: set[str] = set()
    seen: set[str] = set()
    for block in _blocks(path):
        new = set(block.split("\n"))
        new.difference_update(seen)
        if len(seen) + len(new) > CACHE_ENTRIES:
            seen.clear()
        seen.update(new)
        text = "\n" + "\n".join(new) + "\n"
        heads.update(_HEAD_RE.findall(text))
        if len(heads) > CACHE_ENTRIES:
            found.update(m[1] for h in heads for m in _HEAD_HOST_RE.finditer(h))
            heads.clear()
        if "Rank" in text:
            found.update(_DEVICE_HOST_RE.findall(text))
        if "@" in text:
            found.update(prompt_hosts(text))
    found.update(m[1] for h in heads for m in _HEAD_HOST_RE.finditer(h))
    return found


class LineCache:
    """Redacted prefixes and messages, looked up; the Redactor's passes run once per distinct one."""

    def __init__(self, redact: Callable[[str], str]):
        self._redact = redact
        self._prefix: dict[str, Optional[str]] = {}
        self._rest: dict[str, str] = {}
        self._parts: dict[str, str] = {}

    def _cached(self, table: dict, key: str, make: Callable[[str], Optional[str]]):
        if len(table) >= CACHE_ENTRIES:
            table.clear()
        value = table[key] = make(key)
        return value

    def _prefix_of(self, head: str) -> Optional[str]:
        """The redacted prefix, None when `head` is no NCCL prefix. A prefix differs from the next by
        its pid and tid, which are numbers: its wrapper and host are redacted (and cached) apart, so
        the Redactor's passes run per distinct host and wrapper rather than per distinct prefix."""
        bare = _BARE_PREFIX_RE.match(head)  # the common case, one cheap match
        if bare is not None:
            return self._part(bare[1]) + bare[2]
        if not _NCCL_PREFIX_RE.match(head):
            return None
        parts = _PREFIX_PARTS_RE.match(head)
        if parts is None:
            return self._redact(head)
        wrapper, host, numbers = parts.groups()
        return self._part(wrapper) + self._part(host) + numbers

    def _part(self, text: str) -> str:
        if not text:
            return text
        got = self._parts.get(text)
        if got is None:
            got = self._cached(self._parts, text, self._redact)
        return got

    def line(self, line: str) -> str:
        rest = self._rest
        i = line.find("] ")
        while 0 < i < 512:  # the prefix may be wrapped: "[155] host:pid:tid [3] "
            head = line[: i + 2]
            red = self._prefix.get(head, "")
            if red == "":
                red = self._cached(self._prefix, head, self._prefix_of)
            if red is not None:
                body = line[i + 2:]
                out = rest.get(body)
                return red + (out if out is not None else self._cached(rest, body, self._redact))
            i = line.find("] ", i + 2)
        out = rest.get(line)
        return out if out is not None else self._cached(rest, line, self._redact)


def redact_file(src: str, dst: str, redact: Callable[[str], str]) -> None:
    """Write the redacted copy of a large text member (second pass), a block of lines at a time.

    Whole lines are looked up first: a block's distinct lines missing from the table, in order, are redacted through the prefix and message caches, then the block is written
    as a join over the table (in C as well), so the Python work is per distinct new line, not per line."""
    cache = LineCache(redact)
    line_of = cache.line
    table: dict[str, str] = {}
    with open(dst, "wb") as out:
        for block in _blocks(src):
            lines = block.split("\n")
            # the block's distinct lines in order (tokens are numbered in order of first appearance)
            missing = [line for line in dict.fromkeys(lines) if line not in table]
            if len(table) + len(missing) > CACHE_ENTRIES:
                table.clear()
                missing = list(dict.fromkeys(lines))
            for line in missing:
                red = line_of(line + "\n")  # redacted as the line it is, newline included
                table[line] = red[:-1] if red.endswith("\n") else red
            out.write("\n".join(map(table.__getitem__, lines)).encode("utf-8"))
