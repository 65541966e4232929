"""The parser layer: one module per tool output, and detection of the source from content.

Every module in this package that defines SOURCE is a parser (see base.py for the contract).
`get(name)` returns the module, `detect(text)` names the most likely source.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from .base import ParseError, blank_provenance_header, to_jsonable

__all__ = ["ParseError", "blank_provenance_header", "to_jsonable", "get", "names", "detect", "detect_all"]

# Below this a sniff score is noise: detection gives up and asks for --source.
DETECT_THRESHOLD = 0.3
# How much of the text sniffers see (they must decide from a prefix, so detection is cheap on GB logs).
SNIFF_CHARS = 256 * 1024

_NOT_PARSERS = {"base"}
_modules: dict[str, ModuleType] | None = None


def _load() -> dict[str, ModuleType]:
    global _modules
    if _modules is None:
        found: dict[str, ModuleType] = {}
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
            if info.name in _NOT_PARSERS or info.name.startswith("_"):
                continue
            mod = importlib.import_module(f"{__name__}.{info.name}")
            source = getattr(mod, "SOURCE", None)
            if isinstance(source, str):
                found[source] = mod
            for alias in getattr(mod, "SOURCE_ALIASES", ()):
                found.setdefault(alias, mod)
        _modules = found
    return _modules


def names() -> list[str]:
    """Source names a user may pass to --source, sorted."""
    return sorted(_load())


def get(source: str) -> ModuleType:
    """The parser module for a source name; KeyError if there is none."""
    return _load()[source]


def detect_all(text: str) -> list[tuple[str, float]]:
    """Every source whose sniffer scores the text at or above the threshold, best first."""
    head = text[:SNIFF_CHARS]
    scores: list[tuple[str, float]] = []
    seen: set[int] = set()
    for source, mod in _load().items():
        if id(mod) in seen or source != mod.SOURCE:
            continue
        seen.add(id(mod))
        try:
            score = float(mod.sniff(head))
        except Exception:  # a sniffer bug must not break detection of the others
            score = 0.0
        if score >= DETECT_THRESHOLD:
            scores.append((source, score))
    scores.sort(key=lambda s: -s[1])
    return scores


def detect(text: str) -> str | None:
    """The most likely source of the text, or None when no parser recognises it."""
    found = detect_all(text)
    return found[0][0] if found else None
