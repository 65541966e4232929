"""`check --format prometheus`: the Prometheus text format for node_exporter's textfile collector.

    topodiag check --format prometheus > /var/lib/node_exporter/textfile/topodiag.prom.$$ \\
        && mv /var/lib/node_exporter/textfile/topodiag.prom.$$ /var/lib/node_exporter/textfile/topodiag.prom

Metrics (all gauges; node_exporter adds the instance label, so there is no host label but in
topodiag_info):
  topodiag_info{version, host, profile} 1
  topodiag_last_run_timestamp_seconds, topodiag_run_duration_seconds, topodiag_exit_code
  topodiag_findings{code, slug, severity}      findings per rule and severity; 0 for each rule that
                                                ran and found nothing (so an alert can use `> 0`)
  topodiag_rules{state="run"|"skipped"}
  topodiag_input_ok{source}                     1 read, 0 failed or unparseable (absent: not listed)
  topodiag_gpus, topodiag_gpu_pairs{class}
  topodiag_nvlink_active_links{gpu, model}      active NVLinks per GPU (where a source listed them all)
  topodiag_nvlink_link_up{gpu, link}            1 active, 0 inactive
  topodiag_ib_port_active{device, port, link_layer}    1 Active/LinkUp, else 0
  topodiag_ib_port_rate_gbps{device, port, link_layer} the port's rate in Gb/s
Label values are escaped as the format wants (backslash, double quote, newline); every other control
character (CR, NUL, ESC, C1, DEL), the Unicode line and paragraph separators and the bidi controls
are first shown as their Python escapes (`\\x1b`, `\\u2028`: render/sanitise.py), so that a reader
splitting lines another way (universal newlines) or a terminal showing the file sees one sample
per line and nothing that acts. Values that are not finite are written +Inf, -Inf, NaN.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Optional, TextIO


def _escape(value: Any) -> str:
    from .sanitise import clean

    text = "\n".join(clean(part) for part in str(value).split("\n"))  # newline kept for its own escape
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _num(value: float) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    try:
        f = float(value)
    except OverflowError:  # an int past a float's range
        f = float("inf") if value > 0 else float("-inf")
    if f != f:
        return "NaN"
    if f in (float("inf"), float("-inf")):
        return "+Inf" if f > 0 else "-Inf"
    if f.is_integer():
        return str(int(value))
    return repr(float(value))


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, help_text: str, samples: Iterable[tuple[dict[str, Any], float]]) -> None:
        samples = list(samples)
        if not samples:
            return
        self.lines.append(f"# HELP {name} {help_text}")
        self.lines.append(f"# TYPE {name} gauge")
        for labels, value in samples:
            label_text = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
            self.lines.append(f"{name}{{{label_text}}} {_num(value)}" if label_text else f"{name} {_num(value)}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def render(diagnosis, stream: TextIO, *, now: Optional[float] = None, **options: Any) -> None:
    """`check --format prometheus`: write the textfile."""
    stream.write(text(diagnosis, now=now))


def text(diagnosis, now: Optional[float] = None) -> str:
    """The textfile's content for a Diagnosis (topodiag.pipeline)."""
    d = diagnosis
    w = _Writer()
    _run_families(w, d, now)
    _finding_families(w, d.outcome, d.catalog)
    _input_families(w, d.statuses)
    _gpu_families(w, d.topology)
    _ib_families(w, d.topology)
    return w.text()


def _run_families(w: "_Writer", d, now: Optional[float]) -> None:
    from .. import __version__
    from ..exit_codes import exit_code
    from .json_report import host_name

    profile = getattr(d.profile, "name", None)  # the name, never a sentence: a label value
    w.family("topodiag_info", "topodiag version, host and profile of the last check.",
             [({"version": __version__, "host": host_name(d.topology) or "", "profile": profile or ""}, 1)])
    w.family("topodiag_last_run_timestamp_seconds", "When the last check ran (Unix time).",
             [({}, round(now if now is not None else time.time(), 3))])
    w.family("topodiag_run_duration_seconds", "How long the last check took.", [({}, round(d.elapsed_s, 3))])
    w.family("topodiag_exit_code", "Exit code of the last check: 0 ok, 1 findings, 3 incomplete, 4 internal error.",
             [({}, exit_code(d.outcome.exit_code))])


def _finding_families(w: "_Writer", outcome, catalog) -> None:
    counts: dict[tuple[str, str, str], int] = {}
    for f in outcome.findings:
        key = (f.code, f.slug, str(f.severity))
        counts[key] = counts.get(key, 0) + 1
    for code in outcome.ran:
        if not any(k[0] == code for k in counts):
            rule = catalog.find(code)
            if rule is not None:
                counts[(code, rule.slug, str(rule.severity))] = 0
    w.family("topodiag_findings", "Findings of the last check per rule and severity (0: the rule ran, found nothing).",
             [({"code": c, "slug": s, "severity": sev}, n) for (c, s, sev), n in sorted(counts.items())])
    w.family("topodiag_rules", "Rules of the last check that ran and that were skipped (an input was missing).",
             [({"state": "run"}, len(outcome.ran)), ({"state": "skipped"}, len(outcome.skipped))])


def _input_families(w: "_Writer", statuses) -> None:
    inputs: dict[str, int] = {}
    for s in statuses:
        if s.source and s.status in ("parsed", "failed", "unparseable"):
            inputs[s.source] = min(inputs.get(s.source, 1), 1 if s.status == "parsed" else 0)
    w.family("topodiag_input_ok", "1 when the source was read, 0 when it failed or did not parse.",
             [({"source": src}, ok) for src, ok in sorted(inputs.items())])


def _gpu_families(w: "_Writer", topology) -> None:
    gpus = topology.gpus()
    if gpus:
        w.family("topodiag_gpus", "GPUs in the node's model.", [({}, len(gpus))])
    classes: dict[str, int] = {}
    for _, _, cls in topology.gpu_pairs():
        if cls:
            classes[cls] = classes.get(cls, 0) + 1
    w.family("topodiag_gpu_pairs", "GPU pairs per path class (NV#, PIX, PXB, PHB, NODE, SYS).",
             [({"class": c}, n) for c, n in sorted(classes.items())])
    active, up = [], []
    for g in gpus:
        attrs = topology.node(g)
        nvl = attrs.get("nvlink")
        if not nvl:
            continue
        index = g.split(":", 1)[1]
        if not nvl.get("truncated"):
            active.append(({"gpu": index, "model": attrs.get("model") or ""}, nvl.get("active_count") or 0))
        up.extend(({"gpu": index, "link": ln["link"]}, 1 if ln.get("active") else 0) for ln in nvl.get("links") or [])
    w.family("topodiag_nvlink_active_links", "Active NVLinks per GPU.", active)
    w.family("topodiag_nvlink_link_up", "1 when the NVLink is active.", up)


def _ib_families(w: "_Writer", topology) -> None:
    ports_up, rates = [], []
    for nic, port in topology.ib_ports():
        labels = {"device": nic.split(":", 1)[1], "port": port["port"], "link_layer": port.get("link_layer") or ""}
        if port.get("state") is not None:
            ok = port.get("state") == "Active" and port.get("physical_state") in (None, "LinkUp")
            ports_up.append((labels, 1 if ok else 0))
        if isinstance(port.get("rate_gbps"), (int, float)):
            rates.append((labels, port["rate_gbps"]))
    w.family("topodiag_ib_port_active", "1 when the HCA port is Active / LinkUp.", ports_up)
    w.family("topodiag_ib_port_rate_gbps", "The HCA port's rate in Gb/s.", rates)
