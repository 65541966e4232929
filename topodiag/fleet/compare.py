"""Outliers against the majority: for each fingerprint key, the value most nodes share and the nodes
that differ, lack the key, or alone have it.

Per key (nodes: those read; having: those that report the key):
- presence: when at least `min_share` of the nodes and more than half have the key, a node without it
  is an outlier ("missing"); when at least `min_share` and more than half lack it, the nodes that
  have it are ("only_on"); an even presence is a split;
- value: among the nodes having the key, a value held by at least `min_share` of them and by more
  nodes than any other value is the majority, and every other value is an outlier ("differs"); else
  the key is a split (reported, nobody blamed: a 50/50 fleet has no outliers);
- below `min_nodes` nodes in all (or nodes having the key, for values) nothing is an outlier.
Time is linear in nodes x keys: each key's values are counted once (tally.py), never node by node.

Per node, its differences in key order, one line:
    node017: nic:mlx5_3 port 1 at 200 Gb/s, 255 others at 400
A node lacking every fact of a NIC, port or GPU the majority reports gets one item for it
("nic:mlx5_7 absent (6 facts), 255 others have it"), and likewise for an extra one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from . import wording
from .tally import Tally, natural  # noqa: F401 -- natural: imported from here too

MIN_SHARE = 0.5
MIN_NODES = 3
MAX_SPLIT_VALUES = 8  # values listed for a split key (the rest counted)


@dataclass(frozen=True)
class Difference:
    key: str  # the fingerprint key, or the subject ("nic:mlx5_7") of collapsed keys
    kind: str  # differs | missing | only_on
    value: Any  # the node's value (None when missing)
    majority: Any  # the majority's value (None: only_on, or no value majority)
    others: int  # nodes with the majority value (missing/differs), or nodes without the key (only_on)
    text: str
    keys: tuple = ()  # the keys a subject item stands for

    def to_dict(self) -> dict:
        out = {"key": self.key, "kind": self.kind, "value": self.value, "majority": self.majority,
               "others": self.others, "text": self.text}
        if self.keys:
            out["keys"] = list(self.keys)
        return out


@dataclass(frozen=True)
class NodeOutliers:
    node: str
    input: str
    differences: tuple
    group: Any = None  # the value of the group-by key whose nodes it was compared with (groups.py)
    host: Optional[str] = None  # the host the report says it is from (data; `node` is where it came from)

    @property
    def line(self) -> str:
        return f"{self.node}: " + "; ".join(d.text for d in self.differences)

    def to_dict(self) -> dict:
        return {"node": self.node, "input": self.input, "host": self.host, "line": self.line, "group": self.group,
                "differences": [d.to_dict() for d in self.differences]}


@dataclass(frozen=True)
class Split:
    """A key on which the nodes differ without a clear majority."""

    key: str
    values: tuple  # ((value, nodes), ...) most nodes first, at most MAX_SPLIT_VALUES
    more_values: int  # distinct values not listed
    absent: int  # nodes without the key
    group: Any = None  # as NodeOutliers.group

    @property
    def text(self) -> str:
        parts = [f"{wording.fmt(v)} on {n}" for v, n in self.values]
        if self.more_values:
            parts.append(f"{self.more_values} more values")
        if self.absent:
            parts.append(f"absent on {self.absent}")
        return f"{self.key}: " + ", ".join(parts)

    def to_dict(self) -> dict:
        return {"key": self.key, "values": [{"value": v, "nodes": n} for v, n in self.values],
                "more_values": self.more_values, "absent": self.absent, "group": self.group, "text": self.text}


@dataclass
class Comparison:
    nodes: int
    keys: int
    outliers: list = field(default_factory=list)  # NodeOutliers, by node name (natural order)
    splits: list = field(default_factory=list)  # Split, in key order
    by_key: list = field(default_factory=list)  # {key, majority, ..., differs, missing, only_on}
    params: dict = field(default_factory=dict)
    groups: list = field(default_factory=list)  # groups.Group.to_dict() of each group compared apart

    def to_dict(self) -> dict:
        return {"nodes": self.nodes, "keys": self.keys, "params": self.params, "groups": self.groups,
                "outliers": [o.to_dict() for o in self.outliers],
                "splits": [s.to_dict() for s in self.splits], "by_key": self.by_key}


def compare(tally: Tally, *, min_share: float = MIN_SHARE, min_nodes: int = MIN_NODES) -> Comparison:
    n_all = len(tally)
    names = tally.names
    per_node: dict[int, list[Difference]] = {}
    result = Comparison(nodes=n_all, keys=len(tally.keys),
                        params={"min_share": min_share, "min_nodes": min_nodes})
    enough = n_all >= min_nodes
    live: Optional[list[int]] = None
    presence_of: dict[str, str] = {}

    def add(i: int, d: Difference) -> None:
        per_node.setdefault(i, []).append(d)

    for key in tally.keys:
        groups = tally.values(key)
        if not groups:
            continue
        having = sum(len(nodes) for _, nodes in groups)
        absent = n_all - having
        top_v, top_nodes = groups[0]
        top = len(top_nodes)
        second = len(groups[1][1]) if len(groups) > 1 else 0
        if absent == 0:
            presence = "all"
        elif enough and having > absent and having >= min_share * n_all:
            presence = "most"
        elif enough and absent > having and absent >= min_share * n_all:
            presence = "few"
        else:
            presence = "split"
        presence_of[key] = presence
        entry: dict[str, Any] = {"key": key, "majority": None, "majority_nodes": 0, "nodes_with_key": having,
                                 "differs": [], "missing": [], "only_on": []}
        if presence == "few":
            for v, nodes in groups:
                d = Difference(key, "only_on", v, None, absent, wording.only_on(key, v, absent))
                for i in nodes:
                    add(i, d)
                entry["only_on"].append({"value": v, "nodes": sorted((names[i] for i in nodes), key=natural)})
            result.by_key.append(entry)
            continue
        value_clear = len(groups) == 1 or (having >= min_nodes and top >= min_share * having and top > second)
        if presence == "split" or not value_clear:
            shown = tuple((v, len(nodes)) for v, nodes in groups[:MAX_SPLIT_VALUES])
            result.splits.append(Split(key, shown, max(0, len(groups) - MAX_SPLIT_VALUES), absent))
            if presence == "split":
                continue
        if value_clear:
            entry["majority"], entry["majority_nodes"] = top_v, top
            for v, nodes in groups[1:]:
                d = Difference(key, "differs", v, top_v, top, wording.differs(key, v, top_v, top))
                for i in nodes:
                    add(i, d)
                entry["differs"].append({"value": v, "nodes": sorted((names[i] for i in nodes), key=natural)})
        if presence == "most":
            if live is None:
                live = list(tally.live())
            present: set[int] = set()
            for _, nodes in groups:
                present.update(nodes)
            majority = top_v if value_clear else None
            text = (wording.missing(key, majority, top) if value_clear
                    else f"{wording.label(key)} absent, {wording.others(having)} have it")
            lacking = [i for i in live if i not in present]
            d = Difference(key, "missing", None, majority, top if value_clear else having, text)
            for i in lacking:
                add(i, d)
            entry["missing"] = sorted((names[i] for i in lacking), key=natural)
        if entry["differs"] or entry["missing"]:
            result.by_key.append(entry)

    subjects = _subjects(presence_of)
    for i, diffs in per_node.items():
        per_node[i] = _collapse(diffs, subjects)
    result.outliers = sorted((NodeOutliers(names[i], tally.labels[i], tuple(d), host=tally.hosts[i]) for i, d in per_node.items()),
                             key=lambda o: natural(o.node))
    return result


def _subjects(presence_of: dict[str, str]) -> dict[str, dict[str, int]]:
    """subject -> {"majority": keys most nodes report, "minority": keys few report, "other": the rest}
    for every GPU, NIC and NIC port."""
    out: dict[str, dict[str, int]] = {}
    for key, presence in presence_of.items():
        p = wording.parse_key(key)
        if p.entity is None:
            continue
        kind = "majority" if presence in ("all", "most") else "minority" if presence == "few" else "other"
        for subject in {p.entity, p.subject}:
            counts = out.setdefault(subject, {"majority": 0, "minority": 0, "other": 0})
            counts[kind] += 1
    return out


def _collapse(diffs: list[Difference], subjects: dict[str, dict[str, int]]) -> list[Difference]:
    """Missing (extra) facts that are all a node lacks (has beyond) of one GPU, NIC or port -> one item."""
    groups: dict[tuple[str, str], list[int]] = {}
    for pos, d in enumerate(diffs):
        if d.kind in ("missing", "only_on"):
            p = wording.parse_key(d.key)
            if p.entity:
                groups.setdefault((d.kind, p.entity), []).append(pos)
                if p.port:
                    groups.setdefault((d.kind, p.subject), []).append(pos)
    replace: dict[int, Difference] = {}
    dropped: set[int] = set()
    # entities first (longer subjects are ports): a collapsed NIC swallows its ports
    for (kind, subject), positions in sorted(groups.items(), key=lambda kv: len(kv[0][1])):
        if len(positions) < 2 or any(p in dropped for p in positions):
            continue
        counts = subjects.get(subject, {})
        if kind == "missing":
            if len(positions) != counts.get("majority"):
                continue
            others = min(diffs[p].others for p in positions)
            text = wording.subject_missing(subject, len(positions), others)
        else:
            if counts.get("majority") or counts.get("other"):
                continue
            others = min(diffs[p].others for p in positions)
            text = wording.subject_only_on(subject, len(positions), others)
        keys = tuple(diffs[p].key for p in positions)
        replace[positions[0]] = Difference(subject, kind, None, None, others, text, keys)
        dropped.update(positions[1:])
    if not replace:
        return diffs
    return [replace.get(pos, d) for pos, d in enumerate(diffs) if pos not in dropped]
