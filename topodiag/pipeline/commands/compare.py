"""`topodiag compare`'s flow: the runs read, the node read for the expectation, compared
(topodiag/compare).

    run = compare(CompareRequest(runs=["ring.txt", "tree.txt"]))
    run.report (compare/__init__.py's JSON shape), run.outcome
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ...errors import UsageError
from ...exit_codes import Outcome


@dataclass(frozen=True)
class CompareRequest:
    """What `topodiag compare` was asked (its options, by name)."""

    runs: Sequence[str]
    labels: Sequence[str] = ()
    node: Sequence[str] = ()
    profile: Optional[str] = None
    noise: float = 0.05


@dataclass
class CompareRun:
    report: dict
    outcome: Outcome = Outcome.OK


def compare(req: CompareRequest) -> CompareRun:
    """The comparison; UsageError for a bad request (a noise that is no fraction, fewer than two runs,
    mixed collectives), InputError for a run that cannot be read."""
    from ...compare import compare_files

    if not 0 <= req.noise < 1:
        raise UsageError(f"--noise: a fraction from 0 to 1, got {req.noise:g}")
    report = compare_files(list(req.runs), labels=list(req.labels), node=list(req.node) or None,
                           profile=req.profile, noise=req.noise)
    return CompareRun(report)
