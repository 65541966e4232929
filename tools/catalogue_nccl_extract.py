"""Extraction half of tools/catalogue_nccl.py: the format strings of a C/C++ source file's logging calls.

    extract(text, macros) -> [(macro, format, line)]

A call is `MACRO(` (WARN, INFO, INFO_LOC, NCCL_OFI_WARN...) not preceded by an identifier character,
outside comments and `#define` lines; for macros taking flags first (INFO(FLAGS, fmt, ...)) the
first argument is skipped. The format is the run of adjacent string literals ("a" "b", across lines)
with the identifiers between them: the <inttypes.h> macros (PRIx64 -> "lx") are expanded, any other
identifier (a macro parameter such as SYSCHECK's `name`, or a #define'd string) becomes "%s".
A call whose format has no string literal at all (WARN(buf)) is skipped.
"""

from __future__ import annotations

import re

PRI = {"PRIx64": "lx", "PRIX64": "lX", "PRIu64": "lu", "PRId64": "ld", "PRIi64": "li", "PRIx32": "x",
       "PRIu32": "u", "PRId32": "d", "PRIi32": "i", "PRIxPTR": "lx", "PRIuPTR": "lu", "PRIu16": "u",
       "PRIx16": "x", "PRIu8": "u", "PRIx8": "x", "PRId16": "d", "PRId8": "d", "PRIX32": "X"}
_ESC = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "r": "", "0": "", "a": "", "e": ""}


def _strip_comments(text: str) -> str:
    """Comments blanked (newlines kept, so line numbers hold); string and char literals kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _literal(text: str, i: int) -> tuple[str, int]:
    """The string literal starting at text[i] == '"': (its value, the index after it)."""
    j, buf = i + 1, []
    while j < len(text) and text[j] != '"':
        ch = text[j]
        if ch == "\\" and j + 1 < len(text):
            nxt = text[j + 1]
            if nxt == "\n":
                j += 2
                continue
            if nxt == "x":
                m = re.match(r"[0-9a-fA-F]+", text[j + 2:])
                j += 2 + (len(m.group(0)) if m else 0)
                continue
            buf.append(_ESC.get(nxt, nxt))
            j += 2
            continue
        buf.append(ch)
        j += 1
    return "".join(buf), j + 1


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SKIP_TO_COMMA = re.compile(r"[(),\"']")


def _skip_arg(text: str, i: int) -> int:
    """Index after the first argument (its comma), honouring parentheses and literals; -1 if none."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return -1
            depth -= 1
        elif c == "," and depth == 0:
            return i + 1
        elif c == '"':
            i = _literal(text, i)[1]
            continue
        elif c == "'":
            j = text.find("'", i + 1 + (text[i + 1] == "\\"))
            i = j + 1 if j > 0 else i + 1
            continue
        i += 1
    return -1


def _close(text: str, i: int) -> int:
    """Index after the parenthesis that closes the one at text[i]; -1 if none."""
    depth = 0
    for j in range(i, min(len(text), i + 2000)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


def _format_at(text: str, i: int) -> tuple[str, bool]:
    """The format argument starting at text[i]: (value, has a literal)."""
    parts: list[str] = []
    lit = False
    n = len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == '"':
            val, i = _literal(text, i)
            parts.append(val)
            lit = True
        elif c == "(" and not parts:
            i += 1  # WARN(("..."))
        else:
            m = _IDENT.match(text, i)
            if m is None:
                break
            name = m.group(0)
            after = text[m.end():m.end() + 40].lstrip()
            if after.startswith("("):  # a call: part of the format only between literals (STR(X))
                end = _close(text, text.index("(", m.end()))
                if not parts or end < 0 or not text[end:end + 200].lstrip().startswith('"'):
                    if not parts:
                        return "", False
                    break
                parts.append("%s")
                i = end
                continue
            parts.append("%" + PRI[name] if name in PRI else "%s")
            i = m.end()
    return "".join(parts), lit


def extract(text: str, macros: dict[str, int]) -> list[tuple[str, str, int]]:
    """[(macro, format, line)] of every call of the macros ({name: arguments before the format})."""
    clean = _strip_comments(text)
    names = "|".join(sorted(map(re.escape, macros), key=len, reverse=True))
    call = re.compile(r"(?<![A-Za-z0-9_])(" + names + r")\s*\(")
    out = []
    line_starts = [0] + [m.end() for m in re.finditer("\n", clean)]
    import bisect
    for m in call.finditer(clean):
        ls = clean.rfind("\n", 0, m.start()) + 1
        if clean[ls:m.start()].lstrip().startswith("#"):
            continue  # a #define (the macro's own definition, or a wrapper's)
        i = m.end()
        for _ in range(macros[m.group(1)]):
            i = _skip_arg(clean, i)
            if i < 0:
                break
        if i < 0:
            continue
        fmt, lit = _format_at(clean, i)
        if not lit or not fmt.strip():
            continue
        line = bisect.bisect_right(line_starts, m.start())
        out.append((m.group(1), fmt, line))
    return out
