"""Fan-out over the cluster: a command on every node of a node set, a bounded number at a time, each
under a timeout; every node comes back as its output or as the reason it has none (timed out, exit
status, no output, too much output), so no node is silently dropped.

    result = fan_out("gpu[001-128]", "topodiag check --format json", fanout=64, timeout_s=120)
    for node, text in result.outputs.items(): ...   # read from disk one node at a time
    result.close()                                  # removes the spooled outputs

The node set is ClusterShell's syntax, counted before it is expanded (actions/nodenames.py: at most
100,000 nodes) and every node name is checked to be a host name (no leading `-`, no shell or control
character) before anything runs: a usage error (FanOutError, usage=True) naming the bad entry.

Each node's command is an argv list, never a local shell line built from a node name:
- over ssh: `ssh -oForwardAgent=no -oForwardX11=no -oBatchMode=yes -oConnectTimeout=N -- NODE COMMAND`
  (`--`: the node can never be an option);
- `local=True`: `sh -c COMMAND` on this machine once per node, `%h` (or `%host`) in COMMAND standing
  for the node name quoted by shlex.quote, `%n` (`%rank`) for its position, `%%` for `%`: for tests,
  and for sites whose "remote" command is a launcher (`srun -N1 -w %h ...`, `kubectl exec %h ...`).
Each command runs in a session of its own; its whole process group is killed at its timeout, as soon
as the command itself exits (so nothing it started outlives it), and when topodiag is interrupted
(Ctrl-C, SIGTERM, SIGHUP: then it exits 128+N).

Output is streamed, never held whole: each node's stdout goes to a file of its own in a private
temporary directory as it arrives, at most MAX_OUTPUT bytes a node (64 MiB; past it the node's
command is killed and the node is a failure: a report is a few KB), its stderr only as its last
MAX_STDERR bytes (for the one line a failure shows). Memory holds the read buffers of the nodes
running, not nodes x output; `FanOut.outputs` reads a node's file when asked.
"""

from __future__ import annotations

import os
import re
import selectors
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Iterator, Optional

from ..live.commands import kill_group  # guarded: never a reaped pid (it may be another process group's now)

MAX_OUTPUT = 64 << 20  # bytes of stdout kept per node; past it the node's command is killed
MAX_STDERR = 4096  # the last bytes of stderr kept per node
READ_SIZE = 65536
_SUBST_RE = re.compile(r"%(%|host\b|h\b|rank\b|n\b)")


class FanOutError(Exception):
    """The fan-out could not start (ClusterShell missing, a node set that does not parse or is too
    big, a node name that is not a host name): one line. `usage` is true when the node set given is
    at fault (not the machine)."""

    def __init__(self, message: str, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


class Outputs(Mapping):
    """node -> its stdout (text), read from its spool file when asked: the outputs of 10,000 nodes
    are never in memory together."""

    def __init__(self) -> None:
        self._paths: dict[str, str] = {}

    def __getitem__(self, node: str) -> str:
        with open(self._paths[node], "rb") as f:
            return f.read().decode("utf-8", errors="replace").rstrip("\n")

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)

    def __repr__(self) -> str:
        return f"Outputs({sorted(self._paths)})"


@dataclass
class FanOut:
    nodes: list[str]
    outputs: Outputs = field(default_factory=Outputs)  # node -> stdout (a report was printed)
    failures: dict[str, str] = field(default_factory=dict)  # node -> why there is no report
    spool: Optional[str] = None  # the private directory holding the outputs

    def close(self) -> None:
        """Remove the spooled outputs (also done when the FanOut is collected)."""
        if self.spool:
            shutil.rmtree(self.spool, ignore_errors=True)
            self.spool = None


def substitute(command: str, node: str, rank: int) -> str:
    """`%h`/`%host` -> the node name, shell-quoted; `%n`/`%rank` -> its position; `%%` -> `%`."""
    def one(m: re.Match) -> str:
        what = m.group(1)
        if what == "%":
            return "%"
        return shlex.quote(node) if what in ("h", "host") else str(rank)

    return _SUBST_RE.sub(one, command)


def expand_nodes(nodes: str) -> list[str]:
    """The node names of a node set, counted before expanding and each checked (FanOutError)."""
    from .nodenames import NodeSetError, check_node_name, expand, shown

    try:
        names = expand(nodes, "--nodes")
    except ImportError:
        raise FanOutError("--nodes needs ClusterShell (pip install 'topodiag[fleet]' or ClusterShell); "
                          "or run `topodiag check --format json` with clush/srun and give the reports") from None
    except NodeSetError as exc:
        raise FanOutError(str(exc), usage=True) from None
    except Exception as exc:  # noqa: BLE001 -- ClusterShell's NodeSetParseError (and kin): one line
        from ..render.sanitise import line

        raise FanOutError(f"--nodes: {shown(nodes)} is not a node set ({line(exc, 200)})", usage=True) from None
    if not names:
        raise FanOutError(f"--nodes: {shown(nodes)} names no node", usage=True)
    for name in names:
        try:
            check_node_name(name)
        except NodeSetError as exc:
            raise FanOutError(f"--nodes: {exc}", usage=True) from None
    return names


def fan_out(nodes: str, command: str, *, fanout: int = 64, timeout_s: float = 120.0,
            connect_timeout_s: float = 10.0, local: bool = False, max_output: int = MAX_OUTPUT) -> FanOut:
    names = expand_nodes(nodes)
    spool = tempfile.mkdtemp(prefix="topodiag-fanout-")  # mode 0700: the outputs are private
    out = FanOut(nodes=names, spool=spool)
    weakref.finalize(out, shutil.rmtree, spool, True)
    jobs = deque()
    for rank, node in enumerate(names):
        if local:
            argv = ["/bin/sh", "-c", substitute(command, node, rank)]
        else:
            argv = ["ssh", "-oForwardAgent=no", "-oForwardX11=no", "-oBatchMode=yes",
                    f"-oConnectTimeout={max(1, int(connect_timeout_s))}", "--", node,
                    substitute(command, node, rank)]
        jobs.append((node, argv))
    _Runner(out, spool, max(1, fanout), timeout_s, local, max_output).run(jobs)
    return out


