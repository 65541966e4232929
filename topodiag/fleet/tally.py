"""The nodes read so far, held compactly for comparison: per fingerprint key, each distinct value
and the indices of the nodes that have it (array('I'): 4 bytes a node a key), plus per node its
name, where it came from, its finding codes and worst severity. Nothing is compared pairwise: all
that `compare` and `summary` need is in these per-key value counts.

A node is keyed by where its report came from (its label: the fan-out node, the file, `file:line`,
the bundle), never by the host the report names: a report can claim any host name, and a cloned
hostname must not fold eight nodes into one and hide the broken one. The host each report claims is
kept as data; two sources claiming one host name are a duplicate (`finish()` lists them, fleet
reports them and exits 1), and both still count. Nodes shown under one name are told apart by
their source ("gpu01 (b.json)"). The same source read twice (a file given twice) counts once,
keeping the report with the worse verdict.
"""

from __future__ import annotations

import math
import re
from array import array
from typing import Any, Iterator, Optional

from .reports import SEVERITIES, NodeReport


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


_NATURAL_RE = re.compile(r"[0-9]+|[^0-9]+")


def natural(name: str) -> tuple:
    """Sort key: node2 before node10. Only ASCII digits make a number (`isdigit()` also says yes to `²`,
    which int() refuses: issue 16, a host name with `²` crashed fleet), and a number is compared by
    its length then its digits, never through int() (which refuses more than 4300 digits)."""
    return tuple((0, len(d), d) if "0" <= t[0] <= "9" else (1, 0, t)
                 for t in _NATURAL_RE.findall(name) for d in (t.lstrip("0"),))


def _rank(worst: Optional[str]) -> int:
    return -1 if worst is None else SEVERITIES.index(worst)


def _note(first: dict[str, int], clash: dict[str, list[int]], key: str, idx: int) -> None:
    """Remember that node `idx` goes by `key`; a second one makes it a clash (all of them listed)."""
    have = first.setdefault(key, idx)
    if have != idx:
        got = clash.get(key)
        if got is None:
            clash[key] = [have, idx]
        else:
            got.append(idx)


def _merge_notes(first: dict[str, int], clash: dict[str, list[int]], part_first: dict[str, int],
                 part_clash: dict[str, list[int]], off: int) -> None:
    """`_note` for every node of a merged part (indices shifted by `off`), in the order `add` would
    have noted them: a clash is listed when its second node comes, so new clashes go in by that node."""
    new = []  # (the node that made it a clash, key, every node going by key)
    for key, j in part_first.items():
        got = part_clash.get(key)
        have = first.get(key)
        if got is None:  # one node of the part goes by key
            j += off
            if have is None:
                first[key] = j
            else:
                old = clash.get(key)
                if old is None:
                    new.append((j, key, [have, j]))
                else:
                    old.append(j)
            continue
        idxs = [i + off for i in got]
        if have is None:
            first[key] = idxs[0]
            new.append((idxs[1], key, idxs))
        else:
            old = clash.get(key)
            if old is None:
                new.append((idxs[0], key, [have] + idxs))
            else:
                old.extend(idxs)
    new.sort(key=lambda t: t[0])
    for _, key, idxs in new:
        clash[key] = idxs


