"""`nvidia-bug-report.log(.gz)` as an input of `check --from`: one file, many tools' outputs.

NVIDIA's nvidia-bug-report.sh writes a log of sections, each opened by a line of underscores and a
blank line, then a title: a file it copied ("*** /proc/cmdline", followed by an "*** ls: ..." line
of the file's metadata), or the command it ran ("/usr/bin/nvidia-smi --query", "/sbin/lspci -d
"10de:*" -v -xxx", "dmesg:"):

    ____________________________________________

    *** /proc/cmdline
    *** ls: -r--r--r-- 1 root root 0 2022-10-27 20:48:36.3 -0300 /proc/cmdline
    BOOT_IMAGE=/vmlinuz-6.0.1 root=UUID=... intel_iommu=on

    ____________________________________________

    dmesg:

    [    0.000000] Linux version 6.0.1-arch2-1 ...

A section is read when its title names something a source of topodiag reads: the command a
parser's INFO runs (`argv`: "nvidia-smi topo -m", "ibstat", "lspci -vvv"...), the kernel log
("dmesg:", the "Scanning kernel log files for NVIDIA kernel messages" excerpt, a journalctl -k or
/var/log/messages copy), or a file of TITLED_FILES. Each section is parsed by that source's parser
on its own text, and what the parser says of line numbers (its results' `line_no` fields, a
ParseError's line) is moved by the section's offset, so they are the whole file's; the section
enters the report as "<file> [<title>]"; the other sections (X logs, dmidecode, base64 dumps...)
are skipped without being kept.

The report is read as a stream of bytes: (gzip stream ->) chunks of whole lines -> the separators
found in bytes (topodiag/load/_bug_report_bytes.py: a section no source reads costs only the search
for the next separator) -> one section at a time to its parser: the kernel log a block of bytes at a
time to its block pass, numbered from its place in the file (a big regular file's by workers:
_bug_report_par.py), another source's text held (at most MAX_SECTION_BYTES; a larger one is not
read, and says so). What is kept of the kernel-log sections is bounded past KEEP_WHOLE of them, so
memory does not grow with the file. `sections` (over lines) is the same splitter on decoded lines,
the reference the byte path is tested against. A gzip report, or one read from stdin, is refused
past MAX_BYTES decompressed (a regular file is read whatever its size), and a gzip one past
RATIO_FLOOR more than MAX_RATIO times its compressed size, as it is read; so is one of more than
MAX_SECTIONS sections (a real report has a few hundred). A line longer than MAX_LINE is cut there.
The report's "uname:" line names the host, so
a report of another host beside it is caught as other inputs are.
"""

from __future__ import annotations

import dataclasses
import gzip
import os
import re
import sys
import zlib
from dataclasses import dataclass
from typing import Iterator, Optional

from ..errors import InputError
from . import _bug_report_bytes as _bytes

MARKS = ("Start of NVIDIA bug report log file", "nvidia-bug-report.sh Version")
SEPARATOR_RE = _bytes.SEPARATOR_RE
UNAME_RE = re.compile(r"^uname:\s+\S+\s+(\S+)", re.M)
MAX_BYTES = 256 << 20  # a gzip or stdin report larger than this (decompressed) is refused as it is read
MAX_RATIO = 100  # decompressed / compressed size: text compresses 5-15 times, a bomb 1000 times
RATIO_FLOOR = 16 << 20  # the ratio is judged once this much is decompressed
MAX_SECTIONS = 4096  # separators; a real report has a few hundred (more on a big node)
MAX_SECTION_BYTES = 32 << 20  # one section's text handed to its parser (a dmesg is 16 MiB at most)
MAX_LINE = 1 << 20  # a longer line is cut there, the rest skipped
# The results of the kernel-log sections are kept until the report is read (a ~2 MB dmesg's: ~0.6 MB,
# its lists of up to MAX_EVENTS events). Past the first KEEP_WHOLE such sections (a real report has one
# to three), each keeps the first KEEP_LATER entries of its lists, its totals whole, and says so
# (kernel_log.cut_lists): what is kept then does not grow with the report.
KEEP_WHOLE = 64
KEEP_LATER = 16
CHUNK = 256 * 1024
HEAD_BYTES = 16384

