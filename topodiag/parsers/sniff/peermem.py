"""Whether a text looks like peermem's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

_PROC_RE = re.compile(r"^([A-Za-z0-9_]+) ([0-9]+) ([0-9]+) (\S+) (Live|Loading|Unloading) 0x[0-9a-f]+")


def sniff(text: str) -> float:
    try:
        head = text[:20000]
        if "memory_peers" in head or "nvidia_peermem" in head or "nv_peer_mem" in head:
            return 0.7
        if '"probe": "peermem"' in head:
            return 0.95
        if "NVRM version: NVIDIA UNIX" in head:
            return 0.6
        if re.search(r"^Module[ \t]+Size[ \t]+Used by", head, re.M):
            return 0.6
        lines = [ln for ln in head.splitlines()[:50] if ln.strip()]
        if len(lines) >= 3 and all(_PROC_RE.match(ln) for ln in lines):
            return 0.6
    except Exception:
        return 0.0
    return 0.0
