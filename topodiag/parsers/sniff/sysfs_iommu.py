"""Whether a text looks like sysfs_iommu's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

_UNIT_RE = re.compile(r"^(dmar[0-9]+|ivhd[0-9]+|amd-iommu\.[0-9]+|[0-9a-f]+\.(?:iommu|smmu)\S*|smmu\S*|iommu[0-9]+)$", re.I)


def sniff(text: str) -> float:
    """0.7 when the first names are dmarN / ivhdN units."""
    try:
        toks = text[:4096].split()
        names = [t for t in toks if _UNIT_RE.match(t)]
        if names and (names[0].startswith(("dmar", "ivhd", "amd-iommu")) or len(names) >= 2):
            return 0.7 if len(names) * 2 >= len(toks) else 0.0
    except Exception:
        return 0.0
    return 0.0
