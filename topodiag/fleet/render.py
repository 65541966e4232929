"""`topodiag fleet` for people (rich tables) and programs (JSON). rich is imported only here, and
only by render_text; no colour when the output is not a terminal."""

from __future__ import annotations

import json
import os
import sys


def _n(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def render_json(result) -> str:
    return json.dumps(result.to_dict(), indent=2, default=str)


def _width_off_terminal() -> int:
    """Not a terminal (a ticket, a pager): $COLUMNS (40 to 1000), else 80."""
    cols = os.environ.get("COLUMNS", "")
    return int(cols) if cols.isascii() and cols.isdigit() and 40 <= int(cols) <= 1000 else 80


def render_text(result, file=None, max_outliers: int = 0, fail_on=None) -> None:
    """Outliers (one line a node), NCCL hosts that differ, splits, failed inputs, the summary, then
    (with `fail_on`, a severity) the nodes with findings at or above it. `max_outliers` > 0 lists
    that many outlier (and flagged) nodes and counts the rest."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ..render.sanitise import clean as c_
    from .summary import rows

    out = file or sys.stdout
    console = Console(file=out, highlight=False, markup=False, emoji=False,
                      width=None if out.isatty() else _width_off_terminal())
    c = result.comparison
    grouped = len(c.groups) > 1
    head = (f"{_n(c.nodes, 'node')} compared on {_n(c.keys, 'fingerprint key')}"
            + (f" in {len(c.groups)} groups by {c.params.get('group_by')}" if grouped else "")
            + f": {len(c.outliers)} differ from the majority")
    if result.duplicates:
        head += f", {_n(len(result.duplicates), 'host name')} reported by more than one source"
    if result.failed_count:
        nodes = sum(f.count for f in result.failures if f.node)
        if nodes:
            head += f", {_n(nodes, 'node')} gave no report"
        if result.failed_count - nodes:
            head += f", {_n(result.failed_count - nodes, 'input')} gave no report"
    console.print(Text(c_(head), style="bold"))
    if grouped:
        for g in c.groups:
            joined = f" (with {_n(g['joined'], 'node')} of no or a rare {g['key']})" if g["joined"] else ""
            console.print(c_(f"  {g['key']} = {g['value']}: {_n(g['nodes'], 'node')}{joined}"))

    if c.outliers:
        table = Table(title="Outliers (against the majority of the nodes)", box=box.SIMPLE_HEAD,
                      title_justify="left", pad_edge=False)
        table.add_column("node", style="bold", no_wrap=True)
        if grouped:
            table.add_column("group")
        table.add_column("differs from the majority")
        shown = c.outliers if max_outliers <= 0 else c.outliers[:max_outliers]
        for o in shown:
            text = "\n".join(c_(d.text) for d in o.differences)
            table.add_row(c_(o.node), c_(o.group), text) if grouped else table.add_row(c_(o.node), text)
        console.print(table)
        if len(shown) < len(c.outliers):
            console.print(f"... and {len(c.outliers) - len(shown)} more nodes (--format json lists all)")

    for log in result.nccl:
        name = os.path.basename(log.get("log") or "") or "the NCCL log"
        table = Table(title=c_(f"NCCL transports per host ({name})"), box=box.SIMPLE_HEAD,
                      title_justify="left", pad_edge=False)
        table.add_column("host", no_wrap=True)
        table.add_column("transports (sampled lines)")
        table.add_column("note")
        odd = {o["host"] for o in log["outliers"]}
        for h in log["hosts"]:
            kinds = ", ".join(f"{k} x{n}" for k, n in h["transports"].items()) or "-"
            table.add_row(Text(c_(h["host"]), style="bold red" if h["host"] in odd else ""), c_(kinds), c_(h["note"]))
        console.print(table)
        for o in log["outliers"]:
            console.print(Text(c_(o["text"]), style="red"))
        for note in log["notes"]:
            console.print(Text(c_(note), style="yellow"))

    if c.splits:
        table = Table(title="No clear majority (not blamed on any node)", box=box.SIMPLE_HEAD,
                      title_justify="left", pad_edge=False)
        table.add_column("key", no_wrap=True)
        table.add_column("values (nodes)")
        for s in c.splits:
            key = f"{s.key} ({s.group})" if grouped else s.key
            table.add_row(c_(key), c_(s.text.split(": ", 1)[1]))
        console.print(table)

    if result.duplicates:
        console.print(Text(f"Host names reported by more than one source ({len(result.duplicates)}; "
                           "each source is counted as a node of its own)", style="bold"))
        for d in result.duplicates:
            console.print(Text(f"  {c_(d['text'])}", style="red"))
    if result.failures:
        title = "Nodes without a report" if all(f.node for f in result.failures) else "Inputs without a report"
        table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
        table.add_column("node" if title.startswith("Nodes") else "input", no_wrap=True)
        table.add_column("why")
        for f in result.failures:
            table.add_row(c_(f.label), c_(f.reason))
        console.print(table)
    if result.rereads:
        console.print(c_(f"Read more than once (counted once): {', '.join(result.rereads)}"))

    table = Table(title="Cluster summary", box=box.SIMPLE, title_justify="left", pad_edge=False,
                  show_header=False)
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("")
    table.add_column("", justify="right")
    for section, what, count in rows(result.summary):
        table.add_row(section, c_(what), count)
    console.print(table)

    flagged = result.at_or_above(fail_on) if fail_on else []
    if flagged:
        shown = flagged if max_outliers <= 0 else flagged[:max_outliers]
        console.print(Text(f"Nodes with findings at or above {fail_on}: {len(flagged)}", style="bold"))
        for n in shown:
            console.print(c_(f"  {n['node']}: {n['worst']} ({', '.join(n['codes'])})"))
        if len(shown) < len(flagged):
            console.print(f"  ... and {len(flagged) - len(shown)} more (--format json lists all)")
