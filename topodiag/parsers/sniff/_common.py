"""What several sniffs share (and their parsers with them): defined here once, light (the standard
library's `re` only; the nvidia-smi catalogue is imported inside `sniff_failure`, on the one path that needs it)."""

from __future__ import annotations

import re
from typing import Any, Iterable, Optional

from .._needles import NVSMI_FAILURE_NEEDLES

# `nvidia-smi nvlink`: every mode prints the same GPU header and the same NVML lines in place of a GPU's links
# (nvidia_smi_gpu_blocks.py reads the blocks under the header).
ALL_INACTIVE_RE = re.compile(r"Unable to retrieve NVLink information as all links are in-?active", re.I)
UNSUPPORTED_RE = re.compile(r"does not have or support NVLink", re.I)
SNIFF_HEADER = re.compile(r"^GPU [0-9]{1,6}: [^\n]*\(UUID: ", re.M)


def sniff_mode(text: str, mode_line: "re.Pattern[str]", alone: float = 0.8) -> float:
    """A mode's sniff score: 0.95 when its lines stand under a GPU header, `alone` without one, else 0."""
    if not mode_line.search(text):
        return 0.0
    return 0.95 if SNIFF_HEADER.search(text) else alone


# nvidia-smi's failure, the same for every subcommand (_tool_failures.py turns the lines into ToolErrors).
# A line that starts like nvidia-smi's / NVML's own failures (what `unrecognised` keeps when no
# catalogue entry explains it); table lines never start so.
NVSMI_FAILURE_RE = re.compile(r"^(?:NVIDIA-SMI has failed|Failed to |Unable to |Unable to determine|NVML|"
                              r"No devices were found|Error:|ERROR:|GPU [0-9A-Fa-f:.]+: )")
_CHEAP = re.compile(r"[A-Za-z]{3}")
PROMPT_RE = re.compile(r"^(?:\S*[$#]\s*)?(?:sudo\s+)?nvidia-smi\b|^\S+@\S+[:~][^$#]*[$#]\s*$|^[$#]\s*$")
FAILURE_LINES = 40  # what sniff_failure reads of a text


def bare(raw: str) -> str:
    """A line as the failure scan reads it: without blanks and the backticks of a paste around it."""
    return raw.strip().strip("`").strip()


def worth_classifying(line: str) -> bool:
    """Worth classifying: table rows of numbers and separators are not."""
    return _CHEAP.search(line[:80]) is not None and len(line) > 6


def failure_lines(lines: Iterable[str], source: str, marker: "re.Pattern[str]" = NVSMI_FAILURE_RE,
                  limit: int = 200) -> list[tuple[int, str, Any]]:
    """(line number, bare line, the catalogue's match or None) for every line of a text that a catalogue read
    by `source` explains, or that starts with the tool's failure marker, in order; at most `limit`."""
    from ... import catalogues  # late: only a text the cheap tests could not refuse pays for the catalogues

    out: list[tuple[int, str, Any]] = []
    for n, raw in enumerate(lines, 1):
        line = bare(raw)
        if not line:
            continue
        hit = catalogues.classify_for(source, line) if worth_classifying(line) else None
        if hit is not None or marker.match(line):
            out.append((n, line, hit))
        if len(out) >= limit:
            break
    return out


def only_failure_lines(lines: Iterable[str], taken: set[int]) -> bool:
    """Whether the lines numbered in `taken` (failure lines) are all the text holds but blanks (a blanked
    provenance header), shell prompts and the tool's command line."""
    if not taken:
        return False
    for n, raw in enumerate(lines, 1):
        line = bare(raw)
        if line and n not in taken and not PROMPT_RE.match(line):
            return False
    return True


def _may_be_failure(lines: list[str]) -> bool:
    """False when no catalogue can explain the text as only a failure: a catalogue match needs one of the
    words of NVSMI_FAILURE_NEEDLES (every entry's fixed start holds one: tests/parsers/test_registry.py),
    and every other line must be blank, a prompt or the failure marker's."""
    found = False
    for raw in lines:
        line = bare(raw)
        if not line or PROMPT_RE.match(line):
            continue
        low = line.lower()
        if worth_classifying(line) and any(n in low for n in NVSMI_FAILURE_NEEDLES):
            found = True
        elif not NVSMI_FAILURE_RE.match(line):
            return False
    return found


def sniff_failure(text: str, source: str) -> Optional[float]:
    """A score for a text that is only a failure of `source`'s tool (None when it is not)."""
    lines = text.splitlines()[:FAILURE_LINES]
    return scored_failure(lines, source) if _may_be_failure(lines) else None


def scored_failure(lines: list[str], source: str) -> Optional[float]:
    """sniff_failure's answer from the catalogue, every line put to it."""
    found = failure_lines(lines, source)
    if found and any(hit is not None and hit.entry.cls for _, _, hit in found) \
            and only_failure_lines(lines, {n for n, _, _ in found}):
        return 0.5
    return None
