"""A cell of a labelled matrix as bandwidth tests print them (p2pBandwidthLatencyTest, nvbandwidth):
columns labelled by device, rows each with its own label and values in column order."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence


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
