"""`check --format html`: one self-contained page for a support ticket (no script, no font, no link
to fetch: inline CSS and SVG only), readable offline and in any browser.

    the verdict and how much of the checklist ran; the findings by severity, each rule's why and fix
    once; the GPU x (GPU + NIC) path matrix coloured by class; a drawing of the node (GPUs, NICs, the
    NVLink and PCIe/path edges between them, the devices a finding names marked); the nccl-tests
    busbw curves (log-x) against the expectation PERF001 used; the inputs and the rules skipped.

Every text from the inputs is escaped (html.escape): a host name or a log line cannot inject markup.
"""

from __future__ import annotations

import html

import re
from typing import Any, TextIO

from .html_node import SEV_COLOUR  # one colour per severity, the node drawing's too
CLASS_COLOUR = {"PIX": "#d6f5f5", "PXB": "#d6f5f5", "PHB": "#fdf2d0", "NODE": "#fdf2d0", "SYS": "#f9d6d5",
                "SOC": "#f9d6d5", "X": "#eeeeee"}
NV_COLOUR = "#d5f5d9"

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:1.5em;color:#222;max-width:1200px}
h1{font-size:1.4em;margin:.2em 0} h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
.verdict{font-weight:bold;padding:.1em .5em;border-radius:4px;color:#fff}
.dim{color:#666} .rule{margin:.8em 0 .3em;font-weight:bold} .sev{font-weight:bold}
ul.f{margin:.2em 0 .4em 1.2em;padding:0} ul.f li{margin:.15em 0}
details{margin:.2em 0 .6em 1.2em} summary{cursor:pointer;color:#444}
table.m{border-collapse:collapse;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
table.m td,table.m th{border:1px solid #ccc;padding:2px 6px;text-align:center}
table.l{border-collapse:collapse;font-size:.9em} table.l td,table.l th{border-bottom:1px solid #eee;padding:2px 8px;text-align:left}
code{font-family:ui-monospace,Menlo,Consolas,monospace}
"""


def _e(text: Any) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def _label(topology, node_id: str) -> str:
    from .text import _label as label

    return label(topology, node_id)


# -- sections ------------------------------------------------------------------------------------------

def _header(d, said, cov, counts) -> str:
    from .json_report import host_name, profile_fields

    colour = {"ok": "#1e8449", "nothing-seen": "#b9770e", "warnings": "#b9770e", "errors": "#c0392b",
              "findings": "#c0392b", "incomplete": "#b9770e", "internal-error": "#7d3c98"}.get(said.key, "#555")
    name, reason = profile_fields(d)
    tally = ", ".join(f"{counts[n]} {n}" for n in reversed(list(counts)))
    return (f'<h1>topodiag: <span class="verdict" style="background:{colour}">{_e(said.word)}</span> '
            f'host {_e(host_name(d.topology) or "-")}</h1>'
            f'<p>{_e(said.detail)}{"; " if said.detail else ""}{_e(tally)}</p>'
            f'<p class="dim">{_e(cov.text())} | profile {_e(name or "none")} ({_e(reason)})</p>' + _run_table(d))


def _run_table(d) -> str:
    """When, what and from what: generated, collected, the command, the tool and the versions the
    inputs name (render/meta.py), as nvidia-bug-report.sh and dcgmi diag open."""
    from .meta import run_meta

    meta = run_meta(d)
    rows = [("generated (UTC)", meta["generated_at"]), ("collected (UTC)", meta["collected_at"] or "not recorded"),
            ("command", meta["command"] or "-"), ("tool", f"topodiag {meta['tool']['version']}")]
    rows += [(k, v) for k, v in meta["versions"].items()]
    cells = "".join(f"<tr><th>{_e(k)}</th><td><code>{_e(v)}</code></td></tr>" for k, v in rows)
    return f'<table class="l run">{cells}</table>'


def _findings(outcome) -> str:
    from ..engine import Severity

    out = []
    for sev in sorted(Severity, reverse=True):
        group = [f for f in outcome.findings if f.severity == sev]
        if not group:
            continue
        colour = SEV_COLOUR[str(sev)]
        out.append(f'<h2><span class="sev" style="color:{colour}">{_e(str(sev).upper())}</span> ({len(group)})</h2>')
        by_code: dict[str, list] = {}
        for f in group:
            by_code.setdefault(f.code, []).append(f)
        for findings in by_code.values():
            first = findings[0]
            out.append(f'<div class="rule" id="{_e(first.code)}">{_e(first.code)} {_e(first.slug)}'
                       f'{f" ({len(findings)})" if len(findings) > 1 else ""}</div><ul class="f">')
            for f in findings:
                where = ", ".join(dict.fromkeys(f"{e.file}:{e.line_no}" if e.line_no else str(e.file)
                                                for e in f.evidence if e.file))
                extra = f'<br><span class="dim">subjects: {_e(", ".join(f.subjects))}' if f.subjects else ""
                extra += f"; evidence: {_e(where)}" if where and f.subjects else ""
                extra += "</span>" if f.subjects else ""
                out.append(f"<li>{_e(f.message)}{extra}</li>")
            out.append("</ul>")
            for word, prose in (("why", first.why), ("fix", first.fix)):
                if prose:
                    out.append(f"<details><summary>{word}</summary><p>{_e(' '.join(prose.split()))}</p></details>")
    return "\n".join(out) or "<p>No finding.</p>"


def _matrix(topology) -> str:
    from ..model import nv_count

    gpus, nics = topology.gpus(), topology.nics()
    cols = gpus + nics
    if not gpus or not any(topology.pair_class(a, b) for a in gpus for b in cols if a != b):
        return ""
    head = "".join(f"<th>{_e(_label(topology, c))}</th>" for c in cols)
    rows = []
    for a in gpus:
        cells = []
        for b in cols:
            cls = "X" if a == b else topology.pair_class(a, b)
            colour = NV_COLOUR if cls and nv_count(cls) is not None else CLASS_COLOUR.get(cls or "", "#ffffff")
            cells.append(f'<td style="background:{colour}">{_e(cls or "-")}</td>')
        rows.append(f"<tr><th>{_e(_label(topology, a))}</th>{''.join(cells)}</tr>")
    return ('<h2>Paths (nvidia-smi topo -m classes)</h2><p class="dim">green NVLink, blue PIX/PXB (one PCIe '
            'switch), yellow PHB/NODE (through the CPU), red SYS (across the sockets)</p>'
            f'<table class="m"><tr><th></th>{head}</tr>{"".join(rows)}</table>')


def _expected_gbps(outcome) -> float | None:
    """The busbw PERF001 judged a run against (the value it gave its message), where it stated one."""
    for f in outcome.findings:
        if f.code == "PERF001" and f.values.get("expected") is not None:
            try:
                return float(f.values["expected"])
            except (TypeError, ValueError):
                return None
    return None


def _curves(d) -> str:
    from .chart_svg import svg_chart

    series = []
    for obs in d.topology.observations("nccl_tests"):
        runs: dict[int, list] = {}
        for row in obs.get("rows") or []:
            busbw = max((v for v in (row.get("oop_busbw_gbps"), row.get("ip_busbw_gbps")) if isinstance(v, (int, float))),
                        default=None)
            if row.get("size_bytes") and busbw is not None:
                runs.setdefault(row.get("run") or 0, []).append((row["size_bytes"], busbw))
        name = (obs.get("file") or "nccl-tests").rsplit("/", 1)[-1]
        for run, pts in sorted(runs.items())[:8]:
            series.append((f"{name}" + (f" run {run}" if len(runs) > 1 else ""), sorted(pts)))
    if not series:
        return ""
    svg = svg_chart(series[:8], _expected_gbps(d.outcome), "nccl-tests busbw by message size")
    svg = re.sub(r"<\?xml[^>]*\?>\s*", "", svg)
    return '<h2>nccl-tests</h2><p class="dim">busbw per message size (log scale); dashed: the expectation PERF001 used, where it reported one</p>' + svg


def _checklist(outcome) -> str:
    from ..engine.checklist import checklist

    marks = {"found": ("&#10007;", "#c0392b"), "ok": ("&#10003;", "#1e8449"), "not checked": ("?", "#b9770e"),
             "outside": ("&ndash;", "#888")}
    rows = "".join(f'<tr><td style="color:{marks[r.state][1]};font-weight:bold">{marks[r.state][0]}</td>'
                   f"<td>{_e(r.symptom)}</td><td>{_e(r.cause)}</td><td>{_e(r.fact)}</td></tr>"
                   for r in checklist(outcome))
    return ('<h2>Checklist</h2><table class="l"><tr><th></th><th>symptom</th><th>likely cause</th>'
            f"<th>what decided it</th></tr>{rows}</table>")


def _inputs_and_skipped(d) -> str:
    rows = "".join(f"<tr><td><code>{_e(s.path)}</code></td><td>{_e(s.source)}</td><td>{_e(s.status)}</td>"
                   f"<td>{_e(s.reason)}</td></tr>" for s in d.statuses)
    skipped = "".join(f"<tr><td>{_e(s.code)}</td><td>{_e(s.slug)}</td><td>{_e(s.reason)}</td></tr>"
                      for s in d.outcome.skipped)
    out = f'<h2>Inputs</h2><table class="l"><tr><th>path</th><th>source</th><th>status</th><th>reason</th></tr>{rows}</table>'
    if skipped:
        out += (f"<details><summary>{len(d.outcome.skipped)} rules skipped</summary><table class=\"l\">"
                f"<tr><th>code</th><th>rule</th><th>why</th></tr>{skipped}</table></details>")
    return out


def render(diagnosis, stream: TextIO, **options: Any) -> None:
    """The whole page, to `stream`."""
    from .. import __version__
    from ..engine.verdict import coverage, verdict

    d = diagnosis
    said, cov = verdict(d.outcome, d.topology), coverage(d.outcome)
    from .html_node import graph_svg
    body = [_header(d, said, cov, d.outcome.counts()), _findings(d.outcome), _checklist(d.outcome), _matrix(d.topology),
            graph_svg(d.topology, d.outcome.findings), _curves(d), _inputs_and_skipped(d),
            f'<p class="dim">topodiag {_e(__version__)}</p>']
    title = f"topodiag {said.word} {d.host or ''}".strip()
    stream.write("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                 f"<title>{_e(title)}</title><style>{CSS}</style></head><body>\n"
                 + "\n".join(p for p in body if p) + "\n</body></html>\n")



