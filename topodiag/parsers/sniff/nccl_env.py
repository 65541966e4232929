"""Whether a text looks like nccl_env's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re
from typing import Optional

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_ASSIGN_RE = re.compile(rf"^\s*(?:(export|declare\s+-x|typeset\s+-x|setenv|-x)\s+)?({_NAME})(=|\s+)(.*)$")
_PROMPT_RE = re.compile(r"^\s*(?:\S*[$#>]\s+\S|```|~~~|#|//)")


def _unquote(value: str) -> str:
    v = value.strip()
    if v.endswith(" \\"):  # a continued command line (mpirun -x NAME=value \\)
        v = v[:-2].rstrip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


def _assignment(line: str) -> Optional[tuple[str, str, str]]:
    """(keyword, name, value) of `NAME=value`, `export NAME=value`, `declare -x NAME="value"`,
    `setenv NAME value`; None for anything else."""
    m = _ASSIGN_RE.match(line)
    if m is None:
        return None
    keyword, name, sep, value = m.group(1) or "", m.group(2), m.group(3), m.group(4)
    if sep != "=" and keyword != "setenv":
        return None
    return keyword, name, _unquote(value)


def sniff(text: str) -> float:
    """0.9 for the probe's JSON; 0.7 when an NCCL_* assignment starts a line and assignments are most
    of the lines; else 0 (an NCCL log's "NCCL_X set by environment to" lines are not assignments)."""
    try:
        head = text[:65536]
        if head.lstrip().startswith("{") and '"probe": "nccl_env"' in head:
            return 0.9
        lines = [ln for ln in head.replace("\0", "\n").splitlines()[:400] if ln.strip() and not _PROMPT_RE.match(ln)]
        if not lines:
            return 0.0
        found = [_assignment(ln) for ln in lines]
        nccl = sum(1 for a in found if a and a[1].startswith("NCCL_"))
        assigns = sum(1 for a in found if a)
        return 0.7 if nccl and assigns * 10 >= len(lines) * 7 else 0.0
    except Exception:
        return 0.0
