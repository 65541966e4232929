r"""What every parser shares: ParseError, the `#@` provenance header, text normalisation.

A parser module exposes:
  INFO: ParserInfo                 what the parser reads and how live collection gets it
  SOURCE: str                      the source name (e.g. "nvidia_smi_topo_m")
  parse(text: str) -> dataclass    pure; raises ParseError and nothing else
  sniff(text: str) -> float        0.0 (not this tool) .. 1.0 (certainly this tool); looks at a
                                   prefix of the text only, must be cheap and never raise
and optionally
  parse_lines(lines: Iterable[str]) -> dataclass   streaming form for large inputs

A fixture's `#@` provenance header is this module's business alone: the loader (load/files.py
parse_opened) and detection (parsers.detect_all) blank it (blank_provenance_header: empty lines, so
line numbers stay the file's) before a parser's sniff or parse sees the text; no parser skips it.
first_body_line gives the line number of the first non-blank line, for an error about the whole text.

Regexes on input stay linear on any text (tests/parsers/test_adversarial_time.py holds every parser to
it): in a re.M pattern a line's blanks are [ \t], never \s (`^\s*` runs over the newlines after every
line start); no two runs that can match the same character stand side by side (`(.*?)\s*:`,
`\s*\|?\s*`: strip in code instead); a search() does not start with a run of blanks; runs over
attributes or names are bounded. Digits are [0-9] and is_digits(), never \d or str.isdigit(), which
accept '²' (int() raises) and other scripts' digits. No line reaches a regex longer than MAX_LINE_CHARS:
clean_lines and iter_clean_lines cut each line there (the rest of the line is skipped and counted,
see lines_cut); a parser that splits text itself cuts with cap_line.
"""

from __future__ import annotations

import math
import re
import threading
import time
from contextlib import contextmanager
from functools import lru_cache
from dataclasses import dataclass, fields, is_dataclass
from enum import Enum
from typing import Any, Iterable, Iterator, Optional

from ..errors import ParseError

@dataclass(frozen=True)
class ParserInfo:
    """What one parser reads, in one object: the registry, live collection, `parse --list`, the
    README's source table and the man page are derived from (or tested against) these.

    `argv` is the command live collection runs for this source (() when it does not run one: the
    source comes from a probe or only from files the user gives); `prolog_safe` says the live
    source is passive and fast enough for a Slurm prolog (a probe, never a command that can hang
    on a wedged device); `schema_version` versions the JSON form of the parse result."""

    source: str  # the source name, also the module's name
    tool: str  # what a person runs to get this output, e.g. "nvidia-smi topo -m"
    description: str  # one line for `parse --list`, the README and the man page
    argv: tuple[str, ...] = ()
    timeout_s: float = 30.0
    prolog_safe: bool = False
    schema_version: int = 1
    probe: Optional[str] = None  # the live probe that feeds it (nvml, sysfs), if any
    # exit codes besides 0 with which the live command still answered (systemctl status: 3 for a
    # unit that is not running, 4 for one that is not installed); its stderr is then kept as output
    answer_rcs: tuple[int, ...] = ()


HEADER_PREFIX = "#@"
HEADER_END = "#@ ---"

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
ANSI_B_RE = re.compile(ANSI_RE.pattern.encode())  # the same over bytes (its classes are ASCII, none holds CR or LF)


def blank_provenance_header(text: str) -> str:
    """Replace a leading `#@ ` provenance header (up to `#@ ---`) with empty lines.

    Line numbers in the rest of the text stay those of the file. Text without a header is
    returned unchanged.
    """
    if not text.startswith(HEADER_PREFIX):
        return text
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.startswith(HEADER_PREFIX):
            return "\n" * i + "\n".join(lines[i:])  # header without terminator: blank what it had
        if line.rstrip("\r").strip() == HEADER_END:
            return "\n" * (i + 1) + "\n".join(lines[i + 1 :])
    return "\n" * (len(lines) - 1)


