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

import sys
from typing import List, Optional

import typer

from ..exit_codes import exit_code
from .app import app
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
    from ..pipeline.commands.prolog import PrologRequest, prolog

    run = prolog(PrologRequest(deadline=deadline, fail_on=fail_on, strict=strict, config=config, profile=profile,
                               ignore=ignore, sysfs_root=sysfs_root, mark_offline=mark_offline, node=node,
                               scontrol=scontrol, drain_limit=drain_limit, drain_limit_percent=drain_limit_percent,
                               kernel_log_since=kernel_log_since),
                 say=_say, warn=_warn)
    if run.drained:
        print(run.drained, file=sys.stderr)
    # Slurm drains a node whose prolog fails: a drain the limit held back exits 0, and without --strict
    # a node that could not be seen whole (a diagnostic that could not see) is not drained either
    raise typer.Exit(exit_code(run.outcome, lenient=not strict, drain_held=run.drain_held))


def _say(diagnosis, line: str) -> None:
    """The verdict's line on stdout (with --debug, a crashed check's traceback on stderr first, as
    cli/check.py's show_crashes: not imported from there, which would register `check`'s options
    and load its renderer helpers on every job start, ~5 ms)."""
    from .app import _state

    if _state.get("debug"):
        for crash in diagnosis.outcome.crashes:
            sys.stderr.write(crash.traceback)
    print(line)


def _warn(text: str) -> None:
    print(text, file=sys.stderr)
