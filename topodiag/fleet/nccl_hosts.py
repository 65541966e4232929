"""Which transport each host of a multi-host NCCL_DEBUG log shows, and the hosts that differ from
the rest (one host on NET/Socket while the others use NET/IB/GDRDMA: its HCA or driver is down).

The parser counts transports over the whole log; per host, this module reads the host from the
"host:pid:tid [dev]" prefix of each line of `connections_sample` (the first line of each of the
first 20 distinct connection texts) and the transport after its " via ". When the parser result
carries `transports_by_host` ({host: {kind: count}}; not there yet, see below) that is used instead.
A 20-line sample may miss hosts: each host says whether it could be judged and why not.

Transports fall in three groups, compared separately: network (NET/...), CollNet, and intra-node
(P2P/..., SHM, NVLS). In a group, a kind the most judged hosts show (at least `min_share` of them,
more than any other kind, `min_nodes` hosts judged at least) is the majority; a host that shows
other kinds of the group but never the majority kind is an outlier:

    gpu41: NET/Socket, 3 others NET/IBext_v8/GDRDMA

Seeing a kind besides the majority's is not enough (a sample shows a few connections of a host,
and a node may legitimately use GDRDMA on some NIC paths and not others).

What the parser would need to judge every host: a field `transports_by_host` {host: {kind: n}},
filled where it first reads each distinct connection text (`new_connection`, which has the line's
prefix), so that it costs one dict update per distinct text, not per line.
"""

from __future__ import annotations

import re
from typing import Any, Optional

GROUPS = ("network", "collnet", "intra-node")
_PREFIX_RE = re.compile(r"([^\s:\[\]]+):\d+:\d+\s+\[(\d+)\]")


def group_of(kind: str) -> str:
    if kind.startswith("NET/"):
        return "network"
    if kind == "CollNet":
        return "collnet"
    return "intra-node"


def _as_dict(parsed: Any) -> dict:
    if isinstance(parsed, dict):
        return parsed
    from ..parsers import to_jsonable

    return to_jsonable(parsed)


def read_log(path: str):
    """Parse an NCCL_DEBUG log file as `topodiag parse` would (raises InputError or ParseError)."""
    from ..parsers import get
    from ..load.files import open_text, parse_opened

    opened = open_text(path)
    try:
        return parse_opened(get("nccl_debug"), opened)
    finally:
        opened.close()


def per_host(parsed: Any) -> tuple[dict[str, dict[str, int]], str]:
    """{host: {transport kind: lines}} and where it came from ("transports_by_host" | "sample")."""
    from ..parsers.nccl_debug import normalise_transport

    data = _as_dict(parsed)
    given = data.get("transports_by_host")
    if isinstance(given, dict):
        return {str(h): dict(k) for h, k in given.items() if isinstance(k, dict)}, "transports_by_host"
    out: dict[str, dict[str, int]] = {}
    for item in data.get("connections_sample") or ():
        text = item.get("text", "") if isinstance(item, dict) else str(item)
        m = _PREFIX_RE.search(text)
        at = text.rfind(" via ")
        if not m or at < 0:
            continue
        kind = normalise_transport(text[at + 5:])
        kinds = out.setdefault(m.group(1), {})
        kinds[kind] = kinds.get(kind, 0) + 1
    return out, "sample"


def _host_rows(hosts: list, seen: dict, why_short: str) -> tuple[list[dict], dict, dict]:
    """Per host its transports and the groups judged; per group the hosts of each kind, and the hosts
    judged. A host that showed only intra-node lines is said not judged on the network."""
    rows = []
    by_group: dict[str, dict[str, set[str]]] = {g: {} for g in GROUPS}  # group -> kind -> hosts
    judged: dict[str, list[str]] = {g: [] for g in GROUPS}
    for h in hosts:
        kinds = seen.get(h, {})
        groups = sorted({group_of(k) for k in kinds}, key=GROUPS.index)
        for k in kinds:
            by_group[group_of(k)].setdefault(k, set()).add(h)
        for g in groups:
            judged[g].append(h)
        note = f"not judged: {why_short}" if not kinds else ""
        rows.append({"host": h, "transports": dict(sorted(kinds.items())), "judged": groups, "note": note})
    # "network not judged" only makes sense once some host showed a network transport
    if judged["network"]:
        for r in rows:
            if r["transports"] and "network" not in r["judged"]:
                r["note"] = "network transport not judged: only intra-node connection lines of this host were seen"
    return rows, by_group, judged


