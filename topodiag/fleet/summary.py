"""The cluster summary of `topodiag fleet`: what the fleet is made of, counted from the per-key
value lists of the tally (no node is visited twice):

    nodes        read, failed, duplicates (host names more than one source reports), by worst finding
    gpus         GPU model x GPU count -> nodes
    nics         NIC model x firmware -> NICs, nodes
    ports        port rate x link layer -> ports, nodes
    drivers      NVIDIA driver version -> nodes (and CUDA driver version)
    findings     code -> nodes that have it

`summarize` gives the data (JSON), `rows` the (section, what, count) lines of the text table.
"""

from __future__ import annotations

from collections import Counter
from itertools import repeat
from typing import Any, Callable, Iterator

from .reports import SEVERITIES
from .tally import Tally


def _node_values(tally: Tally, key: str) -> dict[int, Any]:
    out: dict[int, Any] = {}
    for v, nodes in tally.values(key):
        out.update(zip(nodes, repeat(v)))
    return out


def _per_entity(tally: Tally, suffix: str, with_suffix: str) -> Iterator[tuple[Any, Any, int, Callable]]:
    """(value of KEY, value of its sibling, how many nodes have both, a callable giving the set of
    those nodes) for every key ending in `suffix`, a NIC's model and its firmware, a port's rate and
    its link layer: per key, its values as `tally.values` orders them, and per value the sibling's
    values in the order of their first node (the order a node-by-node loop meets them). Counted a
    value at a time (C loops: map, Counter), not a node at a time."""
    for key in [k for k in tally.keys if k.startswith("nic:") and k.endswith(suffix)]:
        sibling = _node_values(tally, key[: -len(suffix)] + with_suffix).get
        for v, nodes in tally.values(key):
            got = list(map(sibling, nodes))
            counts = Counter(got)
            if len(counts) == 1:
                [(w, n)] = counts.items()
                yield v, w, n, lambda nodes=nodes: set(nodes)
                continue
            for w, n in counts.items():
                yield v, w, n, lambda w=w, nodes=nodes, got=got: {i for i, x in zip(nodes, got) if x == w}


def _rows(counts: Counter, nodes: dict, names: tuple[str, str], unit: str) -> list[dict]:
    out = [{names[0]: a, names[1]: b, unit: n, "nodes": len(nodes[(a, b)])} for (a, b), n in counts.items()]
    out.sort(key=lambda r: (-r[unit], str(r[names[0]]), str(r[names[1]])))
    return out


def _count(counts: Counter, nodes: dict, pair: tuple, n: int, which: Callable) -> None:
    counts[pair] += n
    have = nodes.get(pair)
    if have is None:
        nodes[pair] = which()
    else:
        have |= which()


def summarize(tally: Tally, failed: int = 0) -> dict:
    live = list(tally.live())
    gpu_model, gpu_count = _node_values(tally, "gpu.model"), _node_values(tally, "gpu.count")
    gpus = Counter(zip(map(gpu_model.get, live), map(gpu_count.get, live)))
    nic_counts: Counter = Counter()
    nic_nodes: dict = {}
    for model, fw, n, which in _per_entity(tally, ".model", ".firmware"):
        _count(nic_counts, nic_nodes, (model, fw), n, which)
    for fw, model, n, which in _per_entity(tally, ".firmware", ".model"):
        if model is None:  # firmware of a NIC whose model no input gave
            _count(nic_counts, nic_nodes, (None, fw), n, which)
    port_counts: Counter = Counter()
    port_nodes: dict = {}
    for rate, layer, n, which in _per_entity(tally, ".rate_gbps", ".link_layer"):
        _count(port_counts, port_nodes, (rate, layer), n, which)
    codes: Counter = Counter()
    for code_set, n in Counter(map(tally.codes.__getitem__, live)).items():  # one tuple per distinct code set
        for code in code_set:
            codes[code] += n
    worst = Counter(w or "none" for w in map(tally.worst.__getitem__, live))
    by_code, by_worst = _named(tally, live)

    def versions(key: str) -> list[dict]:
        got = [{"version": v, "nodes": len(nodes)} for v, nodes in tally.values(key)]
        have = sum(r["nodes"] for r in got)
        if got and have < len(live):
            got.append({"version": None, "nodes": len(live) - have})
        return got

    return {
        "nodes": {"read": len(live), "failed": failed, "duplicates": len(tally.duplicates),
                  "by_worst_finding": {s: worst.get(s, 0) for s in ("none",) + SEVERITIES},
                  "by_worst_finding_named": {s: by_worst[s] for s in SEVERITIES if s in by_worst}},
        "gpus": sorted(({"model": m, "count": c, "nodes": n} for (m, c), n in gpus.items()),
                       key=lambda r: (-r["nodes"], str(r["model"]), str(r["count"]))),
        "nics": _rows(nic_counts, nic_nodes, ("model", "firmware"), "nics"),
        "ports": _rows(port_counts, port_nodes, ("rate_gbps", "link_layer"), "ports"),
        "drivers": versions("driver_version"),
        "cuda_drivers": versions("cuda_driver_version"),
        "findings": [{"code": c, "nodes": n, "named": by_code.get(c, [])}
                     for c, n in sorted(codes.items(), key=lambda kv: (-kv[1], kv[0]))],
    }


