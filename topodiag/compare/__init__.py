"""`topodiag compare RUN...`: nccl-tests runs of one collective side by side (different NCCL_ALGO,
NCCL_PROTO, NCCL_BUFFSIZE, node counts, or before/after a change): busbw per size per run, the best
run per size band with its gain, the runs whose large-size busbw differs beyond noise, and a judgement
against the same expectation PERF001 states (topodiag/checks/perf.py): when no run reaches it, the
algorithm is not the cause; the transport and the topology are (the NCCL, IB, TOPO and NVL rules).

JSON shape (`topodiag compare --format json`, schema_version 1):
    {schema_version, kind: "compare", collective, runs: [{label, label_from, path, run, collective, hosts,
     gpus_per_node, nranks, nccl_version, env, busbw: {size: GB/s}}],
     shapes: [{shape, collective, nodes, gpus_per_node, nranks, runs: [label]}] (runs of one shape are
     judged together; when shapes differ the expectation judges the first run's shape, `judged_runs`),
     sizes: [size...], table: [{size, busbw: [GB/s | null per run], best}],
     bands: [{band, from_bytes, to_bytes, sizes, mean_busbw: [per run], best, gain_pct_vs_first,
              gain_pct_vs_runner_up}],
     large: {size, noise, busbw: [per run], best, differ: [{label, busbw, below_best_pct}]},
     expectation: {gbps, how, min_fraction, reached_by: [label], verdict, not_judged} ,
     summary: [sentence...]}
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from .runs import Run, load_runs

SCHEMA_VERSION = 1
NOISE = 0.05  # large-size busbw within 5% of each other: the same (nccl-tests repeats differ by a few %)
BANDS = (("small", 0, 1 << 20), ("medium", 1 << 20, 256 << 20), ("large", 256 << 20, None))
POINT_TO = ("NCCL001 socket fallback, NCCL002 no GPUDirect RDMA, NCCL005/NCCL006 far or few NICs, IB001/IB002/IB007 "
            "ports down or slow, TOPO001/TOPO003 GPU and NIC placement, NVL001/NVL002 NVLinks down or slow "
            "(`topodiag check --from` the node's outputs and the NCCL_DEBUG=INFO log)")

NOT_JUDGED = {
    "other_collective": "PERF001's expectation is for all_reduce only",
    "no_hosts": "the outputs name no hosts (no \"# Rank\" lines); give --from the node's outputs",
    "no_nvlink_bandwidth": "the GPUs' NVLink bandwidth is not known (PCIe GPUs, or no GPU model)",
    "no_nic_count": "across nodes the NIC count is needed: give --from the node's ibstat, or --profile",
}

__all__ = ["compare", "compare_files", "load_runs", "Run"]


def compare_files(paths: Sequence[str], *, labels: Sequence[str] = (), node: Optional[Sequence[str]] = None,
                  profile: Optional[str] = None, noise: float = NOISE) -> dict:
    """Load the runs (and the node's saved outputs, for the expectation) and compare them."""
    runs = load_runs(paths, labels)
    topology = None
    if node:
        from ..pipeline import build_topology, load

        topology = build_topology(load(node))
    return compare(runs, topology=topology, profile=profile, noise=noise)


def _pct(a: float, b: float) -> Optional[float]:
    return None if not b else round((a / b - 1) * 100, 1)


def _band_rows(runs: list[Run], common: list[int]) -> list[dict]:
    out = []
    for name, lo, hi in BANDS:
        sizes = [s for s in common if s >= lo and (hi is None or s < hi)]
        if not sizes:
            continue
        means = [sum(r.points[s] for s in sizes) / len(sizes) for r in runs]
        order = sorted(range(len(runs)), key=lambda i: -means[i])
        best = order[0]
        out.append({"band": name, "from_bytes": lo, "to_bytes": hi, "sizes": sizes,
                    "mean_busbw": [round(m, 3) for m in means], "best": runs[best].label,
                    "gain_pct_vs_first": _pct(means[best], means[0]) if best else 0.0,
                    "gain_pct_vs_runner_up": _pct(means[best], means[order[1]])})
    return out


def _large(runs: list[Run], common: list[int], noise: float) -> Optional[dict]:
    """At the largest size every run has: which runs differ from the best beyond noise (the larger of
    `noise` and the runs' own out-of-place vs in-place spread there)."""
    if not common:
        return None
    size = common[-1]
    values = [r.points[size] for r in runs]
    own = max((r.spread.get(size, 0.0) for r in runs), default=0.0)
    limit = max(noise, own)
    best = max(range(len(runs)), key=lambda i: values[i])
    differ = [{"label": r.label, "busbw": v, "below_best_pct": round((1 - v / values[best]) * 100, 1)}
              for r, v in zip(runs, values) if values[best] and (values[best] - v) / values[best] > limit]
    return {"size": size, "noise": round(limit, 4), "busbw": values, "best": runs[best].label, "differ": differ}


def _expectation(runs: list[Run], topology, profile_name: Optional[str]) -> dict:
    """The expectation PERF001 uses, for the first run whose layout yields one."""
    from ..checks import perf
    from ..model import Topology
    from ..pipeline import choose_profile

    topo = topology if topology is not None else Topology()
    prof, how_prof = choose_profile(profile_name, topo, [r.data for r in runs])
    reason = None
    for r in runs:
        hosts, per_host, names, _, _ = perf.run_layout(r.data, r.run, topology)
        expected, how, not_judged, _ = perf.expected_busbw(r.collective or "unknown", hosts, per_host, names,
                                                         prof, topology)
        if expected is not None:
            return {"gbps": round(expected, 3), "how": how, "profile": how_prof}
        reason = reason or not_judged
    return {"gbps": None, "how": None, "profile": how_prof, "not_judged": reason,
            "why": NOT_JUDGED.get(reason or "", "no expectation")}


def shape(r: Run) -> tuple:
    """What a run measures, apart from its settings: (collective, nodes, GPUs per node, ranks)."""
    return (r.collective, len(r.hosts) or None, max(r.per_host.values()) if r.per_host else None, r.nranks)


def _shape_words(key: tuple) -> str:
    coll, nodes, gpn, ranks = key
    where = f"{nodes} node(s) x {gpn} GPU(s)" if nodes and gpn else "layout not shown"
    return f"{coll or 'collective?'}, {where}, {ranks if ranks is not None else '?'} ranks"


def _shapes(runs: list[Run]) -> tuple[list[dict], list[str]]:
    """The runs grouped by shape, and what a reader must know when they differ: busbw of runs of
    different shapes measures different layers (inside a node: NVLink; across nodes: the network),
    so those runs are shown side by side but each group is judged on its own; runs of one shape on
    different hosts may differ by host, not by setting."""
    groups: dict[tuple, list[str]] = {}
    for r in runs:
        groups.setdefault(shape(r), []).append(r.label)
    out = [{"shape": _shape_words(k), "collective": k[0], "nodes": k[1], "gpus_per_node": k[2], "nranks": k[3],
            "runs": labels} for k, labels in groups.items()]
    notes = []
    if len(groups) > 1:
        notes.append("the runs differ in shape (" + "; ".join(f"{', '.join(g['runs'])}: {g['shape']}" for g in out)
                     + "): their busbw measures different layers or group sizes, so a difference between groups is the "
                       "shape, not the setting; each group is judged against its own expectation")
    hostsets = {tuple(sorted(r.hosts)) for r in runs if r.hosts}
    if len(groups) == 1 and len(hostsets) > 1:
        notes.append("the runs have one shape but ran on different hosts: a difference may be the hosts, not the "
                     "settings (compare runs of one host set to judge a setting)")
    return out, notes


def _large_busbw(r: Run) -> float:
    """A run's best busbw at the sizes PERF001 judges (>= 256 MiB), else at its largest size."""
    from ..checks import perf

    big = [bw for s, bw in r.points.items() if s >= perf.MIN_SIZE_BYTES]
    return max(big) if big else r.points[max(r.points)]


MIN_FRACTION = 0.8  # of the expectation: a run that reaches it is not held back by the transport or topology


def _table(runs: list[Run], sizes: list[int]) -> list[dict]:
    table = []
    for s in sizes:
        vals = [r.points.get(s) for r in runs]
        known = [(v, r.label) for v, r in zip(vals, runs) if v is not None]
        table.append({"size": s, "busbw": vals, "best": max(known)[1] if len(known) > 1 else None})
    return table


def _judged(runs: list[Run], groups: list[dict], topology, profile: Optional[str]) -> tuple[list[Run], dict]:
    """The runs judged and their expectation: all runs when they share one shape, else the first shape
    whose runs yield an expectation, on its runs only."""
    if len(groups) <= 1:
        return runs, _expectation(runs, topology, profile)
    judged, exp = runs, None
    for g in groups:
        members = [r for r in runs if r.label in g["runs"]]
        found = _expectation(members, topology, profile)
        if exp is None or (found["gbps"] and not exp["gbps"]):
            judged, exp = members, found
        if found["gbps"]:
            break
    exp["judged_runs"] = [r.label for r in judged]
    return judged, exp


def _verdict(exp: dict, judged: list[Run], runs: list[Run]) -> list[str]:
    """The expectation's verdict (set on `exp`) and its sentences."""
    exp.update(min_fraction=MIN_FRACTION)
    if not exp["gbps"]:
        exp.update(reached_by=[], verdict="not_judged")
        return []
    top = [(_large_busbw(r), r.label) for r in judged]
    reached = [label for bw, label in top if bw >= MIN_FRACTION * exp["gbps"]]
    exp.update(reached_by=reached)
    if reached:
        exp["verdict"] = "reached"
        out = [f"{', '.join(reached)} reach{'es' if len(reached) == 1 else ''} {MIN_FRACTION:.0%} of the "
               f"expected {exp['gbps']:g} GB/s ({exp['how']})"]
    else:
        exp["verdict"] = "none_reach"
        out = [f"no run reaches {MIN_FRACTION:.0%} of the expected {exp['gbps']:g} GB/s ({exp['how']}): "
               f"it is not the algorithm; look at the transport and the topology: {POINT_TO}"]
    above = [label for bw, label in top if bw > 1.1 * exp["gbps"]]
    if above and any(len(r.hosts) > 1 for r in runs):
        out.append(f"{', '.join(above)} exceed{'s' if len(above) == 1 else ''} the expected network bandwidth: "
                   "on few nodes Tree and NVLSTree send less than 2(n-1)/n of the data over the network, so "
                   "busbw overstates it; NCCL_ALGO=Ring measures the network itself")
    return out


def _large_words(large: Optional[dict]) -> str:
    """The first sentence: at the largest common size, the best run and those below it beyond noise."""
    from ..checks import perf

    if large is None:
        return "the runs share no message size: compare them by eye on the chart"
    if not large["differ"]:
        return f"at {perf.size_words(large['size'])} the runs agree within noise ({large['noise']:.0%})"
    names = ", ".join(f"{d['label']} ({d['busbw']:g} GB/s, {d['below_best_pct']:g}% below)" for d in large["differ"])
    return (f"at {perf.size_words(large['size'])}, {large['best']} is best "
            f"({max(large['busbw']):g} GB/s); beyond noise ({large['noise']:.0%}) below it: {names}")


def compare(runs: list[Run], *, topology=None, profile: Optional[str] = None, noise: float = NOISE) -> dict[str, Any]:
    sizes = sorted({s for r in runs for s in r.points})
    common = [s for s in sizes if all(s in r.points for r in runs)]
    large = _large(runs, common, noise)
    groups, shape_notes = _shapes(runs)
    judged, exp = _judged(runs, groups, topology, profile)
    summary = [_large_words(large)] + list(shape_notes) + _verdict(exp, judged, runs)
    summary.extend(r.note for r in runs if r.note)
    return {"schema_version": SCHEMA_VERSION, "kind": "compare",
            "collective": next((r.collective for r in runs if r.collective), None),
            "runs": [r.to_json() for r in runs], "shapes": groups, "sizes": sizes, "table": _table(runs, sizes),
            "bands": _band_rows(runs, common), "large": large, "expectation": exp, "summary": summary}


def series(result: dict) -> list[tuple[str, list[tuple[int, float]]]]:
    """(label, [(size, busbw)]) per run, for the charts."""
    return [(r["label"], sorted((int(s), v) for s, v in r["busbw"].items())) for r in result["runs"]]
