"""A job's NCCL environment (nccl_env), NCCL's active diagnostics report (nccl_diag) and the GPU copy
benchmarks (p2pBandwidthLatencyTest, nvbandwidth): summaries kept as observations on the host node.
They add no devices or links (their device numbers are CUDA's, which need not be nvidia-smi's); the
rules NCCL009-NCCL012 and PERF005-PERF007 read the parsed inputs themselves."""

from __future__ import annotations

from ...records import ParsedInput
from ..topology import Topology
from ._shared import observe

SOURCES = ("nccl_env", "nccl_diag", "p2p_bandwidth_latency", "nvbandwidth")
PROVIDES = ("host.run_environment",)
FILLS = ()
NEEDS = ("nccl.pair_busbw",)  # observations: after the run records


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    if item.source == "nccl_env":
        facts = {"env": dict(r.env), "form": r.form}
    elif item.source == "nccl_diag":
        facts = {"reports": r.reports, "failures": len(r.failures),
                 "summaries": [{"passed": s.passed, "tested": s.tested} for s in r.summaries]}
    elif item.source == "p2p_bandwidth_latency":
        facts = {"devices": len(r.devices), "matrices": [m.title for m in r.matrices]}
    else:
        facts = {"version": r.version, "testcases": [t.name for t in r.testcases]}
    observe(topo, host_id, item, facts)
