"""An nvidia-bug-report read in bytes: its sections found without decoding what no source reads.

The report's bytes come a chunk of whole lines at a time (`chunks`: each line cut at MAX_LINE bytes,
as the line reader cuts it); the separator lines are found by `bytes.find` of a run of underscores
(`find_separator`), and the line numbers by `bytes.count` of the newlines between the places that
need one. A section no source reads (base64 dumps, X logs, `lspci -xxx`...) costs only the search
for the next separator. Only the few lines after a separator (the title, its "*** ls:" line, the
blank lines before the body) are decoded one at a time (`Splitter`).

A section's body goes to a sink as byte ranges of whole lines:

- the kernel log (`KernelSink`): a block of bytes at a time (the first FIRST_BLOCK_CHARS, then each
  twice the last up to BLOCK_CHARS, as a plain kernel log's chunks are cut), each block decoded once
  and given to the kernel log's block pass with its digest (_kernel_log_block.feed, as
  _kernel_log_par reads a file): no line-by-line pass, no join of lines. The pass starts at the
  section's place in the file (kernel_log._Log origin: its line numbers are the file's, no shift
  after) and, past the report's first R.KEEP_WHOLE such sections, keeps R.KEEP_LATER entries of each
  list of repeated events (its cap; the section's note says so). A section whose first line is the
  probe's JSON, a `#@` header or holds a carriage return is read by the kernel log's line reader
  (`bug_report._Streamed`), which handles those, its result then cut and shifted;
- a worker (`_bug_report_par.Far`): nothing is done with the bytes here; at the section's end the
  worker is given its byte range and reads it from the file itself (`parse_range`);
- any other source (`TextSink`): the body decoded and held, up to MAX_SECTION_BYTES characters.

The sections and their results are those of the line path (tests/load/bug_report_lines.py: every
line decoded and split), to the bit; tests/load/test_bug_report_bytes.py compares them.
"""

from __future__ import annotations

import re
import zlib
from typing import Iterator, Optional

from ..errors import InputError

_UNDERSCORES = b"_" * 20
_PROBE = 8192  # files.BINARY_PROBE_BYTES: the first block holds at least 4 bytes for each of its characters
# ASCII blank lines (no character of them non-blank to str.strip): skipped at once before a title / body
_BLANKS = re.compile(rb"(?:[ \t\r\f\v\x1c-\x1f]*\n)+")


def chunks(R, stream, where: str, compressed: Optional[int], limit: Optional[int] = None, capped: bool = True
           ) -> Iterator[tuple[bytes, int]]:
    """(data, offset) of a binary stream: `data` whole lines (each ending at b"\\n" but the stream's
    last), a line longer than MAX_LINE bytes cut there (the rest of it skipped); `offset` the stream
    offset of data[0] (data[i] is at offset + i but inside a cut line). At most `limit` bytes are read.
    `capped`: the count of bytes read is checked after each read (bug_report._too_big). `R`: the
    bug_report module (its caps, which tests set)."""
    total, carry, carry_at, skipping = 0, b"", 0, False
    max_line, size = R.MAX_LINE, R.CHUNK
    while True:
        want = size if limit is None else min(size, limit - total)
        try:
            block = stream.read(want) if want > 0 else b""
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(where, f"a gzip-compressed nvidia-bug-report that cannot be read whole ({exc})") from None
        if not block:
            break
        at = total
        total += len(block)
        if capped:
            why = R._too_big(where, total, compressed)
            if why:
                raise InputError(where, why)
        if skipping:  # the rest of a cut line: up to its end
            nl = block.find(b"\n")
            if nl < 0:
                continue
            yield carry + b"\n", carry_at
            block, at, carry, skipping = block[nl + 1:], at + nl + 1, b"", False
            if not block:
                carry_at = at
                continue
        last = block.rfind(b"\n")
        if 0 <= last and len(carry) + last < max_line and len(block) - last <= max_line:
            # the usual case (no line over MAX_LINE): the block copied once with the carry, or not at all
            if carry or last < len(block) - 1:
                yield b"".join((carry, memoryview(block)[:last + 1])), carry_at if carry else at
            else:
                yield block, at
            carry, carry_at = block[last + 1:], at + last + 1
            continue
        data = carry + block if carry else block
        data_at = carry_at if carry else at
        first = data.find(b"\n")
        if first > max_line:  # only the first line can be longer (a CHUNK is less than MAX_LINE)
            yield data[:max_line] + b"\n", data_at
            data, data_at = data[first + 1:], data_at + first + 1
        cut = data.rfind(b"\n")
        if cut >= 0:
            yield data[:cut + 1], data_at
        carry, carry_at = data[cut + 1:], data_at + cut + 1
        if len(carry) > max_line:
            carry, skipping = carry[:max_line], True
    if carry:
        yield carry, carry_at


