"""`topodiag show`: the topology model of this node or of saved outputs (table, json, dot, graphml):
`topodiag.pipeline.survey` and a renderer."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from ..render import OFFERED, format_enum
from .app import app
from .output import OUTPUT_HELP, report_stream
from .errors import guarded


ShowFormat = format_enum("show", "ShowFormat")  # table, json, dot, graphml: render.OFFERED


@app.command("show")
@guarded
def show_command(
    paths: List[str] = typer.Option([], "--from", metavar="PATH",
                                    help="A saved output, a directory of them, or a bundle (repeatable); without it, this node live."),
    more: Optional[List[str]] = typer.Argument(None, hidden=True, metavar="PATH"),
    output_format: ShowFormat = typer.Option(ShowFormat.table, "--format", "-f",
                                             help="table, json (Topology JSON), dot or graphml."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help=OUTPUT_HELP),
) -> None:
    """Print the topology model built from saved outputs: GPUs, NICs, NUMA nodes and their links."""
    from ..live.commands import session
    from ..pipeline import survey

    all_paths = list(paths) + list(more or [])
    with session(None if all_paths else 30.0):  # live: the tools' groups die with us, on a signal too
        d = survey(all_paths or None)
    for s in d.statuses:
        if s.status in ("failed", "unparseable"):
            print(f"topodiag: warning: {s.path}: {s.status}: {s.reason}", file=sys.stderr)
    fmt = OFFERED["show"][output_format.value]
    with report_stream(output) as stream:
        d.render(fmt, stream)
