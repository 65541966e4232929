"""What the engine reports: Severity, Evidence and Finding (frozen, JSON-ready), and the Hit a check yields.

A check says *what it saw* (a Hit: subjects, the values for the rule's message templates, which
message variant and notes fit, evidence, optionally a severity or expectation of its own); the
runner turns each Hit into a Finding by adding what the rule's TOML file says (code, slug,
severity, the wording of the variant and notes, why, fix). The sentences live in the TOML: a
check passes facts (ids, numbers, short lists) and names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Optional


class Severity(IntEnum):
    """Ordered: info < warning < error < critical (so `severity >= fail_on` works)."""

    INFO = 1
    WARNING = 2
    ERROR = 3
    CRITICAL = 4

    @classmethod
    def parse(cls, value: "str | int | Severity") -> "Severity":
        """`"error"` / `"ERROR"` / `3` / Severity.ERROR -> Severity.ERROR; ValueError otherwise."""
        if isinstance(value, Severity):
            return value
        if isinstance(value, str):
            try:
                return cls[value.strip().upper()]
            except KeyError:
                raise ValueError(f"unknown severity {value!r}; one of: {', '.join(names())}") from None
        if isinstance(value, int) and not isinstance(value, bool):
            return cls(value)
        raise ValueError(f"unknown severity {value!r}; one of: {', '.join(names())}")

    def __str__(self) -> str:
        return self.name.lower()


# What a node needs from its operator for a finding, as data a scheduler or a ticket system can act on
# (each rule's TOML says which: `action`, checked against this list by the catalog loader). The
# words are stable: the JSON report (schema 3 and later) and the Slurm drain reason carry them.
ACTIONS: Mapping[str, str] = MappingProxyType({
    "none": "no node action: a configuration to change, or information",
    "rerun": "run the check (or the job, the test) again: a transient or incomplete result",
    "reset-gpu": "reset the GPU (nvidia-smi -r) with no job on it",
    "reboot": "reboot the node (reloads the driver, firmware state, kernel and BIOS settings)",
    "reseat-cable": "reseat or replace the cable or transceiver (the link's two ends)",
    "service-ticket": "open a service ticket: hardware to repair or replace",
})
DEFAULT_ACTION = "none"


def names() -> list[str]:
    """Severity names as the TOML files, the CLI and the JSON report spell them, lowest first."""
    return [s.name.lower() for s in Severity]


@dataclass(frozen=True)
class Evidence:
    """Where a fact came from: a source name, the file it was read from, and a 1-based line (or None)."""

    source: str
    file: Optional[str] = None
    line_no: Optional[int] = None

    @classmethod
    def coerce(cls, value: "Evidence | Mapping[str, Any]") -> "Evidence":
        """Accept an Evidence or a `{source, file, line_no}` dict (the model's `sources` entries)."""
        if isinstance(value, Evidence):
            return value
        if isinstance(value, Mapping):
            return cls(source=str(value.get("source", "")), file=value.get("file"), line_no=value.get("line_no"))
        raise TypeError(f"evidence must be Evidence or a mapping, not {type(value).__name__}")

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "file": self.file, "line_no": self.line_no}


def _evidence_tuple(items: Iterable[Any]) -> tuple[Evidence, ...]:
    if items.__class__ is tuple and all(e.__class__ is Evidence for e in items):  # (made so already: as is)
        return items  # type: ignore[return-value]
    if isinstance(items, (Evidence, Mapping)):
        items = (items,)
    return tuple(Evidence.coerce(e) for e in items)


def _subjects_tuple(items: Any) -> tuple[str, ...]:
    if items.__class__ is tuple and all(x.__class__ is str for x in items):  # (made so already: as is)
        return items
    if isinstance(items, str):
        return (items,)
    return tuple(str(s) for s in items)