# a separator line (bug_report.SEPARATOR_RE, on the line decoded as the line path decodes it)
SEPARATOR_RE = re.compile(r"^_{20,}\s*$")


def find_separator(data: bytes, pos: int, end: int = -1) -> tuple[int, int]:
    """(start, end) of the first separator line of `data` at or after `pos` (a line start), before
    `end` (its length by default); (-1, -1) when there is none."""
    end = len(data) if end < 0 else end
    k = data.find(_UNDERSCORES, pos, end)
    while k >= 0:
        stop = data.find(b"\n", k, end)
        stop = end if stop < 0 else stop
        # the first run of 20 underscores of a line that starts with one is at its start
        if (k == 0 or data[k - 1] == 10) and SEPARATOR_RE.match(data[k:stop].decode("utf-8", "replace")):
            return k, stop
        k = data.find(_UNDERSCORES, stop, end)
    return -1, -1


class Splitter:
    """The section splitter of bug_report._Splitter over chunks of bytes: `chunk(data, offset, line)`
    for each chunk of whole lines (`line`: the file line number of data[0]; `offset`: its file
    offset), then `finish(end offset)`; each returns the sections ended, in order (R.Section). `R`:
    the bug_report module (its caps, Section, source_of, _Streamed)."""

    def __init__(self, R, where: str, stream=frozenset(), remote=None):
        self.R, self.where, self.stream, self.remote = R, where, stream, remote
        self.commands = R._command_sources()
        self.phase = "before"  # before, title, ls, lead, body, skip
        self.title, self.source, self.start = "", None, 0
        self.sink = None
        self.count = 0
        self.line = 1  # the line number of the next chunk's first byte (set by `chunk`)
        self.kernels = 0  # streamed sections so far (past R.KEEP_WHOLE their results keep less)
        self.note: Optional[str] = None

    def chunk(self, data: bytes, offset: int, line: int) -> list:
        out: list = []
        pos, n, at, no = 0, len(data), 0, line  # `no`: the line number of data[at]
        view = memoryview(data)
        while pos < n:
            if self.phase in ("title", "lead"):
                m = _BLANKS.match(data, pos)
                if m:
                    pos = m.end()
                    continue
            if self.phase in ("title", "ls", "lead"):
                stop = data.find(b"\n", pos)
                stop = n if stop < 0 else stop
                no += data.count(b"\n", at, pos)
                at = pos
                k, _ = find_separator(data, pos, stop)
                if k == pos:
                    self._separator(out)
                elif self._head_line(data[pos:stop].decode("utf-8", "replace"), no, offset + pos):
                    continue  # the body starts at this line
                pos = stop + 1
                continue
            k, stop = find_separator(data, pos)
            counted = False  # the body's line ends counted by its sink (KernelSink), not here
            if self.phase == "body":
                self.sink.add(view[pos:k if k >= 0 else n])  # (not copied: most sinks join or skip it)
                counted = self.sink.counts
            if k < 0:
                at = n if counted else at  # `no` stays the body's first line until its sink says
                break
            if counted:
                self.sink.end(offset + k)
                no, at = self.start + self.sink.newlines, k
            else:
                no += data.count(b"\n", at, k)
                at = k
                if self.phase == "body":
                    self.sink.end(offset + k)
            self._separator(out)
            pos = stop + 1
        # the line number after the chunk (each byte counted once; in a body its sink counts, that
        # of its first line until it ends)
        self.line = no + data.count(b"\n", at, n)
        return out

    def finish(self, offset: int) -> list:
        out: list = []
        if self.phase == "body":
            self.sink.end(offset)
        self._ended(out)
        return out

    def _separator(self, out: list) -> None:
        self._ended(out)
        self.count += 1
        if self.count > self.R.MAX_SECTIONS:
            raise InputError(self.where, f"an nvidia-bug-report of more than {self.R.MAX_SECTIONS} sections "
                             "(a real one has a few hundred): refused")
        self.phase, self.title, self.source, self.sink, self.note = "title", "", None, None, None

    def _ended(self, out: list) -> None:
        Section = self.R.Section
        if self.phase == "body":
            sink, self.sink = self.sink, None
            title = self.title[:120]
            if sink.streamed:  # its result holds the file's line numbers (KernelSink's origin, a worker's)
                out.append(Section(title, self.source, self.start, None, parsed=sink.result(), moved=True,
                                   note=self.note))
            elif sink.big:
                out.append(Section(title, self.source, self.start, None,
                                   f"a section of more than {self.R.MAX_SECTION_BYTES >> 20} MiB: not read"))
            else:
                out.append(Section(title, self.source, self.start, sink.text()))
        self.phase = "before" if self.phase == "before" else "skip"

    def _head_line(self, line: str, no: int, offset: int) -> bool:
        """One line after a separator (title, ls, lead: bug_report._Splitter.feed); True when the body
        starts at it."""
        if self.phase == "title":
            if line.strip():
                self.title = line.strip()
                self.source = self.R.source_of(self.title, self.commands)
                self.phase = "skip" if self.source is None else "ls"
            return False
        if self.phase == "ls":
            self.phase = "lead"
            if line.startswith("*** ls:"):
                return False
        if not line.strip():
            return False
        self.phase, self.start = "body", no
        if self.source in self.stream:
            keep = self._keep()
            far = self.remote.start(offset, no, self.source, keep) if self.remote is not None else None
            self.sink = far or KernelSink(self.R, self.source, keep, no - 1)
        else:
            self.sink = TextSink(self.R.MAX_SECTION_BYTES)
        return True


    def _keep(self) -> Optional[int]:
        """How many entries of each list the streamed section starting now keeps (None: all), its
        note set (kernel_log.cut_lists: past the first R.KEEP_WHOLE such sections)."""
        from ..parsers import kernel_log as K

        self.kernels += 1
        if self.kernels <= self.R.KEEP_WHOLE:
            return None
        self.note = K.lists_cut_note(self.kernels, self.R.KEEP_WHOLE, self.R.KEEP_LATER)
        return self.R.KEEP_LATER