class Tally:
    def __init__(self) -> None:
        self.names: list[str] = []  # as shown (unique once finish() ran)
        self.labels: list[str] = []  # where each report came from: the key
        self.hosts: list[Optional[str]] = []  # the host each report claims (data)
        self.codes: list[tuple] = []
        self.worst: list[Optional[str]] = []
        self.alive = bytearray()
        self.dead = 0
        self.by_source: dict[str, int] = {}
        self.rereads: list[str] = []  # sources read again (counted once)
        self.duplicates: list[dict] = []  # {host, sources, nodes}: set by finish()
        self.keys: dict[str, dict[Any, array]] = {}  # key -> value -> node indices (first-seen key order)
        self._codes_cache: dict[tuple, tuple] = {}
        self._by_claim: dict[str, int] = {}  # host name claimed -> first node claiming it
        self._claim_clash: dict[str, list[int]] = {}  # host name -> every node claiming it, when 2+
        self._by_name: dict[str, int] = {}
        self._name_clash: dict[str, list[int]] = {}

    def add(self, node: NodeReport) -> int:
        idx = len(self.names)
        old = self.by_source.get(node.label)
        if old is not None:  # the same source again: counted once, the worse verdict kept
            self.rereads.append(node.label)
            if _rank(self.worst[old]) > _rank(node.worst):
                return old
            self.alive[old] = 0
            self.dead += 1
        self.by_source[node.label] = idx
        name = node.name
        _note(self._by_name, self._name_clash, name, idx)
        claim = node.claims
        if claim is not None:
            _note(self._by_claim, self._claim_clash, claim, idx)
        self.names.append(name)
        self.labels.append(node.label)
        self.hosts.append(node.host)
        codes = node.codes
        self.codes.append(self._codes_cache.setdefault(codes, codes))  # one tuple per distinct code set
        self.worst.append(node.worst)
        self.alive.append(1)
        keys = self.keys
        for key, value in node.fingerprint.items():
            values = keys.get(key)
            if values is None:
                values = keys[key] = {}
            kind = type(value)
            v = value if kind is str or kind is int or kind is bool or value is None else value_key(value)
            arr = values.get(v)
            if arr is None:
                arr = values[v] = array("I")
            arr.append(idx)
        return idx

    def merge(self, part: "Tally") -> bool:
        """Count the nodes of `part`, a Tally of the reports that come after this one's (filled apart,
        by fleet's worker process: split.py), as if each had been `add`ed here in its order: same
        indices (shifted by the nodes here), same first-seen order of keys and values, same clashes.
        False, with nothing changed, when a source of `part` was already counted here: which of the
        two counts is `add`'s to judge, so the caller adds part's reports one by one instead."""
        by_source = self.by_source
        if not by_source.keys().isdisjoint(part.by_source.keys()):
            return False
        off = len(self.names)
        self.names.extend(part.names)
        self.labels.extend(part.labels)
        self.hosts.extend(part.hosts)
        cache = self._codes_cache
        self.codes.extend([cache.setdefault(c, c) for c in part.codes])
        self.worst.extend(part.worst)
        self.alive.extend(part.alive)
        self.dead += part.dead
        self.rereads.extend(part.rereads)
        by_source.update(zip(part.by_source, [j + off for j in part.by_source.values()]))
        _merge_notes(self._by_name, self._name_clash, part._by_name, part._name_clash, off)
        _merge_notes(self._by_claim, self._claim_clash, part._by_claim, part._claim_clash, off)
        keys = self.keys
        for key, part_values in part.keys.items():
            values = keys.get(key)
            if values is None:
                values = keys[key] = {}
            for v, arr in part_values.items():
                moved = array("I", [i + off for i in arr]) if off else arr
                have = values.get(v)
                if have is None:
                    values[v] = moved
                else:
                    have.extend(moved)
        return True

    def finish(self) -> None:
        """Once every report is in: nodes shown under one name get their source beside it, and the
        host names claimed by more than one source are listed in `duplicates`."""
        alive = self.alive
        for name, idxs in self._name_clash.items():
            live = [i for i in idxs if alive[i]]
            if len(live) > 1:
                for i in live:
                    self.names[i] = f"{name} ({self.labels[i]})"
        dups = []
        for host, idxs in self._claim_clash.items():
            live = [i for i in idxs if alive[i]]
            if len(live) > 1:
                live.sort(key=lambda i: natural(self.names[i]))
                dups.append({"host": host, "sources": [self.labels[i] for i in live],
                             "nodes": [self.names[i] for i in live]})
        dups.sort(key=lambda d: natural(d["host"]))
        self.duplicates = dups

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
