"""Marking a node offline and online in Slurm, as NHC does: `scontrol` only, under a timeout.

The rule (NHC's): topodiag drains a node with a reason that starts with `topodiag:`; it never
replaces a drain reason it did not set (an admin's "replacing PSU" stays), and it resumes a node only
when the node is drained with a `topodiag:` reason and the check now passes.

A node whose state cannot be read (scontrol failed, timed out, printed nothing, or printed no
`NodeName=NAME ... State=...` line) is in an unknown state: it is neither drained nor resumed on
an assumption, and one line says so. Every scontrol call is under the run's --deadline
(live.commands.session). The drain reason is one line of printable text, at most 200 characters.

Slurm runs a prolog with an empty PATH: `scontrol` and `sinfo` are looked for, in order, where
`--scontrol PATH` (or the site config's `[slurm] scontrol`, `sinfo`) says, then on PATH, then in the
standard install places (BIN_DIRS: /usr/bin, /usr/local/bin, /opt/slurm/bin, /usr/local/slurm/bin,
/opt/slurm/current/bin, /usr/slurm/bin, /bin; the site config's `bin_dirs` first, and the
environment variable TOPODIAG_SLURM_BIN_DIRS, a colon-separated list, instead of the built-in one).
sinfo is looked for beside the scontrol found first. A new drain is also bounded by the drain limit
(actions/drain_limit.py): above it, the node is reported, not drained.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from typing import Optional

from ..live.commands import run
from .drain_limit import Limit, decide

PREFIX = "topodiag:"
BIN_DIRS = ("/usr/bin", "/usr/local/bin", "/opt/slurm/bin", "/usr/local/slurm/bin", "/opt/slurm/current/bin",
            "/usr/slurm/bin", "/bin")
BIN_DIRS_ENV = "TOPODIAG_SLURM_BIN_DIRS"
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


@dataclass(frozen=True)
class Tools:
    """Where scontrol and sinfo are (absolute paths; None: not found), and what was searched."""

    scontrol: Optional[str]
    sinfo: Optional[str]
    searched: str = ""


def bin_dirs(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The folders searched after PATH: the site config's first, then TOPODIAG_SLURM_BIN_DIRS (a
    colon-separated list) when set, else BIN_DIRS."""
    env = os.environ.get(BIN_DIRS_ENV)
    base = tuple(d for d in env.split(":") if d) if env is not None else BIN_DIRS
    return tuple(dict.fromkeys(tuple(extra) + base))


def _executable(path: Optional[str]) -> bool:
    return bool(path) and os.path.isabs(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def _find(name: str, first: Optional[str], dirs: tuple[str, ...]) -> Optional[str]:
    """`name` in `first`, then in PATH's absolute folders (an empty or relative entry, the current
    folder, is never searched), then in `dirs`."""
    path = tuple(d for d in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(d))
    for d in ((first,) if first else ()) + path + dirs:
        if _executable(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


def find_tools(scontrol: Optional[str] = None, sinfo: Optional[str] = None,
               dirs: tuple[str, ...] = ()) -> Tools:
    """scontrol and sinfo: the paths given (each must be an executable file: else None, never
    another), else PATH, else the standard places; sinfo first beside the scontrol found."""
    where = bin_dirs(dirs)
    searched = f"{scontrol}: not an executable file" if scontrol and not _executable(scontrol) else \
        f"PATH, {', '.join(where)}"
    sc = (scontrol if _executable(scontrol) else None) if scontrol else _find("scontrol", None, where)
    si = (sinfo if _executable(sinfo) else None) if sinfo else _find("sinfo", os.path.dirname(sc) if sc else None, where)
    return Tools(sc, si, searched)


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


def node_state(name: str, scontrol: str = "scontrol") -> tuple[Optional[NodeState], str]:
    res = run((scontrol, "show", "node", name, "-o"), TIMEOUT_S)
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


def mark(name: str, failed: bool, reason: str, tools: Optional[Tools] = None, limit: Limit = Limit()) -> str:
    """Drain (failed) or resume (passed) the node by NHC's rule; returns what was done, one line.
    A node whose state cannot be read is left as it is (never drained on an assumption); a new
    drain past the drain limit is reported, not done."""
    return mark_node(name, failed, reason, tools, limit)[0]


def mark_node(name: str, failed: bool, reason: str, tools: Optional[Tools] = None,
              limit: Limit = Limit()) -> tuple[str, bool]:
    """`mark`'s line, and whether a drain was held back by the drain limit (or because it could not
    be checked): the prolog then lets the job run, since Slurm drains a node whose prolog fails."""
    line = _mark(name, failed, reason, tools, limit)
    return line, line.startswith(f"topodiag: not draining {clean_reason(name)}: {LIMITED}")


LIMITED = "the drain limit"  # how each line of a drain held back by the limit goes on after the node's name


def _mark(name: str, failed: bool, reason: str, tools: Optional[Tools], limit: Limit) -> str:
    name = clean_reason(name)
    reason = clean_reason(reason)[:200]
    tools = tools or find_tools()
    doing = "draining" if failed else "resuming"
    if tools.scontrol is None:
        return f"topodiag: not {doing} {name}: scontrol not found (searched {tools.searched}; give --scontrol PATH)"
    state, error = node_state(name, tools.scontrol)
    if state is None:
        return f"topodiag: not {doing} {name}: {error}; left as it is"
    if failed:
        return _drain(name, reason, state, tools, limit)
    if state.offline and state.ours:
        res = run((tools.scontrol, "update", f"nodename={name}", "state=resume"), TIMEOUT_S)
        return f"topodiag: resumed {name} (drained by topodiag, the check now passes)" if res.ok else \
            f"topodiag: could not resume {name}: {res.reason}"
    return ""


def _drain(name: str, reason: str, state: NodeState, tools: Tools, limit: Limit) -> str:
    if state.offline and not state.ours:
        return (f"topodiag: {name} is already {'+'.join(sorted(state.states))} with a reason topodiag did not "
                f"set ({state.reason or 'none'}): left as it is")
    if state.offline and state.reason == reason:
        return f"topodiag: {name} already drained for this reason"
    counted = ""
    if not (state.offline and state.ours):  # a new drain: within the limit only
        decision = decide(name, limit, tools.sinfo, PREFIX, _sinfo_runner(tools.sinfo))
        if not decision.drain:
            return f"topodiag: not draining {name}: {LIMITED}: {decision.said}; reporting only ({reason})"
        counted = f" ({decision.said})"
    res = run((tools.scontrol, "update", f"nodename={name}", "state=drain", f"reason={reason}"), TIMEOUT_S)
    return f"topodiag: drained {name}{counted}" if res.ok else f"topodiag: could not drain {name}: {res.reason}"


def _sinfo_runner(sinfo: Optional[str]):
    def run_sinfo(tail: tuple[str, ...]) -> tuple[bool, str, str]:
        res = run((sinfo or "sinfo", *tail), TIMEOUT_S)
        return res.ok, res.stdout, res.reason or ("timed out" if res.timed_out else "failed")
    return run_sinfo
