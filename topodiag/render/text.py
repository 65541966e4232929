"""The people's report of `topodiag check` and the table of `topodiag show`, drawn with rich.

Summary line, the GPU/NIC path matrix coloured by class (NVLink green, PIX/PXB cyan, PHB/NODE
yellow, SYS red), findings grouped by severity (worst first) with why and fix, inputs that failed,
rules skipped. rich decides colour from the terminal: none when stdout is not a TTY.
"""

from __future__ import annotations

import sys
from typing import Any, Iterable

SEVERITY_STYLE = {"critical": "bold white on red", "error": "bold red", "warning": "yellow", "info": "blue"}
CLASS_STYLE = {"PIX": "cyan", "PXB": "cyan", "PHB": "yellow", "NODE": "yellow", "SYS": "red",
               "SOC": "red", "X": "dim"}


def _console(stream=None):
    from rich.console import Console

    stream = stream if stream is not None else sys.stdout
    tty = hasattr(stream, "isatty") and stream.isatty()
    return Console(file=stream, highlight=False, markup=False, emoji=False, width=None if tty else 200)


def class_style(path_class: str | None) -> str:
    from ..model import nv_count

    if not path_class:
        return "dim"
    if nv_count(path_class) is not None:
        return "green"
    return CLASS_STYLE.get(path_class, "")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _wrap(text: str, width: int) -> str:
    import textwrap

    return textwrap.fill(text, width=width, initial_indent="    ", subsequent_indent="      ",
                         break_long_words=False, break_on_hyphens=False)


def _label(topology, node_id: str) -> str:
    attrs = topology.node(node_id)
    if attrs.get("kind") == "gpu":
        return attrs.get("topo_name") or node_id.replace("gpu:", "GPU")
    return attrs.get("name") or node_id.split(":", 1)[-1]