def blank_provenance_header_lines(lines: Iterable[str]) -> Iterator[str]:
    """Streaming form of blank_provenance_header: `#@` provenance lines at the top become
    empty lines, so line numbers stay those of the file."""
    in_header = True
    for line in lines:
        if in_header:
            if line.startswith(HEADER_PREFIX):
                yield "\n"
                if line.strip() == HEADER_END:
                    in_header = False
                continue
            in_header = False
        yield line


NOTES_FILE = "notes.toml"  # beside this module: each source's note ids and their sentences


@lru_cache(maxsize=1)
def note_table() -> dict[str, dict[str, str]]:
    """{source: {note id: template}} from parsers/notes.toml (read at the first note)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    from pathlib import Path

    with open(Path(__file__).with_name(NOTES_FILE), "rb") as fh:
        return tomllib.load(fh)


def note(source: str, note_id: str, **values: Any) -> str:
    """The sentence of one parser note: its template in notes.toml filled with `values`."""
    return note_table()[source][note_id].format(**values)


def first_body_line(lines: Iterable[str]) -> int:
    """The 1-based number of the first non-blank line (1 when there is none): where an error about a
    text as a whole points (a blanked provenance header is blank)."""
    return next((i for i, line in enumerate(lines, 1) if line.strip()), 1)


def is_digits(text: str) -> bool:
    """Whether text is one or more ASCII digits 0-9. str.isdigit() also accepts '²' (which int()
    refuses: an exception) and other scripts' digits such as '١' (which int() reads as 1): neither
    is a number a tool printed."""
    return text.isascii() and text.isdigit()


def strip_ansi(line: str) -> str:
    """Remove ANSI escape sequences (nvidia-smi underlines its topo header on a TTY)."""
    return ANSI_RE.sub("", line) if "\x1b" in line else line


# No tool topodiag reads prints a line this long; what follows it on an over-long line is skipped, so
# that no regex, however it is written, sees more than this of one line.
MAX_LINE_CHARS = 64 * 1024
_CUTS = threading.local()


def cap_line(line: str) -> str:
    """The line cut at MAX_LINE_CHARS (counted, see lines_cut)."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    _CUTS.n = getattr(_CUTS, "n", 0) + 1
    return line[:MAX_LINE_CHARS]


def lines_cut(reset: bool = False) -> int:
    """How many lines this thread's parsers cut at MAX_LINE_CHARS (since the last reset)."""
    n = getattr(_CUTS, "n", 0)
    if reset:
        _CUTS.n = 0
    return n


class DeadlinePassed(ParseError):
    """The run's deadline (`check --deadline`) passed while a parser read its input: the input is
    incomplete, not wrong. A ParseError, so that every parser lets it through as it must."""


# The deadline (time.monotonic()) parsers run under, innermost last: one for the whole process, since
# a parse may run in a worker thread. The line iterators look at it every DEADLINE_EVERY lines.
_PARSE_DEADLINE: list[float] = []
DEADLINE_EVERY = 2048


@contextmanager
def parse_deadline(at: Optional[float]) -> Iterator[None]:
    """Parsers under this block stop with DeadlinePassed once time.monotonic() passes `at` (None:
    no deadline)."""
    _PARSE_DEADLINE.append(math.inf if at is None else at)
    try:
        yield
    finally:
        _PARSE_DEADLINE.pop()


def deadline_at() -> Optional[float]:
    """The deadline parsers run under now (time.monotonic()), or None."""
    at = min(_PARSE_DEADLINE, default=math.inf)
    return None if math.isinf(at) else at


def check_deadline(line_no: int = 0) -> None:
    """DeadlinePassed when the parse deadline has passed."""
    at = deadline_at()
    if at is not None and time.monotonic() > at:
        where = f" at line {line_no}" if line_no else ""
        raise DeadlinePassed(f"not read to its end: the run's deadline passed while reading it{where}", line_no)


def _checked(items: Iterable[str]) -> Iterator[str]:
    for n, item in enumerate(items):
        if n % DEADLINE_EVERY == 0:
            check_deadline(n + 1)
        yield item


