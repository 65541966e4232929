"""`topodiag check`: walk the checklist over this node (live) or over saved outputs and bundles
(`--from`), and report the findings. `evaluate` is the part `prolog` shares."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from enum import Enum
from typing import Any, List, Optional

import typer

from ..exit_codes import ExitCode
from . import app


class ReportFormat(str, Enum):
    text = "text"
    json = "json"
    prometheus = "prometheus"


def fail(message: str, code: ExitCode) -> None:
    print(f"topodiag: error: {message}", file=sys.stderr)
    raise typer.Exit(code)


def gather_or_exit(paths: List[str]):
    """The parsed inputs of the paths (an unusable bundle: exit 3)."""
    from ..sources.bundle import BundleError
    from ..sources.inputs import gather

    try:
        gathered = gather(paths)
    except BundleError as exc:
        fail(str(exc), ExitCode.INCOMPLETE)
    if not gathered.statuses:
        fail(f"{', '.join(paths)}: no files to read", ExitCode.INCOMPLETE)
    return gathered


def gather_live(deadline_s: float, prolog: bool, sysfs_root: str, progress: bool = False):
    """Collect this node into a temporary bundle and read it back, as `--from` would read it."""
    import tempfile

    from ..sources import live

    with tempfile.TemporaryDirectory(prefix="topodiag-live-") as tmp:
        root = f"{tmp}/bundle"
        opts = live.Options(deadline_s=deadline_s, prolog=prolog, sysfs_root=sysfs_root)
        records = live.collect(opts, progress=_progress_line if progress else None)
        facts = live.host_facts(sysfs_root) if not prolog else {"hostname": _hostname()}
        live.write_bundle_dir(root, records, host=facts["hostname"], facts=facts)
        from ..sources.bundle import BundleError
        from ..sources.inputs import gather_bundle

        try:
            return gather_bundle(root, "live")
        except BundleError as exc:  # a bundle we just wrote: a bug, not the user's input
            raise RuntimeError(f"the live bundle could not be read back: {exc}") from exc


def _hostname() -> str:
    import socket

    return socket.gethostname()


def _progress_line(rec) -> None:
    took = f"{rec.duration_s:.2f} s" if rec.duration_s is not None else ""
    why = f"  {rec.reason}" if rec.status != "ok" and rec.reason else ""
    print(f"  {rec.source:22s} {rec.status:14s} {took:>8s}{why}", file=sys.stderr)


def named_profile(name: str):
    """The profile called `name` (--profile); exit 2 when the profiles are unreadable or it is unknown."""
    from ..profiles import ProfileError, load_profiles

    try:
        profiles = load_profiles()
    except ProfileError as exc:
        fail(str(exc), ExitCode.USAGE)
    if name not in profiles:
        fail(f"--profile: unknown profile {name!r}; one of: {', '.join(profiles)}", ExitCode.USAGE)
    return profiles[name]


def choose_profile(name: Optional[str], topology) -> tuple[Any, str]:
    """The named profile (exit 2 when unknown), else the one the GPU models match; and how it was chosen."""
    if name:
        return named_profile(name), f"{name} (given)"
    gpus = topology.gpus()
    models = [m for g in gpus if (m := topology.node(g).get("model"))]
    if not models:
        return None, "none (the inputs name no GPU model)"  # without reading the profiles
    from ..profiles import ProfileError, detect_profile, load_profiles

    try:
        profiles = load_profiles()
    except ProfileError:
        return None, "none (profiles unreadable)"
    prof = detect_profile(models, profiles, gpu_count=len(gpus))
    return (prof, f"{prof.name} (detected from {models[0]})") if prof else (None, "none (no profile matches)")


@dataclass
class Evaluation:
    outcome: Any
    topology: Any
    statuses: list
    profile_how: str
    config_info: Optional[dict]
    catalog: Any = None


def evaluate(gathered, *, host: Optional[str] = None, profile: Optional[str] = None, config: Optional[str] = None,
             select: Any = None, ignore: Any = None, tags: Any = None, fail_on: str = "error") -> Evaluation:
    """Model, profile, site config and rules over gathered inputs; usage errors exit 2."""
    from ..engine import ConfigError, SelectionError, load_catalog, load_checks, parse_fail_on, run
    from ..model import build
    from ..model.combiners import combine

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
    inputs.update(combine(inputs))  # the "A or B" views (roce_gids, ib_links) the rules read
    catalog = load_catalog(examples=False)
    load_checks()
    try:
        outcome = run(catalog, inputs, select=select, ignore=ignore, tags=tags, config=rules_config,
                      fail_on=fail_level, problems=gathered.problems)
    except (SelectionError, ConfigError) as exc:
        fail(str(exc), ExitCode.USAGE)
    from . import _state

    if _state.get("debug"):
        for crash in outcome.crashes:
            sys.stderr.write(crash.traceback)
    return Evaluation(outcome, topology, gathered.statuses, profile_how, config_info, catalog)


@app.command("check")
def check_command(
    paths: List[str] = typer.Option([], "--from", metavar="PATH",
                                    help="A saved output, a directory of them, or a bundle (directory or "
                                         ".tar.gz); repeatable. Without it, this node is checked live."),
    more: Optional[List[str]] = typer.Argument(None, hidden=True, metavar="PATH"),
    profile: Optional[str] = typer.Option(None, "--profile", "-p",
                                          help="Platform profile (rules/profiles/); default: detected from the GPU model."),
    config: Optional[str] = typer.Option(None, "--config", "-c", metavar="FILE",
                                         help="Site config TOML: profile, [rules.CODE] enabled/severity/params, "
                                              "[[hosts]] blocks by host pattern."),
    host: Optional[str] = typer.Option(None, "--host", metavar="NAME",
                                       help="The host the inputs come from (default: what a bundle or NCCL log says)."),
    output_format: Optional[ReportFormat] = typer.Option(
        None, "--format", "-f", help="text (default on a terminal), json (default otherwise), or prometheus "
                                     "(node_exporter textfile collector)."),
    fail_on: str = typer.Option("error", "--fail-on", metavar="LEVEL",
                                help="Exit 1 for findings at or above: info, warning, error, critical, never."),
    select: Optional[List[str]] = typer.Option(None, "--select", metavar="CODES",
                                               help="Only these rules: codes, families or slugs, comma-separated."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", metavar="CODES",
                                               help="Leave out these rules: codes, families or slugs."),
    tags: Optional[List[str]] = typer.Option(None, "--tags", metavar="TAGS",
                                             help="Only rules with these tags (e.g. prolog); live, prolog also "
                                                  "limits collection to the passive, fast sources."),
    deadline: float = typer.Option(30.0, "--deadline", metavar="SECONDS",
                                   help="Live: the whole collection's deadline (each source has its own timeout too)."),
    sysfs_root: str = typer.Option("/", "--sysfs-root", metavar="DIR",
                                   help="Live: read /sys and /proc under DIR (a container with the host's mounted elsewhere)."),
) -> None:
    """Run the checklist over this node, or over saved outputs and bundles (--from), and report.

    Exit 0 when nothing is at or above --fail-on, 1 when something is, 2 for a usage error,
    3 when an input could not be collected, read or parsed (no verdict), 4 for an internal error.
    """
    import time

    started = time.monotonic()
    all_paths = list(paths) + list(more or [])
    if deadline <= 0:
        fail("--deadline: must be a positive number of seconds", ExitCode.USAGE)
    if all_paths:
        gathered = gather_or_exit(all_paths)
    else:
        prolog = "prolog" in {t.lower() for t in (tags or [])}
        gathered = gather_live(deadline, prolog, sysfs_root, progress=sys.stderr.isatty())
    ev = evaluate(gathered, host=host, profile=profile, config=config, select=select, ignore=ignore, tags=tags,
                  fail_on=fail_on)
    fmt = output_format or (ReportFormat.text if sys.stdout.isatty() else ReportFormat.json)
    if fmt is ReportFormat.json:
        import json

        from ..render.json_report import report

        data = report(ev.outcome, ev.topology, ev.statuses, ev.profile_how, ev.config_info)
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    elif fmt is ReportFormat.prometheus:
        from ..render.prometheus import render

        sys.stdout.write(render(ev.outcome, ev.topology, ev.statuses, ev.catalog, ev.profile_how,
                                time.monotonic() - started))
    else:
        from ..render.text import render_check

        render_check(ev.outcome, ev.topology, ev.statuses, ev.profile_how)
    raise typer.Exit(int(ev.outcome.exit_code))
