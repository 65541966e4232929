"""A busbw-vs-size chart as a standalone SVG file, written by hand (no plotting library, nothing
fetched): log2 x axis of message sizes, linear y axis of busbw, one polyline per run with its label,
and the expectation as a dashed line.

`svg_chart(series, expectation, title)` takes plain data: series is
[(label, [(size_bytes, busbw_gbps), ...]), ...]; it returns the SVG text. Any number is survived:
a point whose size is not a finite number of bytes in 1 B..2**64 B, or whose busbw is not a finite
number, is left out; a busbw above MAX_GBPS (a parse of "1e308") is drawn at MAX_GBPS, and an
expectation that is not a finite positive number is not drawn."""

from __future__ import annotations

import math
from typing import Optional, Sequence
from xml.sax.saxutils import escape

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
W, H = 800, 480
LEFT, RIGHT, TOP, BOTTOM = 70, 110, 40, 60
LABEL_GAP = 64  # pixels between two x-axis labels at least ("512 MiB" is ~50 pixels at 12 px)
LEGEND_ROW = 18  # the legend sits under the plot, one series a row, its label whole (escaped)
MAX_GBPS = 1e6  # 1 PB/s: far above any link; a larger busbw is drawn here
MAX_SIZE = float(1 << 64)


def _number(v) -> Optional[float]:
    """`v` as a finite float, or None."""
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return None
    return f if math.isfinite(f) else None


def _points(pts) -> list[tuple[float, float]]:
    """The plottable points of a series, sorted by size: sizes in 1..MAX_SIZE, busbw clamped to
    0..MAX_GBPS."""
    out = []
    for s, b in pts:
        size, bw = _number(s), _number(b)
        if size is None or bw is None or not 0 < size <= MAX_SIZE:
            continue
        out.append((size, min(max(bw, 0.0), MAX_GBPS)))
    return sorted(out)


def _size(n: float) -> str:
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:g} {unit}"
    return f"{n:g} B"


def _nice(top: float) -> float:
    if top <= 0:
        return 1.0
    step = 10 ** math.floor(math.log10(top))
    for m in (1, 2, 2.5, 5, 10):
        if m * step >= top:
            return m * step
    return 10 * step


def svg_chart(series: Sequence[tuple[str, Sequence[tuple[float, float]]]], expectation: Optional[float] = None,
              title: str = "busbw by message size") -> str:
    series = [(str(label), _points(pts)) for label, pts in series]
    expectation = _number(expectation)
    if expectation is not None and not 0 < expectation <= MAX_GBPS:
        expectation = None
    pts_all = [p for _, pts in series for p in pts]
    xs = [math.log2(s) for s, _ in pts_all] or [0.0, 1.0]
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x1 = x0 + 1
    top = _nice(max([b for _, b in pts_all] + ([expectation] if expectation else []) + [1.0]) * 1.05)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    height = H + LEGEND_ROW * len(series) + (8 if series else 0)

    def X(size: float) -> float:
        return LEFT + (math.log2(size) - x0) / (x1 - x0) * pw

    def Y(bw: float) -> float:
        return TOP + ph - bw / top * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{height}" fill="white"/>',
           f'<text x="{W / 2:.0f}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>']
    for i in range(6):
        v = top * i / 5
        y = Y(v)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{v:g}</text>')
    e = math.ceil(x0)
    step = max(1, math.ceil((x1 - x0) * LABEL_GAP / pw))  # powers of two between labels: never run together
    while e <= x1:
        x = X(2 ** e)
        if e % step == 0:
            out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + ph}" stroke="#eee"/>')
            out.append(f'<text x="{x:.1f}" y="{TOP + ph + 16}" text-anchor="middle">{escape(_size(2 ** e))}</text>')
        e += 1
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{LEFT + pw / 2:.0f}" y="{H - 18}" text-anchor="middle">message size (log scale)</text>')
    out.append(f'<text x="18" y="{TOP + ph / 2:.0f}" text-anchor="middle" '
               f'transform="rotate(-90 18 {TOP + ph / 2:.0f})">busbw (GB/s)</text>')
    if expectation:
        y = Y(expectation)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" stroke="#555" '
                   f'stroke-dasharray="6,4"/>')
        out.append(f'<text x="{LEFT + pw + 6}" y="{y + 4:.1f}">expected {expectation:g}</text>')
    for i, (label, pts) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        good = pts
        if good:
            path = " ".join(f"{X(s):.1f},{Y(b):.1f}" for s, b in good)
            out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>')
            out.extend(f'<circle cx="{X(s):.1f}" cy="{Y(b):.1f}" r="2.5" fill="{colour}"/>' for s, b in good)
        ly = H + 4 + LEGEND_ROW * i
        out.append(f'<line x1="{LEFT}" y1="{ly - 4}" x2="{LEFT + 20}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="3"/>')
        out.append(f'<text class="legend" x="{LEFT + 26}" y="{ly}">{escape(label[:110])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
