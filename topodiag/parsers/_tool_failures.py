"""What a node tool prints instead of its table, read through the producers' catalogues.

On a broken node nvidia-smi, ibstat, ibv_devinfo or Fabric Manager print an error where their
output should be ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver",
"Failed to initialize NVML: Driver/library version mismatch", "ibpanic: ... can't init UMAD
library"). The parsers hand such lines here: `classify(source, line_no, text)` gives the line as a
ToolError with the catalogue's class, entry id and severity (topodiag/catalogues: the catalogues
whose "readers" name the source), or with class None when no entry explains it: those go to the
result's `unrecognised` (SYS004 reports them).

For nvidia-smi, whose failure is the same for every subcommand, `scan(lines, source)` finds the
failure lines of a whole text (a catalogue match, or a line that starts like an NVML/nvidia-smi
failure), and `only_failure` says the text holds nothing else, so a parser returns an empty
result carrying `errors` instead of refusing the text.
"""

from __future__ import annotations

import re
from typing import Iterable

from .. import catalogues
from .ib_records import ToolError as ErrorLine
from .sniff._common import NVSMI_FAILURE_RE, failure_lines, only_failure_lines, sniff_failure

MAX_ERRORS = 200
MAX_TEXT = 500


def classify(source: str, line_no: int, text: str) -> ErrorLine:
    """The line as an ErrorLine, with the best catalogue match for `source` (class None if none)."""
    hit = catalogues.classify_for(source, text)
    if hit is None:
        return ErrorLine(line_no, text[:MAX_TEXT])
    e = hit.entry
    return ErrorLine(line_no, text[:MAX_TEXT], class_=e.cls, entry=e.id, severity=e.severity)


def unrecognised(errors: Iterable[ErrorLine]) -> tuple[ErrorLine, ...]:
    """The error lines no catalogue entry explains."""
    return tuple(e for e in errors if e.class_ is None)


def scan(lines: Iterable[str], source: str, marker: "re.Pattern[str]" = NVSMI_FAILURE_RE) -> list[ErrorLine]:
    """Every line of a text that a catalogue read by `source` explains, or that starts with the
    tool's failure marker (class None then), in order; at most MAX_ERRORS."""
    out: list[ErrorLine] = []
    for n, line, hit in failure_lines(lines, source, marker, MAX_ERRORS):
        if hit is None:
            out.append(ErrorLine(n, line[:MAX_TEXT]))
        else:
            e = hit.entry
            out.append(ErrorLine(n, line[:MAX_TEXT], class_=e.cls, entry=e.id, severity=e.severity))
    return out


def only_failure(lines: list[str], errors: list[ErrorLine]) -> bool:
    """Whether the text holds failure lines and nothing else but blanks (a blanked provenance header), shell prompts
    and the tool's command line."""
    return bool(errors) and only_failure_lines(lines, {e.line_no for e in errors})


NVSMI = "nvidia_smi_q"  # any nvidia-smi reader: they all read the one nvidia-smi catalogue


def read(lines: list[str], source: str, parse_table, empty):
    """Parse `lines` with `parse_table`, carrying the tool's failure lines: a text that is only a
    failure (or whose table does not parse but holds a failure a catalogue explains) becomes
    `empty()` with them; otherwise the table's result with them added (fields `errors`,
    `unrecognised`). ParseError from the table stands when no failure is found."""
    import dataclasses

    from .base import ParseError

    failed = scan(lines, source)
    found = {"errors": tuple(failed), "unrecognised": unrecognised(failed)}
    if only_failure(lines, failed):
        return dataclasses.replace(empty(), **found)
    try:
        result = parse_table(lines)
    except ParseError:
        if any(e.class_ for e in failed):
            return dataclasses.replace(empty(), **found)
        raise
    return dataclasses.replace(result, **found) if failed else result
