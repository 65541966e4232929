"""Plain-text rendering of a parsed output (the JSON form) for `topodiag parse --format text`.

Scalars print as `key: value`; a list of flat records prints as an aligned table; nested
records indent. Generic on purpose: every parser gets a readable view without code of its own.
"""

from __future__ import annotations

from typing import Any

_MAX_ROWS = 200


def _scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return ", ".join(_scalar(v) for v in value) if value else "-"
    if isinstance(value, dict):  # a small record inside a list: its values, e.g. "gpu:0"
        return ":".join(_scalar(v) for v in value.values())
    return str(value)


def _is_flat(value: Any) -> bool:
    return not isinstance(value, (dict, list)) or (
        isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value)
    )


def _table(rows: list[dict[str, Any]], indent: str) -> list[str]:
    cols: list[str] = []
    for row in rows:
        for key in row:
            if key not in cols and all(_is_flat(r[key]) for r in rows if key in r):
                cols.append(key)
    # a column nobody filled in (all null / empty) says nothing in a table; JSON keeps it
    cols = [c for c in cols if any(r.get(c) not in (None, [], "") for r in rows)]
    shown = rows[:_MAX_ROWS]
    cells = [[_scalar(row.get(c)) for c in cols] for row in shown]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(cols)]
    out = [indent + "  ".join(c.ljust(w) for c, w in zip(cols, widths)).rstrip()]
    out += [indent + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
    if len(rows) > _MAX_ROWS:
        out.append(f"{indent}... {len(rows) - _MAX_ROWS} more rows (use --format json for all)")
    for n, row in enumerate(shown):
        nested = {k: v for k, v in row.items() if k not in cols and v not in (None, [], {}, "")}
        if nested:
            label = next((str(row[k]) for k in ("name", "index", "port", "link", "a") if k in row), str(n))
            out.append(f"{indent}[{label}]")
            out += _lines(nested, indent + "  ")
    return out


def _lines(data: dict[str, Any], indent: str = "") -> list[str]:
    out: list[str] = []
    for key, value in data.items():
        if isinstance(value, dict):
            if not value:
                out.append(f"{indent}{key}: -")
            elif all(_is_flat(v) for v in value.values()):
                out.append(f"{indent}{key}: " + ", ".join(f"{k}={_scalar(v)}" for k, v in value.items()))
            else:
                out.append(f"{indent}{key}:")
                out += _lines(value, indent + "  ")
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            out.append(f"{indent}{key} ({len(value)}):")
            out += _table(value, indent + "  ")
        elif isinstance(value, list) and (
            any(isinstance(v, list) for v in value) or len(", ".join(_scalar(v) for v in value)) > 80
        ):
            out.append(f"{indent}{key} ({len(value)}):")
            out += [f"{indent}  - {_scalar(v)}" for v in value]
        else:
            out.append(f"{indent}{key}: {_scalar(value)}")
    return out


def render(data: dict[str, Any]) -> str:
    """The text; every control character that came from the input (ESC, NUL, CR...) shown as its
    escape (render/sanitise.py), so a device name cannot act on the terminal."""
    from .sanitise import terminal

    return terminal("\n".join(_lines(data))) + "\n"