# The kernel log, whatever the section's title says of where it came from.
KERNEL_TITLES = re.compile(r"^(?:dmesg:?|Scanning kernel log files for NVIDIA kernel messages:?|"
                           r"(?:/\S+/)?journalctl\b.*(?:\s-k\b|--dmesg)|"
                           r"\*\*\* /var/log/(?:messages|kern\.log|dmesg|kernel\.log|syslog))")
# Copied files ("*** PATH") that a source reads, by path: the source is used only if this
# topodiag has it (a parser module of that name).
TITLED_FILES = {
    "/proc/cmdline": "kernel_cmdline",
    "/proc/modules": "peermem",
}

# Long options the report's commands use, as the short ones of the parsers' commands.
ALIASES = {"--query": "-q", "--matrix": "-m", "--status": "-s", "--errorcounters": "-e",
           "--capabilities": "-c"}


@dataclass(frozen=True)
class Section:
    title: str
    source: str
    start_line: int  # the file's line number of the section's first line given to the parser
    text: Optional[str]  # the content from start_line on; None when the section is not read (or streamed)
    problem: Optional[str] = None  # why it is not read
    # a section streamed to its parser as it was read (`sections(..., stream=...)`): the parser's
    # result, or the ParseError it raised; the text is then never held
    parsed: object = None
    moved: bool = False  # `parsed` holds the file's line numbers already (moved by the worker that read it)
    note: Optional[str] = None  # what the loader bounded of the result (KEEP_WHOLE), for the input's status

    @property
    def offset(self) -> int:
        """What to add to a line number of `text` (or of `parsed`) to make it the file's."""
        return 0 if self.moved else self.start_line - 1


def looks_like(head: str) -> bool:
    """True for the text of an nvidia-bug-report log (its prologue is in the first lines)."""
    return any(mark in head[:4096] for mark in MARKS)


class Report:
    """An nvidia-bug-report opened for reading: its name, its first lines (`head`, for the host and
    detection) and its binary stream, which `read_sections` reads (it raises
    InputError when the report is cut short, corrupt, or over a cap)."""

    def __init__(self, name: str, stream, compressed: Optional[int], closer=None):
        self.name = name
        self._stream = stream
        self._compressed = compressed
        self._closer = closer
        self.head = ""
        self.path: Optional[str] = None  # a regular uncompressed file's path (its sections may go to workers)
        # refused past MAX_BYTES as it is read: a gzip report (a decompression bomb costs time) or one
        # read from stdin; a regular uncompressed file is read whatever its size (memory stays flat)
        self.capped = True

    def close(self) -> None:
        if self._closer is not None:
            self._closer()


def _too_big(where: str, total: int, compressed: Optional[int]) -> Optional[str]:
    """Why a report of which `total` bytes were read (from a file of `compressed` bytes, when it
    is compressed) is refused now, or None."""
    once = " once decompressed" if compressed is not None else ""
    if total > MAX_BYTES:
        return f"nvidia-bug-report larger than {MAX_BYTES >> 20} MiB{once}: refused as it was read"
    if compressed is not None and total > RATIO_FLOOR and total > MAX_RATIO * max(compressed, 1):
        return (f"nvidia-bug-report that decompresses to more than {MAX_RATIO} times its size "
                f"({total} bytes from {compressed} so far): refused as it was read")
    return None


def read_gzip(path: str) -> Optional[Report]:
    """A gzip-compressed bug report at `path`, opened as a stream of lines (close it), or None when
    the file is not gzip or not a bug report. Raises InputError for one cut short or corrupt in its
    first block; the rest is checked as it is read (read_sections)."""
    from .files import open_binary  # a regular file only: a FIFO or a device never blocks here

    try:
        with open_binary(path) as raw:
            if raw.read(2) != b"\x1f\x8b":
                return None
    except (OSError, InputError):
        return None
    try:
        raw = open_binary(path)
    except InputError:
        return None  # no longer a regular file: open_text says what it is
    fh = gzip.GzipFile(fileobj=raw, mode="rb")

    def close() -> None:
        fh.close()
        raw.close()

    try:
        head = fh.read(HEAD_BYTES)
        if not looks_like(head.decode("utf-8", "replace")):
            close()
            return None
        fh.seek(0)
    except (OSError, EOFError, zlib.error) as exc:
        close()
        raise InputError(path, f"a gzip-compressed nvidia-bug-report that cannot be read whole ({exc})") from None
    report = Report(path, fh, os.fstat(raw.fileno()).st_size, close)
    report.head = head.decode("utf-8", "replace")
    return report


