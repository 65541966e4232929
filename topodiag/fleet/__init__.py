"""`topodiag fleet`: compare many nodes' check reports and name the nodes that differ from the majority.

    from topodiag.fleet import run_fleet, render_text, render_json
    result = run_fleet(["reports/"], nccl_logs=["job.log"])
    render_text(result)                      # rich tables on stdout
    print(render_json(result))               # the JSON form (result.to_dict())

Modules: reports (reading reports and bundles, one at a time), split (a big directory's second half
read by a worker process), tally (per key: value -> node
indices), groups (like with like: one comparison per GPU model), compare (majority, outliers,
splits), wording (keys in words), summary (the cluster table), nccl_hosts (per-host transports of a multi-host NCCL log), render (text and JSON).
Nothing here imports rich, networkx or the rule engine unless a bundle or the text form needs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

SCHEMA_VERSION = 1


@dataclass
class FleetResult:
    """What `run_fleet` found; `to_dict()` is the JSON form (versioned by SCHEMA_VERSION)."""

    comparison: Any  # compare.Comparison
    summary: dict
    failures: list = field(default_factory=list)  # reports.Failure
    failed_count: int = 0  # inputs that gave no report (a file's many bad lines are one Failure past 50)
    duplicates: list = field(default_factory=list)  # {host, sources, nodes}: a host name two sources claim
    nccl: list = field(default_factory=list)  # nccl_hosts.compare_hosts() per log
    with_findings: list = field(default_factory=list)  # {node, input, host, worst, codes} of nodes with findings
    rereads: list = field(default_factory=list)  # inputs read more than once (counted once)

    def at_or_above(self, severity: str) -> list:
        """The nodes whose worst finding is at or above `severity` (info, warning, error, critical)."""
        from .reports import SEVERITIES

        level = SEVERITIES.index(severity)
        return [n for n in self.with_findings if SEVERITIES.index(n["worst"]) >= level]

    @property
    def nodes(self) -> int:
        return self.comparison.nodes

    @property
    def outliers(self) -> list:
        return self.comparison.outliers

    @property
    def nccl_outliers(self) -> list:
        return [o for log in self.nccl for o in log.get("outliers", ())]

    @property
    def has_outliers(self) -> bool:
        return bool(self.comparison.outliers or self.nccl_outliers)

    @property
    def has_duplicates(self) -> bool:
        """Two sources (fan-out nodes, files, bundles) report one host name: a cloned hostname, or a
        node claiming another's name (both are counted; this is a finding of its own, exit 1)."""
        return bool(self.duplicates)

    def lines(self) -> list[str]:
        """One line per outlier node (fingerprint), then per NCCL host that differs, then per host
        name that more than one source reports."""
        return ([o.line for o in self.comparison.outliers] + [o["text"] for o in self.nccl_outliers]
                + [d["text"] for d in self.duplicates])

    def to_dict(self) -> dict:
        """{schema_version, nodes, failed, keys_compared, params {min_share, min_nodes, group_by},
        groups [{key, value, nodes, joined}] (the groups compared apart, largest first),
        outliers [{node, input, line, group, differences [{key, kind (differs|missing|only_on), value, majority,
                   others, text, keys (a collapsed NIC/port/GPU)}]}],
        splits [{key, values [{value, nodes}], more_values, absent, group, text}],
        by_key [{key, group?, majority, majority_nodes, nodes_with_key, differs [{value, nodes [names]}],
                 missing [names], only_on [{value, nodes}]}],
        summary (summary.py), failures [{input, reason, count?, node? (a fan-out node)}],
        duplicates [{host, sources [inputs], nodes [names], text}] (a host name that more than one source reports),
        inputs_read_twice [inputs] (counted once),
        nccl [nccl_hosts.compare_hosts() per log],
        nodes_with_findings [{node, input, host, worst, codes}] (by node name; host: the one the report says)}"""
        c = self.comparison
        return {
            "schema_version": SCHEMA_VERSION,
            "nodes": c.nodes,
            "failed": self.failed_count,
            "keys_compared": c.keys,
            "params": c.params,
            "groups": c.groups,
            "outliers": [o.to_dict() for o in c.outliers],
            "splits": [s.to_dict() for s in c.splits],
            "by_key": c.by_key,
            "summary": self.summary,
            "failures": [f.to_dict() for f in self.failures],
            "duplicates": self.duplicates,
            "inputs_read_twice": self.rereads,
            "nccl": self.nccl,
            "nodes_with_findings": self.with_findings,
        }


