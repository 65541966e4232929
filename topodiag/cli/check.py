"""`topodiag check`: walk the checklist over this node (live) or over saved outputs and bundles
(`--from`), and report the findings. A shell around `topodiag.pipeline.diagnose`."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from ..exit_codes import exit_code
from ..render import format_enum
from . import complete
from .app import app
from .errors import guarded
from .output import OUTPUT_HELP, chosen_format, report_stream


ReportFormat = format_enum("check", "ReportFormat")  # text, json, prometheus, html: render.OFFERED


def progress_line(rec) -> None:
    """One line on stderr as each live source finishes (on a terminal)."""
    took = f"{rec.duration_s:.2f} s" if rec.duration_s is not None else ""
    why = f"  {rec.reason}" if rec.status != "ok" and rec.reason else ""
    print(f"  {rec.label:34s} {rec.status:14s} {took:>8s}{why}", file=sys.stderr, flush=True)


def show_crashes(diagnosis) -> None:
    """With --debug, the traceback of every check that crashed (SYS003), on stderr."""
    from .app import _state

    if _state.get("debug"):
        for crash in diagnosis.outcome.crashes:
            sys.stderr.write(crash.traceback)


def positive_deadline(deadline: float) -> float:
    """--deadline: a finite number of seconds above 0, at most a day (nan, inf, 0, negatives: a usage
    error, exit 2)."""
    from ..live.deadline import check_deadline

    return check_deadline(deadline)


@app.command("check")
@guarded
def check_command(
    paths: List[str] = typer.Option([], "--from", metavar="PATH",
                                    help="A saved output, a directory of them, or a bundle (directory or "
                                         ".tar.gz); repeatable. Without it, this node is checked live."),
    more: Optional[List[str]] = typer.Argument(None, hidden=True, metavar="PATH"),
    profile: Optional[str] = typer.Option(None, "--profile", "-p", autocompletion=complete.profiles,
                                          help="Platform profile (rules/profiles/); default: detected from the GPU model."),
    config: Optional[str] = typer.Option(None, "--config", "-c", metavar="FILE",
                                         help="Site config TOML: profile, [rules.CODE] enabled/severity/params, "
                                              "[[hosts]] blocks by host pattern."),
    host: Optional[str] = typer.Option(None, "--host", metavar="NAME",
                                       help="The host the inputs come from (default: what a bundle or NCCL log says)."),
    output_format: Optional[ReportFormat] = typer.Option(
        None, "--format", "-f", help="text (the default; $TOPODIAG_FORMAT changes it), json, prometheus "
                                     "(node_exporter textfile collector), or html (one self-contained page for a ticket)."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help=OUTPUT_HELP),
    fail_on: str = typer.Option("error", "--fail-on", metavar="LEVEL", autocompletion=complete.levels,
                                help="Exit 1 for findings at or above: info, warning, error, critical, never."),
    select: Optional[List[str]] = typer.Option(None, "--select", metavar="CODES", autocompletion=complete.rules,
                                               help="Only these rules: codes, families or slugs, comma-separated."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", metavar="CODES", autocompletion=complete.rules,
                                               help="Leave out these rules: codes, families or slugs."),
    tags: Optional[List[str]] = typer.Option(None, "--tags", metavar="TAGS", autocompletion=complete.tags,
                                             help="Only rules with these tags (e.g. prolog); live, prolog also "
                                                  "limits collection to the passive, fast sources."),
    deadline: float = typer.Option(30.0, "--deadline", metavar="SECONDS",
                                   help="Live: the whole collection's deadline (each source has its own timeout too)."),
    sysfs_root: str = typer.Option("/", "--sysfs-root", metavar="DIR",
                                   help="Live: read /sys and /proc under DIR (a container with the host's mounted elsewhere)."),
    source: Optional[str] = typer.Option(
        None, "--source", "-s", metavar="SOURCE",
        help="--from: read the files as this tool's output (as `parse --source`) when detection cannot place a paste."),
    verbose: bool = typer.Option(False, "--verbose", "-v",
                                 help="Text: each finding's subjects, evidence and expectation, and every skipped rule with why."),
) -> None:
    """Run the checklist over this node, or over saved outputs and bundles (--from), and report.

    Exit 0 when nothing is at or above --fail-on, 1 when something is, 2 for a usage error,
    3 when an input could not be collected, read or parsed (no verdict), 4 for an internal error.
    """
    from ..live.commands import session
    from ..pipeline import LiveOptions, diagnose

    all_paths = list(paths) + list(more or [])
    positive_deadline(deadline)
    if source is not None and not all_paths:
        raise typer.BadParameter("--source goes with --from (saved outputs), not with a live check", param_hint="--source")
    live = None
    if not all_paths:
        prolog = "prolog" in {t.lower() for t in (tags or [])}
        live = LiveOptions(deadline_s=deadline, prolog=prolog, sysfs_root=sysfs_root,
                           progress=progress_line if sys.stderr.isatty() else None)
    # live: every tool (and ofed_info) under --deadline; a SIGTERM/SIGINT/SIGHUP kills the tools' groups
    with session(deadline if live is not None else None):
        d = diagnose(all_paths or None, live=live, host=host, profile=profile, config=config, select=select,
                     ignore=ignore, tags=tags, fail_on=fail_on, source=source)
    show_crashes(d)
    fmt = chosen_format(output_format.value if output_format else None, [f.value for f in ReportFormat])
    d.run_info = run_info(d)
    with report_stream(output) as stream:  # --output: replaced whatever the verdict
        d.render(fmt, stream, **({"verbose": True} if verbose else {}))
    raise typer.Exit(exit_code(d.exit_code))


def run_info(diagnosis) -> dict:
    """When and how this report was made: the command line and the time (render/meta.py adds the
    rest from the inputs)."""
    from ..render.meta import now_utc

    from .output import command_line

    return {"generated_at": now_utc(), "command": command_line()}