def matrix_table(topology):
    """The GPU x (GPU + NIC) path matrix as a rich Table, or None when the model has no GPU pairs."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    gpus, nics = topology.gpus(), topology.nics()
    cols = gpus + nics
    if not gpus or not any(topology.pair_class(a, b) for a in gpus for b in cols if a != b):
        return None
    table = Table(title="Paths (nvidia-smi topo -m classes)", box=box.SIMPLE_HEAD, pad_edge=False,
                  title_justify="left")
    table.add_column("")
    for c in cols:
        table.add_column(_label(topology, c), justify="center")
    for a in gpus:
        cells = []
        for b in cols:
            cls = "X" if a == b else topology.pair_class(a, b)
            cells.append(Text(cls or "-", style=class_style(cls)))
        table.add_row(_label(topology, a), *cells)
    return table


VERDICT_STYLE = {"ok": "bold green", "nothing-seen": "bold yellow", "warnings": "bold yellow", "errors": "bold red", "findings": "bold red",
                 "incomplete": "bold yellow", "internal-error": "bold magenta"}


def render(diagnosis, stream=None, **options: Any) -> None:
    """`check` on a terminal: the verdict line, the GPU matrix, findings by severity with why and
    fix once per rule, inputs not read, what is not on the host, skipped rules."""
    from rich.text import Text

    from ..engine import Severity
    from .json_report import host_name

    d = diagnosis
    outcome, topology, statuses, profile = d.outcome, d.topology, d.statuses, d.profile_how
    console = _console(stream)
    counts = outcome.counts()
    statuses = list(statuses)
    bad_inputs = [s for s in statuses if s.status in ("failed", "unparseable")]
    from ..engine.verdict import coverage, verdict

    said, cov = verdict(outcome, topology), coverage(outcome)
    line = Text()
    line.append(said.word, style=VERDICT_STYLE.get(said.key, ""))
    if said.detail:
        line.append(f": {said.detail}")
    line.append(f"  host {host_name(topology) or '-'}  ")
    line.append(", ".join(f"{counts[n]} {n}" for n in reversed(list(counts))))
    absent_n = sum(1 for s in statuses if s.status == "absent")
    read = f"{sum(1 for s in statuses if s.status == 'parsed')} inputs read"
    read += f", {len(bad_inputs)} not" if bad_inputs else ""
    read += f", {absent_n} not on this host" if absent_n else ""
    console.print(line)
    console.print(Text(f"{cov.text()}  |  {read}  |  profile {profile or '-'}", style="dim" if not cov.missing else ""))

    table = matrix_table(topology)
    if table is not None:
        console.print()
        console.print(table)

    for sev in sorted(Severity, reverse=True):
        group = [f for f in outcome.findings if f.severity == sev]
        if not group:
            continue
        console.print()
        console.print(Text(f"{str(sev).upper()} ({len(group)})", style=SEVERITY_STYLE[str(sev)]))
        by_code: dict[str, list] = {}
        for f in group:
            by_code.setdefault(f.code, []).append(f)
        for findings in by_code.values():  # one rule's findings, then its why and fix once
            for f in findings:
                head = Text("  ")
                head.append(f"{f.code} {f.slug}", style="bold")
                head.append(f": {f.message}")
                console.print(head)
                if f.subjects:
                    console.print(Text(f"    subjects: {', '.join(f.subjects)}", style="dim"))
                where = [e.file + (f":{e.line_no}" if e.line_no else "") for e in f.evidence if e.file]
                if where:
                    console.print(Text(f"    evidence: {', '.join(dict.fromkeys(where))}", style="dim"))
                if f.expectation:
                    console.print(Text(f"    expected: {f.expectation}", style="dim"))
            first = findings[0]
            for word, prose in (("why", first.why), ("fix", first.fix)):
                if prose:
                    console.print(Text(_wrap(f"{word}: {_flat(prose)}", min(console.width, 110))))

    if bad_inputs:
        console.print()
        console.print(Text("Inputs not read", style="bold"))
        for s in bad_inputs:
            console.print(Text(f"  {s.path}: {s.status}: {s.reason}"))
    absent = [s for s in statuses if s.status == "absent"]
    if absent:
        console.print()
        console.print(Text("Not on this host", style="bold"))
        for s in absent:
            console.print(Text(f"  {s.source}: {s.reason}", style="dim"))
    if outcome.skipped:
        console.print()
        console.print(Text(f"Skipped ({len(outcome.skipped)})", style="bold"))
        for s in outcome.skipped:
            console.print(Text(f"  {s.code} {s.slug}: {s.reason}", style="dim"))


def render_topology(diagnosis, stream=None, **options: Any) -> None:
    """`show --format table`: the matrix, then nodes and links (kind, facts) as tables."""
    from rich.table import Table

    topology = diagnosis.topology
    console = _console(stream)
    host = topology.host()
    console.print(f"host {topology.node(host).get('name') if host else '-'}")
    table = matrix_table(topology)
    if table is not None:
        console.print(table)
    nodes = Table(title="Nodes")
    for col in ("id", "kind", "name", "facts"):
        nodes.add_column(col)
    skip = {"kind", "name", "sources", "provenance", "observations", "ports", "nvlink"}
    for n in topology.nodes():
        attrs = topology.node(n)
        facts = ", ".join(f"{k}={v}" for k, v in attrs.items() if k not in skip and v not in (None, "", [], {}))
        extra = []
        if attrs.get("ports"):
            extra.append(f"ports={len(attrs['ports'])}")
        if attrs.get("nvlink"):
            extra.append(f"nvlinks={len(attrs['nvlink'].get('links', []))}")
        nodes.add_row(n, str(attrs.get("kind", "")), str(attrs.get("name", "") or ""),
                      ", ".join(filter(None, [facts] + extra)))
    console.print(nodes)
    edges = [(a, b, k, d) for a, b, k, d in topology.edges() if k != "path"]
    if edges:
        links = Table(title="Links (other than topo -m paths)")
        for col in ("a", "b", "kind", "facts"):
            links.add_column(col)
        for a, b, k, d in edges:
            facts = ", ".join(f"{x}={v}" for x, v in d.items() if x not in ("sources", "provenance", "kind") and v is not None)
            links.add_row(a, b, k, facts)
        console.print(links)
    for c in topology.conflicts():
        console.print(f"conflict: {c.get('message', c)}")
    for note in topology.notes:
        console.print(f"note: {note}")
