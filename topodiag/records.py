"""Records every stage shares, below the model and the engine (no imports from either).

`Each`: several parsed inputs of one source, as (value, file) pairs. The engine runs a check that
takes such an input once per item (topodiag/engine/runner.py); the model's combiners return one when
a combined view keeps that per-file reading (topodiag/model/combiners.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional


@dataclass(frozen=True)
class Each:
    """Several parsed inputs of one source, as (value, file) pairs; checks that take the source run
    once per item."""

    items: tuple[tuple[Any, Optional[str]], ...]

    @classmethod
    def of(cls, pairs: Iterable[tuple[Any, Optional[str]]]) -> "Each":
        return cls(tuple(pairs))

    def first(self) -> Any:
        return self.items[0][0] if self.items else None
