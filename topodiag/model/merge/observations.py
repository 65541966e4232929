"""NCCL logs (NCCL_DEBUG=INFO) and nccl-tests results: summaries kept as observations on the host
node (Topology.observations); they add no devices or links."""

from __future__ import annotations

from ...parsers.base import to_jsonable
from ...records import ParsedInput
from ..topology import Topology
from ._shared import observe

SOURCES = ("nccl_debug", "nccl_tests")
PROVIDES = ("host.nccl_runs",)  # NCCL logs and nccl-tests results (observations on the host)
FILLS = ()
NEEDS = ("gpu.job_visible",)  # after which GPUs the job could see


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    summary = _nccl_debug(item.result) if item.source == "nccl_debug" else _nccl_tests(item.result)
    observe(topo, host_id, item, summary)


def _nccl_debug(r) -> dict:
    return {
        "nccl_version": r.nccl_version, "cuda_version": r.cuda_version, "hosts": list(r.hosts),
        "nranks": r.nranks, "network": r.network, "networks": list(r.networks),
        "net_plugin": r.net_plugin, "net_devices": to_jsonable(r.net_devices), "gdr": r.gdr,
        "gdr_lines": to_jsonable(r.gdr_lines)[:5], "transports": dict(r.transports),
        "env": dict(r.env), "socket_fallback_reasons": list(r.socket_fallback_reasons or ()),
        "init_complete": r.init_complete, "warnings_total": r.warnings_total,
        "errors_total": r.errors_total, "errors": to_jsonable(r.errors)[:20]}


def _nccl_tests(r) -> dict:
    rows = [{"size_bytes": x.size_bytes, "oop_busbw_gbps": x.oop_busbw_gbps,
             "ip_busbw_gbps": x.ip_busbw_gbps, "oop_wrong": x.oop_wrong, "ip_wrong": x.ip_wrong,
             "run": x.run, "line_no": x.line_no} for x in r.rows]
    largest = max(rows, key=lambda x: x["size_bytes"] or 0) if rows else None
    return {
        "collective": r.collective, "nccl_version": r.nccl_version, "nranks": r.nranks,
        "avg_busbw_gbps": r.avg_busbw_gbps, "peak_busbw_gbps": r.peak_busbw_gbps,
        "out_of_bounds": r.out_of_bounds, "out_of_bounds_ok": r.out_of_bounds_ok, "runs": r.runs,
        "failures": len(r.failures), "failures_total": r.failures_total,
        "rows": rows, "largest": largest}
