"""`topodiag fleet`'s flow: the request checked (a UsageError before anything runs), the reports read
from files, standard input or a fan-out over a node set, compared (topodiag/fleet), and the Outcome.

    run = fleet(FleetRequest(paths=["reports/"]))
    run.result (a fleet.FleetResult), run.outcome (exit_codes.Outcome), run.nothing_read

The Outcome: OUTLIERS when a node (or an NCCL host) differs from the majority, DUPLICATE_HOSTS when
two sources report one host name, FINDINGS when a node has a finding at or above --fail-on; else
NO_REPORT when a node or input gave no report, or nothing was read at all; else OK.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from ...errors import InputError, UsageError
from ...exit_codes import Outcome

DEFAULT_COMMAND = "topodiag check --format json"


@dataclass(frozen=True)
class FleetRequest:
    """What `topodiag fleet` was asked (its options, by name)."""

    paths: Sequence[str] = ()
    nodes: Optional[str] = None
    command: str = DEFAULT_COMMAND
    fanout: int = 64
    timeout: float = 120.0
    connect_timeout: float = 10.0
    local: bool = False
    nccl_logs: Sequence[str] = ()
    group_by: Optional[str] = "gpu.model"
    min_share: float = 0.5
    min_nodes: int = 3
    fail_on: str = "error"
    profile: Optional[str] = None
    config: Optional[str] = None
    select: Any = None
    ignore: Any = None
    source: Optional[str] = None
    progress: Optional[Callable[[int], None]] = None  # told every 1000 reports read
    announce: Optional[Callable[[str], None]] = None  # told what --nodes is about to run, in one line


@dataclass
class FleetRun:
    """What the fleet found (`result`, for render_text/render_json), the severity --fail-on named
    (None: never), and the Outcome the exit code comes from."""

    result: Any
    severity: Optional[str]
    outcome: Outcome = Outcome.OK
    checks: Mapping[str, Any] = field(default_factory=dict)

    @property
    def nothing_read(self) -> bool:
        """No node report and no NCCL log was read, and no input failed: nothing to compare."""
        return self.result.nodes == 0 and not self.result.nccl and not self.result.failed_count


def _check_usage(req: FleetRequest) -> None:
    if not req.paths and not req.nodes and not req.nccl_logs:
        raise UsageError("give reports (files, directories, bundles, - for standard input), --nodes NODESET "
                         "or --nccl-log")
    if not 0.5 <= req.min_share <= 1:
        raise UsageError(f"--min-share: {req.min_share:g} is not between 0.5 and 1")
    if req.min_nodes < 2:
        raise UsageError(f"--min-nodes: {req.min_nodes} is below 2 (one node is its own majority)")
    if req.fanout < 1 or req.timeout <= 0 or req.connect_timeout <= 0:
        raise UsageError("--fanout, --timeout and --connect-timeout must be positive")
    if req.local and not req.nodes:
        raise UsageError("--local goes with --nodes")


def _severity(fail_on: str) -> Optional[str]:
    from ...engine import parse_fail_on

    try:
        level = parse_fail_on(fail_on)
    except ValueError as exc:
        raise UsageError(f"--fail-on: {exc}") from None
    return level.name.lower() if level is not None else None


def check_options(req: FleetRequest) -> dict:
    """What bundles are judged with, validated here once (a UsageError), not once per bundle."""
    from ...engine import load_catalog
    from ...engine.runner import select_rules
    from .. import named_profile

    options: dict = {}
    if req.source:
        from ...parsers import names

        if req.source not in names():
            raise UsageError(f"--source: unknown source {req.source!r}; one of: {', '.join(names())}")
        options["source"] = req.source
    if req.profile:
        named_profile(req.profile)
        options["profile"] = req.profile
    if req.config:
        from ...engine.site_config import load as load_site_config

        load_site_config(req.config)
        options["config"] = req.config
    if req.select or req.ignore:
        select_rules(load_catalog(examples=False), select=req.select, ignore=req.ignore)
        options["select"], options["ignore"] = req.select, req.ignore
    return options


def _fan_out(req: FleetRequest):
    """The nodes' outputs over ssh (or --local); a FanOutError is a UsageError or an InputError."""
    from ...actions.fanout import FanOutError, fan_out

    if req.announce is not None:
        from ...render.sanitise import line

        req.announce(f"running `{line(req.command, 200)}` on {line(req.nodes or '', 200)} "
                     f"({'here, per node' if req.local else 'ssh'}, {req.fanout} at a time, {req.timeout:g} s each)")
    try:
        return fan_out(req.nodes, req.command, fanout=req.fanout, timeout_s=req.timeout,
                       connect_timeout_s=req.connect_timeout, local=req.local)
    except FanOutError as exc:
        if exc.usage:
            raise UsageError(str(exc)) from None
        raise InputError("", str(exc)) from None


def outcome(result, severity: Optional[str]) -> Outcome:
    """The fleet's Outcome (see the module's docstring)."""
    if result.has_outliers:
        return Outcome.OUTLIERS
    if result.has_duplicates:
        return Outcome.DUPLICATE_HOSTS
    if severity and result.at_or_above(severity):
        return Outcome.FINDINGS
    if (result.nodes == 0 and not result.nccl) or result.failed_count:
        return Outcome.NO_REPORT
    return Outcome.OK


def fleet(req: FleetRequest) -> FleetRun:
    """Read, compare and judge the fleet: a FleetRun. Raises UsageError for a bad request (before
    anything is read) and InputError when the fan-out cannot run at all."""
    from ...fleet import run_fleet

    _check_usage(req)
    severity = _severity(req.fail_on)
    options = check_options(req)
    group_key = None if (req.group_by or "").strip().lower() in ("", "none") else (req.group_by or "").strip()
    out = _fan_out(req) if req.nodes else None
    try:
        result = run_fleet(list(req.paths), texts=out.outputs.items() if out else None,
                           input_failures=out.failures.items() if out else None, nccl_logs=list(req.nccl_logs),
                           check_options=options, min_share=req.min_share, min_nodes=req.min_nodes,
                           group_by=group_key, progress=req.progress)
    finally:
        if out is not None:
            out.close()  # the spooled outputs, read one node at a time above
    return FleetRun(result, severity, outcome(result, severity), options)
