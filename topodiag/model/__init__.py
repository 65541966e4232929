"""The model stage: one Topology per node, built by merging parsed inputs (see builder.build).

Importing this package is cheap; networkx is imported when a Topology is first made.
"""

from __future__ import annotations

from ..records import ParsedInput
from .builder import build
from .topology import SCHEMA_VERSION, Topology, class_rank, nv_count

__all__ = ["ParsedInput", "build", "Topology", "SCHEMA_VERSION", "class_rank", "nv_count"]
