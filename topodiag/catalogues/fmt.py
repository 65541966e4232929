"""printf format strings -> regexes and example lines.

A producer's messages are catalogued by their format string, exactly as its source writes it
(`"NET/IB : Got completion from peer %s with status=%d opcode=%d len=%u vendor err %u (%s)%s%s%s%s"`).
`to_regex` turns one into a pattern that matches what the producer prints; `example` renders a line
the producer could print (for the coverage tests); `literal_parts` gives the fixed text the matcher
indexes. Used at run time by `topodiag.catalogues` and by the generators under `tools/`.
"""

from __future__ import annotations

import re
from functools import lru_cache

# A conversion: flags, width, precision, length modifier, conversion character.
CONV_RE = re.compile(r"%(?P<flags>[-+ #0']*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?"
                     r"(?P<len>hh|h|ll|l|L|q|j|z|Z|t)?(?P<conv>[diouxXeEfFgGaAcsSpn%])")

_INT = r"[-+]?\d+"
_HEX = r"(?:0[xX])?[0-9a-fA-F]+"
_FLOAT = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan|-?inf)"
_TEXT = r".*?"
_BY_CONV = {"d": _INT, "i": _INT, "u": _INT, "o": r"[0-7]+", "x": _HEX, "X": _HEX,
            "e": _FLOAT, "E": _FLOAT, "f": _FLOAT, "F": _FLOAT, "g": _FLOAT, "G": _FLOAT,
            "a": r"\S+", "A": r"\S+", "c": r"(?s:.)", "s": _TEXT, "S": _TEXT,
            "p": r"(?:0[xX][0-9a-fA-F]+|\(nil\)|[0-9a-fA-F]+)", "n": ""}
_EXAMPLE = {"d": "3", "i": "3", "u": "7", "o": "7", "x": "1f", "X": "1F", "e": "1.5e+00", "E": "1.5E+00",
            "f": "1.5", "F": "1.5", "g": "1.5", "G": "1.5", "a": "0x1p+0", "A": "0X1P+0", "c": "c",
            "s": "mlx5_0", "S": "mlx5_0", "p": "0x7f3a2c000000", "n": ""}


def pieces(fmt: str) -> list[tuple[str, str]]:
    """[(kind, text)]: ("lit", fixed text) and ("conv", the conversion character), in order; ("pad", "")
    before a right-aligned conversion with a width ("[%2d]" prints "[ 3]")."""
    return list(_pieces(fmt))


@lru_cache(maxsize=16384)
def _pieces(fmt: str) -> tuple:
    """`pieces`, remembered: loading a catalogue asks for each format's pieces several times."""
    out: list[tuple[str, str]] = []
    pos = 0
    for m in CONV_RE.finditer(fmt):
        if m.start() > pos:
            out.append(("lit", fmt[pos:m.start()]))
        if m.group("conv") == "%":
            out.append(("lit", "%"))
        else:
            if m.group("width") and "-" not in m.group("flags") and m.group("conv") not in "sSc":
                out.append(("pad", ""))
            out.append(("conv", m.group("conv")))
        pos = m.end()
    if pos < len(fmt):
        out.append(("lit", fmt[pos:]))
    merged: list[tuple[str, str]] = []
    for kind, text in out:
        if kind == "lit" and merged and merged[-1][0] == "lit":
            merged[-1] = ("lit", merged[-1][1] + text)
        else:
            merged.append((kind, text))
    return tuple(merged)


def leading_literal(fmt: str) -> str:
    """The fixed text a format starts with ("%%" read as "%"), up to its first conversion: the first
    piece of `pieces` where that is fixed text, else "". Read without parsing the rest of the format
    (a catalogue of thousands is indexed by it when it loads)."""
    out = []
    pos = 0
    for m in CONV_RE.finditer(fmt):
        out.append(fmt[pos:m.start()])
        if m.group("conv") != "%":
            return "".join(out)
        out.append("%")
        pos = m.end()
    out.append(fmt[pos:])
    return "".join(out)


def _lit_regex(text: str) -> str:
    """Fixed text as a regex; runs of blanks match any run of blanks (people paste tabs and wrap)."""
    return r"\s+".join(re.escape(part) for part in re.split(r"\s+", text)) if text.strip() else r"\s*"


def to_regex(fmt: str) -> str:
    """The regex of what `printf(fmt, ...)` prints, anchored at the start only (a line may be cut or
    carry more after it). The format's leading and trailing blanks (its newline) are dropped
    (" .. %s pid %d: Test failure %s:%d"): the matcher is handed the message stripped."""
    out: list[str] = []
    parts = pieces(fmt.strip())
    for i, (kind, text) in enumerate(parts):
        if kind == "lit" and i == 0 and text[:1].isspace() and text.strip():
            out.append(r"\s*" + _lit_regex(text.lstrip()))  # leading blanks: the reader strips them
        elif kind == "lit":
            out.append(_lit_regex(text))
        elif kind == "pad":
            if not (out and out[-1].endswith((r"\s*", r"\s+"))):
                out.append(" *")  # blanks before the padded number (none to add after a run of blanks)
        elif text in ("s", "S") and out and out[-1] in (_TEXT, ".*"):
            continue  # "%s%s" is one run of text: two lazy runs side by side only backtrack
        elif text in ("s", "S") and i == len(parts) - 1:
            out.append(r".*")  # the last %s takes the rest of the line
        else:
            out.append(_BY_CONV[text])
    return "".join(out)


def example(fmt: str) -> str:
    """One line `printf(fmt, ...)` could print (for the coverage tests)."""
    return "".join(text if kind == "lit" else _EXAMPLE.get(text, "") for kind, text in pieces(fmt.rstrip("\n")))


def literal_parts(fmt: str) -> list[str]:
    """The fixed texts of a format, stripped, in order (the empty ones left out)."""
    return [t.strip() for k, t in pieces(fmt) if k == "lit" and t.strip()]


def literal_size(fmt: str) -> int:
    """How much fixed text a format has: the more, the more specific a match on it."""
    return sum(len(t) for t in literal_parts(fmt))
