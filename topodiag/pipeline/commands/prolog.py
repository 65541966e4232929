"""`topodiag prolog`'s flow: the passive sources under --deadline, the rules tagged prolog, the
one-line drain reason, and with --mark-offline the Slurm drain or resume (actions/slurm.py).

Imports stay lazy: a Slurm prolog runs on every job start (tests/architecture/test_import_cost.py).

    run = prolog(PrologRequest(deadline=10.0), say=print, warn=print_to_stderr)
    exit_code(run.outcome, lenient=not strict, drain_held=run.drain_held)

A site config that cannot be used (unreadable, not TOML, a bad key or value) is said through `warn`
and the node judged with the default settings; with `strict` it is raised (a UsageError).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from ...errors import ConfigError, ProfileError, UsageError
from ...exit_codes import ExitCode, Outcome, outcome_of


@dataclass(frozen=True)
class PrologRequest:
    """What `topodiag prolog` was asked (its options, by name)."""

    deadline: float = 10.0
    fail_on: str = "error"
    strict: bool = False
    config: Optional[str] = None
    profile: Optional[str] = None
    ignore: Optional[Sequence[str]] = None
    sysfs_root: str = "/"
    mark_offline: bool = False
    node: Optional[str] = None
    scontrol: Optional[str] = None
    drain_limit: Optional[int] = None
    drain_limit_percent: Optional[float] = None
    kernel_log_since: Optional[str] = None


@dataclass
class PrologRun:
    """The Diagnosis, its one-line reason, what Slurm was told (`drained`: the line scontrol's change
    is said in, or None), whether the drain limit held a drain back, and the run's Outcome."""

    diagnosis: Any
    line: str
    outcome: Outcome
    drained: Optional[str] = None
    drain_held: bool = False


def _since(text: Optional[str]) -> Optional[float]:
    """--kernel-log-since in seconds (None: not given); a UsageError for what is no duration."""
    if text is None:
        return None
    from ...live.kernel_log_probe import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise UsageError(f"--kernel-log-since: {exc}") from None


def _check_fail_on(fail_on: str) -> None:
    from ...engine import parse_fail_on

    try:
        parse_fail_on(fail_on)
    except ValueError as exc:
        raise UsageError(f"--fail-on: {exc}") from None


def unusable_config_line(error: Exception) -> str:
    return (f"topodiag: error: {error}; judging with the default settings (the site config is not used; "
            f"--strict fails instead)")


def _usable_config(config: Optional[str], strict: bool, warn: Callable[[str], None]):
    """(the site config's path, the loaded config) when it reads and checks (before anything is
    collected), else (None, None) (said through `warn`); with --strict its error is raised."""
    if not config:
        return None, None
    from ...engine.site_config import load

    try:
        site = load(config)
    except ConfigError as exc:
        if strict:
            raise
        warn(unusable_config_line(exc))
        return None, None
    return config, site


def slurm_settings(site, scontrol: Optional[str], drain_limit: Optional[int], percent: Optional[float]):
    """Where scontrol and sinfo are and the drain limit: the command line, else the site config's
    [slurm], else the defaults (actions/slurm.py, actions/drain_limit.py)."""
    from ...actions.drain_limit import DEFAULT_NODES, DEFAULT_PERCENT, Limit
    from ...actions.slurm import find_tools

    conf = dict(site.slurm) if site is not None else {}
    given = scontrol or conf.get("scontrol")
    if given and not os.path.isabs(given):
        given = os.path.abspath(given)
    tools = find_tools(given, conf.get("sinfo"), tuple(conf.get("bin_dirs", ())))
    limit = Limit(nodes=drain_limit if drain_limit is not None else conf.get("drain_limit", DEFAULT_NODES),
                  percent=percent if percent is not None else conf.get("drain_limit_percent", DEFAULT_PERCENT))
    return tools, limit


def _judge(gathered, config: Optional[str], strict: bool, warn: Callable[[str], None], **options):
    """The Diagnosis with the site config; one whose rule tables or profile do not fit the catalog
    (known only now) is said through `warn` and the node judged with the defaults (--strict: raised).
    A --profile given on the command line that is unknown stays a usage error."""
    from .. import diagnose

    try:
        return diagnose(gathered=gathered, config=config, tags=["prolog"], **options)
    except (ConfigError, ProfileError) as exc:
        from_config = isinstance(exc, ConfigError) or not options.get("profile")
        if strict or not config or not from_config:
            raise
        warn(unusable_config_line(exc))
        return diagnose(gathered=gathered, config=None, tags=["prolog"], **options)


def _mark(req: PrologRequest, site, run: PrologRun) -> None:
    """--mark-offline: drain the node on a finding, resume it when it passes clean (no SYS finding)."""
    from ...actions import slurm

    verdict = run.diagnosis.outcome.exit_code
    clean = verdict == ExitCode.OK and not any(f.code.startswith("SYS") for f in run.diagnosis.findings)
    if verdict != ExitCode.FINDINGS and not clean:
        return
    tools, limit = slurm_settings(site, req.scontrol, req.drain_limit, req.drain_limit_percent)
    done, held = slurm.mark_node(req.node or slurm.node_name(), failed=verdict == ExitCode.FINDINGS,
                                 reason=run.line, tools=tools, limit=limit)
    run.drained, run.drain_held = done or None, bool(held)


def prolog(req: PrologRequest, say: Callable[[Any, str], None], warn: Callable[[str], None]) -> PrologRun:
    """Collect, judge, tell `say(diagnosis, line)` the verdict's line (before Slurm is asked
    anything), and with --mark-offline drain or resume the node. Raises UsageError for a bad request
    before anything is collected."""
    from ...live.deadline import check_deadline
    from ...live.commands import session
    from ...render.slurm import reason_line
    from .. import LiveOptions, collect_live

    check_deadline(req.deadline)
    since_s = _since(req.kernel_log_since)
    _check_fail_on(req.fail_on)  # a usage error before anything is collected (as when diagnose collected)
    with session(req.deadline):  # every tool, scontrol too, under --deadline; a signal kills their groups
        config, site = _usable_config(req.config, req.strict, warn)
        reserve = min(2.0, req.deadline / 5) if req.mark_offline else 0.0
        gathered = collect_live(LiveOptions(deadline_s=req.deadline - reserve, prolog=True,
                                            sysfs_root=req.sysfs_root, kernel_log_since_s=since_s))
        d = _judge(gathered, config, req.strict, warn, profile=req.profile, ignore=req.ignore, fail_on=req.fail_on)
        run = PrologRun(d, reason_line(d.outcome, d.topology), outcome_of(d.outcome.exit_code))
        say(d, run.line)
        if req.mark_offline:
            _mark(req, site, run)
    return run
