"""The node's topology: one `networkx.MultiGraph` behind domain methods, provenance on every fact.

Node ids: `gpu:<index>` (`gpu:<busid>` when only the bus id is known; `aliases` maps other names
such as "GPU0" or a bus id to the id), `nic:mlx5_0`, `numa:0`, `cpu:0`, `pcisw:<busid>`,
`nvswitch:<busid>`, `host:<name>`. Node attributes: kind, name, facts (cpu_affinity, numa_node,
model, uuid, firmware, `ports` as nested dicts for NICs ...), `sources` (every input that spoke of
the node, as {source, file, line_no}) and `provenance` ({fact: the source that first said it}).
Edges are keyed by kind: "path" (a `topo -m` class), "nvlink" (a physical link aggregate), "pci"
(child to parent in NCCL's PCI tree), "numa", "p2p" (`topo -p2p` / NVML status per direction);
attributes kind, sources, provenance and the facts (class, link_count, derived, tclass,
pcie_link_*, status_* ...). Nominal bandwidths are not stored: they follow from these facts and
`topodiag.knowledge`, where the rules that need them compute them.

When two inputs disagree on a fact the first value stays and the disagreement is recorded in
`conflicts()`: nothing is overwritten silently.

The store is two dicts laid out as networkx lays out a `MultiGraph` (`_node`: id -> attributes;
`_adj`: id -> neighbour -> edge kind -> one attribute dict, shared by both ends), kept here so that
building and judging a node imports no networkx (0.15-0.3 s: the prolog's budget). `topology.graph`
is an `nx.MultiGraph` over those very dicts, made on first use (networkx imported then): the model
itself, not a copy. `nvlink_domains()` (connected components of the NVLink edges) is computed here;
`pci_path()` (shortest path over the PCI tree) asks networkx, and only when both ends have a PCI edge.
"""

from __future__ import annotations

import json
import re
from typing import Any
from ..parsers.base import is_digits

SCHEMA_VERSION = 1

# Path classes of `topo -m`, best first (NV# sorts before all of them, by link count).
PCIE_CLASS_ORDER = ("PIX", "PXB", "PHB", "NODE", "SYS")
_NV_RE = re.compile(r"^NV([0-9]+)$")
_RESERVED = {"kind", "sources", "provenance"}


def nv_count(path_class: str | None) -> int | None:
    """The number of bonded NVLinks a class names ("NV18" -> 18), None for PCIe classes."""
    m = _NV_RE.match(path_class or "")
    return int(m.group(1)) if m else None


def class_rank(path_class: str | None) -> tuple[int, int]:
    """Sort key of a path class: smaller is closer. NV# before PCIe (more links first), unknown last."""
    n = nv_count(path_class)
    if n is not None:
        return (0, -n)
    if path_class in PCIE_CLASS_ORDER:
        return (1, PCIE_CLASS_ORDER.index(path_class))
    return (2, 0)


def source_ref(source: str, file: str | None = None, line_no: int | None = None) -> dict:
    """The provenance record every fact carries."""
    return {"source": source, "file": file, "line_no": line_no}


def _index_key(node_id: str) -> tuple:
    """Natural order of the part after the kind: gpu:2 < gpu:10, mlx5_2 < mlx5_10."""
    tail = node_id.split(":", 1)[-1]
    return tuple((0, int(p), "") if is_digits(p) else (1, 0, p) for p in re.split(r"([0-9]+)", tail) if p)


def _node_order(node_id: str) -> tuple:
    """nodes() order: by kind prefix, then natural index order."""
    return (node_id.split(":")[0],) + _index_key(node_id)


# Edge fields that older topology JSON carried and that are gone: dropped when read back (null there).
_DROPPED_EDGE_FIELDS = ("nominal_gbps",)


