"""Reading a file the user names (or `-` for stdin), with errors a person can act on.

Nothing here modifies the file. Text is decoded as UTF-8 with undecodable bytes replaced, so a
stray Latin-1 byte in a log does not stop the analysis; NUL bytes in the first block mean the file
is binary and is refused.
"""

from __future__ import annotations

import io
import os
import re
import stat
import sys
from dataclasses import dataclass
from typing import Iterator, Optional

from ..bundle.shown import PATH_SHOWN, shown
from ..errors import InputError
from ..scan import memory

BINARY_PROBE_BYTES = 8192
LINE_LIMIT = 1 << 20  # characters of a line handed to a line parser; the rest of a longer line is skipped
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass
class OpenedText:
    """An open text input: its name for messages, its first block (for detection), the lines."""

    name: str
    head: str
    handle: io.TextIOBase

    def lines(self) -> Iterator[str]:
        """All lines, from the beginning, with their terminators; a line longer than LINE_LIMIT is
        cut there (no tool's line is that long: a log with a giant line is read in bounded pieces)."""
        self.handle.seek(0) if self.handle.seekable() else None
        return bounded_lines(self.handle, LINE_LIMIT)

    def binary(self):
        """The underlying binary file from its beginning, or None (stdin is held as text)."""
        raw = getattr(self.handle, "buffer", None)
        if raw is None or not raw.seekable():
            return None
        raw.seek(0)
        return raw

    def read(self) -> str:
        self.handle.seek(0) if self.handle.seekable() else None
        return self.handle.read()

    def close(self) -> None:
        if self.handle is not sys.stdin:
            self.handle.close()


def bounded_lines(handle, limit: int = LINE_LIMIT) -> Iterator[str]:
    """The lines of a text handle as iterating it gives them, each at most `limit` characters: of a
    longer line the first `limit` are given and the rest is read in pieces of `limit` and dropped."""
    readline = handle.readline
    while True:
        line = readline(limit)
        if not line:
            return
        yield line
        while len(line) == limit and not line.endswith(("\n", "\r")):  # cut: skip to its end
            line = readline(limit)


def open_text(path: str) -> OpenedText:
    """Open `path` for reading as text, refusing what is not a readable, non-empty text file: a
    folder, and anything but a regular file (a FIFO, a device, a socket: they could block forever
    or never end), checked before opening and again on the descriptor, which is opened non-blocking
    so that a FIFO put there in between cannot block either."""
    if path == "-":  # spooled to an unnamed temporary file: memory stays flat, and it reads like a file
        raw, name = _spool_stdin(), "<stdin>"
    else:
        raw, name = open_binary(path, "parse takes one tool output"), shown(path, PATH_SHOWN)
    try:
        first = raw.read(BINARY_PROBE_BYTES)
    except OSError as exc:
        raw.close()
        raise InputError(name, f"cannot read: {exc.strerror or exc}") from None
    try:
        _refuse_binary_or_empty(name, first)
    except InputError:
        raw.close()
        raise
    raw.seek(0)
    handle = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
    head = handle.read(256 * 1024)
    return OpenedText(name, head, handle)


def _spool_stdin(chunk: int = 1 << 20):
    """Standard input copied, a block at a time, into an unnamed temporary file (deleted when
    closed), rewound: what stdin holds may be larger than memory."""
    import tempfile

    spool = tempfile.TemporaryFile()
    src = sys.stdin.buffer
    while True:
        block = src.read(chunk)
        if not block:
            break
        spool.write(block)
    spool.seek(0)
    return spool


