"""Text that came from outside (a host name a report claims, a node set, a file name, a tool's error
line) made safe to print on a terminal or in one line of a log.

A report is written by the node it describes, so its `host` can hold escape sequences: ESC and CSI
(`\\x1b[2J` clears the admin's screen, `\\x1b]0;...\\x07` retitles it), BEL, other C0 and C1
controls, DEL, and the Unicode bidi controls that reorder what is shown (`\\u202e`). `clean` shows
each of them as its Python escape (`\\x1b`, `\\u202e`), so the text stays readable and nothing in it
acts; `line` also folds every line break and run of white space into one space and cuts the text
to a length. Printable text, non-ASCII letters included, is left as it is.
"""

from __future__ import annotations

from typing import Any, Optional

# C0 controls, DEL, C1 controls; bidi embeddings, overrides, isolates and marks; line and paragraph
# separators; the zero-width characters a name can hide behind; the byte order mark
_UNSAFE = ([*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x061C, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F,
            0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0xFEFF])
_TABLE = {c: ascii(chr(c))[1:-1] for c in _UNSAFE}
_LINE_TABLE = {**_TABLE, **{c: " " for c in (0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029)}}
_TERMINAL_TABLE = {c: v for c, v in _TABLE.items() if c not in (0x09, 0x0A)}


def clean(text: Any) -> str:
    """`text` with every control and bidi character shown as its escape (`\\x1b`, `\\u202e`)."""
    s = text if isinstance(text, str) else str(text)
    return s.translate(_TABLE) if not s.isprintable() or not s.isascii() else s


def terminal(text: Any) -> str:
    """`clean`, but line feeds and tabs kept: for text a renderer laid out on several lines (a
    report, a table) whose pieces came from inputs. ESC, CR, NUL, the other controls and the bidi
    characters are shown as their escapes."""
    s = text if isinstance(text, str) else str(text)
    return s.translate(_TERMINAL_TABLE) if not s.isprintable() or not s.isascii() else s


def line(text: Any, limit: Optional[int] = None) -> str:
    """`clean`, on one line: line breaks and runs of white space as one space; at most `limit`
    characters ("..." at the end when cut)."""
    s = text if isinstance(text, str) else str(text)
    s = " ".join(s.translate(_LINE_TABLE).split())
    if limit is not None and len(s) > limit:
        s = s[: max(0, limit - 3)] + "..."
    return s


def json_safe(value: Any) -> Any:
    """`value` (dicts, lists, tuples, numbers, strings) with every float that is not finite (NaN,
    Infinity: not JSON, and JSON.parse rejects them) replaced by None (null)."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def dump_json(value: Any, stream, indent: Optional[int] = 2) -> None:
    """`value` written as JSON (json_safe first; json itself refuses a NaN left), then a newline."""
    import json

    stream.write(json.dumps(json_safe(value), indent=indent, allow_nan=False) + "\n")


def is_clean(text: str) -> bool:
    """True when `clean` would leave `text` as it is."""
    return clean(text) == text
