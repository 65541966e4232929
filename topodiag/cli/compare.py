"""`topodiag compare RUN...`: nccl-tests runs side by side (topodiag/compare): parse the options, call
the library, print text or JSON, write the SVG chart."""

from __future__ import annotations

from enum import Enum
from typing import List, Optional

import typer

from ..exit_codes import exit_code
from . import complete
from .app import app
from .output import OUTPUT_HELP, chosen_format, report_stream
from .errors import guarded


class CompareFormat(str, Enum):
    text = "text"
    json = "json"


@app.command("compare")
@guarded
def compare_command(
    runs: List[str] = typer.Argument(..., metavar="RUN...", help="nccl-tests outputs of one collective."),
    labels: List[str] = typer.Option([], "--label", metavar="L",
                                     help="Name the runs in order (repeatable); default: the NCCL settings the "
                                          "outputs carry, else their header, else the file name."),
    node: List[str] = typer.Option([], "--from", metavar="PATH",
                                   help="The node's saved outputs or bundle, for the expectation (repeatable)."),
    profile: Optional[str] = typer.Option(None, "--profile", metavar="P", autocompletion=complete.profiles, help="Judge against this platform profile."),
    noise: float = typer.Option(0.05, "--noise", metavar="F",
                                help="Large-size busbw within this fraction of the best counts as the same."),
    plot: Optional[str] = typer.Option(None, "--plot", metavar="FILE.svg", help="Write a busbw-vs-size chart (SVG)."),
    chart: bool = typer.Option(True, "--chart/--no-chart", help="text: draw the chart in the terminal."),
    output_format: Optional[CompareFormat] = typer.Option(
        None, "--format", "-f", help="text (the default; $TOPODIAG_FORMAT changes it) or json."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help=OUTPUT_HELP),
) -> None:
    """Compare nccl-tests runs: busbw per size, best per size band, gain, and the expectation."""
    from ..compare import series
    from ..errors import InputError
    from ..pipeline.commands.compare import CompareRequest, compare

    run = compare(CompareRequest(runs=runs, labels=labels, node=node, profile=profile, noise=noise))
    result = run.report
    if plot:
        from ..render.chart_svg import svg_chart

        try:
            with open(plot, "w", encoding="utf-8") as fh:
                fh.write(svg_chart(series(result), result["expectation"].get("gbps"),
                                   f"{result['collective'] or 'nccl-tests'} busbw by message size"))
        except OSError as exc:
            raise InputError(plot, f"cannot write the chart: {exc.strerror or exc}") from None
    fmt = chosen_format(output_format.value if output_format else None, [f.value for f in CompareFormat])
    with report_stream(output) as stream:
        if fmt == "json":
            from ..render.sanitise import dump_json

            dump_json(result, stream)  # a busbw of 1e308 gives an infinite gain: null, never Infinity
        else:
            from ..compare.text import render
            from .output import Folded

            folded = Folded(stream)  # 80 columns off a terminal: long lines wrapped, never cut
            render(result, folded, chart=chart)
            if plot:
                folded.write(f"chart written to {plot}\n")
            folded.flush()
    raise typer.Exit(exit_code(run.outcome))