def read(R, stream, where: str, compressed: Optional[int], stream_sources=frozenset(), remote=None,
         capped: bool = True) -> Iterator:
    """The sections of a report's binary stream that a source reads, in order (R.Section; `R`: the
    bug_report module). `capped`: the report is refused past R.MAX_BYTES (chunks)."""
    split = Splitter(R, where, stream_sources, remote)
    end = 0
    for data, offset in chunks(R, stream, where, compressed, capped=capped):
        yield from split.chunk(data, offset, split.line)  # which sets split.line
        end = offset + len(data)
    yield from split.finish(end)


class TextSink:
    """A section's body held as text (a source that reads it whole), up to MAX_SECTION_BYTES
    characters counted as the line path counts them (each line and its end)."""

    streamed = False
    counts = False  # the line ends of its body: counted by the splitter

    def __init__(self, cap: int):
        self.parts: list = []
        self.size, self.cap = 0, cap
        self.big = False

    def add(self, data: bytes) -> None:
        if self.big or not data:
            return
        text = str(data, "utf-8", "replace")
        self.size += len(text) + (0 if text.endswith("\n") else 1)
        if self.size > self.cap:
            self.parts, self.big = [], True
            return
        self.parts.append(text)

    def end(self, offset: int) -> None:
        pass

    def text(self) -> str:
        text = "".join(self.parts)
        self.parts = []
        return text[:-1] if text.endswith("\n") else text


