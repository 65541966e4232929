"""The model stage: one Topology per node, built by merging parsed inputs (see merge.build).

    topology.py   Topology: a networkx MultiGraph behind domain methods, JSON form
    merge/        build() and one merge module per source family (found by discovery)
    paths.py      path classes derived where no input printed them; NVLink count checks
    fingerprint.py the facts `topodiag fleet` compares across nodes

Importing this package is cheap; networkx is imported when a Topology is first made.
"""

from __future__ import annotations

from ..records import ParsedInput
from .merge import build
from .topology import SCHEMA_VERSION, Topology, class_rank, nv_count

__all__ = ["ParsedInput", "build", "Topology", "SCHEMA_VERSION", "class_rank", "nv_count"]
