"""The line path of an nvidia-bug-report, kept for the tests: the reference the reader in bytes
(topodiag/load/_bug_report_bytes.py) is compared with, and the way the tests give a report as lines.

`line_sections` finds the sections line by line over every line decoded and split, as the loader did
before it read reports in bytes (production no longer runs it); `sections` gives lines to the byte
path the loader runs (`_bug_report_bytes.read` over the lines joined), so that the tests written with
lines test what a user gets; `lines_of` is the byte path's cut of a stream into lines."""

from __future__ import annotations

import io
import zlib
from itertools import islice
from typing import Iterable, Iterator, Optional

from topodiag.errors import InputError
from topodiag.load import _bug_report_bytes as BB
from topodiag.load import bug_report as R
from topodiag.load.bug_report import MAX_SECTIONS, SEPARATOR_RE, Section, _Streamed, _command_sources, source_of
from topodiag.parsers.base import HEADER_END, HEADER_PREFIX


def sections(lines: Iterable[str], where: str = "", stream=frozenset()) -> Iterator[Section]:
    """The sections the loader finds in a report given as its lines (no terminators: each ends with a
    newline in the bytes read, the last one too), read in bytes."""
    data = "".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape")
    return BB.read(R, io.BytesIO(data), where, None, stream, capped=False)


def lines_of(stream) -> list[str]:
    """The lines of a stream as the byte path cuts them (a line past MAX_LINE bytes cut there)."""
    out: list[str] = []
    for data, _ in BB.chunks(R, stream, "x", None):
        text = data.decode("utf-8", "replace")
        out += (text[:-1] if text.endswith("\n") else text).split("\n")
    return out


def report_blocks(report) -> Iterator[list]:
    """The report's lines, a list of them for each CHUNK read (a fixture's provenance header blanked)."""
    header = True
    for block in _byte_blocks(report._stream, report.name, report._compressed):
        k = 0
        while header and k < len(block):
            if not block[k].startswith(HEADER_PREFIX):  # a fixture's provenance header: blank lines
                header = False
                break
            header = block[k].strip() != HEADER_END
            block[k] = ""
            k += 1
        yield block


def line_sections(lines: Iterable[str], where: str = "", stream=frozenset()) -> Iterator[Section]:
    """`sections` by the line path."""
    if isinstance(lines, list):
        return sections_of_blocks(iter((lines,)), where, stream)
    it = iter(lines)
    return sections_of_blocks(iter(lambda: list(islice(it, 4096)), []), where, stream)


def _byte_blocks(stream, where: str, compressed: Optional[int]) -> Iterator[list]:
    """The lines of a binary stream, a list of them for each CHUNK read: each line cut at R.MAX_LINE
    bytes, then decoded as UTF-8 with bad bytes replaced (the bytes between two line ends decoded at
    once); the count of bytes read is checked after each chunk (_too_big)."""
    total, buf = 0, b""
    while True:
        try:
            block = stream.read(R.CHUNK)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(where, f"a gzip-compressed nvidia-bug-report that cannot be read whole ({exc})") from None
        if not block:
            break
        total += len(block)
        why = R._too_big(where, total, compressed)
        if why:
            raise InputError(where, why)
        data = buf + block if buf else block
        cut = data.rfind(b"\n")
        if cut < 0:
            buf = data[:R.MAX_LINE]
            continue
        buf = data[cut + 1: cut + 1 + R.MAX_LINE]
        first = data.find(b"\n")
        if first > R.MAX_LINE:  # only the first line can be longer (CHUNK < R.MAX_LINE): cut there
            head = [data[:R.MAX_LINE].decode("utf-8", "replace")]
            yield head + (data[first + 1:cut].decode("utf-8", "replace").split("\n") if first < cut else [])
        else:
            yield data[:cut].decode("utf-8", "replace").split("\n")
    if buf:
        yield [buf.decode("utf-8", "replace")]