class KernelSink:
    """A kernel-log section read a block of bytes at a time by the kernel log's block pass (see the
    module's docstring): `add` whole lines of its body, `end`, then `result()` (the parser's result or
    the ParseError it gave: bug_report._Streamed.result)."""

    streamed = True
    big = False
    counts = True  # `newlines`: the line ends of its body ("\n"), known once it ended

    def __init__(self, R, source: str = "kernel_log", keep: Optional[int] = None, origin: int = 0):
        from ..parsers import _kernel_log_block as B

        self.R, self.source, self.keep = R, source, keep  # keep: kernel_log.cut_lists of the result
        self.origin = origin  # the file line number before the body's first: the result's are the file's
        self.parts: list = []
        self.size = 0
        self.step = B.FIRST_BLOCK_CHARS
        self.mode: Optional[str] = None  # None until the first block: "fast", "lines" (_Streamed), "binary"
        self.state = None
        self.lines = None  # the _Streamed reader of the "lines" mode
        self.done = None
        self.newlines = 0  # the "\n" of the bytes read so far (from the blocks' lines where split)

    def add(self, data: bytes) -> None:
        if not data:
            return
        if self.size >= self.step and (self.mode is not None or self.size >= 4 * _PROBE):
            self._block(False)  # the first block holds the characters the binary probe looks at
        self.parts.append(data)
        self.size += len(data)

    def end(self, offset: int = 0) -> None:
        if self.parts:
            self._block(True)

    def result(self):
        from ..parsers import ParseError

        from ..parsers import kernel_log as K

        if self.mode == "binary":
            return ParseError("binary data (NUL bytes), expected the text output of a tool")
        if self.mode == "lines":
            got = self.R.shift_lines(self.lines.result(), self.origin)
        else:
            try:
                got = K._finish(self.state if self.state is not None else K._Log(origin=self.origin))
            except (ParseError, RecursionError) as exc:
                return exc
        if self.keep is not None and isinstance(got, K.KernelLog):
            got = K.cut_lists(got, self.keep)
        return got

    def _block(self, final: bool) -> None:
        from ..parsers import _kernel_log_block as B

        data = b"".join(self.parts) if len(self.parts) > 1 else self.parts[0]
        self.parts, self.size = [], 0
        self.step = min(self.step * 2, B.BLOCK_CHARS)
        text = str(data, "utf-8", "replace")  # (a "\n" byte is a "\n" character, bad bytes or not)
        if self.mode is None:
            self._decide(text)
        if self.mode != "fast":
            self.newlines += text.count("\n")
        if self.mode == "binary":
            return
        if self.mode == "lines":
            self.lines.add_lines(text[:-1].split("\n") if text.endswith("\n") else text.split("\n"))
            return
        self._feed(text, final)

    def _decide(self, text: str) -> None:
        from ..parsers import kernel_log as K
        from ..parsers.base import HEADER_PREFIX
        from .files import BINARY_PROBE_BYTES

        if "\x00" in text[:BINARY_PROBE_BYTES]:
            self.mode = "binary"
            return
        first = text.split("\n", 1)[0]
        if "\r" in first or first.startswith(HEADER_PREFIX) or first.lstrip()[:1] == "{":
            self.mode, self.lines = "lines", self.R._Streamed(self.source)
            return
        # lists that fill at `keep` entries (fewer lines read in order); the file's line numbers
        self.mode, self.state = "fast", K._Log(self.keep, self.origin)

    def _feed(self, text: str, final: bool) -> None:
        """One block of whole lines to the kernel log's block pass; `final`: the section's last (its
        last line, when empty, is none: _kernel_log_block.Reader.result)."""
        from ..parsers import _kernel_log_block as B
        from ..parsers import kernel_log as K

        body = text[:-1] if text.endswith("\n") else text
        if "\r" in body:
            self.newlines += text.count("\n")
            lines = B._LINE_END.split(body)
            body = "\n".join(lines)
        else:
            lines = body.split("\n")
            self.newlines += len(lines) - (0 if text.endswith("\n") else 1)
        if final and lines and lines[-1] == "":
            lines.pop()
            body = body[:-1]
        if not lines:
            return
        B.feed(self.state, lines, K._line, B.digest(body))


def parse_range(R, path: str, start: int, end: int, source: str, offset: int = 0, keep: Optional[int] = None):
    """In a worker (or here when it failed): the result of the kernel-log section whose body is the
    bytes [start, end) of the report at `path` (KernelSink, its lists cut to `keep` entries), its line
    numbers moved by `offset` (the file's). Raises InputError for a file that can no longer be read."""
    sink = KernelSink(R, source, keep, offset)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise InputError(path, f"the nvidia-bug-report can no longer be read ({exc.strerror})") from None
    with fh:
        fh.seek(start)
        for data, _ in chunks(R, fh, path, None, end - start, capped=False):
            sink.add(data)
    sink.end()
    return sink.result()
