"""Comparing like with like: a cluster of H100 and A100 nodes is two fleets, and the A100 nodes are
not outliers of the H100 majority. The nodes are grouped by one fingerprint key (default gpu.model)
and each group is compared on its own (compare.py).

A group needs at least `min_nodes` nodes to stand apart. The nodes of a smaller group, and those that
lack the key (NVML saw no GPU, the node's GPUs fell off the bus), join the largest group, where they
are outliers on the key itself ("gpu.model absent, 255 others have ..."): a node whose GPUs vanished
must never escape the comparison by forming a group of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

from .compare import MIN_NODES, MIN_SHARE, Comparison, compare, natural
from .tally import Tally

GROUP_BY = "gpu.model"


@dataclass(frozen=True)
class Group:
    key: Optional[str]  # None: the whole fleet as one group
    value: Any  # the key's value its nodes share (None: whole fleet, or no node has the key)
    nodes: int
    joined: int = 0  # nodes without the key, or of a group too small to stand apart, compared here

    def to_dict(self) -> dict:
        return {"key": self.key, "value": self.value, "nodes": self.nodes, "joined": self.joined}


def split(tally: Tally, key: Optional[str], min_nodes: int = MIN_NODES) -> list[tuple[Group, Tally]]:
    """(group, the tally restricted to its nodes), the largest group first."""
    if not key:
        return [(Group(None, None, len(tally)), tally)]
    values = tally.values(key)  # most nodes first
    big = [(v, set(nodes)) for v, nodes in values if len(nodes) >= min_nodes]
    if len(big) <= 1:
        value = big[0][0] if big else None
        return [(Group(key, value, len(tally), len(tally) - (len(big[0][1]) if big else 0)), tally)]
    rest = set(tally.live())
    for _, members in big:
        rest -= members
    big[0][1].update(rest)
    return [(Group(key, v, len(members), len(rest) if n == 0 else 0), tally.restricted(members))
            for n, (v, members) in enumerate(big)]


def compare_groups(tally: Tally, *, group_by: Optional[str] = GROUP_BY, min_share: float = MIN_SHARE,
                   min_nodes: int = MIN_NODES) -> Comparison:
    """compare() per group, merged: outliers by node name, splits and by_key entries carry their group."""
    parts = split(tally, group_by, min_nodes)
    params = {"min_share": min_share, "min_nodes": min_nodes, "group_by": group_by}
    if len(parts) == 1:
        result = compare(tally, min_share=min_share, min_nodes=min_nodes)
        result.params = params
        result.groups = [parts[0][0].to_dict()]
        return result
    merged = Comparison(nodes=len(tally), keys=len(tally.keys), params=params)
    for group, view in parts:
        c = compare(view, min_share=min_share, min_nodes=min_nodes)
        merged.groups.append(group.to_dict())
        merged.outliers += [replace(o, group=group.value) for o in c.outliers]
        merged.splits += [replace(s, group=group.value) for s in c.splits]
        merged.by_key += [dict(entry, group=group.value) for entry in c.by_key]
    merged.outliers.sort(key=lambda o: natural(o.node))
    return merged
