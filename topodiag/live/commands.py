"""Running a tool: an argv list (never a shell), LC_ALL=C, a timeout, and a record of what happened.

A failed tool is a record (rc, stderr, duration, timed_out, reason), never an exception: a tool
that is not installed, that exits non-zero, or that hangs (nvidia-smi can hang for minutes on a
wedged GPU) all come back as a CommandResult.

Bounds: stdout is read in chunks as it comes and cut at MAX_OUTPUT_BYTES (the tool is killed there:
`truncated`), stderr kept up to MAX_STDERR_BYTES. Every tool is its own session and process group,
killed (SIGKILL to the group) when the tool ends, times out or is cut, so a child that keeps the pipe
open neither holds the result nor outlives it. A `session` (what each live command runs in) puts one
deadline over every command run inside it (a command with no time left is not started: `skipped`),
and kills every tool's group on SIGTERM/SIGINT/SIGHUP before exiting 128+N; atexit does the same for
whatever still runs when the interpreter exits.

nvidia-smi's documented return codes (nvidia-smi(1), RETURN VALUE) become reasons a person can act
on; other tools' non-zero codes are reported with their last stderr line.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import selectors
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

MAX_OUTPUT_BYTES = 64 * 1024 * 1024  # a tool printing more than this is killed and cut (and says so)
MAX_STDERR_BYTES = 1024 * 1024  # stderr is kept up to this (read on, so the tool never blocks on it)
CHUNK_BYTES = 256 * 1024
MIN_START_S = 0.01  # less time left than this: the command is not started

NVIDIA_SMI_RETURN_CODES = {
    2: "a supplied argument or flag is invalid",
    3: "the requested operation is not available on the target device",
    4: "the current user does not have permission to access this device or perform this operation",
    6: "a query to find an object was unsuccessful",
    8: "a device's external power cables are not properly attached",
    9: "the NVIDIA driver is not loaded",
    10: "the NVIDIA kernel driver detected an interrupt issue with a GPU",
    12: "the NVML shared library could not be found or loaded",
    13: "the local version of NVML does not implement this function",
    14: "the infoROM is corrupted",
    15: "a GPU has fallen off the bus or has otherwise become inaccessible",
    255: "other error or internal driver error",
}
# Return codes that say something about the hardware itself, not about the tool or its use.
NVIDIA_SMI_HARDWARE_CODES = (8, 10, 14, 15)


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    rc: Optional[int]  # None: never ran (not installed) or killed at its timeout
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    not_found: bool = False
    reason: str = ""  # why it failed, for a person; "" when rc is 0
    truncated: bool = False  # its output passed MAX_OUTPUT_BYTES: killed, stdout cut there
    skipped: bool = False  # not started: no time left before the deadline (timed_out is set too)

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out and not self.truncated


# The process groups of the tools running now (each tool is its own session: pgid == pid), killed on
# every way out of topodiag: the end of a `session`, a SIGTERM/SIGINT/SIGHUP (`session`'s handlers),
# and interpreter exit (atexit).
_GROUPS: set[int] = set()
_LOCK = threading.RLock()  # re-entrant: a signal handler in the main thread may interrupt a holder
_RUN_DEADLINE: list[float] = []  # the innermost `session`'s deadline (time.monotonic()), every command's bound
HANDLED_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, n))


def kill_all() -> None:
    """SIGKILL the process group of every tool still running."""
    with _LOCK:
        groups = list(_GROUPS)
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass


atexit.register(kill_all)


# A signal that comes while the main thread is starting a tool (between the fork and the group's
# registration) waits for the registration: handled there, the new tool's group would be missed.
_SPAWNING: list[bool] = [False]
_PENDING: list[int] = []


def _on_signal(signum, frame) -> None:
    if _SPAWNING[0]:
        _PENDING.append(signum)
        return
    kill_all()
    raise SystemExit(128 + signum)  # the shell's convention: 143 SIGTERM, 130 SIGINT, 129 SIGHUP


def _spawn(argv: list, env: dict) -> subprocess.Popen:
    """Start a tool in its own session and register its group before any signal is handled.

    On Linux the tool is also told to die with topodiag: PR_SET_PDEATHSIG(SIGKILL), set in the child
    before exec, so a topodiag that is SIGKILLed (timeout -s KILL, Slurm's PrologEpilogTimeout, the
    OOM killer: no handler or atexit runs) leaves no tool behind; a child whose parent died before
    the call kills itself. (The signal follows the thread that started the tool; each thread waits
    for the tools it starts.) The preexec calls only a libc function resolved here, before fork."""
    import sys

    preexec = None
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            prctl = ctypes.CDLL(None, use_errno=True).prctl
            parent = os.getpid()

            def preexec() -> None:
                prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
                if os.getppid() != parent:  # topodiag died before the call: nobody would reap us
                    os.kill(os.getpid(), signal.SIGKILL)
        except (OSError, AttributeError):
            preexec = None
    main = threading.current_thread() is threading.main_thread()
    try:
        with _LOCK:  # a handler in the main thread waits for a worker's registration here (kill_all)
            if main:
                _SPAWNING[0] = True
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env, start_new_session=True,
                                        preexec_fn=preexec)
                _GROUPS.add(proc.pid)
            finally:
                if main:
                    _SPAWNING[0] = False
    finally:
        if main and _PENDING:
            _on_signal(_PENDING.pop(), None)
    return proc


@contextlib.contextmanager
def session(deadline_s: Optional[float] = None) -> Iterator[None]:
    """One command's run of tools: every `run` inside is bounded by `deadline_s` from now (a command
    with no time left is not started), and a SIGTERM, SIGINT or SIGHUP kills every tool's process
    group, then exits 128+N. On the way out the previous handlers come back and what is still running
    is killed. Signal handlers are set only from the main thread."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in HANDLED_SIGNALS:
            try:
                previous[sig] = signal.signal(sig, _on_signal)
            except (OSError, ValueError):
                pass
    _RUN_DEADLINE.append(time.monotonic() + deadline_s if deadline_s is not None else math.inf)
    try:
        yield
    finally:
        _RUN_DEADLINE.pop()
        kill_all()
        for sig, handler in previous.items():
            try:
                signal.signal(sig, handler)
            except (OSError, ValueError, TypeError):
                pass


