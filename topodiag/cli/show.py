"""`topodiag show --from PATH...`: the topology model built from saved outputs (table, json, dot, graphml)."""

from __future__ import annotations

import sys
from enum import Enum
from typing import List, Optional

import typer

from . import app


class ShowFormat(str, Enum):
    table = "table"
    json = "json"
    dot = "dot"
    graphml = "graphml"


def _flat_graph(topology):
    """A copy of the graph with only scalar attributes (the dot and graphml writers take no lists or dicts)."""
    import json

    import networkx as nx

    def flat(attrs: dict) -> dict:
        out = {}
        for k, v in attrs.items():
            if v is None:
                continue
            out[k] = v if isinstance(v, (str, int, float, bool)) else json.dumps(v, sort_keys=True, default=str)
        return out

    g = nx.MultiGraph()
    for n, d in topology.graph.nodes(data=True):
        g.add_node(n, **flat(d))
    for a, b, k, d in topology.graph.edges(keys=True, data=True):
        g.add_edge(a, b, key=k, **flat({**d, "kind": k}))
    return g


def _dot(topology) -> str:
    """Graphviz DOT, written here (networkx's writer needs pydot or pygraphviz)."""
    g = _flat_graph(topology)

    def q(s) -> str:
        return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'

    def shown(d: dict) -> dict:  # provenance makes a drawing unreadable; JSON and GraphML keep it
        return {k: v for k, v in d.items() if k not in ("sources", "provenance")}

    lines = ["graph topology {"]
    for n, d in g.nodes(data=True):
        attrs = ", ".join(f"{q(k)}={q(v)}" for k, v in shown(d).items())
        lines.append(f"  {q(n)} [{attrs}];")
    for a, b, d in g.edges(data=True):
        label = d.get("class") or d.get("kind")
        attrs = ", ".join(f"{q(k)}={q(v)}" for k, v in {"label": label, **shown(d)}.items())
        lines.append(f"  {q(a)} -- {q(b)} [{attrs}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


@app.command("show")
def show_command(
    paths: List[str] = typer.Option([], "--from", metavar="PATH",
                                    help="A saved output, or a directory of them (repeatable)."),
    more: Optional[List[str]] = typer.Argument(None, hidden=True, metavar="PATH"),
    output_format: ShowFormat = typer.Option(ShowFormat.table, "--format", "-f",
                                             help="table, json (Topology JSON), dot or graphml."),
) -> None:
    """Print the topology model built from saved outputs: GPUs, NICs, NUMA nodes and their links."""
    from ..model import build
    from .check import gather_or_exit

    gathered = gather_or_exit(list(paths) + list(more or []))
    for s in gathered.statuses:
        if s.status in ("failed", "unparseable"):
            print(f"topodiag: warning: {s.path}: {s.status}: {s.reason}", file=sys.stderr)
    topology = build(gathered.parsed)
    if output_format is ShowFormat.json:
        sys.stdout.write(topology.dumps() + "\n")
    elif output_format is ShowFormat.dot:
        sys.stdout.write(_dot(topology))
    elif output_format is ShowFormat.graphml:
        import networkx as nx

        sys.stdout.write("\n".join(nx.generate_graphml(_flat_graph(topology))) + "\n")
    else:
        from ..render.text import render_topology

        render_topology(topology)
