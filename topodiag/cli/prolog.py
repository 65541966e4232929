"""`topodiag prolog`: the passive, fast part of the checklist for a Slurm prolog or HealthCheckProgram.

One line on stdout, fit for a drain reason (`topodiag: IB001 nic:mlx5_3; NVL001 gpu:2`), and an exit
code that is non-zero only for findings at or above --fail-on: a diagnostic that could not see
(a timed-out NVML call, an unreadable sysfs) must not drain a node, unless --strict asks for it.
A site config that cannot be used (unreadable, not TOML, a bad key or value) is said on stderr and
the node is judged with the default settings; with --strict it is a usage error (exit 2).

--deadline bounds the whole run, scontrol included: with --mark-offline the collection gets the
deadline less a reserve (a fifth, at most 2 s) for `scontrol show node`, `sinfo` (the drain limit)
and `scontrol update`. Slurm gives a prolog no PATH: scontrol is --scontrol, the site config's
[slurm] scontrol, PATH, or a standard place (actions/slurm.py). A new drain past the drain limit
(--drain-limit, --drain-limit-percent, [slurm] drain_limit*), or one the limit cannot be checked
for (no sinfo), is reported on stderr, not done, and the prolog exits 0: Slurm itself drains a node
whose prolog exits non-zero, so exit 1 would drain it all the same. The finding's line is printed.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional

import typer

from ..errors import ConfigError, ProfileError
from ..exit_codes import ExitCode
from .app import app
from .check import positive_deadline, show_crashes
from . import complete
from .errors import guarded

@app.command("prolog")
@guarded
def prolog_command(
    deadline: float = typer.Option(10.0, "--deadline", metavar="SECONDS",
                                   help="The whole run's deadline (passive sources only: NVML, sysfs, /dev/kmsg, /proc files)."),
    fail_on: str = typer.Option("error", "--fail-on", metavar="LEVEL", autocompletion=complete.levels,
                                help="Exit 1 for findings at or above: info, warning, error, critical."),
    strict: bool = typer.Option(False, "--strict",
                                help="Also exit 3 (incomplete) or 4 (internal error) instead of 0, and 2 for a site "
                                     "config that cannot be used (else judged with the defaults)."),
    config: Optional[str] = typer.Option(None, "--config", "-c", metavar="FILE", help="Site config TOML (as check)."),
    profile: Optional[str] = typer.Option(None, "--profile", "-p", autocompletion=complete.profiles,
                                          help="Platform profile (as check)."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", metavar="CODES", autocompletion=complete.rules,
                                               help="Leave out these rules."),
    sysfs_root: str = typer.Option("/", "--sysfs-root", metavar="DIR",
                                   help="Read /sys and /proc under DIR."),
    mark_offline: bool = typer.Option(False, "--mark-offline",
                                      help="Drain the node in Slurm on a finding (reason 'topodiag: ...'), and "
                                           "resume it when it passes again; never touch a drain topodiag did not set."),
    node: Optional[str] = typer.Option(None, "--node", metavar="NAME",
                                       help="The Slurm node name for --mark-offline (default: SLURMD_NODENAME, "
                                            "else the short host name)."),
    scontrol: Optional[str] = typer.Option(
        None, "--scontrol", metavar="PATH",
        help="scontrol for --mark-offline (sinfo is looked for beside it). Default: the site config's [slurm] "
             "scontrol, else PATH, else /usr/bin, /usr/local/bin, /opt/slurm/bin, /usr/local/slurm/bin ... "
             "(Slurm runs a prolog with no PATH)."),
    drain_limit: Optional[int] = typer.Option(
        None, "--drain-limit", metavar="NODES", min=0,
        help="--mark-offline drains only while at most this many nodes carry a topodiag drain reason, this one "
             "included (default 8, or the site config's; 0: never drain, report only)."),
    drain_limit_percent: Optional[float] = typer.Option(
        None, "--drain-limit-percent", metavar="PERCENT", min=0.0, max=100.0,
        help="... and at most this share of the cluster's nodes (sinfo), at least 1 node (default 10). Above "
             "either limit the node is reported, not drained."),
    kernel_log_since: Optional[str] = typer.Option(
        None, "--kernel-log-since", metavar="DURATION",
        help="Judge only the kernel log's last DURATION (seconds, or 90s, 30m, 2h, 1d), e.g. the time since "
             "the last job; always only since the last NVIDIA driver load and each GPU's last reset."),
) -> None:
    """Fast node check for a Slurm prolog: passive sources, rules tagged prolog, one line out.

    Exit 1 for findings at or above --fail-on (drain the node), else 0; with --strict, 3 when a
    source could not be read and 4 for an internal error, as `check`. A site config that cannot be
    used is said on stderr and the node judged with the default settings (--strict: exit 2).
    """
    from ..live.commands import session
    from ..pipeline import LiveOptions, collect_live
    from ..render.slurm import reason_line

    positive_deadline(deadline)
    since_s = _since(kernel_log_since)
    _check_fail_on(fail_on)  # a usage error before anything is collected (as when diagnose collected)
    with session(deadline):  # every tool, scontrol too, under --deadline; a signal kills their groups
        config, site = _usable_config(config, strict)
        reserve = min(2.0, deadline / 5) if mark_offline else 0.0
        gathered = collect_live(LiveOptions(deadline_s=deadline - reserve, prolog=True, sysfs_root=sysfs_root,
                                            kernel_log_since_s=since_s))
        d = _judge(gathered, config, strict, profile=profile, ignore=ignore, fail_on=fail_on)
        show_crashes(d)
        line = reason_line(d.outcome, d.topology)
        print(line)
        code = d.outcome.exit_code
        if mark_offline:
            from ..actions import slurm

            clean = code == ExitCode.OK and not any(f.code.startswith("SYS") for f in d.findings)
            if code == ExitCode.FINDINGS or clean:
                tools, limit = _slurm_settings(site, scontrol, drain_limit, drain_limit_percent)
                done, held = slurm.mark_node(node or slurm.node_name(), failed=code == ExitCode.FINDINGS,
                                             reason=line, tools=tools, limit=limit)
                if done:
                    print(done, file=sys.stderr)
                if held:  # Slurm drains a node whose prolog fails: exit 1 would drain it all the same
                    code = ExitCode.OK
    if code in (ExitCode.INCOMPLETE, ExitCode.INTERNAL) and not strict:
        code = ExitCode.OK
    raise typer.Exit(int(code))


def _since(text: Optional[str]) -> Optional[float]:
    """--kernel-log-since in seconds (None: not given); a UsageError (exit 2) for what is no duration."""
    if text is None:
        return None
    from ..errors import UsageError
    from ..live.kernel_log_probe import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise UsageError(f"--kernel-log-since: {exc}") from None


def _check_fail_on(fail_on: str) -> None:
    from ..engine import parse_fail_on
    from ..errors import UsageError

    try:
        parse_fail_on(fail_on)
    except ValueError as exc:
        raise UsageError(f"--fail-on: {exc}") from None


def _config_unusable(error: Exception) -> None:
    print(f"topodiag: error: {error}; judging with the default settings (the site config is not used; "
          f"--strict fails instead)", file=sys.stderr)


def _usable_config(config: Optional[str], strict: bool):
    """(the site config's path, the loaded config) when it reads and checks (before anything is
    collected), else (None, None) (said on stderr); with --strict its error is raised (exit 2)."""
    if not config:
        return None, None
    from ..engine.site_config import load

    try:
        site = load(config)
    except ConfigError as exc:
        if strict:
            raise
        _config_unusable(exc)
        return None, None
    return config, site


def _slurm_settings(site, scontrol: Optional[str], drain_limit: Optional[int], percent: Optional[float]):
    """Where scontrol and sinfo are and the drain limit: the command line, else the site config's
    [slurm], else the defaults (actions/slurm.py, actions/drain_limit.py)."""
    from ..actions.drain_limit import DEFAULT_NODES, DEFAULT_PERCENT, Limit
    from ..actions.slurm import find_tools

    conf = dict(site.slurm) if site is not None else {}
    given = scontrol or conf.get("scontrol")
    if given and not os.path.isabs(given):
        given = os.path.abspath(given)
    tools = find_tools(given, conf.get("sinfo"), tuple(conf.get("bin_dirs", ())))
    limit = Limit(nodes=drain_limit if drain_limit is not None else conf.get("drain_limit", DEFAULT_NODES),
                  percent=percent if percent is not None else conf.get("drain_limit_percent", DEFAULT_PERCENT))
    return tools, limit


def _judge(gathered, config: Optional[str], strict: bool, **options):
    """The Diagnosis with the site config; one whose rule tables or profile do not fit the catalog
    (known only now) is said on stderr and the node judged with the defaults (--strict: raised).
    A --profile given on the command line that is unknown stays a usage error."""
    from ..pipeline import diagnose

    try:
        return diagnose(gathered=gathered, config=config, tags=["prolog"], **options)
    except (ConfigError, ProfileError) as exc:
        from_config = isinstance(exc, ConfigError) or not options.get("profile")
        if strict or not config or not from_config:
            raise
        _config_unusable(exc)
        return diagnose(gathered=gathered, config=None, tags=["prolog"], **options)