def time_left() -> Optional[float]:
    """Seconds left before the current session's deadline (None: no session or no deadline)."""
    if not _RUN_DEADLINE or not math.isfinite(_RUN_DEADLINE[-1]):
        return None
    return max(_RUN_DEADLINE[-1] - time.monotonic(), 0.0)


def run(argv: Sequence[str], timeout_s: float, env: Optional[dict] = None,
        deadline: Optional[float] = None) -> CommandResult:
    """Run argv with LC_ALL=C under a timeout; never raises for the tool's own failures.

    The timeout is min(timeout_s, the time left before `deadline` (time.monotonic()), the time left
    of the run's deadline (`session`)); a command with no time left is not started (a record
    saying so). Its stdout is read as it comes, up to MAX_OUTPUT_BYTES (stderr up to
    MAX_STDERR_BYTES): past that the tool is killed and the record says the output was cut. It runs
    in its own process group, which is killed when the tool ends, times out or is cut (a tool's
    children that keep its pipes open do not outlive it), and when topodiag exits or is killed."""
    argv = tuple(argv)
    exe = shutil.which(argv[0], path=(env or os.environ).get("PATH")) if argv else None
    if exe is None:
        return CommandResult(argv, None, "", "", 0.0, not_found=True,
                             reason=f"{argv[0] if argv else '(nothing)'} is not installed (not on PATH)")
    limit, why = _limit(timeout_s, deadline)
    if limit <= MIN_START_S:
        return CommandResult(argv, None, "", "", 0.0, timed_out=True, skipped=True,
                             reason=f"not started: no time left before the {why}")
    child_env = dict(os.environ if env is None else env)
    child_env["LC_ALL"] = "C"
    start = time.monotonic()
    try:
        proc = _spawn([exe, *argv[1:]], child_env)
    except OSError as exc:
        return CommandResult(argv, None, "", "", time.monotonic() - start,
                             reason=f"{argv[0]} could not be started: {exc.strerror or exc}")
    try:
        out, err, ended = _pump(proc, start + limit)
    finally:
        kill_group(proc)  # whatever it left behind (a child holding the pipe), on every path
        with _LOCK:
            _GROUPS.discard(proc.pid)  # before the reaping frees its pid for another process
        _reap(proc)
    duration = time.monotonic() - start
    stdout, stderr = _text(out), _text(err)
    if ended == "cut":
        return CommandResult(argv, None, stdout, stderr, duration, truncated=True,
                             reason=f"its output passed {_size(MAX_OUTPUT_BYTES)}: killed and cut there")
    if ended == "timeout":
        return CommandResult(argv, None, stdout, stderr, duration, timed_out=True,
                             reason=f"no result within its {limit:.3g} s {why} (killed)")
    reason = "" if proc.returncode == 0 else failure_reason(argv, proc.returncode, stderr)
    return CommandResult(argv, proc.returncode, stdout, stderr, duration, reason=reason)