def _group_majority(g: str, kinds_hosts: dict, judged: list, min_share: float, min_nodes: int,
                    notes: list) -> tuple[Optional[str], bool]:
    """(the group's majority kind or None, whether hosts may be judged against it); what stands in the
    way is added to `notes`."""
    n = len(judged)
    ranked = sorted(kinds_hosts.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    top_kind, top_hosts = ranked[0]
    second = len(ranked[1][1]) if len(ranked) > 1 else 0
    counts = ", ".join(f"{k} on {len(hs)}" for k, hs in ranked)
    if n < min_nodes:
        if len(ranked) > 1:
            notes.append(f"{g}: only {n} hosts judged, too few to name a majority ({counts})")
        return (top_kind if len(ranked) == 1 else None), False
    if len(top_hosts) < min_share * n or len(top_hosts) <= second:
        notes.append(f"{g}: no majority transport ({counts})")
        return None, False
    return top_kind, True


def _outliers_of(g: str, top_kind: str, top_hosts: set, judged: list, seen: dict) -> list[dict]:
    out = []
    for h in judged:
        if h in top_hosts:
            continue
        kinds = sorted(k for k in seen[h] if group_of(k) == g)
        others = len(top_hosts)
        text = f"{h}: {', '.join(kinds)}, {others} other{'s' if others != 1 else ''} {top_kind}"
        out.append({"host": h, "group": g, "kinds": kinds, "majority": top_kind, "others": others, "text": text})
    return out


def compare_hosts(parsed: Any, *, label: Optional[str] = None, min_share: float = 0.5,
                  min_nodes: int = 3) -> dict:
    """Per host its transports, and the outlier hosts, as a JSON-able dict:
    {log, hosts_in_log, evidence ("sample" | "transports_by_host"), sample_lines, sample_capped,
     hosts [{host, transports {kind: lines}, judged [groups], note}], majority {group: kind},
     outliers [{host, group, kinds, majority, others, text}], notes [..]}"""
    from ..parsers.nccl_debug import MAX_SAMPLE

    data = _as_dict(parsed)
    seen, evidence = per_host(data)
    hosts = sorted(set(data.get("hosts") or ()) | set(seen))
    sample = list(data.get("connections_sample") or ())
    capped = evidence == "sample" and len(sample) >= MAX_SAMPLE
    why_short = (f"none of its connection lines among the {MAX_SAMPLE} distinct ones the parser samples"
                 if capped else "no connection line of this host in the log")
    notes: list[str] = []
    rows, by_group, judged = _host_rows(hosts, seen, why_short)
    majority: dict[str, Optional[str]] = {}
    outliers = []
    for g in GROUPS:
        if not judged[g]:
            continue
        majority[g], judge = _group_majority(g, by_group[g], judged[g], min_share, min_nodes, notes)
        if judge:
            outliers += _outliers_of(g, majority[g], by_group[g][majority[g]], judged[g], seen)
    unjudged = [r["host"] for r in rows if not r["transports"]]
    if unjudged:
        notes.append(f"{len(unjudged)} of {len(hosts)} hosts not judged: "
                     + ("their connection lines are not among the parser's sample" if capped
                        else "the log has no connection line of theirs"))
    return {"log": label, "hosts_in_log": len(hosts), "evidence": evidence, "sample_lines": len(sample),
            "sample_capped": capped, "hosts": rows, "majority": majority, "outliers": outliers, "notes": notes}
