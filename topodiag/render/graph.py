"""`show --format dot|graphml`: the node's graph for Graphviz and graph tools.

Both export `topology.graph`, the model's networkx MultiGraph, so what is drawn is exactly what the
rules read. Attributes that are lists or dicts (sources, provenance, ports) become JSON strings:
neither format holds nested values. The drawing (dot) leaves provenance out; GraphML keeps it.
"""

from __future__ import annotations

import json
from typing import Any, TextIO


def _flat(attrs: dict) -> dict:
    """Scalar attributes only: others as JSON."""
    return {k: v if isinstance(v, (str, int, float, bool)) else json.dumps(v, sort_keys=True, default=str)
            for k, v in attrs.items() if v is not None}


def _graph(topology):
    """The model's networkx graph (`topology.graph` where the model has one)."""
    graph = getattr(topology, "graph", None)
    return graph if graph is not None else topology.to_networkx()


def render_graphml(diagnosis, stream: TextIO, **options: Any) -> None:
    """GraphML through networkx's writer, over a copy with flat attributes."""
    import networkx as nx

    src = _graph(diagnosis.topology)
    g = nx.MultiGraph()
    for n, attrs in src.nodes(data=True):
        g.add_node(n, **_flat(attrs))
    for a, b, k, d in src.edges(keys=True, data=True):
        g.add_edge(a, b, key=k, **_flat({**d, "kind": k}))
    stream.write("\n".join(nx.generate_graphml(g)) + "\n")


def render_dot(diagnosis, stream: TextIO, **options: Any) -> None:
    """Graphviz DOT, written here (networkx's writer needs pydot or pygraphviz)."""

    def q(s) -> str:
        return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'

    def shown(d: dict) -> dict:  # provenance makes a drawing unreadable; JSON and GraphML keep it
        return {k: v for k, v in _flat(d).items() if k not in ("sources", "provenance")}

    topology = diagnosis.topology
    lines = ["graph topology {"]
    for n in topology.nodes():
        attrs = ", ".join(f"{q(k)}={q(v)}" for k, v in shown(topology.node(n)).items())
        lines.append(f"  {q(n)} [{attrs}];")
    for a, b, k, d in topology.edges():
        label = d.get("class") or k
        attrs = ", ".join(f"{q(x)}={q(v)}" for x, v in {"label": label, **shown({**d, "kind": k})}.items())
        lines.append(f"  {q(a)} -- {q(b)} [{attrs}];")
    lines.append("}")
    stream.write("\n".join(lines) + "\n")
