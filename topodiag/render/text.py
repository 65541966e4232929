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
    """A rich console: the terminal's width on a terminal, else `width`, else $COLUMNS, else 80."""
    import os

    from rich.console import Console

    stream = stream if stream is not None else sys.stdout
    tty = hasattr(stream, "isatty") and stream.isatty()
    if width is None and not tty:
        cols = os.environ.get("COLUMNS", "")
        width = int(cols) if cols.isascii() and cols.isdigit() and 40 <= int(cols) <= 1000 else 80

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
                         break_long_words=True, break_on_hyphens=False)  # a long path is broken, never cut


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


# what to do, by the rule's action (engine/findings.py ACTIONS), after "->" on a finding's line
DO = {"reset-gpu": "reset the GPU when idle (nvidia-smi -r) or reboot the node",
      "reboot": "reboot the node", "reseat-cable": "reseat or replace the cable or transceiver",
      "service-ticket": "open a service ticket for the hardware", "rerun": "rerun to confirm",
      "none": "see fix"}


def verdict_line(d, said, counts, profile: str | None) -> str:
    """The first line, read at a glance: the verdict word (and why, short), the host, the profile,
    how many findings of how many rules at which severities. One function so that what the verdict
    says about the platform is added here alone."""
    from .json_report import host_name

    findings = d.outcome.findings
    detail = said.detail
    if said.key == "findings":  # "findings at or above error (--fail-on error)": say it once
        detail = f"at or above --fail-on {d.outcome.fail_on}"
    head = said.word + (f" ({detail})" if said.key == "findings" else (f": {detail}" if detail else ""))
    tally = ", ".join(f"{counts[n]} {n}" for n in reversed(list(counts)) if counts[n])
    rules = len({f.code for f in findings})
    what = (f"{_plural(len(findings), 'finding')} of {_plural(rules, 'rule')} ({tally})" if findings
            else "no findings")
    return f"{head} - host {host_name(d.topology) or '-'}, profile {profile or '-'}: {what}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _finding_text(f, names) -> str:
    """`CODE subject: what is wrong -> what to do` (names: a group differing only in its subject)."""
    message = _flat(f.message)
    if names:
        message = f"{', '.join(names)} ({len(names)}): {message.split(' ', 1)[1]}"
    return f"{f.code} {message} -> {DO.get(f.action, DO['none'])}"


def _print_findings(console, outcome, width: int, verbose: bool) -> None:
    """Worst first, rule by rule: each finding (or group) wrapped, never cut; then "What to do":
    each rule's fix once, its why with --verbose (else: where to read it)."""
    from rich.text import Text

    from ..engine import Severity

    rules = []
    for sev in sorted(Severity, reverse=True):
        by_code: dict[str, list] = {}
        for f in outcome.findings:
            if f.severity == sev:
                by_code.setdefault(f.code, []).append(f)
        for findings in by_code.values():
            rules.append(findings[0])
            word = str(sev).upper()
            for f, names in _same_but_subject(findings, verbose):
                text = Text(_hanging(f"{word} {_finding_text(f, names)}", width, "", "    "))
                text.stylize(SEVERITY_STYLE[str(sev)], 0, len(word))
                _print_wrapped(console, text, width)
                if verbose:
                    _print_evidence(console, f)
    if not any(r.fix or r.why for r in rules):
        return
    console.print()
    console.print(Text("What to do", style="bold"))
    for first in rules:
        hint = f" (why: topodiag explain {first.code})" if first.why and not verbose else ""
        if first.fix or hint:
            console.print(Text(_hanging(f"{first.code} fix: {first.fix or '-'}{hint}", width, "  ", "    ")))
        if verbose and first.why:
            console.print(Text(_hanging(f"{first.code} why: {first.why}", width, "  ", "    ")))


def _print_wrapped(console, text, width: int) -> None:
    """A Text `_hanging` wrapped, printed as it is when rich would not wrap it again: printable ASCII
    (each character one cell, nothing for `safe` to escape) in lines of at most `width`, which
    textwrap made them (width 30 and more); where the console writes no styles (not a terminal), they
    are written straight to its file, what rich would write. rich's own wrap and render of each
    finding were most of the time of a report of a thousand findings; anything else is printed (and
    wrapped) by rich as before."""
    plain = text.plain
    if width >= 30 and plain.isascii() and plain.replace("\n", "").isprintable():
        if console.color_system is None and not console.record:  # no styles to write: the plain lines
            console.file.write(plain + "\n")
        else:
            console.print(text, soft_wrap=True)
    else:
        console.print(text)