class _Lines(list):
    """clean_lines' list: iterating it looks at the parse deadline (when one is set) every
    DEADLINE_EVERY lines, so that a parser's loop over lines stops at the deadline."""

    def __iter__(self):
        if deadline_at() is None:
            return list.__iter__(self)
        return _checked(list.__iter__(self))


def clean_lines(text: str) -> list[str]:
    """Split into lines without line terminators (LF, CRLF or CR), ANSI codes and trailing blanks,
    each cut at MAX_LINE_CHARS."""
    check_deadline()
    return _Lines([strip_ansi(cap_line(line)).rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")])


def iter_clean_lines(lines: Iterable[str]) -> Iterator[str]:
    """Streaming form of clean_lines for an iterable of raw lines (e.g. an open file)."""
    for n, raw in enumerate(lines):
        if n % DEADLINE_EVERY == 0:
            check_deadline(n + 1)
        yield strip_ansi(cap_line(raw.rstrip("\r\n"))).rstrip()


def listing(names: Iterable[str], limit: int = 12) -> str:
    """Names for a note or message, cut after `limit`: "GPU0, GPU1 and 6 more"."""
    names = list(names)
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


_AS_IS = frozenset({str, int, float, bool, type(None)})
_FIELD_NAMES: dict = {}  # dataclass type -> the names of its public fields, in order


def to_jsonable(obj: Any) -> Any:
    """Dataclasses -> dicts (field order kept), tuples -> lists, enums -> values. (A big result holds
    tens of thousands of rows: plain values are taken in place rather than through a call each -- a
    call per leaf was a third of the conversion -- and a dataclass's field names are looked up once
    per type.)"""
    kind = type(obj)
    if kind in _AS_IS:
        return obj
    names = _FIELD_NAMES.get(kind)
    if names is None and is_dataclass(obj) and not isinstance(obj, type):
        # a field named after a keyword ends with "_" (class_): its JSON key is the keyword
        names = _FIELD_NAMES[kind] = tuple((f.name, f.name[:-1] if f.name.endswith("_") else f.name)
                                           for f in fields(obj) if not f.name.startswith("_"))
    if names is not None:
        return {key: v if type(v) in _AS_IS else to_jsonable(v)
                for name, key in names for v in (getattr(obj, name),)}
    if isinstance(obj, dict):
        return {str(k): v if type(v) in _AS_IS else to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [v if type(v) in _AS_IS else to_jsonable(v) for v in obj]
    if isinstance(obj, Enum):
        return obj.value
    return obj


def search_after(line: str, head: "re.Pattern[str]", tail: "re.Pattern[str]"):
    """The first match of `head` in `line` and the first match of `tail` after it, as (head, tail),
    or None: what one regex `head.*?tail` finds, without its cost. That regex runs a lazy scan to the
    end of the line from every repeat of `head`, quadratic on a line that repeats it (a 64 KB line
    took seconds); this is two linear searches."""
    h = head.search(line)
    if h is None:
        return None
    t = tail.search(line, h.end())
    return None if t is None else (h, t)


def probe_object(text: str, probe, what: str) -> dict:
    """A live probe's JSON object whose "probe" is `probe` (a name, or a tuple of the names accepted;
    topodiag/live/*_probe.py); ParseError for any other text: "expected <what>" with the line where
    the JSON breaks, or the first line of text and what it holds, or line 0 when there is no text."""
    import json

    probes = (probe,) if isinstance(probe, str) else tuple(probe)
    first = next(((n, line.strip()) for n, line in enumerate(text.split("\n"), 1) if line.strip()), None)
    if first is None:
        raise ParseError(f"expected {what}, found no text", 0)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"expected {what}: {exc.msg}", exc.lineno) from None
    except (ValueError, RecursionError) as exc:  # an over-long integer, absurd nesting
        raise ParseError(f"expected {what}: {type(exc).__name__}", first[0]) from None
    if not isinstance(data, dict) or data.get("probe") not in probes:
        names = " or ".join(f'"{p}"' for p in probes)
        raise ParseError(f"expected {what}: a JSON object with \"probe\": {names}, found '{first[1][:60]}'", first[0])
    return data
