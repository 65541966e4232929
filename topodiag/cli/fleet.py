"""`topodiag fleet`: many nodes' reports side by side; the nodes that differ from the majority.

Reports come from files (JSON, JSON lines, clush/srun output, bundles: topodiag/fleet/reports.py),
from standard input (`-`), or from running `topodiag check --format json` on a node set over ssh
(--nodes: topodiag/actions/fanout.py; node names checked by topodiag/actions/nodenames.py). The
comparison itself is topodiag/fleet.

Exit 1 when a node (or an NCCL host) differs from the majority, has a finding at or above --fail-on,
or two sources report one host name (a cloned hostname; each source counts as a node); else 3 when
a node or input gave no report, or nothing was read at all; else 0.
"""

from __future__ import annotations

import sys
from enum import Enum
from typing import List, Optional

import typer

from ..exit_codes import exit_code
from ..pipeline.commands.fleet import DEFAULT_COMMAND
from . import complete
from .app import app
from .output import OUTPUT_HELP, chosen_format, report_stream
from .errors import guarded


class FleetFormat(str, Enum):
    text = "text"
    json = "json"


def _announce(text: str) -> None:
    sys.stderr.write(f"topodiag: fleet: {text}\n")


def _progress(read: int) -> None:
    sys.stderr.write(f"\rtopodiag: fleet: {read} reports read")
    sys.stderr.flush()


@app.command("fleet")
@guarded
def fleet_command(
    reports: Optional[List[str]] = typer.Argument(
        None, metavar="[REPORT]...",
        help="JSON reports (`topodiag check --format json`), JSON-lines files, clush/srun output, "
             "directories of them, bundles (directory or .tar.gz); - reads standard input."),
    nodes: Optional[str] = typer.Option(
        None, "--nodes", "-w", metavar="NODESET",
        help="Run --command on these nodes over ssh, e.g. 'gpu[001-128]' (ClusterShell's node-set syntax, "
             "at most 100,000 nodes; each name a host name), and compare what they print."),
    command: str = typer.Option(DEFAULT_COMMAND, "--command", metavar="CMD",
                                help="What --nodes runs on each node; it must print a JSON report."),
    fanout: int = typer.Option(64, "--fanout", metavar="N", help="--nodes: at most this many nodes at a time."),
    timeout: float = typer.Option(120.0, "--timeout", metavar="SECONDS",
                                  help="--nodes: a node that has not answered by then is listed as timed out."),
    connect_timeout: float = typer.Option(10.0, "--connect-timeout", metavar="SECONDS",
                                          help="--nodes: ssh connection timeout."),
    local: bool = typer.Option(False, "--local",
                               help="--nodes: run --command on this machine once per node, %h standing for "
                                    "the node name, shell-quoted (e.g. 'srun -N1 -w %h topodiag check --format json'), "
                                    "instead of over ssh."),
    nccl_logs: Optional[List[str]] = typer.Option(
        None, "--nccl-log", metavar="FILE",
        help="A multi-host NCCL_DEBUG=INFO log: the hosts whose transport differs from the rest (repeatable)."),
    group_by: str = typer.Option("gpu.model", "--group-by", metavar="KEY",
                                 help="Compare the nodes of each value of this fingerprint key apart "
                                      "(default gpu.model: H100 nodes with H100 nodes); 'none': one group."),
    min_share: float = typer.Option(0.5, "--min-share", metavar="FRACTION",
                                    help="A majority needs at least this share of the nodes (0.5 to 1)."),
    min_nodes: int = typer.Option(3, "--min-nodes", metavar="N",
                                  help="Fewer nodes than this (in a group) have no majority to differ from."),
    fail_on: str = typer.Option("error", "--fail-on", metavar="LEVEL", autocompletion=complete.levels,
                                help="Also exit 1 when a node has a finding at or above: info, warning, error "
                                     "(default: a node that needs attention fails the sweep), critical; "
                                     "never: only outliers do."),
    output_format: Optional[FleetFormat] = typer.Option(
        None, "--format", "-f", help="text (the default; $TOPODIAG_FORMAT changes it) or json."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help=OUTPUT_HELP),
    max_outliers: int = typer.Option(0, "--max-outliers", metavar="N",
                                     help="text: list at most N outlier nodes and count the rest (0: all)."),
    profile: Optional[str] = typer.Option(None, "--profile", "-p", autocompletion=complete.profiles, help="Bundles: platform profile (as check)."),
    config: Optional[str] = typer.Option(None, "--config", "-c", metavar="FILE",
                                         help="Bundles: site config TOML (as check)."),
    select: Optional[List[str]] = typer.Option(None, "--select", metavar="CODES", help="Bundles: only these rules."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", metavar="CODES", help="Bundles: leave these out."),
    source: Optional[str] = typer.Option(None, "--source", "-s", metavar="SOURCE",
                                         help="Saved outputs checked as inputs: read them as this tool's output (as check --source)."),
) -> None:
    """Compare many nodes' reports and name the nodes that differ from the majority.

    Exit 1 when a node differs from the majority, has a finding at or above --fail-on, or two sources
    (nodes, files) report one host name;
    3 when a node or input gave no report and nothing differs; 2 for a usage error; else 0.
    """
    from ..fleet import render_json, render_text
    from ..pipeline.commands.fleet import FleetRequest, fleet

    tty = sys.stderr.isatty()
    run = fleet(FleetRequest(
        paths=list(reports or []), nodes=nodes, command=command, fanout=fanout, timeout=timeout,
        connect_timeout=connect_timeout, local=local, nccl_logs=list(nccl_logs or []), group_by=group_by,
        min_share=min_share, min_nodes=min_nodes, fail_on=fail_on, profile=profile, config=config, select=select,
        ignore=ignore, source=source, progress=_progress if tty else None, announce=_announce if tty else None))
    if tty and run.result.nodes >= 1000:
        sys.stderr.write("\n")
    fmt = chosen_format(output_format.value if output_format else None, [f.value for f in FleetFormat])
    with report_stream(output) as stream:  # --output: replaced whatever the comparison says
        if fmt == "json":
            stream.write(render_json(run.result) + "\n")
        else:
            render_text(run.result, file=stream, max_outliers=max_outliers, fail_on=run.severity)
    if run.nothing_read:
        print("topodiag: error: no report in the inputs", file=sys.stderr)
    raise typer.Exit(exit_code(run.outcome))
