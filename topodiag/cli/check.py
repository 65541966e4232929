"""`topodiag check --from PATH...`: walk the checklist over saved outputs and report the findings."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Any, List, Optional

import typer

from ..exit_codes import ExitCode
from . import app

class ReportFormat(str, Enum):
    text = "text"
    json = "json"


def fail(message: str, code: ExitCode) -> None:
    print(f"topodiag: error: {message}", file=sys.stderr)
    raise typer.Exit(code)


def gather_or_exit(paths: List[str]):
    """The parsed inputs of the paths (an unusable bundle or an archive: exit 3; nothing given: exit 2)."""
    from ..sources.bundle import BundleError
    from ..sources.inputs import BundleNotSupported, gather

    if not paths:
        fail("no input: pass --from PATH (files or directories of saved outputs); "
             "live collection arrives with issue 4 (`topodiag collect`)", ExitCode.USAGE)
    try:
        gathered = gather(paths)
    except (BundleNotSupported, BundleError) as exc:
        fail(str(exc), ExitCode.INCOMPLETE)
    if not gathered.statuses:
        fail(f"{', '.join(paths)}: no files to read", ExitCode.INCOMPLETE)
    return gathered


def choose_profile(name: Optional[str], topology) -> tuple[Any, str]:
    """The named profile (exit 2 when unknown), else the one the GPU models match; and how it was chosen."""
    gpus = topology.gpus()
    models = [m for g in gpus if (m := topology.node(g).get("model"))]
    if not name and not models:
        return None, "none (the inputs name no GPU model)"  # without reading the profiles
    from ..profiles import ProfileError, detect_profile, load_profiles

    try:
        profiles = load_profiles()
    except ProfileError as exc:
        if name:
            fail(str(exc), ExitCode.USAGE)
        return None, "none (profiles unreadable)"
    if name:
        if name not in profiles:
            fail(f"--profile: unknown profile {name!r}; one of: {', '.join(profiles)}", ExitCode.USAGE)
        return profiles[name], f"{name} (given)"
    prof = detect_profile(models, profiles, gpu_count=len(gpus))
    return (prof, f"{prof.name} (detected from {models[0]})") if prof else (None, "none (no profile matches)")


@app.command("check")
def check_command(
    paths: List[str] = typer.Option([], "--from", metavar="PATH",
                                    help="A saved output, or a directory of them (repeatable)."),
    more: Optional[List[str]] = typer.Argument(None, hidden=True, metavar="PATH"),
    profile: Optional[str] = typer.Option(None, "--profile", "-p",
                                          help="Platform profile (rules/profiles/); default: detected from the GPU model."),
    config: Optional[str] = typer.Option(None, "--config", "-c", metavar="FILE",
                                         help="Site config TOML: profile, [rules.CODE] enabled/severity/params, "
                                              "[[hosts]] blocks by host pattern."),
    host: Optional[str] = typer.Option(None, "--host", metavar="NAME",
                                       help="The host the inputs come from (default: what a bundle or NCCL log says)."),
    output_format: Optional[ReportFormat] = typer.Option(
        None, "--format", "-f", help="text (default on a terminal) or json (default otherwise)."),
    fail_on: str = typer.Option("error", "--fail-on", metavar="LEVEL",
                                help="Exit 1 for findings at or above: info, warning, error, critical, never."),
    select: Optional[List[str]] = typer.Option(None, "--select", metavar="CODES",
                                               help="Only these rules: codes, families or slugs, comma-separated."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", metavar="CODES",
                                               help="Leave out these rules: codes, families or slugs."),
) -> None:
    """Run the checklist over saved tool outputs and report the findings.

    Exit 0 when nothing is at or above --fail-on, 1 when something is, 2 for a usage error,
    3 when an input could not be read or parsed (no verdict), 4 for an internal error.
    """
    from ..engine import ConfigError, SelectionError, load_catalog, load_checks, parse_fail_on, run
    from ..model import build

    try:
        fail_level = parse_fail_on(fail_on)
    except ValueError as exc:
        fail(f"--fail-on: {exc}", ExitCode.USAGE)
    site = None
    if config:
        from ..engine.site_config import load as load_site_config

        try:
            site = load_site_config(config)
        except ConfigError as exc:
            fail(str(exc), ExitCode.USAGE)
    gathered = gather_or_exit(list(paths) + list(more or []))
    topology = build(gathered.parsed, host=host or gathered.host)
    rules_config: dict[str, Any] = {}
    config_info = None
    if site is not None:
        name = topology.node(topology.host()).get("name")
        rules_config, config_profile, matched = site.for_host(name)
        profile = profile or config_profile
        config_info = {"file": config, "host": name, "matched": matched}
    prof, profile_how = choose_profile(profile, topology)
    inputs: dict[str, Any] = dict(gathered.engine_inputs())
    inputs["topology"] = topology
    inputs["profile"] = prof
    catalog = load_catalog(examples=False)
    load_checks()
    try:
        outcome = run(catalog, inputs, select=select, ignore=ignore, config=rules_config,
                      fail_on=fail_level, problems=gathered.problems)
    except (SelectionError, ConfigError) as exc:
        fail(str(exc), ExitCode.USAGE)
    from . import _state

    if _state.get("debug"):
        for crash in outcome.crashes:
            sys.stderr.write(crash.traceback)
    fmt = output_format or (ReportFormat.text if sys.stdout.isatty() else ReportFormat.json)
    if fmt is ReportFormat.json:
        import json

        from ..render.json_report import report

        data = report(outcome, topology, gathered.statuses, profile_how, config_info)
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        from ..render.text import render_check

        render_check(outcome, topology, gathered.statuses, profile_how)
    raise typer.Exit(int(outcome.exit_code))
