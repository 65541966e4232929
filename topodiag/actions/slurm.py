"""Marking a node offline and online in Slurm, as NHC does: `scontrol` only, under a timeout.

The rule (NHC's): topodiag drains a node with a reason that starts with `topodiag:`; it never
replaces a drain reason it did not set (an admin's "replacing PSU" stays), and it resumes a node only
when the node is drained with a `topodiag:` reason and the check now passes.
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


def parse_show_node(text: str, name: str) -> NodeState:
    """`scontrol show node NAME -o` (one line) -> NodeState."""
    line = next((ln for ln in text.splitlines() if f"NodeName={name}" in ln), text.strip())
    m = _STATE_RE.search(line)
    states = frozenset(m.group(1).upper().replace("*", "").split("+")) if m else frozenset()
    r = _REASON_RE.search(line)
    reason = r.group(1).strip() if r and r.group(1).strip() not in ("", "(null)", "none") else None
    return NodeState(name, states, reason)


def node_state(name: str) -> tuple[Optional[NodeState], str]:
    res = run(("scontrol", "show", "node", name, "-o"), TIMEOUT_S)
    if not res.ok:
        return None, res.reason or "scontrol failed"
    return parse_show_node(res.stdout, name), ""


def mark(name: str, failed: bool, reason: str) -> str:
    """Drain (failed) or resume (passed) the node by NHC's rule; returns what was done, one line."""
    state, error = node_state(name)
    if state is None:
        return f"topodiag: not marking {name}: {error}"
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
