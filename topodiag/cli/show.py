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


def _flat(attrs: dict) -> dict:
    """Scalar attributes only (the dot and graphml formats take no lists or dicts): others as JSON."""
    import json

    return {k: v if isinstance(v, (str, int, float, bool)) else json.dumps(v, sort_keys=True, default=str)
            for k, v in attrs.items() if v is not None}


def _graphml(topology) -> str:
    """GraphML through networkx (the one command path that imports it)."""
    import networkx as nx

    g = nx.MultiGraph()
    for n in topology.nodes():
        g.add_node(n, **_flat(topology.node(n)))
    for a, b, k, d in topology.edges():
        g.add_edge(a, b, key=k, **_flat({**d, "kind": k}))
    return "\n".join(nx.generate_graphml(g)) + "\n"


def _dot(topology) -> str:
    """Graphviz DOT, written here (networkx's writer needs pydot or pygraphviz)."""

    def q(s) -> str:
        return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'

    def shown(d: dict) -> dict:  # provenance makes a drawing unreadable; JSON and GraphML keep it
        return {k: v for k, v in _flat(d).items() if k not in ("sources", "provenance")}

    lines = ["graph topology {"]
    for n in topology.nodes():
        attrs = ", ".join(f"{q(k)}={q(v)}" for k, v in shown(topology.node(n)).items())
        lines.append(f"  {q(n)} [{attrs}];")
    for a, b, k, d in topology.edges():
        label = d.get("class") or k
        attrs = ", ".join(f"{q(x)}={q(v)}" for x, v in {"label": label, **shown({**d, "kind": k})}.items())
        lines.append(f"  {q(a)} -- {q(b)} [{attrs}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


@app.command("show")
def show_command(
    paths: List[str] = typer.Option([], "--from", metavar="PATH",
                                    help="A saved output, a directory of them, or a bundle (repeatable); without it, this node live."),
    more: Optional[List[str]] = typer.Argument(None, hidden=True, metavar="PATH"),
    output_format: ShowFormat = typer.Option(ShowFormat.table, "--format", "-f",
                                             help="table, json (Topology JSON), dot or graphml."),
) -> None:
    """Print the topology model built from saved outputs: GPUs, NICs, NUMA nodes and their links."""
    from ..model import build
    from .check import gather_live, gather_or_exit

    all_paths = list(paths) + list(more or [])
    gathered = gather_or_exit(all_paths) if all_paths else gather_live(30.0, False, "/")
    for s in gathered.statuses:
        if s.status in ("failed", "unparseable"):
            print(f"topodiag: warning: {s.path}: {s.status}: {s.reason}", file=sys.stderr)
    topology = build(gathered.parsed, host=gathered.host)
    if output_format is ShowFormat.json:
        sys.stdout.write(topology.dumps() + "\n")
    elif output_format is ShowFormat.dot:
        sys.stdout.write(_dot(topology))
    elif output_format is ShowFormat.graphml:
        sys.stdout.write(_graphml(topology))
    else:
        from ..render.text import render_topology

        render_topology(topology)