class _Job:
    __slots__ = ("node", "proc", "deadline", "open", "path", "file", "size", "blank", "err", "over",
                 "exited", "timed_out")

    def __init__(self, node: str, proc: subprocess.Popen, deadline: float, path: str, file) -> None:
        self.node, self.proc, self.deadline, self.path, self.file = node, proc, deadline, path, file
        self.open = 2
        self.size = 0
        self.blank = True
        self.err = b""
        self.over = False
        self.exited = False
        self.timed_out = False


def _on_signals() -> dict:
    """While nodes run: SIGTERM and SIGHUP end the fan-out as Ctrl-C does (every node's process group
    killed on the way out, then exit 128+N); the handlers before are given back after."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}

    def stop(signum, frame):  # noqa: ARG001
        raise SystemExit(128 + signum)

    old = {}
    for signum in (signal.SIGTERM, signal.SIGHUP):
        try:
            old[signum] = signal.signal(signum, stop)
        except (ValueError, OSError):
            pass
    return old


class _Runner:
    def __init__(self, out: FanOut, spool: str, fanout: int, timeout_s: float, local: bool, cap: int) -> None:
        self.out, self.spool, self.fanout, self.timeout_s, self.local, self.cap = out, spool, fanout, timeout_s, local, cap
        self.sel = selectors.DefaultSelector()
        self.running: dict[str, _Job] = {}

    def run(self, jobs: deque) -> None:
        old = _on_signals()
        try:
            while jobs or self.running:
                while jobs and len(self.running) < self.fanout:
                    self._start(*jobs.popleft())
                if not self.running:
                    continue
                wait = min(j.deadline for j in self.running.values()) - time.monotonic()
                for key, _ in self.sel.select(timeout=min(max(wait, 0.0), 0.2)):
                    self._read(key)
                for job in list(self.running.values()):
                    self._step(job)
        finally:
            for job in list(self.running.values()):  # an exception (KeyboardInterrupt): nothing left behind
                kill_group(job.proc)
                self._finish(job)
            self.sel.close()
            for signum, handler in old.items():
                signal.signal(signum, handler)

    def _start(self, node: str, argv: list) -> None:
        fd, path = tempfile.mkstemp(dir=self.spool, prefix="out-")
        file = os.fdopen(fd, "wb")
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            file.close()
            self.out.failures[node] = f"could not run the command: {exc.strerror or exc}"
            return
        job = _Job(node, proc, time.monotonic() + self.timeout_s, path, file)
        os.set_blocking(proc.stdout.fileno(), False)
        os.set_blocking(proc.stderr.fileno(), False)
        self.sel.register(proc.stdout, selectors.EVENT_READ, (job, "out"))
        self.sel.register(proc.stderr, selectors.EVENT_READ, (job, "err"))
        self.running[node] = job

    def _close(self, job: _Job, stream) -> None:
        try:
            self.sel.unregister(stream)
        except (KeyError, ValueError):
            return
        stream.close()
        job.open -= 1

    def _read(self, key) -> None:
        job, which = key.data
        try:
            data = os.read(key.fd, READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._close(job, key.fileobj)
            return
        if which == "err":
            job.err = (job.err + data)[-MAX_STDERR:]
            return
        if job.over:
            return
        if job.size + len(data) > self.cap:
            job.over = True
            kill_group(job.proc)
            return
        job.file.write(data)
        job.size += len(data)
        if job.blank and data.strip():
            job.blank = False

    def _step(self, job: _Job) -> None:
        if not job.exited:
            try:  # exited? (not reaped yet, so its process group id is still its own)
                info = os.waitid(os.P_PID, job.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                info = True
            if info is not None:
                job.exited = True
                kill_group(job.proc)  # what it started in the background goes with it
                job.proc.wait()
        if job.exited and job.open == 0:
            self._finish(job)
        elif time.monotonic() >= job.deadline:
            job.timed_out = not job.exited
            kill_group(job.proc)
            self._finish(job)

    def _finish(self, job: _Job) -> None:
        for stream in (job.proc.stdout, job.proc.stderr):
            self._close(job, stream)
        job.file.close()
        try:
            rc = job.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            rc = None
        self.running.pop(job.node, None)
        node = job.node
        last = job.err.decode("utf-8", errors="replace").strip().splitlines()[-1:] or [""]
        tail = f": {last[0][:200]}" if last[0] else ""
        if job.timed_out:
            self.out.failures[node] = f"no answer within {self.timeout_s:g} s (timed out)"
        elif job.over:
            cap = f"{self.cap >> 20} MiB" if self.cap >= 1 << 20 else f"{self.cap} bytes"
            self.out.failures[node] = f"more than {cap} of output (cut; a report is a few KB)"
        elif rc is None:
            self.out.failures[node] = "no exit status (could not run the command)"
        elif rc == 255 and not self.local:
            self.out.failures[node] = f"ssh failed (exit 255){tail}"
        elif job.blank:
            self.out.failures[node] = f"no output (exit {rc}){tail}"
        else:
            self.out.outputs._paths[node] = job.path  # topodiag check exits 1 or 3 with a report: kept
            return
        try:
            os.unlink(job.path)
        except OSError:
            pass