class Topology:
    """One node's devices and links. Build it with `topodiag.model.build`; the graph is `graph`."""

    def __init__(self) -> None:
        self._node: dict[str, dict] = {}
        self._adj: dict[str, dict[str, dict[str, dict]]] = {}
        self._nx = None
        self.aliases: dict[str, str] = {}
        self.notes: list[str] = []
        self._conflicts: list[dict] = []

    @property
    def graph(self):
        """The node as a networkx `MultiGraph` (networkx imported on first use), over this model's
        own dicts: what is drawn or exported is the model, and a change through it is a change here."""
        if self._nx is None:
            import networkx as nx

            g = nx.MultiGraph()
            g._node = self._node
            g._adj = self._adj
            self._nx = g
        return self._nx

    def _add_node(self, node_id: str) -> dict:
        if node_id not in self._node:
            self._node[node_id] = {}
            self._adj[node_id] = {}
        return self._node[node_id]

    def _add_edge(self, a: str, b: str, kind: str) -> dict:
        """The attribute dict of the (a, b, kind) edge, made empty if new (networkx's layout)."""
        self._add_node(a)
        self._add_node(b)
        keys = self._adj[a].get(b)
        if keys is None:
            keys = self._adj[a][b] = {}
            self._adj[b][a] = keys
        return keys.setdefault(kind, {})

    def _edge_data(self, a: str, b: str, kind: str) -> dict | None:
        return self._adj.get(a, {}).get(b, {}).get(kind)

    def _iter_edges(self, node_id: str | None = None):
        """(a, b, kind, attributes) as networkx's `edges(keys=True, data=True)` gives them."""
        adj = self._adj
        seen: set[str] = set()
        for n in ([node_id] if node_id is not None else adj):
            for nbr, keys in adj[n].items():
                if nbr not in seen:
                    for k, d in keys.items():
                        yield n, nbr, k, d
            seen.add(n)

    def _remove_node(self, node_id: str) -> None:
        for other in list(self._adj[node_id]):
            del self._adj[other][node_id]
        del self._adj[node_id]
        del self._node[node_id]

    # -- building ---------------------------------------------------------------------------

    def resolve(self, name: str) -> str:
        """The node id for an id or alias ("GPU0", "NIC0", a bus id); the name itself if unknown."""
        return name if name in self._node else self.aliases.get(name, name)

    def add_alias(self, alias: str, node_id: str, source: dict | None = None) -> None:
        """Record another name of a node; a second, different target is a conflict."""
        old = self.aliases.get(alias)
        if old is None:
            self.aliases[alias] = node_id
        elif old != node_id:
            self.add_conflict(alias, "alias", [(old, None), (node_id, source)],
                              f"{alias} names both {old} and {node_id}")

    def add_node(self, node_id: str, kind: str, source: dict | None = None, **facts: Any) -> str:
        """Add or merge a node; facts that are None are not facts. Returns the id."""
        if node_id not in self._node:
            self._add_node(node_id).update(kind=kind, sources=[], provenance={})
        attrs = self._node[node_id]
        if attrs.get("kind") != kind:
            self.add_conflict(node_id, "kind", [(attrs.get("kind"), None), (kind, source)])
        self._merge(node_id, attrs, facts, source)
        return node_id

    def add_edge(self, a: str, b: str, kind: str, source: dict | None = None, **facts: Any) -> None:
        """Add or merge the edge of this kind between a and b (one per kind and pair; the kind is
        the edge's key in `graph`). An edge brings its nodes, as in networkx."""
        if a.split(":")[0] == b.split(":")[0]:  # gpu:1-gpu:0 is stored as gpu:0-gpu:1
            a, b = sorted((a, b), key=_index_key)
        attrs = self._edge_data(a, b, kind)
        if attrs is None:
            attrs = self._add_edge(a, b, kind)
            attrs.update(kind=kind, sources=[], provenance={})
        self._merge(f"{a}~{b}:{kind}", attrs, facts, source)

    def join(self, keep: str, drop: str) -> None:
        """Make `drop` and `keep` one node (two inputs named one device two ways): drop's facts merge
        into keep's with their own provenance (a disagreement is a conflict), its edges and aliases
        move to keep, and its id becomes an alias of keep."""
        if keep == drop or drop not in self._node:
            return
        attrs = self._node[drop]
        for src in attrs.get("sources") or []:
            self._merge(keep, self._node[keep], {}, src)
        for field, value in attrs.items():
            if field not in _RESERVED:
                self._merge(keep, self._node[keep], {field: value}, attrs["provenance"].get(field))
        for _, other, kind, data in list(self._iter_edges(drop)):
            other = keep if other == drop else other
            facts = {k: v for k, v in data.items() if k not in _RESERVED}
            for src in data.get("sources") or [None]:
                self.add_edge(keep, other, kind, src, **facts)
        self._remove_node(drop)
        for alias, target in list(self.aliases.items()):
            if target == drop:
                self.aliases[alias] = keep
        self.aliases[drop] = keep

    def set_fact(self, node_id: str, field: str, value: Any, source: dict | None = None) -> None:
        """Merge one fact into an existing node."""
        self._merge(node_id, self._node[node_id], {field: value}, source)

    def add_conflict(self, subject: str, field: str, values: list[tuple[Any, dict | None]],
                     message: str | None = None) -> None:
        """Record that sources disagree on `field` of `subject` (a node id, edge or alias)."""
        vals = [{"value": v, "source": s} for v, s in values]
        if message is None:
            message = f"{subject} {field}: " + " vs ".join(
                f"{v!r} ({s['source'] if s else 'earlier input'})" for v, s in values)
        self._conflicts.append({"subject": subject, "field": field, "values": vals, "message": message})

    def _merge(self, subject: str, attrs: dict, facts: dict, source: dict | None) -> None:
        if source is not None and source not in attrs["sources"]:
            attrs["sources"].append(source)
        for field, value in facts.items():
            if value is None or field in _RESERVED:
                continue
            if field not in attrs or attrs[field] is None:
                attrs[field] = value
                attrs["provenance"][field] = source
            elif isinstance(attrs[field], dict) and isinstance(value, dict) and field == "ports":
                self._merge_ports(subject, attrs[field], value, attrs["provenance"].get(field), source)
            elif attrs[field] != value:
                self.add_conflict(subject, field,
                                  [(attrs[field], attrs["provenance"].get(field)), (value, source)])

    def _merge_ports(self, subject: str, have: dict, new: dict, old_src: dict | None,
                     source: dict | None) -> None:
        """Port facts merge one by one; printed forms (`*_raw`) differ by dialect and never conflict."""
        for port, pfacts in new.items():
            mine = have.setdefault(port, {})
            known = mine.setdefault("sources", [])
            first = known[0] if known else old_src
            new_refs = pfacts.get("sources") or ([source] if source else [])
            known.extend(r for r in new_refs if r not in known)
            if new_refs:
                source = new_refs[0]
            self._merge_port(f"{subject} port {port}", mine, pfacts, first, source)

    def _merge_port(self, subject: str, mine: dict, pfacts: dict, first: dict | None,
                    source: dict | None) -> None:
        for k, v in pfacts.items():
            if v is None or v == () or v == [] or k == "sources":
                continue
            if mine.get(k) is None:
                mine[k] = v
            elif k not in ("line_no", "printed_by") and not k.endswith("_raw") and mine[k] != v:
                self.add_conflict(subject, k, [(mine[k], first), (v, source)])

    # -- reading ----------------------------------------------------------------------------

    def has_node(self, node_id: str) -> bool:
        """True when the id (or alias) names a node of the model."""
        return self.resolve(node_id) in self._node

    def node(self, node_id: str) -> dict:
        """The attributes of a node (id or alias); KeyError if absent."""
        return self._node[self.resolve(node_id)]

    def nodes(self, kind: str | None = None) -> list[str]:
        """Node ids of a kind (all when None), GPUs and the like in index order."""
        out = [n for n, attrs in self._node.items() if kind is None or attrs.get("kind") == kind]
        return sorted(out, key=_node_order)

    def edges(self, node_id: str | None = None, kind: str | None = None) -> list[tuple[str, str, str, dict]]:
        """(a, b, kind, attributes) of every edge (of one node, of one kind), each edge once, in
        the order the edges were made (a node's own edges: that node first)."""
        if node_id is not None:
            node_id = self.resolve(node_id)
            if node_id not in self._node:
                return []
        view = self._iter_edges(node_id)
        return [(a, b, k, d) for a, b, k, d in view if kind is None or k == kind]

    def gpus(self) -> list[str]:
        return self.nodes("gpu")

    def nics(self) -> list[str]:
        return self.nodes("nic")

    def host(self) -> str | None:
        hosts = self.nodes("host")
        return hosts[0] if hosts else None

    def edge(self, a: str, b: str, kind: str) -> dict | None:
        """The attributes of the edge of this kind between a and b (ids or aliases), or None."""
        return self._edge_data(self.resolve(a), self.resolve(b), kind)

    def pair(self, a: str, b: str) -> dict | None:
        """The `topo -m` path edge between two devices ({class, link_count, sources...}) or None."""
        return self.edge(a, b, "path")

    def pair_class(self, a: str, b: str) -> str | None:
        data = self.pair(a, b)
        return data.get("class") if data else None

    def gpu_pairs(self) -> list[tuple[str, str, str | None]]:
        """Every unordered GPU pair with its path class (None where no input says), index order."""
        gpus = self.gpus()
        return [(a, b, self.pair_class(a, b)) for i, a in enumerate(gpus) for b in gpus[i + 1:]]

    def nearest_nic(self, gpu: str) -> tuple[str, str] | None:
        """The NIC with the closest path class to the GPU, and that class (ties: lowest NIC).

        A "path" edge is already the whole route between two devices (a `topo -m` cell): the answer
        is the GPU's best-ranked path edge to a NIC, one hop in the graph. Routes of several path
        edges mean nothing (classes do not add up), so this is no shortest-path search."""
        gpu = self.resolve(gpu)
        if gpu not in self._node:
            return None
        nodes = self._node
        ranked = [(class_rank(d["class"]), _index_key(nic), nic, d["class"])
                  for _, nic, k, d in self._iter_edges(gpu)
                  if k == "path" and nodes[nic].get("kind") == "nic" and d.get("class") is not None]
        if not ranked:
            return None
        _, _, nic, cls = min(ranked)
        return nic, cls

    def nvlinks(self, gpu: str) -> list[dict]:
        """Per-link NVLink status of a GPU from `nvlink -s` ({link, active, speed_gbps, state})."""
        return list(self.node(gpu).get("nvlink", {}).get("links", []))

    def nvlink_edges(self, gpu: str) -> list[tuple[str, dict]]:
        """NVLink aggregates from the GPU to peers or NVSwitches (NCCL XML): (peer id, edge data)."""
        return [(b, d) for _, b, _, d in self.edges(gpu, "nvlink")]

    def nvlink_domains(self) -> list[list[str]]:
        """The GPUs that reach each other over NVLink: connected components of the NVLink subgraph
        ("nvlink" edges of NCCL's XML, directly or through NVSwitches, and "path" edges of an NV#
        class from `topo -m` or NVML). Each domain's GPUs in index order, domains by their first
        GPU; a GPU without NVLink is in none; NVSwitches join domains but are not listed."""
        near: dict[str, set[str]] = {}
        for a, b, k, d in self._iter_edges():
            if (k == "nvlink" and d.get("link_count") != 0) or (k == "path" and nv_count(d.get("class")) is not None):
                near.setdefault(a, set()).add(b)
                near.setdefault(b, set()).add(a)
        gpu = set(self.gpus())
        domains = [sorted(c & gpu, key=_node_order) for c in _components(near)]
        return sorted((d for d in domains if d), key=lambda d: _node_order(d[0]))

    def pci_path(self, a: str, b: str) -> list[str] | None:
        """The devices from a to b (ids or aliases; both ends included) over NCCL's PCI tree ("pci"
        edges: device to switch to CPU), or None when the tree does not join them (unknown devices,
        no XML, or two CPUs: the socket link is no pci edge)."""
        a, b = self.resolve(a), self.resolve(b)
        if a not in self._node or b not in self._node:
            return None
        if a == b:
            return [a]
        if not any(k == "pci" for _, _, k, _ in self._iter_edges(a)) or \
                not any(k == "pci" for _, _, k, _ in self._iter_edges(b)):
            return None  # an end without a PCI edge: no path, and no networkx import to say so
        import networkx as nx

        pci = nx.subgraph_view(self.graph, filter_edge=lambda u, v, k: k == "pci")
        try:
            return nx.shortest_path(pci, a, b)
        except nx.NetworkXNoPath:
            return None

    def ib_ports(self) -> list[tuple[str, dict]]:
        """(nic id, port facts) for every HCA port any IB tool reported, in NIC then port order."""
        out = []
        for nic in self.nics():
            ports = self._node[nic].get("ports") or {}
            for port in sorted(ports, key=lambda p: (len(p), p)):
                out.append((nic, {"port": int(port) if is_digits(port) else port, **ports[port]}))
        return out

    def numa_of(self, node_id: str) -> int | None:
        """The NUMA node of a device: its own numa_node fact, else a "numa" edge to numa:N."""
        node_id = self.resolve(node_id)
        if node_id not in self._node:
            return None
        nodes = self._node
        attrs = nodes[node_id]
        if attrs.get("kind") == "numa":
            return attrs.get("numa_node")
        if attrs.get("numa_node") is not None:
            return attrs["numa_node"]
        for _, b, _, _ in self.edges(node_id, "numa"):
            if nodes[b].get("kind") == "numa":
                return nodes[b].get("numa_node")
        return None

    def observations(self, source: str | None = None) -> list[dict]:
        """Summaries of logs and benchmark results (nccl_debug, nccl_tests) kept on the host node."""
        host = self.host()
        obs = self._node[host].get("observations", []) if host else []
        return [o for o in obs if source is None or o.get("source") == source]

    def conflicts(self) -> list[dict]:
        """Facts two inputs disagree on: {subject, field, values [{value, source}], message}."""
        return list(self._conflicts)

    # -- JSON -------------------------------------------------------------------------------

    def to_json(self) -> dict:
        """The versioned JSON form: {schema_version, nodes, edges, aliases, conflicts, notes}."""
        nodes = [{"id": n, **_jsonable(self._node[n])} for n in self.nodes()]
        edges = [{"a": a, "b": b, **_jsonable(d), "kind": k} for a, b, k, d in self.edges()]
        edges.sort(key=lambda e: (e["kind"], _index_key(e["a"]), _index_key(e["b"]), e["a"], e["b"]))
        return {"schema_version": SCHEMA_VERSION, "nodes": nodes, "edges": edges,
                "aliases": dict(sorted(self.aliases.items())), "conflicts": _jsonable(self._conflicts),
                "notes": list(self.notes)}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=False)

    @classmethod
    def from_json(cls, data: dict) -> "Topology":
        """Rebuild a Topology from `to_json` output; ValueError for another schema version."""
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ValueError(f"topology schema_version {version!r} is not {SCHEMA_VERSION}")
        topo = cls()
        for n in data.get("nodes", []):
            topo._add_node(n["id"]).update((k, v) for k, v in n.items() if k != "id")
        for e in data.get("edges", []):
            topo._add_edge(e["a"], e["b"], e["kind"]).update(
                (k, v) for k, v in e.items()
                if k not in ("a", "b") and not (k in _DROPPED_EDGE_FIELDS and v is None))
        topo.aliases = dict(data.get("aliases", {}))
        topo._conflicts = list(data.get("conflicts", []))
        topo.notes = list(data.get("notes", []))
        return topo


def _components(near: dict[str, set[str]]) -> list[set[str]]:
    """The connected components of an adjacency (node -> its neighbours)."""
    seen: set[str] = set()
    out = []
    for start in near:
        if start in seen:
            continue
        comp, todo = {start}, [start]
        while todo:
            for nbr in near[todo.pop()]:
                if nbr not in comp:
                    comp.add(nbr)
                    todo.append(nbr)
        seen |= comp
        out.append(comp)
    return out


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return obj
