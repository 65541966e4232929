"""Many findings of one rule on one input become one finding with a count.

A log that holds thousands of nccl-tests runs, or a fabric dump of thousands of links, can make one
rule fire thousands of times; a report of 38,000 findings is unreadable and costs memory to build and
print. When one call of a check yields more than COLLAPSE_OVER findings whose evidence is one file, they
become one finding: the most severe instances first (the check's order within a severity), its message
that of the first with the count and the first line numbers, the subjects of all (the first
MAX_SUBJECTS), and up to MAX_INSTANCES instances kept in the JSON (`count`, `instances`) with the total.
Fewer findings than that stay as they are: a node's eight IB ports each keep their own finding.
"""

from __future__ import annotations

import os
from types import MappingProxyType
from typing import Optional

from .findings import Finding

COLLAPSE_OVER = 20
MAX_INSTANCES = 50
MAX_SUBJECTS = 50
SHOWN_LINES = 5


def _file(f: Finding) -> Optional[str]:
    return next((e.file for e in f.evidence if e.file), None)


def collapse(findings: list[Finding]) -> list[Finding]:
    """The findings of one check call, those of one file collapsed when there are too many."""
    if len(findings) <= COLLAPSE_OVER:
        return findings
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.code, _file(f)), []).append(f)
    out: list[Finding] = []
    for (_, file), group in groups.items():
        out.extend(group if len(group) <= COLLAPSE_OVER else [_one(group, file)])
    return out


def _line(f: Finding) -> Optional[int]:
    return next((e.line_no for e in f.evidence if e.line_no), None)


def _one(group: list[Finding], file: Optional[str]) -> Finding:
    ordered = sorted(group, key=lambda f: -int(f.severity))  # stable: the check's order within a severity
    first = ordered[0]
    subjects = list(dict.fromkeys(s for f in ordered for s in f.subjects))
    lines = [n for n in (_line(f) for f in ordered[:SHOWN_LINES]) if n]
    where = os.path.basename(file) if file else "this input"
    at = f"; the first at line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}" if lines else ""
    message = f"{first.message} [1 of {len(group)} {first.code} findings on {where}{at}]"
    instances = tuple(MappingProxyType({"message": f.message, "severity": str(f.severity), "subjects": list(f.subjects),
                                        "line_no": _line(f)}) for f in ordered[:MAX_INSTANCES])
    evidence = tuple(e for f in ordered[:SHOWN_LINES] for e in f.evidence[:1])
    return Finding(code=first.code, slug=first.slug, severity=first.severity, subjects=tuple(subjects[:MAX_SUBJECTS]),
                   message=message, evidence=evidence, why=first.why, fix=first.fix, expectation=first.expectation,
                   count=len(group), instances=instances, values=first.values, action=first.action,
                   observed=first.observed)
