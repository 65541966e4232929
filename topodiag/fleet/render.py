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
    from rich.console import Console

    from ..render.sanitise import clean as c_

    out = file or sys.stdout
    console = Console(file=out, highlight=False, markup=False, emoji=False,
                      width=None if out.isatty() else _width_off_terminal())
    c = result.comparison
    grouped = len(c.groups) > 1
    _head(console, result, grouped)
    _outliers(console, c, grouped, max_outliers)
    for log in result.nccl:
        _nccl(console, log)
    _splits(console, c, grouped)
    _duplicates(console, result.duplicates)
    _failures(console, result.failures)
    if result.rereads:
        console.print(c_(f"Read more than once (counted once): {', '.join(result.rereads)}"))
    _summary(console, result.summary)
    _flagged(console, result.at_or_above(fail_on) if fail_on else [], fail_on, max_outliers)


def _table(title: str, **options):
    from rich import box
    from rich.table import Table

    options.setdefault("box", box.SIMPLE_HEAD)
    return Table(title=title, title_justify="left", pad_edge=False, **options)


def _head(console, result, grouped: bool) -> None:
    from rich.text import Text

    from ..render.sanitise import clean as c_

    c = result.comparison
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


def _outliers(console, c, grouped: bool, max_outliers: int) -> None:
    from ..render.sanitise import clean as c_

    if not c.outliers:
        return
    table = _table("Outliers (against the majority of the nodes)")
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


def _nccl(console, log: dict) -> None:
    from rich.text import Text

    from ..render.sanitise import clean as c_

    name = os.path.basename(log.get("log") or "") or "the NCCL log"
    table = _table(c_(f"NCCL transports per host ({name})"))
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


def _splits(console, c, grouped: bool) -> None:
    from ..render.sanitise import clean as c_

    if not c.splits:
        return
    table = _table("No clear majority (not blamed on any node)")
    table.add_column("key", no_wrap=True)
    table.add_column("values (nodes)")
    for s in c.splits:
        key = f"{s.key} ({s.group})" if grouped else s.key
        table.add_row(c_(key), c_(s.text.split(": ", 1)[1]))
    console.print(table)


def _duplicates(console, duplicates: list) -> None:
    from rich.text import Text

    from ..render.sanitise import clean as c_

    if not duplicates:
        return
    console.print(Text(f"Host names reported by more than one source ({len(duplicates)}; "
                       "each source is counted as a node of its own)", style="bold"))
    for d in duplicates:
        console.print(Text(f"  {c_(d['text'])}", style="red"))


def _failures(console, failures: list) -> None:
    from ..render.sanitise import clean as c_

    if not failures:
        return
    title = "Nodes without a report" if all(f.node for f in failures) else "Inputs without a report"
    table = _table(title)
    table.add_column("node" if title.startswith("Nodes") else "input", no_wrap=True)
    table.add_column("why")
    for f in failures:
        table.add_row(c_(f.label), c_(f.reason))
    console.print(table)


def _summary(console, summary: dict) -> None:
    from rich import box

    from ..render.sanitise import clean as c_
    from .summary import rows

    table = _table("Cluster summary", box=box.SIMPLE, show_header=False)
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("")
    table.add_column("", justify="right")
    for section, what, count in rows(summary):
        table.add_row(section, c_(what), count)
    console.print(table)


def _flagged(console, flagged: list, fail_on, max_outliers: int) -> None:
    from rich.text import Text

    from ..render.sanitise import clean as c_

    if not flagged:
        return
    shown = flagged if max_outliers <= 0 else flagged[:max_outliers]
    console.print(Text(f"Nodes with findings at or above {fail_on}: {len(flagged)}", style="bold"))
    for n in shown:
        console.print(c_(f"  {n['node']}: {n['worst']} ({', '.join(n['codes'])})"))
    if len(shown) < len(flagged):
        console.print(f"  ... and {len(flagged) - len(shown)} more (--format json lists all)")
