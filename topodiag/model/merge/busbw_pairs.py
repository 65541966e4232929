"""A user's table of nccl-tests busbw per node pair: kept as an observation on the host node (it adds
no devices or links; PERF004 reads the parsed table itself). Its presence is what tells the verdict
that a record of NCCL runs was read (engine/verdict.py RUN_RECORDS)."""

from __future__ import annotations

from ...records import ParsedInput
from ..topology import Topology
from ._shared import observe

SOURCES = ("busbw_pairs",)
PROVIDES = ("nccl.pair_busbw",)
FILLS = ()
NEEDS = ("host.nccl_runs",)  # observations: after the NCCL runs


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    pairs = item.result.pairs
    observe(topo, host_id, item, {
        "pairs": len(pairs), "nodes": sorted({n for p in pairs for n in (p.a, p.b)}),
        "best_busbw_gbps": max(p.busbw_gbps for p in pairs), "worst_busbw_gbps": min(p.busbw_gbps for p in pairs)})
