"""`prolog`'s one line: a drain reason Slurm can show
(`topodiag: IB001 mlx5_3 port 1 Down/Polling [reseat-cable]; TOPO001 gpu-link-asymmetry gpu:0, gpu:1`).

The findings at or above --fail-on, one part per rule, worst first: its code, then what was seen
(the rule's `observed` text over the first finding's values: `mlx5_3 port 1 Down/Polling`) or,
for a rule without one, its slug (the cause, as `topodiag explain CODE` names it) and its first two
subjects; "+N more" says how many others it has, and `[action]` what the node needs when that is
not "none" (the rule's `action`: rerun, reset-gpu, reboot, reseat-cable, service-ticket). Parts
that do not fit MAX_REASON characters are counted ("+2 more rules"), never dropped silently. With none: the tool's own trouble ("incomplete: SYS001 source-failed source:nvml"), or
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


def _part(code: str, group: list, with_action: bool) -> str:
    """`CODE what was seen +N more [action]`: the first finding's `observed` text when its rule has
    one (`IB001 mlx5_0 port 1 Down/Polling`), else the slug and the first subjects."""
    first = group[0]
    observed = getattr(first, "observed", "")
    if observed:
        more = max(len(group), sum(getattr(f, "count", 1) for f in group)) - 1
        text = f"{code} {observed}" + (f" +{more} more" if more > 0 else "")
    else:
        subjects = list(dict.fromkeys(s for f in group for s in f.subjects))
        text = f"{code} {first.slug} {_subjects(subjects)}".strip()
    action = getattr(first, "action", "none")
    return safe(text + (f" [{action}]" if with_action and action and action != "none" else ""))


def _parts(findings, with_action: bool = True) -> list[str]:
    """One part per rule, worst rule first, its subjects in the order found (each once); the rule's
    action in brackets when it asks for one (`[reseat-cable]`: findings.ACTIONS)."""
    by_code: dict[str, list] = {}
    for f in sorted(findings, key=lambda f: -int(f.severity)):
        by_code.setdefault(f.code, []).append(f)
    return [_part(code, group, with_action) for code, group in by_code.items()]


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
        return _fit("topodiag: incomplete: ", _parts(tool, with_action=False))
    cov = coverage(outcome)
    if saw_nothing(topology):
        return f"topodiag: ok (no GPU or HCA visible: nothing to check; {cov.ran} of {cov.of} checks ran)"
    return f"topodiag: ok ({cov.ran} of {cov.of} checks ran)"


def render(diagnosis, stream: TextIO, **options: Any) -> None:
    stream.write(reason_line(diagnosis.outcome, diagnosis.topology) + "\n")