def _print_evidence(console, f) -> None:
    from rich.text import Text

    width = console.width
    if f.subjects:
        console.print(Text(_hanging(f"subjects: {', '.join(f.subjects)}", width, "    ", "      "), style="dim"))
    where = [e.file + (f":{e.line_no}" if e.line_no else "") for e in f.evidence if e.file]
    if where:
        console.print(Text(_hanging(f"evidence: {', '.join(dict.fromkeys(where))}", width, "    ", "      "),
                           style="dim"))
    if f.expectation:
        console.print(Text(_hanging(f"expected: {f.expectation}", width, "    ", "      "), style="dim"))


def _print_checklist(console, outcome, width: int) -> None:
    """The symptom table: a found row names its rules (their findings are above, not repeated)."""
    from rich.text import Text

    from ..engine.checklist import checklist

    marks = {"found": ("x", "bold red"), "ok": ("ok", "green"), "not checked": ("?", "yellow"), "outside": ("-", "dim")}
    found = {f.code for f in outcome.findings if str(f.severity) != "info"}
    console.print(Text("Checklist (symptom: what decided it)", style="bold"))
    for row in checklist(outcome):
        mark, style = marks[row.state]
        fact = row.fact
        if row.state == "found":
            fact = ", ".join(c for c in row.codes if c in found) + ": see the findings above"
        text = Text(_hanging(f"[{mark}] {row.symptom}: {fact}", width, "  ", "       "))
        text.stylize(style, 2, 4 + len(mark))
        console.print(text)


def _print_tail(console, d, statuses, verbose: bool) -> None:
    """Inputs not read, inputs not on this host, rules skipped."""
    from rich.text import Text

    width, outcome = console.width, d.outcome
    bad_inputs = [s for s in statuses if s.status in ("failed", "unparseable")]
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
            console.print(Text(_hanging(f"{s.source}: {s.reason}", width, "  ", "    "), style="dim"))
        if len(absent) > 3 and not verbose:
            console.print(Text(f"  and {len(absent) - 3} more (--verbose lists them)", style="dim"))
    if outcome.skipped:
        console.print()
        if verbose:
            console.print(Text(f"Skipped ({len(outcome.skipped)})", style="bold"))
            for s in outcome.skipped:
                console.print(Text(_hanging(f"{s.code} {s.slug}: {s.reason}", width, "  ", "    "), style="dim"))
        else:
            codes = ", ".join(s.code for s in outcome.skipped)
            console.print(Text(_hanging(f"Skipped {len(outcome.skipped)} rules whose inputs were not given "
                                        f"({codes}); --verbose lists why", width, "", "  "), style="dim"))


def render(diagnosis, stream=None, **options: Any) -> None:
    """`check` for people, the first screen first: the verdict line (word, host, profile, counts),
    when and from what (generated, collected, versions), the coverage; then each finding as
    `SEVERITY CODE subject: what is wrong -> what to do`, wrapped to the width, never cut (findings
    differing only in the name they start with as one), each rule's fix once (its why with
    `verbose=True`, else `topodiag explain CODE`); the checklist; the GPU matrix (80 columns: split
    blocks, NIC0..n with a legend); inputs not read, skipped rules; the verdict again."""
    from rich.text import Text

    from ..engine.verdict import coverage, verdict
    from .meta import meta_line, run_meta

    d = diagnosis
    outcome, topology, statuses = d.outcome, d.topology, list(d.statuses)
    verbose = bool(options.get("verbose"))
    console = _console(stream, options.get("width"))
    width = console.width
    said, cov = verdict(outcome, topology), coverage(outcome)
    from .json_report import profile_fields

    head = Text(_hanging(verdict_line(d, said, outcome.counts(), profile_fields(d)[0]), width, "", "  "))
    head.stylize(VERDICT_STYLE.get(said.key, ""), 0, len(said.word))
    console.print(head)
    bad_n = sum(1 for s in statuses if s.status in ("failed", "unparseable"))
    absent_n = sum(1 for s in statuses if s.status == "absent")
    read = f"{sum(1 for s in statuses if s.status == 'parsed')} inputs read"
    read += (f", {bad_n} not" if bad_n else "") + (f", {absent_n} not on this host" if absent_n else "")
    console.print(Text(_hanging(meta_line(run_meta(d)), width, "", "  "), style="dim"))
    console.print(Text(_hanging(f"{cov.text()} | {read} | profile: {d.profile_how or '-'}", width, "", "  "),
                       style="dim" if not cov.missing else ""))
    _platform_line(console, d, width)
    if outcome.findings:
        console.print()
        _print_findings(console, outcome, width, verbose)
    console.print()
    _print_checklist(console, outcome, width)
    tables = matrix_tables(topology, width)
    if tables:
        console.print()
        for t in tables:
            console.print(t)
    _print_tail(console, d, statuses, verbose)
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
