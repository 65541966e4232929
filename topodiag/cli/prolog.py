"""`topodiag prolog`: the passive, fast part of the checklist for a Slurm prolog or HealthCheckProgram.

One line on stdout, fit for a drain reason (`topodiag: IB001 nic:mlx5_3; NVL001 gpu:2`), and an exit
code that is non-zero only for findings at or above --fail-on: a diagnostic that could not see
(a timed-out NVML call, an unreadable sysfs) must not drain a node, unless --strict asks for it.
"""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from ..exit_codes import ExitCode
from . import app
from .check import evaluate, fail, gather_live

MAX_REASON = 200  # Slurm keeps a drain reason short; scontrol shows it in one line


def reason_line(outcome, fail_on) -> str:
    """`topodiag: CODE subject; CODE subject` for the findings at or above fail_on (worst first)."""
    from ..engine import Severity

    level = fail_on if fail_on is not None else Severity.CRITICAL
    real = [f for f in outcome.findings if not f.code.startswith("SYS") and f.severity >= level]
    real.sort(key=lambda f: -int(f.severity))
    if not real:
        tool = [f for f in outcome.findings if f.code.startswith("SYS")]
        if tool:
            return "topodiag: incomplete: " + "; ".join(f"{f.code} {f.subjects[0] if f.subjects else ''}".strip()
                                                         for f in tool)[: MAX_REASON - 22]
        return "topodiag: ok"
    parts = [f"{f.code} {' '.join(f.subjects[:2])}".strip() for f in real]
    shown: list[str] = []
    for i, part in enumerate(parts):
        left = len(parts) - i - 1
        line = "topodiag: " + "; ".join(shown + [part]) + (f"; +{left} more" if left else "")
        if len(line) > MAX_REASON and shown:
            return "topodiag: " + "; ".join(shown) + f"; +{len(parts) - i} more"
        shown.append(part)
    return "topodiag: " + "; ".join(shown)


@app.command("prolog")
def prolog_command(
    deadline: float = typer.Option(10.0, "--deadline", metavar="SECONDS",
                                   help="The whole run's deadline (passive sources only: NVML and sysfs)."),
    fail_on: str = typer.Option("error", "--fail-on", metavar="LEVEL",
                                help="Exit 1 for findings at or above: info, warning, error, critical."),
    strict: bool = typer.Option(False, "--strict",
                                help="Also exit 3 (incomplete) or 4 (internal error) instead of 0."),
    config: Optional[str] = typer.Option(None, "--config", "-c", metavar="FILE", help="Site config TOML (as check)."),
    profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Platform profile (as check)."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", metavar="CODES", help="Leave out these rules."),
    sysfs_root: str = typer.Option("/", "--sysfs-root", metavar="DIR",
                                   help="Read /sys and /proc under DIR."),
    mark_offline: bool = typer.Option(False, "--mark-offline",
                                      help="Drain the node in Slurm on a finding (reason 'topodiag: ...'), and "
                                           "resume it when it passes again; never touch a drain topodiag did not set."),
    node: Optional[str] = typer.Option(None, "--node", metavar="NAME",
                                       help="The Slurm node name for --mark-offline (default: SLURMD_NODENAME, "
                                            "else the short host name)."),
) -> None:
    """Fast node check for a Slurm prolog: passive sources, rules tagged prolog, one line out.

    Exit 1 for findings at or above --fail-on (drain the node), else 0; with --strict, 3 when a
    source could not be read and 4 for an internal error, as `check`.
    """
    if deadline <= 0:
        fail("--deadline: must be a positive number of seconds", ExitCode.USAGE)
    gathered = gather_live(deadline, True, sysfs_root)
    ev = evaluate(gathered, profile=profile, config=config, ignore=ignore, tags=["prolog"], fail_on=fail_on)
    line = reason_line(ev.outcome, ev.outcome.fail_on)
    print(line)
    code = ev.outcome.exit_code
    if mark_offline:
        from ..actions import slurm

        clean = code == ExitCode.OK and not any(f.code.startswith("SYS") for f in ev.outcome.findings)
        if code == ExitCode.FINDINGS or clean:
            done = slurm.mark(node or slurm.node_name(), failed=code == ExitCode.FINDINGS, reason=line)
            if done:
                print(done, file=sys.stderr)
    if code in (ExitCode.INCOMPLETE, ExitCode.INTERNAL) and not strict:
        code = ExitCode.OK
    raise typer.Exit(int(code))