class _Splitter:
    """State of the section splitter: the section being read and its lines (or, for a source in
    `stream`, the reader its lines are pushed to: see _Streamed)."""

    def __init__(self, commands: list[tuple[str, str]], stream=frozenset()):
        self.commands = commands
        self.stream = stream
        self.phase = "before"  # before, title, ls, lead, body, big, skip
        self.title, self.source, self.start, self.size = "", None, 0, 0
        self.body: list[str] = []
        self.reader: Optional[_Streamed] = None

    def begin(self) -> None:
        self.phase, self.title, self.source, self.body, self.size = "title", "", None, [], 0
        self.reader = None

    def end(self) -> Optional[Section]:
        """The section just ended, if a source reads it."""
        if self.phase == "body" and self.reader is not None:
            parsed, self.reader = self.reader.result(), None
            return Section(self.title[:120], self.source, self.start, None, parsed=parsed)
        if self.phase == "body":
            text, self.body = "\n".join(self.body), []  # the lines let go before the section is parsed
            return Section(self.title[:120], self.source, self.start, text)
        if self.phase == "big":
            return Section(self.title[:120], self.source, self.start, None,
                           f"a section of more than {R.MAX_SECTION_BYTES >> 20} MiB: not read")
        return None

    def feed_lines(self, no: int, lines: list) -> None:
        """`feed` for each of `lines` (the first is line `no`): the lines of a section's body at once."""
        k = 0
        while k < len(lines) and self.phase in ("title", "ls", "lead"):
            self.feed(no + k, lines[k])
            k += 1
        if k == len(lines) or self.phase in ("before", "skip", "big"):
            return
        rest = lines[k:] if k else lines
        if self.reader is not None:
            self.reader.add_lines(rest)
            return
        self.body += rest
        self.size += sum(map(len, rest)) + len(rest)
        if self.size > R.MAX_SECTION_BYTES:
            self.phase, self.body = "big", []

    def feed(self, no: int, line: str) -> None:
        if self.phase in ("before", "skip", "big"):
            return
        if self.phase == "title":
            if line.strip():
                self.title = line.strip()
                self.source = source_of(self.title, self.commands)
                self.phase = "skip" if self.source is None else "ls"
            return
        if self.phase == "ls":
            self.phase = "lead"
            if line.startswith("*** ls:"):
                return
        if self.phase == "lead":
            if not line.strip():
                return
            self.phase, self.start = "body", no
            if self.source in self.stream:
                self.reader = _Streamed(self.source)
        if self.reader is not None:
            self.reader.add(line)
            return
        self.body.append(line)
        self.size += len(line) + 1
        if self.size > R.MAX_SECTION_BYTES:
            self.phase, self.body = "big", []


_UNDERSCORES = "_" * 20


def sections_of_blocks(blocks: Iterable[list], where: str = "", stream=frozenset()) -> Iterator[Section]:
    """`sections` over the report's lines a list at a time (Report.blocks): the separator lines are
    found by a substring search over each list's text, the lines between them handed on at once."""
    split = _Splitter(_command_sources(), stream)
    count = base = 0
    for block in blocks:
        text = "\n".join(block)
        i = line_of = at = 0  # the next line to feed; the line of text position `at`
        k = text.find(_UNDERSCORES)
        while k >= 0:
            start = text.rfind("\n", 0, k) + 1
            end = text.find("\n", k)
            end = len(text) if end < 0 else end
            line_of += text.count("\n", at, start)
            at = start
            if SEPARATOR_RE.match(block[line_of]):
                split.feed_lines(base + i + 1, block[i:line_of])
                done = split.end()
                if done is not None:
                    yield done
                count += 1
                if count > MAX_SECTIONS:
                    raise InputError(where, f"an nvidia-bug-report of more than {MAX_SECTIONS} sections "
                                     "(a real one has a few hundred): refused")
                split.begin()
                i = line_of + 1
            k = text.find(_UNDERSCORES, end)
        split.feed_lines(base + i + 1, block[i:])
        base += len(block)
    done = split.end()
    if done is not None:
        yield done
