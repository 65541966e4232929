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


def _console(stream=None, width: int | None = None):
    """A rich console: the terminal's width on a terminal, else `width`, else $COLUMNS, else 100."""
    import os

    from rich.console import Console

    stream = stream if stream is not None else sys.stdout
    tty = hasattr(stream, "isatty") and stream.isatty()
    if width is None and not tty:
        cols = os.environ.get("COLUMNS", "")
        width = int(cols) if cols.isascii() and cols.isdigit() and 40 <= int(cols) <= 1000 else 100

    class SafeConsole(Console):
        """Every string it prints (in a Text, a table cell or title) has its control characters
        shown as escapes: names and text taken from inputs never act on the terminal."""

        def print(self, *objects: Any, **kwargs: Any) -> None:
            super().print(*(safe(o) for o in objects), **kwargs)

    return SafeConsole(file=stream, highlight=False, markup=False, emoji=False, width=width if width else None)


def safe(renderable: Any) -> Any:
    """A str, rich Text or Table with render/sanitise.terminal applied to its text (line feeds
    kept); a Text that had to change keeps its own style, not its inner spans. Others as they are."""
    from rich.table import Table
    from rich.text import Text

    from .sanitise import terminal

    if isinstance(renderable, str):
        return terminal(renderable)
    if isinstance(renderable, Text):
        plain = renderable.plain
        cleaned = terminal(plain)
        if cleaned == plain:
            return renderable
        return Text(cleaned, style=renderable.style, justify=renderable.justify, no_wrap=renderable.no_wrap,
                    overflow=renderable.overflow, end=renderable.end)
    if isinstance(renderable, Table):
        renderable.title = safe(renderable.title) if renderable.title is not None else None
        for column in renderable.columns:
            column.header = safe(column.header)
            column._cells = [safe(c) for c in column._cells]
    return renderable


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


def _nic_names(topology, nics: list) -> dict:
    """NIC column labels as nvidia-smi prints them (NIC0, NIC1, ...) with the legend's device names."""
    return {n: f"NIC{i}" for i, n in enumerate(nics)}


def _block(topology, title: str, rows: list, cols: list, labels: dict):
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1), title_justify="left",
                  collapse_padding=True)
    table.add_column("")
    for c in cols:
        table.add_column(labels.get(c) or _label(topology, c), justify="center", no_wrap=True)
    for a in rows:
        cells = []
        for b in cols:
            cls = "X" if a == b else topology.pair_class(a, b)
            cells.append(Text(cls or "-", style=class_style(cls)))
        table.add_row(_label(topology, a), *cells)
    return table


def matrix_tables(topology, width: int = 80) -> list:
    """The GPU x (GPU + NIC) path matrix as rich renderables (nvidia-smi's layout, NICs as NIC0..NICn
    with a legend); where one table would be wider than `width`, the GPU x GPU and GPU x NIC blocks
    one after the other, so it reads at 80 columns. [] when the model has no GPU pairs."""
    from rich.text import Text

    gpus, nics = topology.gpus(), topology.nics()
    cols = gpus + nics
    if not gpus or not any(topology.pair_class(a, b) for a in gpus for b in cols if a != b):
        return []
    labels = _nic_names(topology, nics)
    legend = [Text(_hanging("  ".join(f"{labels[n]}: {_label(topology, n)}" for n in nics), width, "  ", "  "),
                   style="dim")] if nics else []
    # a cell is at most 5 characters ("NODE", "NV18") plus one space; the row label ~6
    if 7 + 6 * len(cols) <= width or not nics:
        return [_block(topology, "Paths (nvidia-smi topo -m classes)", gpus, cols, labels)] + legend
    return [_block(topology, "Paths between GPUs (nvidia-smi topo -m classes)", gpus, gpus, labels),
            _block(topology, "Paths from GPUs to NICs", gpus, nics, labels)] + legend


VERDICT_STYLE = {"ok": "bold green", "nothing-seen": "bold yellow", "warnings": "bold yellow", "errors": "bold red", "findings": "bold red",
                 "incomplete": "bold yellow", "internal-error": "bold magenta"}


