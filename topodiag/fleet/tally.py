"""The nodes read so far, held compactly for comparison: per fingerprint key, each distinct value
and the indices of the nodes that have it (array('I'): 4 bytes a node a key), plus per node its
name, where it came from, its finding codes and worst severity. Nothing is compared pairwise: all
that `compare` and `summary` need is in these per-key value counts.

A host read twice is counted once: the later report wins, the earlier index is marked dead and
the duplicate is noted.
"""

from __future__ import annotations

import math
from array import array
from typing import Any, Iterator, Optional

from .reports import NodeReport


def value_key(value: Any) -> Any:
    """A fingerprint value as a dict key: JSON scalars as they are (400 and 400.0 are one value),
    anything else (a list, an object, NaN) as its JSON text."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    import json

    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


class Tally:
    def __init__(self) -> None:
        self.names: list[str] = []
        self.labels: list[str] = []
        self.codes: list[tuple] = []
        self.worst: list[Optional[str]] = []
        self.alive = bytearray()
        self.dead = 0
        self.by_name: dict[str, int] = {}
        self.duplicates: list[dict] = []  # {node, replaced, by}
        self.keys: dict[str, dict[Any, array]] = {}  # key -> value -> node indices (first-seen key order)
        self._codes_cache: dict[tuple, tuple] = {}

    def add(self, node: NodeReport) -> int:
        idx = len(self.names)
        name = node.name
        old = self.by_name.get(name)
        if old is not None:
            self.alive[old] = 0
            self.dead += 1
            self.duplicates.append({"node": name, "replaced": self.labels[old], "by": node.label})
        self.by_name[name] = idx
        self.names.append(name)
        self.labels.append(node.label)
        codes = node.codes
        self.codes.append(self._codes_cache.setdefault(codes, codes))  # one tuple per distinct code set
        self.worst.append(node.worst)
        self.alive.append(1)
        keys = self.keys
        for key, value in node.fingerprint.items():
            values = keys.get(key)
            if values is None:
                values = keys[key] = {}
            v = value_key(value)
            arr = values.get(v)
            if arr is None:
                arr = values[v] = array("I")
            arr.append(idx)
        return idx

    def __len__(self) -> int:
        """Nodes counted (a duplicate host once)."""
        return len(self.names) - self.dead

    def live(self) -> Iterator[int]:
        """Indices of the counted nodes."""
        if not self.dead:
            return iter(range(len(self.names)))
        alive = self.alive
        return (i for i in range(len(self.names)) if alive[i])

    def restricted(self, members: set[int]) -> "Tally":
        """A view of the same reports counting only `members` (indices of counted nodes): the key
        arrays are shared, only the alive mask is new (for comparing a group of nodes)."""
        import copy

        view = copy.copy(self)
        view.alive = bytearray(1 if (i in members and self.alive[i]) else 0 for i in range(len(self.names)))
        view.dead = len(self.names) - sum(view.alive)
        return view

    def values(self, key: str) -> list[tuple[Any, list | array]]:
        """(value, node indices) of one key, counted nodes only, most nodes first (ties: first seen)."""
        out = []
        alive = self.alive
        for v, arr in self.keys.get(key, {}).items():
            nodes = arr if not self.dead else [i for i in arr if alive[i]]
            if nodes:
                out.append((v, nodes))
        out.sort(key=lambda p: -len(p[1]))
        return out