def _limit(timeout_s: float, deadline: Optional[float]) -> tuple[float, str]:
    """The seconds a command may run, and what bounds it (for the reason)."""
    now = time.monotonic()
    limit, why = float(timeout_s), "timeout"
    if not math.isfinite(limit) or limit < 0:
        limit = 0.0
    for at, name in ((deadline, "collection's deadline"), (_RUN_DEADLINE[-1] if _RUN_DEADLINE else None,
                                                            "--deadline")):
        if at is not None and at - now < limit:
            limit, why = max(at - now, 0.0), name
    return limit, why


def _pump(proc: subprocess.Popen, until: float) -> tuple[bytearray, bytearray, str]:
    """Read the child's stdout and stderr as they come until both close, the child exits, `until`
    passes ("timeout") or stdout passes MAX_OUTPUT_BYTES ("cut"). Returns (out, err, how it ended)."""
    out, err = bytearray(), bytearray()
    caps = {proc.stdout: (out, MAX_OUTPUT_BYTES), proc.stderr: (err, MAX_STDERR_BYTES)}
    sel = selectors.DefaultSelector()
    try:
        for pipe in caps:
            os.set_blocking(pipe.fileno(), False)
            sel.register(pipe, selectors.EVENT_READ)
        ended = ""
        exited_at: Optional[float] = None
        while sel.get_map():
            now = time.monotonic()
            if now >= until:
                ended = "timeout"
                break
            if exited_at is None and _exited(proc):
                exited_at = now
                kill_group(proc)  # the tool is done: what it left holding the pipes goes, the pipes close
            wait = min(until - now, 0.05 if exited_at is None else 0.01)
            if exited_at is not None and now - exited_at > 1.0:
                break  # a pipe held by a process outside the group (it left it): stop reading
            for key, _ in sel.select(wait):
                buf, cap = caps[key.fileobj]
                try:
                    chunk = os.read(key.fd, CHUNK_BYTES)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                room = cap + 1 - len(buf)
                if room > 0:
                    buf += chunk[:room]
                if len(out) > MAX_OUTPUT_BYTES:
                    del out[MAX_OUTPUT_BYTES:]
                    ended = "cut"
                    break
            if ended:
                break
        while not ended and not _exited(proc):  # its pipes are closed; the tool itself may not be done
            if time.monotonic() >= until:
                ended = "timeout"
            else:
                time.sleep(0.01)
        if len(err) > MAX_STDERR_BYTES:
            del err[MAX_STDERR_BYTES:]
        return out, err, ended  # bytearrays: no copy
    finally:
        sel.close()
        for pipe in caps:
            try:
                pipe.close()
            except OSError:
                pass


def failure_reason(argv: Sequence[str], rc: int, stderr: str) -> str:
    """One line: what a non-zero exit means (nvidia-smi's documented codes), with the tool's words."""
    name = os.path.basename(argv[0]) if argv else "tool"
    last = next((ln.strip() for ln in reversed(stderr.splitlines()) if ln.strip()), "")
    if rc < 0:
        meaning = f"killed by signal {-rc}"
    elif name == "nvidia-smi" and rc in NVIDIA_SMI_RETURN_CODES:
        meaning = NVIDIA_SMI_RETURN_CODES[rc]
    else:
        meaning = "failed"
    text = f"{name} exit {rc}: {meaning}"
    return f"{text} ({last[:200]})" if last and last.lower() not in meaning.lower() else text


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the tool's process group (it is its own session: pgid == pid). The group's id is not
    reused while any member lives, and the leader is not reaped before this, so it is the tool's."""
    if proc.returncode is not None:
        return  # reaped: its pid may be another's now
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        if proc.returncode is None:
            try:
                proc.kill()
            except OSError:
                pass


def _exited(proc: subprocess.Popen) -> bool:
    """Whether the tool has ended, without reaping it (its pid, the group's id, stays its own)."""
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return proc.poll() is not None
    except AttributeError:  # no waitid (not Linux/BSD): reaping is the only way to know
        return proc.poll() is not None


def _reap(proc: subprocess.Popen) -> None:
    try:
        proc.wait(timeout=5)
    except (subprocess.TimeoutExpired, OSError):
        pass


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MB" if n >= 1024 * 1024 else f"{n} bytes"


def _text(data: Optional[bytes | bytearray]) -> str:
    data = data or b""
    if len(data) > MAX_OUTPUT_BYTES:
        data = data[:MAX_OUTPUT_BYTES]
    return data.decode("utf-8", errors="replace")