def _hanging(text: str, width: int, first: str = "", rest: str = "    ") -> str:
    """Text wrapped to `width` with a hanging indent (a wrapped line never restarts at column 0)."""
    import textwrap

    return textwrap.fill(_flat(text), width=max(30, width), initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False)


def _one_line(text: str, width: int) -> str:
    """Text on one line of the terminal, cut with "..." (the details below say it whole)."""
    text = _flat(text)
    return text if len(text) <= width else text[: max(10, width - 3)].rstrip() + "..."


def _compact(findings, verbose: bool) -> list:
    """[(finding, names)] worst first, rule by rule, with _same_but_subject's groups."""
    from ..engine import Severity

    out = []
    for sev in sorted(Severity, reverse=True):
        by_code: dict[str, list] = {}
        for f in findings:
            if f.severity == sev:
                by_code.setdefault(f.code, []).append(f)
        for group in by_code.values():
            out.extend(_same_but_subject(group, verbose))
    return out


def _finding_line(f, width: int) -> "Any":
    from rich.text import Text

    text = Text(_hanging(f.message, width, "  - ", "    "))
    text.stylize(SEVERITY_STYLE[str(f.severity)], 2, 3)
    return text


def _same_but_subject(findings: list, verbose: bool) -> list:
    """[(finding, names)]: findings of one rule whose messages differ only in their first word (the
    subject's name: "mlx5_0 port 1 is Down ...") become one entry with the names (7 x IB001 read as one
    line); the rest stay one each (names None). Verbose keeps every finding on its own."""
    if verbose or len(findings) < 2:
        return [(f, None) for f in findings]
    groups: dict[str, list] = {}
    for f in findings:
        head, _, rest = f.message.partition(" ")
        groups.setdefault(rest if rest and len(head) <= 40 else f"\0{id(f)}", []).append(f)
    out = []
    for rest, group in groups.items():
        if len(group) > 1 and not rest.startswith("\0"):
            out.append((group[0], [g.message.partition(" ")[0] for g in group]))
        else:
            out.extend((g, None) for g in group)
    return out



def _platform_line(console, d, width: int) -> None:
    """The inferred platform, its confidence and hints (issue 27), under the verdict."""
    if getattr(d, "platform", ""):
        from rich.text import Text

        console.print(Text(_hanging(f"Platform: {d.platform}", width, "", "  "), style="dim"))

