"""User-controlled text (a path, a member name, a host name) as it may appear in a one-line error:
printable characters only and bounded in length, so that a hostile archive or directory cannot
send escape sequences to the terminal (ESC, CSI, other control characters) nor a gigabyte-long
error line."""

from __future__ import annotations

MAX_SHOWN = 200  # characters of user text in an error line
PATH_SHOWN = 4096  # a path (PATH_MAX): a file named on the command line or found in a folder


def shown(text: object, limit: int = MAX_SHOWN) -> str:
    """`text` with every non-printable character written as an escape (\\x1b, \\n, \\u202e...) and
    cut to `limit` characters (then "... (N characters in all)"). Printable text is unchanged."""
    s = text if isinstance(text, str) else str(text)
    head = s[: limit + 1]
    if head.isprintable():
        out = head
    else:
        out = "".join(ch if ch.isprintable() else _escape(ch) for ch in head)
    if len(s) > limit or len(out) > limit:
        return out[:limit] + f"... ({len(s)} characters in all)"
    return out


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
