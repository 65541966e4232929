"""nccl-tests' failure lines, read through the catalogues (topodiag/catalogues/data/nccl-tests.json).

The nccl-tests reader (the nccl_tests package: assemble.py) finds two kinds of failure line:

- a line with a failure mark (FAIL_RE: "Test CUDA failure", "Test NCCL failure", "Test failure",
  "Test timeout", FAILED, aborts and signals): a failure whatever it says;
- a line of text that is neither a banner, a comment nor a results row, and that the catalogue
  knows (`recognise`: usage errors such as "Invalid number of GPUs: 8 requested but only 4 were
  found.", "NCCL 2.7 or later is needed for alltoall...", options ignored). Such a line reaches
  `recognise` only after the row path has turned it down, so results rows cost nothing more.

`classify` names each kept failure line's catalogue entry once the input is read (at most
LIST_CAP lines: the cost does not grow with the input): {line_no, text, size_bytes, run, class,
entry, severity}, with "class" null for a marked line no catalogue entry explains (the report's
`unrecognised`: SYS004 reports them). A "Test NCCL failure" line is classified by the
ncclGetErrorString text it quotes too ("unhandled system error" -> system-failure, "remote process
exited or there was a network error" -> remote-failure...).
"""

from __future__ import annotations

import re
from typing import Iterable, Optional

from .. import catalogues

READER = "nccl_tests"
# What of a line is classified: nccl-tests' failure lines are a host, a file:line and an error text (the
# class is in their first words); a bound keeps the formats' lazy runs cheap on a hostile giant line.
TEXT_CAP = 256

FAIL_RE = re.compile(
    r"Test (?:CUDA |NCCL )?failure|Test timeout|\bFAILED\b|\bAborted\b|MPI_ABORT|exited on signal"
    r"|Segmentation fault|terminate called|core dumped")
# A literal that each of FAIL_RE's alternatives holds: a line with none of them holds no failure mark.
FAIL_WORDS = (b" failure", b"Test timeout", b"FAILED", b"Aborted", b"MPI_ABORT", b"exited on signal",
              b"Segmentation fault", b"terminate called", b"core dumped")
# What a catalogued line with no failure mark opens with or says: a line of text without any of these
# is not looked up (the lookup is cached, but host names vary line to line).
HINT_RE = re.compile(r"[Ii]nvalid|Unable to|[Ii]ncompatible|is needed|requires|not supported|must be"
                      r"|only supports|Ignoring|Disabling|defaulting|not a power of|Please check|not enabled"
                      r"|Error at|CuRAND error|#wrong=|want=0x|failure|KERNEL_LAUNCH_ERROR")


class Failure(dict):
    """One failure line: {line_no, text, size_bytes, run, class, entry, severity} (a dict, so that its
    JSON form has a "class" key), read by attribute as well (`f.line_no`, `f.text`)."""

    __slots__ = ()

    def __init__(self, line_no: int, text: str, size_bytes: Optional[int] = None, run: int = 0,
                 cls: Optional[str] = None, entry: Optional[str] = None, severity: Optional[str] = None) -> None:
        super().__init__(line_no=line_no, text=text, size_bytes=size_bytes, run=run,
                         **{"class": cls, "entry": entry, "severity": severity})

    def __getattr__(self, name: str):
        try:
            return self["class" if name == "cls" else name]
        except KeyError:
            raise AttributeError(name) from None

    def __hash__(self) -> int:  # type: ignore[override]
        return hash((self["line_no"], self["text"]))


def recognise(s: str) -> Optional[catalogues.Match]:
    """The catalogue entry of a line of text with no failure mark, when it is one of the producers'
    failure lines; None for any other text. A log repeats its launcher and framework lines (a 100 MB
    one: 18,161 lines, 47 distinct texts), so the answer for a short text is kept (`_seen`, bounded;
    emptied when the catalogues read for this reader are loaded again). A Match is frozen."""
    if len(s) > _SEEN_TEXT_MAX:
        return _recognise(s)
    global _seen_for
    cats = catalogues.for_reader(READER)
    if cats is not _seen_for:
        _seen.clear()
        _seen_for = cats
    try:
        return _seen[s]
    except KeyError:
        pass
    hit = _recognise(s)
    if len(_seen) >= _SEEN_MAX:
        _seen.clear()
    _seen[s] = hit
    return hit


_SEEN_MAX, _SEEN_TEXT_MAX = 4096, 1024
_seen: dict = {}
_seen_for: Optional[tuple] = None


def _recognise(s: str) -> Optional[catalogues.Match]:
    if not HINT_RE.search(s):
        return None
    return catalogues.classify_for(READER, s[:TEXT_CAP])


def _classified(f: Failure) -> Failure:
    hit = catalogues.classify_for(READER, f["text"][:TEXT_CAP])
    if hit is None:
        return f
    e = hit.entry
    return Failure(f["line_no"], f["text"], f["size_bytes"], f["run"], e.cls, e.id, e.severity)


def classify(failures: Iterable[Failure]) -> tuple[Failure, ...]:
    """Each failure line with its catalogue entry's class, id and severity (null when none explains it)."""
    return tuple(f if f["class"] is not None else _classified(f) for f in failures)


def unrecognised(failures: Iterable[Failure]) -> tuple[Failure, ...]:
    """The failure lines no catalogue entry explains."""
    return tuple(f for f in failures if f["class"] is None)
