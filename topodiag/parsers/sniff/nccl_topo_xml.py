"""Whether a text looks like nccl_topo_xml's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

# A tag's attributes are read up to the next '<' or '>' and at most _SNIFF_TAG characters: `[^>]*` ran
# from every '<pci' to the end of a text without '>' (quadratic: 47 s on 260 KB of unclosed tags).
_SNIFF_TAG = 4096
_SNIFF_ROOT = re.compile(r"^[ \t\ufeff]*<(system|graphs)\b[^<>]{0,%d}>" % _SNIFF_TAG, re.M)
_SNIFF_SYSTEM_CHILD = re.compile(r"<(?:cpu|pci)\b[^<>]{0,%d}?(?:numaid|busid)=" % _SNIFF_TAG)
_SNIFF_GRAPH_CHILD = re.compile(r"<graph\b[^<>]{0,%d}?(?:pattern|nchannels)=" % _SNIFF_TAG)


def sniff(text: str) -> float:
    """0.95 for a <system> root with <cpu>/<pci> children or a <graphs> root with <graph> children
    (the root tag at the start of a line); 0.6 for the bare root element; else 0."""
    try:
        root = _SNIFF_ROOT.search(text)
        if root is None:
            return 0.0
        child = _SNIFF_SYSTEM_CHILD if root.group(1) == "system" else _SNIFF_GRAPH_CHILD
        return 0.95 if child.search(text, root.end()) else 0.6
    except Exception:  # pragma: no cover - regex search on str does not raise
        return 0.0
