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


def _presence(having: int, absent: int, n_all: int, enough: bool, min_share: float) -> str:
    """all nodes have the key, most, few, or a split."""
    if absent == 0:
        return "all"
    if enough and having > absent and having >= min_share * n_all:
        return "most"
    if enough and absent > having and absent >= min_share * n_all:
        return "few"
    return "split"


class _Pass:
    """One comparison over a tally: each key's presence and values judged, the differences per node."""

    def __init__(self, tally: Tally, min_share: float, min_nodes: int) -> None:
        self.tally, self.names, self.min_share, self.min_nodes = tally, tally.names, min_share, min_nodes
        self.n_all = len(tally)
        self.enough = self.n_all >= min_nodes
        self.per_node: dict[int, list[Difference]] = {}
        self.result = Comparison(nodes=self.n_all, keys=len(tally.keys),
                                 params={"min_share": min_share, "min_nodes": min_nodes})
        self.live: Optional[list[int]] = None
        self.presence_of: dict[str, str] = {}

    def add(self, nodes, d: Difference) -> None:
        for i in nodes:
            self.per_node.setdefault(i, []).append(d)

    def named(self, nodes) -> list[str]:
        return sorted((self.names[i] for i in nodes), key=natural)

    def key(self, key: str) -> None:
        groups = self.tally.values(key)
        if not groups:
            return
        having = sum(len(nodes) for _, nodes in groups)
        absent = self.n_all - having
        presence = _presence(having, absent, self.n_all, self.enough, self.min_share)
        self.presence_of[key] = presence
        entry: dict[str, Any] = {"key": key, "majority": None, "majority_nodes": 0, "nodes_with_key": having,
                                 "differs": [], "missing": [], "only_on": []}
        if presence == "few":
            self.only_on(key, groups, absent, entry)
            self.result.by_key.append(entry)
            return
        top = len(groups[0][1])
        second = len(groups[1][1]) if len(groups) > 1 else 0
        value_clear = len(groups) == 1 or (having >= self.min_nodes and top >= self.min_share * having and top > second)
        if presence == "split" or not value_clear:
            shown = tuple((v, len(nodes)) for v, nodes in groups[:MAX_SPLIT_VALUES])
            self.result.splits.append(Split(key, shown, max(0, len(groups) - MAX_SPLIT_VALUES), absent))
            if presence == "split":
                return
        if value_clear:
            self.differs(key, groups, entry)
        if presence == "most":
            self.missing(key, groups, having, value_clear, entry)
        if entry["differs"] or entry["missing"]:
            self.result.by_key.append(entry)

    def only_on(self, key: str, groups, absent: int, entry: dict) -> None:
        for v, nodes in groups:
            self.add(nodes, Difference(key, "only_on", v, None, absent, wording.only_on(key, v, absent)))
            entry["only_on"].append({"value": v, "nodes": self.named(nodes)})

    def differs(self, key: str, groups, entry: dict) -> None:
        top_v, top_nodes = groups[0]
        top = len(top_nodes)
        entry["majority"], entry["majority_nodes"] = top_v, top
        for v, nodes in groups[1:]:
            self.add(nodes, Difference(key, "differs", v, top_v, top, wording.differs(key, v, top_v, top)))
            entry["differs"].append({"value": v, "nodes": self.named(nodes)})

    def missing(self, key: str, groups, having: int, value_clear: bool, entry: dict) -> None:
        if self.live is None:
            self.live = list(self.tally.live())
        present: set[int] = set()
        for _, nodes in groups:
            present.update(nodes)
        top_v, top = groups[0][0], len(groups[0][1])
        majority = top_v if value_clear else None
        text = (wording.missing(key, majority, top) if value_clear
                else f"{wording.label(key)} absent, {wording.others(having)} have it")
        lacking = [i for i in self.live if i not in present]
        self.add(lacking, Difference(key, "missing", None, majority, top if value_clear else having, text))
        entry["missing"] = self.named(lacking)


def compare(tally: Tally, *, min_share: float = MIN_SHARE, min_nodes: int = MIN_NODES) -> Comparison:
    run = _Pass(tally, min_share, min_nodes)
    for key in tally.keys:
        run.key(key)
    subjects = _subjects(run.presence_of)
    per_node = {i: _collapse(diffs, subjects) for i, diffs in run.per_node.items()}
    run.result.outliers = sorted((NodeOutliers(tally.names[i], tally.labels[i], tuple(d), host=tally.hosts[i])
                                  for i, d in per_node.items()), key=lambda o: natural(o.node))
    return run.result


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
