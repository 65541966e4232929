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

from ..exit_codes import ExitCode
from . import complete
from .app import app
from .output import OUTPUT_HELP, chosen_format, report_stream
from .errors import fail, guarded


class FleetFormat(str, Enum):
    text = "text"
    json = "json"


DEFAULT_COMMAND = "topodiag check --format json"


def _check_options(profile: Optional[str], config: Optional[str], select, ignore, source: Optional[str] = None) -> dict:
    """What bundles are judged with, validated here once (a usage error, exit 2), not once per bundle."""
    from ..engine import load_catalog
    from ..engine.runner import select_rules
    from ..pipeline import named_profile

    options: dict = {}
    if source:
        from ..parsers import names

        if source not in names():
            fail(f"--source: unknown source {source!r}; one of: {', '.join(names())}", ExitCode.USAGE)
        options["source"] = source
    if profile:
        named_profile(profile)
        options["profile"] = profile
    if config:
        from ..engine.site_config import load as load_site_config

        load_site_config(config)
        options["config"] = config
    if select or ignore:
        select_rules(load_catalog(examples=False), select=select, ignore=ignore)
        options["select"], options["ignore"] = select, ignore
    return options


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
    from ..engine import parse_fail_on
    from ..fleet import render_json, render_text, run_fleet

    paths = list(reports or [])
    if not paths and not nodes and not nccl_logs:
        fail("give reports (files, directories, bundles, - for standard input), --nodes NODESET or --nccl-log",
             ExitCode.USAGE)
    if not 0.5 <= min_share <= 1:
        fail(f"--min-share: {min_share:g} is not between 0.5 and 1", ExitCode.USAGE)
    if min_nodes < 2:
        fail(f"--min-nodes: {min_nodes} is below 2 (one node is its own majority)", ExitCode.USAGE)
    if fanout < 1 or timeout <= 0 or connect_timeout <= 0:
        fail("--fanout, --timeout and --connect-timeout must be positive", ExitCode.USAGE)
    if local and not nodes:
        fail("--local goes with --nodes", ExitCode.USAGE)
    try:
        level = parse_fail_on(fail_on)
    except ValueError as exc:
        fail(f"--fail-on: {exc}", ExitCode.USAGE)
    check_options = _check_options(profile, config, select, ignore, source)
    group_key = None if group_by.strip().lower() in ("", "none") else group_by.strip()

    texts, input_failures = None, None
    if nodes:
        from ..actions.fanout import FanOutError, fan_out

        if sys.stderr.isatty():
            from ..render.sanitise import line

            sys.stderr.write(f"topodiag: fleet: running `{line(command, 200)}` on {line(nodes, 200)} "
                             f"({'here, per node' if local else 'ssh'}, {fanout} at a time, {timeout:g} s each)\n")
        try:
            out = fan_out(nodes, command, fanout=fanout, timeout_s=timeout,
                          connect_timeout_s=connect_timeout, local=local)
        except FanOutError as exc:
            fail(str(exc), ExitCode.USAGE if exc.usage else ExitCode.INCOMPLETE)
        texts, input_failures = out.outputs.items(), out.failures.items()
    else:
        out = None

    tty = sys.stderr.isatty()
    result = run_fleet(paths, texts=texts, input_failures=input_failures, nccl_logs=list(nccl_logs or []),
                       check_options=check_options, min_share=min_share, min_nodes=min_nodes,
                       group_by=group_key, progress=_progress if tty else None)
    if out is not None:
        out.close()  # the spooled outputs, read one node at a time above
    if tty and result.nodes >= 1000:
        sys.stderr.write("\n")

    fmt = chosen_format(output_format.value if output_format else None, [f.value for f in FleetFormat])
    severity = level.name.lower() if level is not None else None
    with report_stream(output) as stream:  # --output: replaced whatever the comparison says
        if fmt == "json":
            stream.write(render_json(result) + "\n")
        else:
            render_text(result, file=stream, max_outliers=max_outliers, fail_on=severity)
    if result.has_outliers or result.has_duplicates or (severity and result.at_or_above(severity)):
        raise typer.Exit(int(ExitCode.FINDINGS))
    nothing_read = result.nodes == 0 and not result.nccl
    if nothing_read and not result.failed_count:
        print("topodiag: error: no report in the inputs", file=sys.stderr)
    if nothing_read or result.failed_count:
        raise typer.Exit(int(ExitCode.INCOMPLETE))
    raise typer.Exit(int(ExitCode.OK))
