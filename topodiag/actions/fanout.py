"""Fan-out over the cluster through ClusterShell (an engine admins already run, not a home-made one):
a command on every node of a node set, a bounded number at a time, each under a timeout; every node
comes back as its output or as the reason it has none (timed out, exit status, no output), so no
node is silently dropped.

    result = fan_out("gpu[001-128]", "topodiag check --format json", fanout=64, timeout_s=120)

`local=True` runs the command on this machine once per node name instead of over ssh (ClusterShell's
exec worker; `%h` in the command is the node name): for tests, and for sites whose "remote" command
is itself a launcher (`srun -w %h ...`, `kubectl exec %h ...`). ClusterShell is an optional
dependency (`pip install '.[fleet]'`).
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass, field


class FanOutError(Exception):
    """The fan-out could not start (ClusterShell missing, a node set that does not parse): one line.
    `usage` is true when the node set given is at fault (not the machine)."""

    def __init__(self, message: str, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass
class FanOut:
    nodes: list[str]
    outputs: dict[str, str] = field(default_factory=dict)  # node -> stdout (exit status 0)
    failures: dict[str, str] = field(default_factory=dict)  # node -> why there is no report


def fan_out(nodes: str, command: str, *, fanout: int = 64, timeout_s: float = 120.0,
            connect_timeout_s: float = 10.0, local: bool = False) -> FanOut:
    try:
        from ClusterShell.NodeSet import NodeSet, NodeSetParseError
        from ClusterShell.Task import task_self
    except ImportError:
        raise FanOutError("--nodes needs ClusterShell (pip install 'topodiag[fleet]' or ClusterShell); "
                          "or run `topodiag check --format json` with clush/srun and give the reports") from None
    try:
        nodeset = NodeSet(nodes)
    except NodeSetParseError as exc:
        raise FanOutError(f"--nodes: {nodes!r} is not a node set ({exc})", usage=True) from None
    if len(nodeset) == 0:
        raise FanOutError(f"--nodes: {nodes!r} names no node", usage=True)
    task = task_self()
    task.set_info("fanout", max(1, fanout))
    task.set_info("connect_timeout", connect_timeout_s)
    outer_timeout, killer = timeout_s, shutil.which("timeout") if local else None
    if killer:
        # ClusterShell kills only the process it started. coreutils' timeout puts the command in a
        # process group of its own and sends it SIGTERM at the timeout (SIGKILL to the command 2 s
        # later, but not to the rest of the group); once timeout is done, the whole group is killed, so
        # nothing the command started (a TERM-ignoring child, a background job) outlives it.
        supervised = (f"{killer} -k 2 {timeout_s:g} sh -c {shlex.quote(command)} </dev/null & p=$!; "
                      "wait $p; rc=$?; kill -9 -$p 2>/dev/null; exit $rc")
        command = f"sh -c {shlex.quote(supervised)}"
        outer_timeout = timeout_s + 5
    worker = task.shell(command, nodes=str(nodeset), remote=not local, timeout=outer_timeout, stderr=True)
    task.resume()
    out = FanOut(nodes=list(nodeset))
    stdout: dict[str, str] = {}
    for buf, keys in worker.iter_buffers():
        for node in keys:
            stdout[str(node)] = buf.message().decode("utf-8", errors="replace")
    stderr: dict[str, str] = {}
    for buf, keys in worker.iter_errors():
        for node in keys:
            stderr[str(node)] = buf.message().decode("utf-8", errors="replace")
    timed_out = {str(n) for n in worker.iter_keys_timeout()}
    rcs: dict[str, int] = {}
    for rc, keys in worker.iter_retcodes():
        for node in keys:
            rcs[str(node)] = rc
    for node in out.nodes:
        last = (stderr.get(node) or "").strip().splitlines()[-1:] or [""]
        if node in timed_out or (killer and rcs.get(node) == 124):
            out.failures[node] = f"no answer within {timeout_s:g} s (timed out)"
        elif node not in rcs:
            out.failures[node] = "no exit status (could not run the command)"
        elif rcs[node] == 255 and not local:
            out.failures[node] = f"ssh failed (exit 255){': ' + last[0][:200] if last[0] else ''}"
        elif not stdout.get(node, "").strip():
            out.failures[node] = f"no output (exit {rcs[node]}){': ' + last[0][:200] if last[0] else ''}"
        else:
            out.outputs[node] = stdout[node]  # topodiag check exits 1 or 3 with a report: kept
    return out
