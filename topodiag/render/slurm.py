"""`prolog`'s one line: a drain reason Slurm can show
(`topodiag: NVL001 nvlink-inactive gpu:0, gpu:1 +6 more; IB001 ib-port-down nic:mlx5_3`).

The findings at or above --fail-on, one part per rule, worst first: its code, its slug (the cause,
as `topodiag explain CODE` names it) and its first two subjects, "+N more" saying how many others it
has; parts that do not fit MAX_REASON characters are counted ("+2 more rules"), never dropped
silently. With none: the tool's own trouble ("incomplete: SYS001 source-failed source:nvml"), or
"ok" with how much of the checklist ran ("ok (12 of 14 checks ran)").

The line is safe to hand to `scontrol update ... reason=LINE` and to paste into a shell inside double
quotes: one line of printable ASCII, at most MAX_REASON characters; a subject (a host name the
machine or a bundle gave) cannot bring a line break, a control or escape sequence, a bidi control,
a quote, a backslash, a `$` or a backquote into it (each becomes `?`).
"""

from __future__ import annotations

import re
from typing import Any, TextIO

MAX_REASON = 200  # Slurm keeps a drain reason short; scontrol shows it in one line
SUBJECTS_SHOWN = 2
_UNSAFE = re.compile(r"[^ !#%&()*+,\-./0-9:;<=>?@A-Z\[\]^_a-z{|}~]")  # printable ASCII but " ' ` \ $


def safe(text: str) -> str:
    """`text` as one line of printable ASCII without quotes, backslashes, `$` or backquotes: every
    other character becomes `?`, white space a space (one character for one: lengths are kept)."""
    return _UNSAFE.sub(lambda m: " " if m.group().isspace() else "?", text)


def _subjects(subjects: list[str]) -> str:
    shown = ", ".join(subjects[:SUBJECTS_SHOWN])
    more = len(subjects) - SUBJECTS_SHOWN
    return f"{shown} +{more} more" if more > 0 else shown


def _parts(findings) -> list[str]:
    """One part per rule, worst rule first, its subjects in the order found (each once)."""
    by_code: dict[str, list] = {}
    for f in sorted(findings, key=lambda f: -int(f.severity)):
        by_code.setdefault(f.code, []).append(f)
    parts = []
    for code, group in by_code.items():
        subjects = list(dict.fromkeys(s for f in group for s in f.subjects))
        parts.append(safe(f"{code} {group[0].slug} {_subjects(subjects)}".strip()))
    return parts


def _fit(prefix: str, parts: list[str]) -> str:
    shown: list[str] = []
    for i, part in enumerate(parts):
        left = len(parts) - i - 1
        line = prefix + "; ".join(shown + [part]) + (f"; +{left} more rule{'s' if left > 1 else ''}" if left else "")
        if len(line) > MAX_REASON and shown:
            rest = len(parts) - i
            return prefix + "; ".join(shown) + f"; +{rest} more rule{'s' if rest > 1 else ''}"
        shown.append(part)
    return (prefix + "; ".join(shown))[:MAX_REASON]


def reason_line(outcome, topology=None) -> str:
    """`topodiag: CODE slug subject, subject +N more; ...` for the findings at or above fail_on
    (one safe line of at most MAX_REASON characters)."""
    return safe(_reason(outcome, topology))[:MAX_REASON]


def _reason(outcome, topology=None) -> str:
    from ..engine import Severity
    from ..engine.verdict import TOOL_FAMILY, coverage, family, saw_nothing

    level = outcome.fail_on if outcome.fail_on is not None else Severity.CRITICAL
    real = [f for f in outcome.findings if family(f.code) != TOOL_FAMILY and f.severity >= level]
    if real:
        return _fit("topodiag: ", _parts(real))
    tool = [f for f in outcome.findings if family(f.code) == TOOL_FAMILY]
    if tool:
        return _fit("topodiag: incomplete: ", _parts(tool))
    cov = coverage(outcome)
    if saw_nothing(topology):
        return f"topodiag: ok (no GPU or HCA visible: nothing to check; {cov.ran} of {cov.of} checks ran)"
    return f"topodiag: ok ({cov.ran} of {cov.of} checks ran)"


def render(diagnosis, stream: TextIO, **options: Any) -> None:
    stream.write(reason_line(diagnosis.outcome, diagnosis.topology) + "\n")
