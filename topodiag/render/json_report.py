"""The JSON report of `topodiag check` (versioned: bump SCHEMA_VERSION on an incompatible change).

    {schema_version, generated_at (UTC ISO 8601), collected_at (a bundle's `created`, the live
     collection's time, or null), command (the command line, or null), versions {driver, cuda, nccl,
     ofed, kernel: each only where an input names it}, tool: {name, version}, host, profile (the profile's name, or null),
     profile_reason (how it was chosen, or why none was), config (null, or {file, host, matched: the
     [[hosts]] patterns that applied}), inputs [{path, source, status, reason}],
     findings [{code, slug, severity, subjects, message, evidence, expectation, why, fix, action (none |
     rerun | reset-gpu | reboot | reseat-cable | service-ticket: what the node needs, from the rule)}],
     skipped [{code, slug, reason}], summary {findings, rules_run, rules_skipped, fail_on, exit_code,
     verdict (ok | nothing-seen | warnings | errors | findings | incomplete | internal-error), verdict_detail,
     coverage {checks_run, checks_selected, inputs_missing, text}},
     fingerprint {key: value} (model/fingerprint.py: what `topodiag fleet` compares across nodes)}
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from .meta import host_name  # noqa: F401  (the renderers and fleet import it from here too)

SCHEMA_VERSION = 4  # 4: generated_at, collected_at, command, versions (render/meta.py)
# 3: each finding's action (findings.ACTIONS); 2: profile is a name or null, profile_reason says how
READS = (2, 3, 4)  # the versions `fleet` compares: 3 and 4 only add fields
SCHEMA_FILE = "docs/report.schema.json"  # the published JSON Schema of this report (tests validate against it)
PACKAGED_SCHEMA = "report.schema.json"  # the wheel's copy, inside the package (pyproject.toml force-include)


def schema_path():
    """The JSON Schema of this report: the installed package's copy, else the source tree's."""
    from pathlib import Path

    pkg = Path(__file__).resolve().parents[1]
    packaged = pkg / PACKAGED_SCHEMA
    return packaged if packaged.is_file() else pkg.parent / SCHEMA_FILE


def summary(outcome, topology=None) -> dict[str, Any]:
    """The engine's counts, with the verdict and how much of the checklist ran (engine/verdict.py)."""
    from ..engine.verdict import coverage, verdict

    said = verdict(outcome, topology)
    return {**outcome.summary(), "verdict": said.key, "verdict_detail": said.detail,
            "coverage": coverage(outcome).to_dict()}


def profile_fields(diagnosis) -> tuple[str | None, str]:
    """(profile name or None, the reason): "dgx-h100 (detected from NVIDIA H100 80GB HBM3)" ->
    ("dgx-h100", "detected from NVIDIA H100 80GB HBM3"); "none (the inputs name no GPU model)" ->
    (None, "the inputs name no GPU model")."""
    how = str(diagnosis.profile_how or "none")
    name = getattr(diagnosis.profile, "name", None)
    reason = how[how.index("(") + 1 : how.rindex(")")] if "(" in how and how.endswith(")") else how
    return name, reason


def report(diagnosis) -> dict[str, Any]:
    """The report of a Diagnosis (topodiag.pipeline) as JSON-ready dicts."""
    from ..model.fingerprint import fingerprint
    from .meta import run_meta

    d = diagnosis
    outcome, topology = d.outcome, d.topology
    meta = run_meta(d)

    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": meta["generated_at"],
        "collected_at": meta["collected_at"],
        "command": meta["command"],
        "versions": meta["versions"],
        "tool": meta["tool"],
        "host": meta["host"],
        "profile": profile_fields(d)[0],
        "profile_reason": profile_fields(d)[1],
        "config": d.config_info,
        "inputs": [s.to_dict() for s in d.statuses],
        "findings": [f.to_dict() for f in outcome.findings],
        "skipped": [s.to_dict() for s in outcome.skipped],
        "summary": summary(outcome, topology),
        "fingerprint": fingerprint(topology),
    }


WRITE_BYTES = 1 << 20  # the indented text is written a piece of about this size at a time


def render(diagnosis, stream: TextIO, **options: Any) -> None:
    """`check --format json`: the report, indented (the text json.dumps(report, indent=2) gives),
    written a piece at a time: a report of ten thousand findings (a bug report of hundreds of kernel
    logs) is never one string of tens of MB beside the report it is made of."""
    buf: list[str] = []
    size = 0
    for piece in json.JSONEncoder(indent=2).iterencode(report(diagnosis)):
        buf.append(piece)
        size += len(piece)
        if size >= WRITE_BYTES:
            stream.write("".join(buf))
            buf, size = [], 0
    buf.append("\n")
    stream.write("".join(buf))


def render_topology(diagnosis, stream: TextIO, **options: Any) -> None:
    """`show --format json`: the Topology's own versioned JSON form (model/topology.py)."""
    stream.write(diagnosis.topology.dumps() + "\n")