MAX_NAMED = 20  # nodes named behind one count (the JSON's `named`; the count says how many in all)


def _named(tally: Tally, live: list) -> tuple[dict, dict]:
    """The nodes behind the finding counts, first MAX_NAMED of each in natural order: code -> names,
    worst severity -> names."""
    from .tally import natural

    by_code: dict[str, list[str]] = {}
    by_worst: dict[str, list[str]] = {}
    for i in live:
        name = tally.names[i]
        for code in tally.codes[i]:
            by_code.setdefault(code, []).append(name)
        if tally.worst[i]:
            by_worst.setdefault(tally.worst[i], []).append(name)
    for table in (by_code, by_worst):
        for key, names in table.items():
            table[key] = sorted(names, key=natural)[:MAX_NAMED]
    return by_code, by_worst


def named(names: list, total: int) -> str:
    """'node08' / 'node08, node09 and 3 more': the nodes behind a count, for a text line."""
    shown = ", ".join(names[:3])
    return shown + (f" and {total - min(3, len(names))} more" if total > min(3, len(names)) else "")


def _nodes(n: int) -> str:
    return f"{n} node" if n == 1 else f"{n} nodes"


def _v(value: Any, none: str = "not reported", unit: str = "") -> str:
    from .wording import fmt

    return none if value is None else f"{fmt(value)}{unit}"


def rows(summary: dict) -> list[tuple[str, str, str]]:
    """The summary as (section, what, how many) lines for a text table."""
    out: list[tuple[str, str, str]] = []
    n = summary["nodes"]
    out.append(("nodes", "read", str(n["read"])))
    if n["failed"]:
        out.append(("", "failed (no report)", str(n["failed"])))
    if n["duplicates"]:
        out.append(("", "host names reported by 2+ sources", str(n["duplicates"])))
    for sev in ("critical", "error", "warning", "info"):
        if n["by_worst_finding"].get(sev):
            who = named(n.get("by_worst_finding_named", {}).get(sev, []), n["by_worst_finding"][sev])
            out.append(("", f"worst finding {sev}" + (f": {who}" if who else ""), str(n["by_worst_finding"][sev])))

    def section(title: str, items: list[dict], what, count) -> None:
        for j, r in enumerate(items):
            out.append((title if j == 0 else "", what(r), count(r)))

    section("GPUs", summary["gpus"], lambda r: (f"{r['count']} x {r['model']}" if r["model"] is not None
                                                else "no GPU reported" if r["count"] is None
                                                else f"{r['count']} x (model not reported)"),
            lambda r: _nodes(r["nodes"]))
    section("NICs", summary["nics"], lambda r: f"{_v(r['model'], 'model not reported')}, firmware "
                                               f"{_v(r['firmware'])}", lambda r: f"{r['nics']} on {_nodes(r['nodes'])}")
    section("ports", summary["ports"], lambda r: f"{_v(r['rate_gbps'], 'rate not reported', ' Gb/s')} "
                                                 f"{_v(r['link_layer'], '')}".strip(),
            lambda r: f"{r['ports']} on {_nodes(r['nodes'])}")
    section("driver", summary["drivers"], lambda r: _v(r["version"]), lambda r: _nodes(r["nodes"]))
    section("CUDA driver", summary["cuda_drivers"], lambda r: _v(r["version"]), lambda r: _nodes(r["nodes"]))
    section("findings", summary["findings"],
            lambda r: r["code"] + (f": {named(r['named'], r['nodes'])}" if r.get("named") else ""),
            lambda r: _nodes(r["nodes"]))
    return out

