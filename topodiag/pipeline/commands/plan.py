"""`topodiag plan`'s flow: every number checked against its bounds (plan/models.py BOUNDS) before any
work, the model spec, the node read (saved outputs, a bundle, or this node live) and planned.

    run = plan(PlanRequest(paths=["fixtures/hosts/hgx-h100-healthy-assembled"], nodes=2, model="70b"))
    run.report (plan/__init__.py's JSON shape), run.outcome
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from ...exit_codes import Outcome


@dataclass(frozen=True)
class PlanRequest:
    """What `topodiag plan` was asked (its options, by name; `paths` empty: this node live)."""

    paths: Sequence[str] = ()
    nodes: int = 1
    model: Optional[str] = None
    params: Optional[str] = None
    layers: Optional[int] = None
    hidden: Optional[int] = None
    seq: Optional[int] = None
    micro_batch: Optional[int] = None
    dtype: Optional[str] = None
    tp: Optional[int] = None
    pp: Optional[int] = None
    dp: Optional[int] = None
    ep: Optional[int] = None
    micro_batches: Optional[int] = None
    tflops: Optional[float] = None


@dataclass
class PlanRun:
    report: dict
    outcome: Outcome = Outcome.OK


def plan(req: PlanRequest) -> PlanRun:
    """The plan; UsageError for a number out of bounds, InputError when the inputs show no GPU."""
    from ...plan import plan_from
    from ...plan.models import check_bounds, model_spec, parse_params

    check_bounds(nodes=req.nodes, layers=req.layers, hidden=req.hidden, seq=req.seq, micro_batch=req.micro_batch,
                 tp=req.tp, pp=req.pp, dp=req.dp, ep=req.ep, micro_batches=req.micro_batches)
    spec = model_spec(req.model, params=parse_params(req.params) if req.params is not None else None,
                      layers=req.layers, hidden=req.hidden, seq=req.seq, micro_batch=req.micro_batch, dtype=req.dtype)
    report = plan_from(list(req.paths) or None, nodes=req.nodes, model=spec, tp=req.tp, pp=req.pp, dp=req.dp,
                       ep=req.ep, micro_batches=req.micro_batches, tflops=req.tflops)
    return PlanRun(report)
