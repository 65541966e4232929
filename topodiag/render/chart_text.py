"""A busbw-vs-size chart for a terminal, plain characters (no colour needed): x is the message size on
a log2 axis, y the busbw, one marker letter per run, the expectation as a row of '-'.

`text_chart(series, expectation)` takes plain data, so any command can draw one: series is
[(label, [(size_bytes, busbw_gbps), ...]), ...]."""

from __future__ import annotations

import math
from typing import Optional, Sequence

MARKERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


def _size(n: float) -> str:
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div:
            return f"{n / div:g}{unit}"
    return f"{n:g}"


def text_chart(series: Sequence[tuple[str, Sequence[tuple[float, float]]]], expectation: Optional[float] = None,
               width: int = 64, height: int = 14) -> str:
    points = [(s, b) for _, pts in series for s, b in pts if s and s > 0 and b is not None]
    if not points:
        return "(no busbw to chart)\n"
    xs = [math.log2(s) for s, _ in points]
    x0, x1 = min(xs), max(xs)
    top = max([b for _, b in points] + ([expectation] if expectation else [])) or 1.0
    grid = [[" "] * width for _ in range(height)]

    def col(size: float) -> int:
        return 0 if x1 == x0 else round((math.log2(size) - x0) / (x1 - x0) * (width - 1))

    def row(bw: float) -> int:
        return height - 1 - min(height - 1, round(bw / top * (height - 1)))

    if expectation:
        r = row(expectation)
        grid[r] = ["-"] * width
    for i, (_, pts) in enumerate(series):
        mark = MARKERS[i % len(MARKERS)]
        for s, b in pts:
            if s and s > 0 and b is not None:
                cell = grid[row(b)][col(s)]
                grid[row(b)][col(s)] = "*" if cell not in (" ", "-", mark) else mark
    lines = []
    for r in range(height):
        value = top * (height - 1 - r) / (height - 1)
        lines.append(f"{value:8.1f} |" + "".join(grid[r]))
    lines.append(" " * 9 + "+" + "-" * width)
    left, right = _size(2 ** x0), _size(2 ** x1)
    lines.append(" " * 10 + left + " " * max(1, width - len(left) - len(right)) + right + "  (size, log scale)")
    legend = "  ".join(f"{MARKERS[i % len(MARKERS)]} = {label}" for i, (label, _) in enumerate(series))
    if expectation:
        legend += f"  - = expected {expectation:g} GB/s"
    lines.append("  busbw GB/s; " + legend + ("  * = several runs" if len(series) > 1 else ""))
    return "\n".join(lines) + "\n"