def from_opened(opened) -> Report:
    """A plain (not compressed) bug report already opened by files.open_text, as a Report."""
    import io

    binary = opened.binary()
    if binary is None:  # held in memory: encoded again, a block at a time
        text = opened.read()
        stream = io.BytesIO(text.encode("utf-8"))
    else:
        stream = binary
    report = Report(opened.name, stream, None)
    report.head = opened.head[:HEAD_BYTES]
    if binary is not None and _regular(binary):
        from ..scan.parallel import file_path

        report.path = file_path(binary)
        report.capped = not os.path.isfile(report.path)  # stdin's spool is an unnamed file: capped
    return report


def _regular(handle) -> bool:
    import stat

    try:
        return stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


def read_sections(report: Report, where: str) -> Iterator[Section]:
    """The sections of a report that a source reads, in order, found in its bytes
    (topodiag/load/_bug_report_bytes.py; the line path it replaced, which decoded and split every
    line, is the tests' reference: tests/load/bug_report_lines.py), those of a big regular file's kernel log read by
    workers (topodiag/load/_bug_report_par.py), given on in order."""
    from . import _bug_report_par as P

    me = sys.modules[__name__]
    got = P.pool_for(report)
    if got is None:
        return _bytes.read(me, report._stream, where, report._compressed, STREAMED, capped=report.capped)
    pool, n = got
    remote = P.Remote(report.path, pool, n, parse_bytes)
    return P.resolved(_bytes.read(me, report._stream, where, report._compressed, STREAMED, remote,
                                  capped=report.capped), pool)


def parse_bytes(path: str, start: int, end: int, source: str, offset: int = 0, keep: Optional[int] = None):
    """The result of a streamed section whose body is the bytes [start, end) of the report at `path`,
    its line numbers moved by `offset`, its lists cut to `keep` entries (_bug_report_bytes.parse_range:
    what a worker runs)."""
    return _bytes.parse_range(sys.modules[__name__], path, start, end, source, offset, keep)


def host_of(text: str) -> Optional[str]:
    """The host name of the report's "uname: Linux HOST ..." line."""
    m = UNAME_RE.search(text[:16384])
    return m.group(1) if m else None


# (command words, source) of every parser that runs a command (its INFO.argv), longest first: what
# `command_sources_of_infos` derives from the parsers, written out so that reading a report does not
# import every parser to find it (~0.15 s); tests/load/test_bug_report.py holds the two equal.
COMMANDS = (
    ("systemctl status nvidia-fabricmanager --no-pager --lines=20", "fabricmanager"),
    ("nvidia-smi topo -p2p r", "nvidia_smi_topo_p2p"),
    ("mlnx_qos -i {netdev}", "mlnx_qos"),
    ("nvidia-smi nvlink -e", "nvidia_smi_nvlink_e"),
    ("nvidia-smi nvlink -s", "nvidia_smi_nvlink_s"),
    ("ethtool -S {netdev}", "ethtool_stats"),
    ("nvidia-smi topo -m", "nvidia_smi_topo_m"),
    ("cat /proc/cmdline", "kernel_cmdline"),
    ("ibv_devinfo -v", "ibv_devinfo"),
    ("lspci -vvv", "lspci_vvv"),
    ("lspci -tv", "lspci_tree"),
    ("show_gids", "show_gids"),
    ("ibstat", "ibstat"),
)


def _command_sources() -> list[tuple[str, str]]:
    """(command words, source) for every parser that runs a command, longest command first so that
    "nvidia-smi topo -m" wins over "nvidia-smi" (COMMANDS, of the parsers this topodiag has)."""
    from ..parsers import SOURCES

    return [pair for pair in COMMANDS if pair[1] in SOURCES]


def command_sources_of_infos() -> list[tuple[str, str]]:
    """`_command_sources` derived from every parser's INFO.argv (imports every parser)."""
    from ..parsers import SOURCES, info

    pairs = []
    for source in SOURCES:
        argv = info(source).argv
        if argv:
            pairs.append((" ".join(argv), source))
    return sorted(pairs, key=lambda p: -len(p[0]))


