"""Helpers the check modules share to pass facts to message templates (not a checks module: the
registry skips names starting with "_")."""

from __future__ import annotations

from typing import Any, Iterable


def listing(items: Iterable[Any], limit: int, sep: str = ", ", more: str = ", ...") -> str:
    """The first `limit` items joined with `sep`, then `more` when there were others: "a, b, ..."."""
    items = [str(x) for x in items]
    return sep.join(items[:limit]) + (more if len(items) > limit else "")


def counted(items: Iterable[Any], limit: int, sep: str = "; ") -> str:
    """The first `limit` items joined with `sep`, then "and N more": "a; b; and 3 more"."""
    items = [str(x) for x in items]
    return sep.join(items[:limit]) + (f"{sep}and {len(items) - limit} more" if len(items) > limit else "")