def render(diagnosis, stream=None, **options: Any) -> None:
    """`check` on a terminal, compact first: the verdict and coverage, one line per finding (worst
    first; findings differing only in the name they start with as one line), the checklist (symptom:
    what decided it), then the details (each finding whole, the rule's why and fix once; subjects,
    evidence and expectation with `verbose=True`), the GPU matrix (80 columns: split blocks, NIC0..n
    with a legend), inputs not read, skipped rules as one line (`verbose` lists them), the verdict again."""
    from rich.text import Text

    from ..engine import Severity
    from .json_report import host_name

    d = diagnosis
    outcome, topology, statuses, profile = d.outcome, d.topology, d.statuses, d.profile_how
    verbose = bool(options.get("verbose"))
    console = _console(stream, options.get("width"))
    width = console.width
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
    head = Text(_hanging(line.plain, width, "", "  "))
    head.stylize(VERDICT_STYLE.get(said.key, ""), 0, len(said.word))
    console.print(head)
    console.print(Text(_hanging(f"{cov.text()} | {read} | profile {profile or '-'}", width, "", "  "),
                       style="dim" if not cov.missing else ""))
    _platform_line(console, d, width)

    if outcome.findings:  # the compact view: one line per finding (or per group), worst first
        console.print()
        for f, names in _compact(outcome.findings, verbose):
            sev = str(f.severity)
            text = f"{sev[0].upper()} {f.code} " + (f"{', '.join(names)} ({len(names)}): {f.message.split(' ', 1)[1]}"
                                                    if names else f.message)
            line = Text(_one_line(text, width))
            line.stylize(SEVERITY_STYLE[sev], 0, 1)
            console.print(line)

    console.print()
    console.print(Text("Checklist (symptom: what decided it)", style="bold"))
    from ..engine.checklist import checklist

    marks = {"found": ("x", "bold red"), "ok": ("ok", "green"), "not checked": ("?", "yellow"), "outside": ("-", "dim")}
    for row in checklist(outcome):
        mark, style = marks[row.state]
        text = Text(_hanging(f"[{mark}] {row.symptom}: {row.fact}", width, "  ", "       "))
        text.stylize(style, 2, 4 + len(mark))
        console.print(text)

    if outcome.findings:
        console.print()
        console.print(Text("Details", style="bold"))
    for sev in sorted(Severity, reverse=True):
        group = [f for f in outcome.findings if f.severity == sev]
        if not group:
            continue
        console.print()
        console.print(Text(f"{str(sev).upper()} ({len(group)})", style=SEVERITY_STYLE[str(sev)]))
        by_code: dict[str, list] = {}
        for f in group:
            by_code.setdefault(f.code, []).append(f)
        for findings in by_code.values():  # one rule's findings, one line each, then its why and fix once
            first = findings[0]
            title = Text(f" {first.code} {first.slug}", style="bold")
            if len(findings) > 1:
                title.append(f" ({len(findings)})")
            console.print(title)
            for f, names in _same_but_subject(findings, verbose):
                if names:  # several findings that differ only in the name they start with: one line
                    rest = f.message.split(" ", 1)[1]
                    line = Text(_hanging(f"{', '.join(names)} ({len(names)}): {rest}", width, "  - ", "    "))
                    line.stylize(SEVERITY_STYLE[str(f.severity)], 2, 3)
                    console.print(line)
                    continue
                console.print(_finding_line(f, width))
                if f.subjects and verbose:
                    console.print(Text(f"    subjects: {', '.join(f.subjects)}", style="dim"))
                where = [e.file + (f":{e.line_no}" if e.line_no else "") for e in f.evidence if e.file]
                if where and verbose:
                    console.print(Text(f"    evidence: {', '.join(dict.fromkeys(where))}", style="dim"))
                if f.expectation and verbose:
                    console.print(Text(f"    expected: {f.expectation}", style="dim"))
            for word, prose in (("why", first.why), ("fix", first.fix)):
                if prose:
                    console.print(Text(_wrap(f"{word}: {_flat(prose)}", max(40, min(width, 110) - 2))))

    tables = matrix_tables(topology, width)
    if tables:
        console.print()
        for t in tables:
            console.print(t)

    if bad_inputs:
        console.print()
        console.print(Text("Inputs not read", style="bold"))
        for s in bad_inputs:
            console.print(Text(_hanging(f"{s.path}: {s.status}: {s.reason}", width, "  ", "    ")))
    absent = [s for s in statuses if s.status == "absent"]
    if absent:
        console.print()
        console.print(Text(f"Not on this host ({len(absent)})", style="bold"))
        for s in absent if verbose else absent[:3]:
            console.print(Text(f"  {s.source}: {s.reason}", style="dim"))
        if len(absent) > 3 and not verbose:
            console.print(Text(f"  and {len(absent) - 3} more (--verbose lists them)", style="dim"))
    if outcome.skipped:
        console.print()
        if verbose:
            console.print(Text(f"Skipped ({len(outcome.skipped)})", style="bold"))
            for s in outcome.skipped:
                console.print(Text(f"  {s.code} {s.slug}: {s.reason}", style="dim"))
        else:
            codes = ", ".join(s.code for s in outcome.skipped)
            console.print(Text(_hanging(f"Skipped {len(outcome.skipped)} rules whose inputs were not given "
                                        f"({codes}); --verbose lists why", width, "", "  "), style="dim"))
    console.print()
    console.print(head)


def render_topology(diagnosis, stream=None, **options: Any) -> None:
    """`show --format table`: the matrix, then nodes and links (kind, facts) as tables."""
    from rich.table import Table

    topology = diagnosis.topology
    console = _console(stream, options.get("width"))
    host = topology.host()
    console.print(f"host {topology.node(host).get('name') if host else '-'}")
    for table in matrix_tables(topology, console.width):  # split blocks where one table would not fit
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