def source_of(title: str, commands: list[tuple[str, str]]) -> Optional[str]:
    """The source a section's title names, or None."""
    from ..parsers import SOURCES

    if KERNEL_TITLES.match(title):
        return "kernel_log" if "kernel_log" in SOURCES else None
    if title.startswith("*** "):
        path = title[4:].split(" ", 1)[0]
        source = TITLED_FILES.get(path)
        return source if source in SOURCES else None
    words = " ".join(w.rsplit("/", 1)[-1] if i == 0 else ALIASES.get(w, w) for i, w in enumerate(title.split()))
    for command, source in commands:
        if words == command or words.startswith(command + " "):
            return source
    return None


class _Streamed:
    """A section pushed to its parser's line reader as it is read (the kernel log: kernel_log.reader),
    never held whole; what the loader checks of a text held whole (NUL bytes in its first
    BINARY_PROBE_BYTES characters: not a text) is checked on the way."""

    def __init__(self, source: str):
        from ..parsers import get
        from .files import BINARY_PROBE_BYTES

        self.parser = get(source).reader()
        self.left = BINARY_PROBE_BYTES  # characters of the text still to look at for NUL bytes
        self.binary = False

    def add(self, line: str) -> None:
        self.add_lines([line])

    def add_lines(self, lines: list) -> None:
        for line in lines:
            if self.left <= 0:
                break
            self.binary = self.binary or "\x00" in line[:self.left]
            self.left -= len(line) + 1
        self.parser.add_lines(lines)

    def result(self):
        from ..parsers import ParseError

        if self.binary:
            return ParseError("binary data (NUL bytes), expected the text output of a tool")
        try:
            return self.parser.result()
        except (ParseError, RecursionError) as exc:
            return exc


STREAMED = frozenset({"kernel_log"})  # sources whose sections the reader streams to their parser


_LINE_FIELD = re.compile(r"^(?:line_no|first_line|[a-z]\w*_line)$")


def shift_lines(obj, offset: int):
    """`obj` (a parser's result: dataclasses, lists, tuples, dicts) with every line-number field
    (`line_no`, `first_line`, `..._line` holding an int) moved by `offset`; objects that hold none
    are returned as they are. A ParseError's line is moved too."""
    if offset == 0 or type(obj) in _LEAVES:
        return obj
    if isinstance(obj, InputError):
        if getattr(obj, "line_no", 0):
            obj.line_no += offset
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _shift_dataclass(obj, offset)
    if isinstance(obj, dict):
        moved = {k: _moved(k, v, offset) for k, v in obj.items()}
        return moved if any(moved[k] is not v for k, v in obj.items()) else obj
    if isinstance(obj, (list, tuple)):
        items = [shift_lines(v, offset) for v in obj]
        if all(a is b for a, b in zip(items, obj)):
            return obj
        if isinstance(obj, list):
            return items
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    return obj


_LEAVES = frozenset({str, int, float, bool, type(None)})  # values that hold no line number field
_PLANS: dict = {}


def _plan(cls) -> tuple:
    """(init field names, those named as line numbers, whether the class can be called with its
    fields in order) of a dataclass, looked up once a class: a section's result holds thousands of
    events."""
    plan = _PLANS.get(cls)
    if plan is None:
        fields = dataclasses.fields(cls)
        names = tuple(f.name for f in fields if f.init)
        lines = frozenset(n for n in names if _LINE_FIELD.match(n))
        # cls(*values) is what dataclasses.replace calls when every field is an init field, none
        # keyword-only
        plain = len(names) == len(fields) and not any(f.kw_only for f in fields)
        plan = _PLANS[cls] = (names, lines, plain)
    return plan


def _shift_dataclass(obj, offset: int):
    """shift_lines of a dataclass instance: its line-number fields moved, the others shifted."""
    names, lines, plain = _plan(type(obj))
    changes = None
    for name in names:
        value = getattr(obj, name)
        kind = type(value)
        if kind is int:
            if name not in lines or value <= 0:
                continue
            moved = value + offset
        elif kind in _LEAVES:
            continue
        else:
            moved = shift_lines(value, offset)
            if moved is value:
                continue
        if changes is None:
            changes = {}
        changes[name] = moved
    if changes is None:
        return obj
    if plain:
        return type(obj)(*[changes[n] if n in changes else getattr(obj, n) for n in names])
    return dataclasses.replace(obj, **changes)


def _moved(name, value, offset: int):
    if isinstance(name, str) and _LINE_FIELD.match(name) and type(value) is int and value > 0:
        return value + offset
    return shift_lines(value, offset)
