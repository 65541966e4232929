"""A check's Hit in words, as the runner writes them: the rule's message variant and notes (rules/),
filled with the hit's values and the rule's default params. For tests that call a check directly."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from topodiag.engine import Catalog, Hit, load_catalog

REPO = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=1)
def _catalog() -> Catalog:
    return load_catalog(REPO / "rules", examples=False)


def worded(code: str, h: Hit) -> str:
    """The message rule `code` gives this hit."""
    return _catalog().get(code).format_message(h.values, None, h.variant, h.notes)
