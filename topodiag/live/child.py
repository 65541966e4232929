"""Probes that call into a C library (NVML, libibverbs) run in a child process, under a timeout.

A driver library can kill the process that calls it (SIGSEGV on a call made wrong, or on a broken
driver) or block it for minutes (NVML on a wedged GPU). Run in a child, that is a finding about the
probe instead of the end of `check` or `prolog`:

    data = run_probe("topodiag.live.nvml_probe", timeout_s=15.0, blank=nvml_probe.blank(), what="NVML")

runs `python -m topodiag.live.nvml_probe --progress` (sys.executable) and returns its probe JSON.
With --progress the child says on stderr which library call it is about to make, one line each
(say(): `@topodiag-call nvmlDeviceGetName(gpu=0)`, written unbuffered so that it survives a crash).
When the child dies by a signal, does not finish in time (it is then killed, with its process
group), exits without printing its JSON, or prints something that is not JSON, the result is the
probe's `blank` JSON with ok false, an `error` naming what happened and the last call the child
began ("NVML probe died with signal 11 (SIGSEGV) in nvmlDeviceGetGpuFabricInfoV(gpu=0)"), and a
`died` object:

    died  {how: "signal" | "timeout" | "exit" | "output", signal: "SIGSEGV" | null, rc: int | null,
           last_call: "nvmlDeviceGetGpuFabricInfoV(gpu=0)" | null (none begun), seconds: 0.41}

This module imports nothing heavy at its top: the child imports it for say() alone.
"""

from __future__ import annotations

import os
import sys

PROGRESS = "@topodiag-call "
PROGRESS_FLAG = "--progress"
# A module to run instead of another one (tests: a probe over a fake library). Empty in use.
REPLACED: dict[str, str] = {}
# After a kill, how long to wait for the child's pipes (a process stuck in the kernel may not die).
REAP_S = 2.0


def say(call: str) -> None:
    """In the child: tell the parent which call comes next (one write, no buffer to lose)."""
    try:
        os.write(2, (PROGRESS + call.replace("\n", " ") + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def wants_progress(argv: list[str] | None) -> bool:
    return PROGRESS_FLAG in (sys.argv[1:] if argv is None else argv)


def last_call(stderr: bytes) -> str | None:
    """The last call the child said it was about to make."""
    marker = PROGRESS.encode()
    for line in reversed(stderr.splitlines()):
        if line.startswith(marker):
            return line[len(marker):].decode("utf-8", "replace").strip() or None
    return None


def _other_lines(stderr: bytes) -> str:
    lines = [ln for ln in stderr.decode("utf-8", "replace").splitlines()
             if ln.strip() and not ln.startswith(PROGRESS)]
    return lines[-1].strip()[:200] if lines else ""


def _environment() -> dict[str, str]:
    """This process's environment, with the folder holding this topodiag first on PYTHONPATH, so
    that the child runs this same code (a source checkout as well as an installed package)."""
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join([here] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def _signal_name(number: int) -> str:
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def died(blank: dict, what: str, how: str, *, rc: int | None, stderr: bytes, seconds: float,
         timeout_s: float) -> dict:
    """The probe JSON for a child that gave none: `blank` with ok false, error and died."""
    call = last_call(stderr)
    where = f"in {call}" if call else "before its first library call"
    sig = _signal_name(-rc) if how == "signal" and rc is not None else None
    if how == "signal":
        error = f"{what} probe died with signal {-rc} ({sig}) {where}"
    elif how == "timeout":
        error = f"{what} probe did not finish within {timeout_s:.3g} s and was stopped: it was {where}"
    else:
        said = _other_lines(stderr)
        error = (f"{what} probe exited with status {rc} without its JSON" if how == "exit"
                 else f"{what} probe printed no probe JSON") + f" ({where})" + (f": {said}" if said else "")
    out = dict(blank)
    out.update(ok=False, error=error, died={"how": how, "signal": sig, "rc": rc, "last_call": call,
                                              "seconds": round(seconds, 3)})
    return out


def _decode(stdout: bytes, probe: str) -> dict | None:
    import json

    try:
        data = json.loads(stdout.decode("utf-8", "replace"))
    except ValueError:
        return None
    return data if isinstance(data, dict) and data.get("probe") == probe else None


def run_probe(module: str, timeout_s: float, blank: dict, what: str) -> dict:
    """Run `python -m module --progress` for at most timeout_s; its JSON, or `blank` saying why not.
    Never raises for what the child does."""
    import subprocess
    import time

    argv = [sys.executable, "-m", REPLACED.get(module, module), PROGRESS_FLAG]
    start = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=_environment(), start_new_session=True)
    except OSError as exc:
        out = dict(blank)
        out.update(ok=False, error=f"{what} probe could not be started: {exc}")
        return out
    timed_out = False
    try:
        stdout, stderr = proc.communicate(timeout=max(timeout_s, 0.01))
    except subprocess.TimeoutExpired as exc:
        timed_out = True
        stdout, stderr = _kill(proc, exc)
    seconds = time.monotonic() - start
    rc = proc.returncode
    if timed_out:
        return died(blank, what, "timeout", rc=rc, stderr=stderr, seconds=seconds, timeout_s=timeout_s)
    if rc is not None and rc < 0:
        return died(blank, what, "signal", rc=rc, stderr=stderr, seconds=seconds, timeout_s=timeout_s)
    data = _decode(stdout, blank.get("probe", ""))
    if data is None:
        return died(blank, what, "exit" if rc else "output", rc=rc, stderr=stderr, seconds=seconds,
                    timeout_s=timeout_s)
    return data


def _kill(proc, exc) -> tuple[bytes, bytes]:
    """Kill the child's process group; what it wrote (waiting REAP_S at most: a process blocked in
    the kernel may outlive SIGKILL for a while, and is then left to the init process)."""
    import signal
    import subprocess

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        return proc.communicate(timeout=REAP_S)
    except subprocess.TimeoutExpired:
        return exc.output or b"", exc.stderr or b""
