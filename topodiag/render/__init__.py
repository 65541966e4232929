"""The output formats, one registry, one signature: `render(diagnosis, stream, **options)`.

A renderer takes a Diagnosis (topodiag.pipeline: outcome, topology, statuses, profile...) and
writes to a text stream; it never decides the exit code. Formats are imported when used, so a
JSON report never pays for rich. To add one: a function with that signature in a module here and
one line in FORMATS (CONTRIBUTING.md).

    check: text, json, prometheus, html      prolog: slurm      show: table, topology-json, dot, graphml
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Optional, TextIO

# format -> (module, function, what it prints)
FORMATS: dict[str, tuple[str, str, str]] = {
    "text": ("text", "render", "the check report for people (rich): verdict, GPU matrix, findings with why and fix"),
    "json": ("json_report", "render", "the check report as versioned JSON (schema in render/json_report.py)"),
    "prometheus": ("prometheus", "render", "node_exporter textfile: findings per rule, NVLink and IB gauges"),
    "html": ("html", "render", "one self-contained page for a ticket: findings, matrix, node drawing, busbw curves"),
    "slurm": ("slurm", "render", "one drain-reason line for a Slurm prolog"),
    "table": ("text", "render_topology", "the topology as tables: matrix, nodes, links, conflicts"),
    "topology-json": ("json_report", "render_topology", "the topology's own versioned JSON"),
    "dot": ("graph", "render_dot", "the topology graph in Graphviz DOT"),
    "graphml": ("graph", "render_graphml", "the topology graph in GraphML (networkx's writer)"),
}

# What a command's --format offers: the option's value -> the format of FORMATS it renders. The CLI's
# format choices are made from this (format_enum), so a format is named in one place.
OFFERED: dict[str, dict[str, str]] = {
    "check": {"text": "text", "json": "json", "prometheus": "prometheus", "html": "html"},
    "show": {"table": "table", "json": "topology-json", "dot": "dot", "graphml": "graphml"},
}


def format_enum(command: str, name: str) -> Any:
    """The --format choices of a command as a str Enum (what typer offers), from OFFERED."""
    from enum import Enum

    return Enum(name, {value: value for value in OFFERED[command]}, type=str)


def renderer(fmt: str):
    """The render function of a format; KeyError naming the formats when unknown."""
    try:
        module, func, _ = FORMATS[fmt]
    except KeyError:
        raise KeyError(f"unknown format {fmt!r}; one of: {', '.join(FORMATS)}") from None
    return getattr(importlib.import_module(f"{__name__}.{module}"), func)


def render(fmt: str, diagnosis: Any, stream: Optional[TextIO] = None, **options: Any) -> None:
    """Write `diagnosis` in format `fmt` to `stream` (default: stdout)."""
    renderer(fmt)(diagnosis, stream if stream is not None else sys.stdout, **options)
