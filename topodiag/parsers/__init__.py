"""The parser layer: one module (or package) per tool output, and detection of the source from content.

The registry is the package itself: every module or subpackage of topodiag.parsers is a parser named
after its source, except the shared helpers named in HELPERS (base.py has the contract: INFO, SOURCE,
parse, sniff). Adding a parser is adding its module; nothing else lists the sources by hand.

Names are found with pkgutil.iter_modules, which lists the package's directory and imports nothing:
reading an input whose source is known (a bundle member, a live command, `--source`) imports that
one parser and not all of them, since each costs 5-15 ms to import (regexes, dataclasses) and
`prolog` runs inside a Slurm prolog's budget. `get(name)` imports one parser; `info(name)` its
ParserInfo; `infos()` imports every parser; `detect(text)` imports no parser: it asks the sniffs of
the sources whose needles (_needles.py: substrings one of which its sniff needs to see) appear in the
text, each from its light module sniff/<source>.py (`sniffer(name)`; the parser re-exports it).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Callable

from . import _needles
from .base import ParseError, ParserInfo, blank_provenance_header, to_jsonable

__all__ = ["ParseError", "ParserInfo", "blank_provenance_header", "to_jsonable", "get", "names", "info", "infos",
           "detect", "detect_all", "sniffer", "HELPERS", "SOURCES"]

# Below this a sniff score is noise: detection gives up and asks for --source.
DETECT_THRESHOLD = 0.3
# How much of the text sniffers see (they must decide from a prefix, so detection is cheap on GB logs).
SNIFF_CHARS = 256 * 1024

# The modules of this package that are not parsers: what several parsers share. They define no
# SOURCE (tests/parsers/test_registry.py holds both ways: every other module is a parser).
HELPERS = frozenset({"base", "ib_records", "nccl_tests_failures", "nvidia_smi_gpu_blocks", "sniff"})


def _discover() -> tuple[str, ...]:
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__)
                        if m.name not in HELPERS and not m.name.startswith("_")))


# Every source a parser reads, sorted: derived from the package's contents when it is imported.
SOURCES: tuple[str, ...] = _discover()


def names() -> list[str]:
    """Source names a user may pass to --source, sorted."""
    return list(SOURCES)


def get(source: str) -> ModuleType:
    """The parser module for a source name (imported on first use); KeyError if there is none."""
    if source not in SOURCES:
        raise KeyError(source)
    return importlib.import_module(f"{__name__}.{source}")


def info(source: str) -> ParserInfo:
    """What the parser of a source reads and how live collection gets it (imports that parser);
    KeyError if there is no such parser.

    A parser module still without INFO (there should be none: tests/parsers/test_registry.py
    requires it) reads as a source of files only: no live command, no probe, not prolog-safe."""
    mod = get(source)
    found = getattr(mod, "INFO", None)
    if isinstance(found, ParserInfo):
        return found
    doc = (mod.__doc__ or "").strip().split("\n", 1)[0].rstrip(".")
    return ParserInfo(source=source, tool="", description=doc)


def infos() -> list[ParserInfo]:
    """Every parser's ParserInfo, sorted by source (imports every parser)."""
    return [info(source) for source in SOURCES]


def detect_all(text: str, *, ask_all: bool = False) -> list[tuple[str, float]]:
    """Every source whose sniffer scores the text at or above the threshold, best first (ties in
    source order). A leading `#@` provenance header is blanked first: no sniffer sees it.

    Only the sniffs of the sources whose needles (_needles.py) appear in the text are imported (from
    sniff/, not the parsers) and asked: the others' cannot reach the threshold. `ask_all` asks every parser (what the tests compare
    the needle pass with)."""
    head = blank_provenance_header(text[:SNIFF_CHARS])
    scores: list[tuple[str, float]] = []
    for source in (SOURCES if ask_all else _needles.candidates(head, SOURCES)):
        try:
            score = float(sniffer(source)(head))
        except Exception:  # a sniffer bug must not break detection of the others
            score = 0.0
        if score >= DETECT_THRESHOLD:
            scores.append((source, score))
    scores.sort(key=lambda s: -s[1])
    return scores


def sniffer(source: str) -> Callable[[str], float]:
    """The sniff of a source, from its light module under sniff/ (a few patterns, no parser imported);
    KeyError if there is no such source."""
    if source not in SOURCES:
        raise KeyError(source)
    return importlib.import_module(f"{__name__}.sniff.{source}").sniff


def detect(text: str) -> str | None:
    """The most likely source of the text, or None when no parser recognises it."""
    found = detect_all(text)
    return found[0][0] if found else None
