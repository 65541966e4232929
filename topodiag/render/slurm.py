"""`prolog`'s one line: a drain reason Slurm can show (`topodiag: IB001 nic:mlx5_3; NVL001 gpu:2`).

The findings at or above --fail-on, worst first, each as its code and first two subjects, cut to
MAX_REASON characters with "+N more" saying how many were left out; with none, the tool's own
trouble ("incomplete: SYS001 ...") or "ok".
"""

from __future__ import annotations

from typing import Any, TextIO

MAX_REASON = 200  # Slurm keeps a drain reason short; scontrol shows it in one line


def reason_line(outcome) -> str:
    """`topodiag: CODE subject; CODE subject` for the findings at or above the run's fail_on."""
    from ..engine import Severity

    level = outcome.fail_on if outcome.fail_on is not None else Severity.CRITICAL
    real = [f for f in outcome.findings if not f.code.startswith("SYS") and f.severity >= level]
    real.sort(key=lambda f: -int(f.severity))
    if not real:
        tool = [f for f in outcome.findings if f.code.startswith("SYS")]
        if tool:
            return "topodiag: incomplete: " + "; ".join(f"{f.code} {f.subjects[0] if f.subjects else ''}".strip()
                                                         for f in tool)[: MAX_REASON - 22]
        return "topodiag: ok"
    parts = [f"{f.code} {' '.join(f.subjects[:2])}".strip() for f in real]
    shown: list[str] = []
    for i, part in enumerate(parts):
        left = len(parts) - i - 1
        line = "topodiag: " + "; ".join(shown + [part]) + (f"; +{left} more" if left else "")
        if len(line) > MAX_REASON and shown:
            return "topodiag: " + "; ".join(shown) + f"; +{len(parts) - i} more"
        shown.append(part)
    return "topodiag: " + "; ".join(shown)


def render(diagnosis, stream: TextIO, **options: Any) -> None:
    stream.write(reason_line(diagnosis.outcome) + "\n")