def run_fleet(paths: Sequence[str] = (), *, texts: Optional[Iterable[tuple]] = None,
              input_failures: Optional[Iterable[tuple]] = None, nccl_logs: Sequence[str] = (),
              check_options: Optional[Mapping[str, Any]] = None, min_share: float = 0.5,
              min_nodes: int = 3, group_by: Optional[str] = "gpu.model", progress=None) -> FleetResult:
    """Read every node report, compare the fingerprints, summarise the fleet.

    paths           report files (one JSON report, JSON lines, clush/srun-prefixed output), directories
                    of them, bundles (directory with manifest.json, .tar.gz): see reports.py
    texts           (node, report text) pairs already in memory, e.g. `fanout.fan_out(...).outputs.items()`;
                    the node names a report without a host
    input_failures  (node or input, reason) pairs for nodes that gave no report (`FanOut.failures.items()`)
    nccl_logs       multi-host NCCL_DEBUG logs: per host transports and the hosts that differ
    check_options   keyword arguments of `topodiag.pipeline.diagnose` for bundles (profile, config, select,
                    ignore); validate them before (a bad one is a UsageError: here one failure per bundle)
    min_share       a majority needs at least this share of the nodes (that have the key) ...
    min_nodes       ... and at least this many nodes; ties are splits, never outliers
    group_by        compare the nodes of each value of this fingerprint key apart (groups.py); None: one group
    progress        optional callable(nodes_read: int), called every 1000 reports (for a stderr counter)

    Never raises for bad input: each unreadable input is a Failure (one line) in `result.failures`.
    """
    from . import split
    from .groups import compare_groups
    from .reports import Failure, NodeReport, read_reports, read_texts
    from .summary import summarize
    from .tally import Tally

    tally = Tally()
    failures: list = []
    failed = 0

    def feed(items) -> None:
        nonlocal failed
        for item in items:
            if isinstance(item, NodeReport):
                tally.add(item)
                if progress is not None and len(tally.names) % 1000 == 0:
                    progress(len(tally.names))
            elif isinstance(item, Failure):
                failed += item.count
                failures.append(item)

    for label, reason in input_failures or ():
        feed([Failure(str(label), str(reason), node=True)])
    for path in paths:
        halves = split.halves(path)  # a big directory: its second half read by a worker process
        if halves is None:
            feed(read_reports([path], check_options))
        else:
            feed(split.read_halves(*halves, tally, check_options))
            if progress is not None:
                progress(len(tally.names))
    if texts is not None:
        feed(read_texts(texts))
    nccl = []
    for log in nccl_logs:
        from .nccl_hosts import compare_hosts, read_log

        try:
            parsed = read_log(log)
        except Exception as exc:  # noqa: BLE001 -- InputError/ParseError: one line, the run goes on
            from .reports import one_line

            feed([Failure(log, one_line(f"NCCL log: {getattr(exc, 'message', None) or exc}"))])
            continue
        nccl.append(compare_hosts(parsed, label=log, min_share=min_share, min_nodes=min_nodes))
    tally.finish()
    comparison = compare_groups(tally, group_by=group_by, min_share=min_share, min_nodes=min_nodes)
    from .compare import natural

    flagged = sorted(({"node": tally.names[i], "input": tally.labels[i], "host": tally.hosts[i],
                       "worst": tally.worst[i], "codes": list(tally.codes[i])} for i in tally.live() if tally.worst[i]),
                     key=lambda n: natural(n["node"]))
    from .wording import duplicate

    duplicates = [dict(d, text=duplicate(d["host"], d["nodes"])) for d in tally.duplicates]
    return FleetResult(comparison, summarize(tally, failed), failures, failed, duplicates, nccl, flagged,
                       rereads=list(dict.fromkeys(tally.rereads)))


def render_text(result: FleetResult, file=None, max_outliers: int = 0, fail_on: Optional[str] = None) -> None:
    """The people's form (rich tables) on `file` (default stdout): outliers, NCCL hosts, splits,
    failed inputs, cluster summary; `max_outliers` > 0 lists that many outlier nodes, counts the rest;
    `fail_on` (a severity) also lists the nodes whose worst finding is at or above it."""
    from .render import render_text as _render

    _render(result, file=file, max_outliers=max_outliers, fail_on=fail_on)


def render_json(result: FleetResult) -> str:
    """The JSON form: `result.to_dict()`, indented."""
    from .render import render_json as _render

    return _render(result)


__all__ = ["FleetResult", "run_fleet", "render_text", "render_json", "SCHEMA_VERSION"]
