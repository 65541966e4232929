"""The comparison as text: the table of busbw per size per run (the best marked), the bands, the
summary sentences, and the terminal chart."""

from __future__ import annotations

from typing import TextIO

from . import series


def _size(n: int) -> str:
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def render(result: dict, out: TextIO, chart: bool = True) -> None:
    runs = result["runs"]
    out.write(f"Compare {len(runs)} {result['collective'] or 'nccl-tests'} runs:\n")
    for i, r in enumerate(runs):
        out.write(f"  [{i + 1}] {r['label']}  ({r['label_from']}; {r['path']}"
                  + (f" run {r['run']}" if r["run"] > 1 else "") + ")\n")
    width = max(10, *(len(r["label"]) for r in runs)) if runs else 10
    width = min(width, 24)
    out.write("\n  " + f"{'size':>6}" + "".join(f"  {r['label'][:width]:>{width}}" for r in runs) + "\n")
    for row in result["table"]:
        cells = []
        for r, v in zip(runs, row["busbw"]):
            mark = "*" if row["best"] == r["label"] else " "
            cells.append(f"  {('-' if v is None else f'{v:g}') + mark:>{width}}")
        out.write("  " + f"{_size(row['size']):>6}" + "".join(cells) + "\n")
    out.write("  (busbw GB/s, the better of out-of-place and in-place; * = best at that size)\n")
    if result["bands"]:
        out.write("\nBy size band (sizes all runs have):\n")
        for b in result["bands"]:
            hi = _size(b["to_bytes"]) if b["to_bytes"] else "up"
            gain = b["gain_pct_vs_first"]
            out.write(f"  {b['band']:<7} {_size(b['from_bytes'])}-{hi}: best {b['best']}"
                      f" (+{b['gain_pct_vs_runner_up'] or 0:g}% over the next"
                      + (f", +{gain:g}% over [1]" if gain else "") + ")\n")
    exp = result["expectation"]
    if exp.get("gbps"):
        out.write(f"\nExpected: {exp['gbps']:g} GB/s ({exp['how']})\n")
    else:
        out.write(f"\nExpected: not judged: {exp.get('why') or 'no expectation'} (profile {exp['profile']})\n")
    out.write("\n")
    for line in result["summary"]:
        out.write(f"- {line}\n")
    if chart:
        from ..render.chart_text import text_chart

        out.write("\n" + text_chart(series(result), exp.get("gbps")))