def open_binary(path: str, folder_hint: str = "expected a file") -> io.BufferedReader:
    """`path` opened for reading bytes, if it is a regular file (links followed: the user named
    it); InputError otherwise, in one line. Never blocks on a FIFO or a device: the kind is checked
    by stat first, then the file is opened with O_NONBLOCK and checked again by fstat."""
    where = shown(path, PATH_SHOWN)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(where, "no such file") from None
    except PermissionError:
        raise InputError(where, "permission denied") from None
    except OSError as exc:
        raise InputError(where, exc.strerror or str(exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(where, f"is a directory, expected a file ({folder_hint})")
    _refuse_special(where, st.st_mode)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except PermissionError:
        raise InputError(where, "permission denied") from None
    except OSError as exc:
        raise InputError(where, exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        _refuse_special(where, info.st_mode)
    except InputError:
        os.close(fd)
        raise
    memory.big_input(info.st_size)  # a big file: malloc keeps its chunks' freed blocks for the next
    return os.fdopen(fd, "rb")


def special_kind(mode: int) -> Optional[str]:
    """What a file that is not a regular file or a folder is ("a named pipe (FIFO)", "a socket"...),
    or None for a regular file or a folder."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse_special(where: str, mode: int) -> None:
    kind = special_kind(mode)
    if kind is not None:
        raise InputError(where, f"{kind}, not a regular file; save the tool's output to a file, or pipe it "
                         "to `-` (standard input)")


def open_bytes(name: str, data: bytes) -> OpenedText:
    """An input already in memory (a live command's output), checked as open_text checks a file."""
    return _from_bytes(name, data)


class _HeldText(OpenedText):
    """An input already in memory as text (a section of an nvidia-bug-report): read() gives the text
    itself and lines() walks it, so no copy of it is made (a StringIO would hold it again, at up to
    four bytes a character)."""

    def __init__(self, name: str, text: str):
        super().__init__(name, text[: 256 * 1024], None)
        self._text = text

    def lines(self) -> Iterator[str]:
        text, limit, pos, end = self._text, LINE_LIMIT, 0, len(self._text)
        while pos < end:
            m = _LINE_END.search(text, pos, min(end, pos + limit + 2))  # up to `limit` characters and its end
            if m is not None and m.start() > pos + limit:
                m = None
            stop = m.end() if m else min(end, pos + limit)
            yield text[pos:stop]
            if m is None and stop < end:  # a line longer than LINE_LIMIT: the rest of it is skipped
                m = _LINE_END.search(text, stop)
                stop = m.end() if m else end
            pos = stop

    def binary(self):
        return None

    def read(self) -> str:
        return self._text

    def close(self) -> None:
        self._text = ""


def open_str(name: str, text: str) -> OpenedText:
    """An input already in memory as text, checked as open_text checks a file, read without a copy."""
    _refuse_binary_or_empty(name, text[:BINARY_PROBE_BYTES].encode("utf-8", "surrogatepass"))
    return _HeldText(name, text)


def _from_bytes(name: str, data: bytes) -> OpenedText:
    _refuse_binary_or_empty(name, data[:BINARY_PROBE_BYTES])
    text = data.decode("utf-8", errors="replace")
    return OpenedText(name, text[: 256 * 1024], io.StringIO(text, newline=""))


def _refuse_binary_or_empty(name: str, first: bytes) -> None:
    if not first:
        raise InputError(name, "empty file, expected the text output of a tool")
    if first[:2] == b"\x1f\x8b":  # before the NUL test: a gzip header holds NUL bytes
        raise InputError(name, "gzip data; decompress it first (a bundle goes to `check --from`; "
                         "an nvidia-bug-report.log.gz is read as it is)")
    if b"\x00" in first:
        raise InputError(name, "binary data (NUL bytes), expected the text output of a tool")


def parse_opened_all(parsers, opened: OpenedText) -> list:
    """Each parser's result over an opened input, or the exception it raised (ParseError,
    RecursionError), in order. A plain file that every parser reads in chunks is read once for all of
    them (topodiag/scan/onepass.py); otherwise each parser reads it by `parse_opened`."""
    from ..parsers.base import ParseError

    binary = opened.binary() if parsers else None
    if binary is not None:
        from ..scan import onepass

        if onepass.can_share(parsers):
            out = onepass.parse_together(parsers, binary)
            if out is not None:
                return out
    results: list = []
    for parser in parsers:
        try:
            results.append(parse_opened(parser, opened))
        except (ParseError, RecursionError) as exc:
            results.append(exc)
    return results


def parse_opened(parser, opened: OpenedText):
    """Run one parser module over an opened input, by the cheapest path it offers: the bytes engine
    for a plain file (a file with a `#@` header, i.e. a fixture, takes the line path, which blanks
    the header), else the streaming line parser, else the whole text. Raises what the parser raises."""
    from ..parsers.base import HEADER_PREFIX, blank_provenance_header, blank_provenance_header_lines

    use_binary = hasattr(parser, "parse_binary") and not opened.head.startswith(HEADER_PREFIX)
    binary = opened.binary() if use_binary else None
    if binary is not None:
        from ..scan import parallel

        if parallel.worth_it(parser, binary):
            return parallel.parse_in_two(parser, binary)
        return parser.parse_binary(binary)
    if hasattr(parser, "parse_lines"):
        return parser.parse_lines(blank_provenance_header_lines(opened.lines()))
    return parser.parse(blank_provenance_header(opened.read()))
