"""The JSON report of `topodiag check` (versioned: bump SCHEMA_VERSION on an incompatible change).

    {schema_version, tool: {name, version}, host, profile, config (null, or {file, host, matched: the
     [[hosts]] patterns that applied}), inputs [{path, source, status, reason}],
     findings [{code, slug, severity, subjects, message, evidence, expectation, why, fix}],
     skipped [{code, slug, reason}], summary {findings, rules_run, rules_skipped, fail_on, exit_code},
     fingerprint {key: value} (model/fingerprint.py: what `topodiag fleet` compares across nodes)}
"""

from __future__ import annotations

from typing import Any, Iterable

SCHEMA_VERSION = 1


def host_name(topology) -> str | None:
    host = topology.host()
    return topology.node(host).get("name") if host else None


def report(outcome, topology, statuses: Iterable[Any], profile: str | None = None,
           config: dict[str, Any] | None = None) -> dict[str, Any]:
    from .. import __version__
    from ..model.fingerprint import fingerprint

    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "topodiag", "version": __version__},
        "host": host_name(topology),
        "profile": profile,
        "config": config,
        "inputs": [s.to_dict() for s in statuses],
        "findings": [f.to_dict() for f in outcome.findings],
        "skipped": [s.to_dict() for s in outcome.skipped],
        "summary": outcome.summary(),
        "fingerprint": fingerprint(topology),
    }
