"""Labelled matrices as tools print them: a header row of column labels, then rows each with its own
label and values in column order (p2pBandwidthLatencyTest, nvbandwidth, `nvidia-smi topo -m` and
`topo -p2p`). `find_header` finds the header row of such a matrix, `cell` reads a value from it."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from .base import ParseError


def cell(columns: Sequence[int], rows: Sequence[Any], row_key: int, col_key: int,
         label: Callable[[Any], int]) -> Optional[float]:
    """The value of the row labelled `row_key` in the column labelled `col_key`; None when that row or
    column is not printed, or the row was cut before it."""
    if col_key not in columns:
        return None
    i = list(columns).index(col_key)
    for r in rows:
        if label(r) == row_key:
            return r.values[i] if i < len(r.values) else None
    return None


def find_header(lines: Sequence[str], is_header: Callable[[str, list[str]], bool],
                row_after: Callable[[str], Optional[bool]], skip: Callable[[str], bool],
                expected: str, no_rows: str) -> int:
    """Index of the first header row followed by a matrix row.

    is_header(line, tokens): whether a line can be the header; skip(line): lines between the header and
    its first row that do not count (blank lines, elision markers); row_after(line): True when the line
    after the header is a row of the matrix, False when it is not, None when it shows the header
    belongs to another kind of matrix (then it counts as no header at all). ParseError: `no_rows` at a
    header with no row after it, else "expected <expected>, found ..." at the first line of text.
    """
    first: Optional[tuple[int, str]] = None
    lonely: Optional[int] = None  # a header with no rows after it
    for i, line in enumerate(lines):
        toks = line.split()
        if not toks:
            continue
        if first is None:
            first = (i + 1, line.strip())
        if not is_header(line, toks):
            continue
        k = i + 1
        while k < len(lines) and skip(lines[k]):
            k += 1
        verdict = row_after(lines[k] if k < len(lines) else "")
        if verdict:
            return i
        if verdict is not None and lonely is None:
            lonely = i
    if lonely is not None:
        raise ParseError(no_rows, lonely + 1)
    if first is None:
        raise ParseError(f"expected {expected}, found no text", 0)
    raise ParseError(f"expected {expected}, found '{first[1][:60]}'", first[0])
