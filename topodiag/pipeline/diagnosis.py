"""The run's parts: what a Diagnosis holds and how live collection is asked for."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class LiveOptions:
    """How to collect this node live: the whole collection's deadline, the prolog's passive-only
    sources, where /sys and /proc are (a container with the host's mounted elsewhere), and an
    optional callable(record) told as each source finishes (progress on a terminal)."""

    deadline_s: float = 30.0
    prolog: bool = False
    sysfs_root: str = "/"
    nccl_logs: tuple[str, ...] = ()
    nccl_tests: tuple[str, ...] = ()
    progress: Optional[Callable[[Any], None]] = None
    kernel_log_since_s: Optional[float] = None  # judge only the kernel log's last S seconds (prolog)


@dataclass
class Diagnosis:
    """What a run found, and everything the renderers need to say so.

    `outcome` is the engine's (findings, skipped rules, crashes, exit code); `statuses` lists every
    input and how it went; `profile` is the platform profile the rules used (None: none applied)
    and `profile_how` how it was chosen; `config_info` which site-config patterns matched."""

    outcome: Any
    topology: Any
    statuses: list
    profile: Any = None
    profile_how: str = "none"
    config_info: Optional[dict] = None
    catalog: Any = None
    elapsed_s: float = 0.0
    records: list = field(default_factory=list)  # live collection's records (empty for files)
    platform: str = ""  # the platform inferred from the inputs' hints, its confidence, and what did not run for want of one
    collected_at: Optional[str] = None  # UTC ISO 8601: when the inputs were collected, where known
    host_facts: dict = field(default_factory=dict)  # kernel, ofed of the collecting host, where known
    run_info: dict = field(default_factory=dict)  # the shell's: generated_at, command (render/meta.py)

    @property
    def findings(self) -> tuple:
        return self.outcome.findings

    @property
    def skipped(self) -> tuple:
        return self.outcome.skipped

    @property
    def exit_code(self) -> int:
        return int(self.outcome.exit_code)

    @property
    def host(self) -> Optional[str]:
        host = self.topology.host()
        return self.topology.node(host).get("name") if host else None

    def to_json(self) -> dict:
        """The JSON report, as `topodiag check --format json` prints it (render/json_report.py)."""
        from ..render.json_report import report

        return report(self)

    def render(self, fmt: str = "text", stream=None, **options: Any) -> None:
        """Write the report in one of the registered formats (`topodiag.render.FORMATS`)."""
        from ..render import render

        render(fmt, self, stream, **options)

