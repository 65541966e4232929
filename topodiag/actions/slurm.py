"""Marking a node offline and online in Slurm, as NHC does: `scontrol` only, under a timeout.

The rule (NHC's): topodiag drains a node with a reason that starts with `topodiag:`; it never
replaces a drain reason it did not set (an admin's "replacing PSU" stays), and it resumes a node only
when the node is drained with a `topodiag:` reason and the check now passes.

A node whose state cannot be read (scontrol failed, timed out, printed nothing, or printed no
`NodeName=NAME ... State=...` line) is in an unknown state: it is neither drained nor resumed on
an assumption, and one line says so. Every scontrol call is under the run's --deadline
(live.commands.session). The drain reason is one line of printable text, at most 200 characters.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from typing import Optional

from ..live.commands import run

PREFIX = "topodiag:"
TIMEOUT_S = 10.0
MAX_LINE = 64 * 1024  # a node's line is a few hundred characters: the regexes never see more than this
_STATE_RE = re.compile(r"(?:^|\s)State=(\S+)")
_REASON_RE = re.compile(r"(?:^|\s)Reason=(.*?)(?:\s\[[^\]]*@[^\]]*\])?(?=\s\w+=|$)")


@dataclass(frozen=True)
class NodeState:
    name: str
    states: frozenset[str]  # IDLE, ALLOCATED, DRAIN, DOWN ... (State=IDLE+DRAIN)
    reason: Optional[str]

    @property
    def offline(self) -> bool:
        return bool(self.states & {"DRAIN", "DRAINED", "DRAINING", "DOWN", "FAIL"})

    @property
    def ours(self) -> bool:
        return self.reason is not None and self.reason.startswith(PREFIX)


def node_name() -> str:
    """The Slurm node name: SLURMD_NODENAME in a prolog, else the short host name."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def parse_show_node(text: str, name: str) -> Optional[NodeState]:
    """`scontrol show node NAME -o` (one line) -> NodeState; None when no line is that node's with a
    State= (garbage, an empty output, another node's line): its state is unknown."""
    line = next((ln for ln in text.splitlines() if re.search(rf"(?:^|\s)NodeName={re.escape(name)}(?:\s|$)", ln)),
                None)
    line = line[:MAX_LINE] if line is not None else None
    m = _STATE_RE.search(line) if line is not None else None
    if m is None:
        return None
    states = frozenset(m.group(1).upper().replace("*", "").split("+"))
    r = _REASON_RE.search(line)
    reason = r.group(1).strip() if r and r.group(1).strip() not in ("", "(null)", "none") else None
    return NodeState(name, states, reason)


def node_state(name: str) -> tuple[Optional[NodeState], str]:
    res = run(("scontrol", "show", "node", name, "-o"), TIMEOUT_S)
    if not res.ok:
        return None, f"its state is unknown (scontrol show node: {res.reason or 'scontrol failed'})"
    state = parse_show_node(res.stdout, name)
    if state is None:
        shown = clean_reason(res.stdout)[:80] or "nothing"
        return None, f"its state is unknown (scontrol show node printed no NodeName={name} line with a State=: {shown})"
    return state, ""


_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def clean_reason(text: str) -> str:
    """One line of printable text (control characters, escape sequences and newlines become spaces)."""
    return " ".join(_UNPRINTABLE.sub(" ", text).split())


def mark(name: str, failed: bool, reason: str) -> str:
    """Drain (failed) or resume (passed) the node by NHC's rule; returns what was done, one line.
    A node whose state cannot be read is left as it is (never drained on an assumption)."""
    name = clean_reason(name)
    reason = clean_reason(reason)
    state, error = node_state(name)
    if state is None:
        return f"topodiag: not {'draining' if failed else 'resuming'} {name}: {error}; left as it is"
    if failed:
        if state.offline and not state.ours:
            return (f"topodiag: {name} is already {'+'.join(sorted(state.states))} with a reason topodiag did not "
                    f"set ({state.reason or 'none'}): left as it is")
        if state.offline and state.reason == reason[:200]:
            return f"topodiag: {name} already drained for this reason"
        res = run(("scontrol", "update", f"nodename={name}", "state=drain", f"reason={reason[:200]}"), TIMEOUT_S)
        return f"topodiag: drained {name}" if res.ok else f"topodiag: could not drain {name}: {res.reason}"
    if state.offline and state.ours:
        res = run(("scontrol", "update", f"nodename={name}", "state=resume"), TIMEOUT_S)
        return f"topodiag: resumed {name} (drained by topodiag, the check now passes)" if res.ok else \
            f"topodiag: could not resume {name}: {res.reason}"
    return ""
