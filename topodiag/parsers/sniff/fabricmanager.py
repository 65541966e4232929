"""Whether a text looks like fabricmanager's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

_STATES = ("active", "inactive", "failed", "activating", "deactivating", "reloading", "unknown")
_WORD_RE = re.compile(r"^(?:\S+[$#]\s*systemctl is-active \S+\s*)?(" + "|".join(_STATES) + r")$")


def sniff(text: str) -> float:
    try:
        head = text[:20000]
        if "NV_WARN_NOTHING_TO_DO" in head or "nv-fabricmanager" in head or "nvidia-fabricmanager" in head:
            return 0.9
        body = [ln.strip() for ln in head.splitlines() if ln.strip()]
        if len(body) == 1 and _WORD_RE.match(body[0]):
            return 0.5  # the one word of systemctl is-active
    except Exception:
        return 0.0
    return 0.0
