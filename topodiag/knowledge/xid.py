"""NVIDIA Xid codes and NVSwitch SXids: what each means and how grave it is (data: xid.toml).

The grade is topodiag's reading of the catalogue's action for a cluster node: "app" (the job's own
error: the GPU is fine), "watch" (the GPU is healthy but degrading or recovering by itself), "reset"
(the GPU needs a reset or the node a reboot before the next job), "lost" (the GPU is gone from the bus
or unusable: drain and service it). An Xid not in the table is "unknown": the finding says to look it up.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from ._data import table

_T = table("xid")

# code -> (grade, short name)
XIDS: Mapping[int, tuple[str, str]] = MappingProxyType({
    int(code): (row["grade"], row["name"]) for code, row in _T["xid"]["codes"].items()})

GRADE_ORDER: tuple[str, ...] = tuple(_T["xid"]["grade_order"])

# Recorded now, applied at the GPU's next reset (a pending row remap): a job started before that reset
# runs on the row that failed. After a reset (or a driver reload) the event is history.
PENDING_UNTIL_RESET = frozenset(_T["xid"]["pending_until_reset"])


def blocks_job(xid: int, action: "str | None" = None) -> bool:
    """Whether this Xid, seen since the GPU's last reset, means the GPU must not take a new job: the
    catalogue's "reset" and "lost" grades, a pending row remap (PENDING_UNTIL_RESET), and Xid 154 by the
    action it names ("GPU Reset Required", "Node Reboot Required", "Drain P2P"...: yes; "None": no;
    an action the line does not say: yes, as its grade)."""
    if xid == 154 and action is not None:
        return action.strip().lower() != "none"
    return grade(xid) in ("reset", "lost") or xid in PENDING_UNTIL_RESET


def grade(xid: int) -> str:
    return XIDS.get(xid, ("unknown", ""))[0]


def name(xid: int) -> str:
    return XIDS.get(xid, ("unknown", "not in topodiag's table: see NVIDIA's Xid catalogue"))[1]


# SXids: most lines say their own gravity ("N, Fatal, ..." / "N, Non-fatal, ..."); a line that prints only
# "N, Data {...}" is graded by the code: the single-bit ECC SXids the switch corrects by itself are
# "correctable"; the others "unknown". Grades: fatal > nonfatal > unknown > correctable.
SXID_CORRECTABLE = frozenset(_T["sxid"]["correctable"])
SXID_STALLING = frozenset(_T["sxid"]["stalling"])
SXID_NAMES: Mapping[int, str] = MappingProxyType({
    **{int(c): row["name"] for c, row in _T["sxid"]["names"].items()},
    **{c: _T["sxid"]["correctable_name"]["name"] for c in sorted(SXID_CORRECTABLE)},
})
SXID_GRADE_ORDER: tuple[str, ...] = tuple(_T["sxid"]["grade_order"])


def sxid_grade(sxid: int, text: str) -> str:
    """The gravity of one SXid line: its own word ("Fatal" / "Non-fatal") when it prints one, else by the code."""
    if sxid in SXID_STALLING:
        return "fatal"
    after = text.split(f"): {sxid},", 1)[1][:24].strip().lower() if f"): {sxid}," in text else ""
    if after.startswith(("non-fatal", "nonfatal", "non fatal")):
        return "correctable" if sxid in SXID_CORRECTABLE else "nonfatal"
    if after.startswith("fatal"):
        return "fatal"
    return "correctable" if sxid in SXID_CORRECTABLE else "unknown"


def sxid_name(sxid: int) -> str:
    return SXID_NAMES.get(sxid, "see the SXid tables of NVIDIA's Fabric Manager user guide")
