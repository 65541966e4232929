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


_PLAIN: list = [None, None]  # the last result converted, and its plain form


def plain(value: Any) -> Any:
    """A parser's dataclass result as plain dicts and lists (the JSON form its docstring lists); a
    dict as it is. The last one converted is kept: the rules of one family read the same result in
    turn (a big log's NCCL result was converted once per rule, 14 times)."""
    if isinstance(value, dict):
        return value
    if _PLAIN[0] is not value:
        from ..parsers.base import to_jsonable

        _PLAIN[:] = [value, to_jsonable(value)]
    return _PLAIN[1]
