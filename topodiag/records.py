"""The records every stage shares, in a leaf module so that loading inputs never imports the
engine or the model: a parsed input, an input that failed, a row of the report's input list, and
`Each` (several files of one source)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Optional

PROBLEM_KINDS = ("failed", "unparseable")


@dataclass(frozen=True)
class ParsedInput:
    """One parsed input: the source name, the file it came from (None for live), the parse result."""

    source: str
    path: str | None
    result: Any


@dataclass(frozen=True)
class InputProblem:
    """A source that failed (`kind="failed"`: rc, timeout, not installed) or did not parse ("unparseable")."""

    source: str
    kind: str
    reason: str
    file: Optional[str] = None
    line_no: Optional[int] = None

    def __post_init__(self) -> None:
        if self.kind not in PROBLEM_KINDS:
            raise ValueError(f"input problem kind {self.kind!r} is not one of {', '.join(PROBLEM_KINDS)}")


@dataclass(frozen=True)
class InputStatus:
    """One row of the report's `inputs`: which file, read as which source, and how it went."""

    path: str
    source: Optional[str]
    status: str  # parsed | unparseable | failed | ignored | absent (not on the host: no problem)
    reason: str = ""

    def to_dict(self) -> dict:
        return {"path": self.path, "source": self.source, "status": self.status, "reason": self.reason}


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


def present(inputs, name: str) -> bool:
    """True when `inputs` holds a value for `name` (not None, not an empty Each)."""
    value = inputs.get(name)
    return value is not None and not (isinstance(value, Each) and not value.items)
