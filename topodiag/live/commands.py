"""Running a tool: an argv list (never a shell), LC_ALL=C, a timeout, and a record of what happened.

A failed tool is a record (rc, stderr, duration, timed_out, reason), never an exception: a tool
that is not installed, that exits non-zero, or that hangs (nvidia-smi can hang for minutes on a
wedged GPU) all come back as a CommandResult. On a timeout the whole process group is killed, so a
tool's own children do not outlive it.

nvidia-smi's documented return codes (nvidia-smi(1), RETURN VALUE) become reasons a person can act
on; other tools' non-zero codes are reported with their last stderr line.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Optional, Sequence

MAX_OUTPUT_BYTES = 64 * 1024 * 1024  # a tool printing more than this is cut (and says so)

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

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out


def run(argv: Sequence[str], timeout_s: float, env: Optional[dict] = None) -> CommandResult:
    """Run argv with LC_ALL=C under a timeout; never raises for the tool's own failures."""
    argv = tuple(argv)
    exe = shutil.which(argv[0], path=(env or os.environ).get("PATH")) if argv else None
    if exe is None:
        return CommandResult(argv, None, "", "", 0.0, not_found=True,
                             reason=f"{argv[0] if argv else '(nothing)'} is not installed (not on PATH)")
    child_env = dict(os.environ if env is None else env)
    child_env["LC_ALL"] = "C"
    start = time.monotonic()
    try:
        proc = subprocess.Popen([exe, *argv[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=child_env, start_new_session=True)
    except OSError as exc:
        return CommandResult(argv, None, "", "", time.monotonic() - start,
                             reason=f"{argv[0]} could not be started: {exc.strerror or exc}")
    try:
        out, err = proc.communicate(timeout=max(timeout_s, 0.0))
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = _drain(proc)
        duration = time.monotonic() - start
        return CommandResult(argv, None, _text(out), _text(err), duration, timed_out=True,
                             reason=f"no result within its {timeout_s:g} s timeout (killed)")
    duration = time.monotonic() - start
    stdout, stderr = _text(out), _text(err)
    reason = "" if proc.returncode == 0 else failure_reason(argv, proc.returncode, stderr)
    return CommandResult(argv, proc.returncode, stdout, stderr, duration, reason=reason)


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


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            proc.kill()
        except OSError:
            pass


def _drain(proc: subprocess.Popen) -> tuple[bytes, bytes]:
    """What the killed process had printed (its pipes close when the group dies)."""
    try:
        return proc.communicate(timeout=2)
    except (subprocess.TimeoutExpired, OSError, ValueError):
        return b"", b""


def _text(data: Optional[bytes]) -> str:
    data = data or b""
    if len(data) > MAX_OUTPUT_BYTES:
        data = data[:MAX_OUTPUT_BYTES]
    return data.decode("utf-8", errors="replace")