@dataclass(frozen=True)
class Finding:
    """One thing the checklist found, ready for a report. `subjects` are model node ids."""

    code: str
    slug: str
    severity: Severity
    subjects: tuple[str, ...]
    message: str
    evidence: tuple[Evidence, ...] = ()
    why: str = ""
    fix: str = ""
    expectation: Optional[str] = None
    count: int = 1  # > 1: this finding stands for `count` findings of its rule on one input (aggregate.py)
    instances: tuple[Mapping[str, Any], ...] = ()  # then the first of them (message, subjects, line), bounded
    # the values the check gave its message (hit(**values)), for renderers that draw them (the html
    # report's expectation line): not part of the JSON report, whose message already says them
    values: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    action: str = DEFAULT_ACTION  # one of ACTIONS: what the node needs (the rule's `action`)
    # what was seen, short (the rule's `observed` template over the values: "mlx5_0 port 1 Down/Polling"),
    # for the Slurm drain reason; "" when the rule has none. Not in the JSON report (the message says it).
    observed: str = field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity.parse(self.severity))
        object.__setattr__(self, "subjects", _subjects_tuple(self.subjects))
        object.__setattr__(self, "evidence", _evidence_tuple(self.evidence))

    def to_dict(self) -> dict[str, Any]:
        """The JSON report's form of a finding (severity by name)."""
        return {
            "code": self.code,
            "slug": self.slug,
            "severity": str(self.severity),
            "subjects": list(self.subjects),
            "message": self.message,
            "evidence": [e.to_dict() for e in self.evidence],
            "why": self.why,
            "fix": self.fix,
            "expectation": self.expectation,
            "action": self.action,
            **({"count": self.count, "instances": [dict(i) for i in self.instances]} if self.count > 1 else {}),
        }


@dataclass(frozen=True)
class Hit:
    """What a check yields: the runner adds the rule's code, slug, why and fix and formats the message.

    `variant` names the rule's message template (`default`: the rule's `message`; any other name:
    an entry of its `[messages]` table); `notes` name further `[messages]` entries, each formatted
    with the same values and put, in order, where the variant writes `{notes}`. `values` fill the
    templates (together with the rule's params); `severity` overrides the rule's default for this one
    hit (e.g. asymmetry that is by design is only info); `expectation` names what "right" was taken
    from (a profile, the best peer on the host...).
    """

    subjects: tuple[str, ...] = ()
    values: Mapping[str, Any] = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()
    severity: Optional[Severity] = None
    expectation: Optional[str] = None
    variant: str = "default"
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "subjects", _subjects_tuple(self.subjects))
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))
        object.__setattr__(self, "evidence", _evidence_tuple(self.evidence))
        if self.severity is not None:
            object.__setattr__(self, "severity", Severity.parse(self.severity))
        if not isinstance(self.variant, str) or not self.variant:
            raise TypeError(f"a hit's variant is a message name, not {self.variant!r}")
        notes = (self.notes,) if isinstance(self.notes, str) else tuple(self.notes)
        if not all(isinstance(n, str) and n for n in notes):
            raise TypeError(f"a hit's notes are message names, not {self.notes!r}")
        object.__setattr__(self, "notes", notes)


def hit(
    subjects: Any = (),
    *,
    evidence: Iterable[Any] = (),
    severity: "Severity | str | None" = None,
    expectation: Optional[str] = None,
    variant: str = "default",
    notes: Iterable[str] = (),
    **values: Any,
) -> Hit:
    """Shorthand for checks: `yield hit(["gpu:0", "gpu:1"], path="SYS", ratio=7.0, evidence=e)`;
    `variant="cut"` picks the rule's `[messages]` entry `cut`, `notes=when(slow=..., far=...)` adds
    the entries whose flag is true."""
    return Hit(subjects=subjects, values=values, evidence=evidence, severity=severity, expectation=expectation,
               variant=variant, notes=tuple(notes))


def when(**flags: Any) -> tuple[str, ...]:
    """The names whose flag is true, in the order given: `notes=when(truncated=g.truncated, lost=n > 0)`.

    Written with the names as keywords, so the catalog test can read every note a check may ask for."""
    return tuple(name for name, on in flags.items() if on)
