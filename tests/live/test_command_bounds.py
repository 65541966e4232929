"""Bounds on the tools topodiag runs: output read in chunks and cut at the cap (the tool killed),
every tool in its own process group killed whatever way it ends (a grandchild holding the pipe, a
timeout, the cap, topodiag itself killed by SIGTERM/SIGINT/SIGHUP or exiting), and one deadline over
every command (`commands.session`). The tools are small shell scripts; no GPU, HCA or network."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from topodiag.live import commands
from topodiag.live.commands import run, session

ROOT = Path(__file__).resolve().parents[2]


def tool(tmp_path: Path, name: str, body: str) -> dict:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"}


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (not yet reaped by its parent) is dead too
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def gone(pid: int, within: float = 5.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def wait_for(path: Path, within: float = 20.0) -> str:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


# -- 1. output: streamed, cut at the cap -----------------------------------------------------------

def test_endless_output_is_cut_at_the_cap_and_the_tool_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(commands, "MAX_OUTPUT_BYTES", 1024 * 1024)
    env = tool(tmp_path, "nvidia-smi", "exec yes 0123456789abcdef\n")  # never ends by itself
    start = time.monotonic()
    res = run(["nvidia-smi", "topo", "-m"], 30, env=env)
    assert time.monotonic() - start < 10
    assert res.truncated and not res.ok and res.rc is None and not res.timed_out
    assert len(res.stdout) == 1024 * 1024 and res.stdout.startswith("0123456789abcdef\n")
    assert res.reason == "its output passed 1 MB: killed and cut there"


def test_a_gigabyte_of_output_stays_within_a_bounded_memory(tmp_path):
    """With the real 64 MB cap: 1 GB of output used 2.3 GB of memory when it was read whole."""
    env = tool(tmp_path, "ibstat", "yes 0123456789abcdef0123456789abcdef | head -c 1000000000\n")
    code = textwrap.dedent("""
        import json, os, resource, sys
        from topodiag.live.commands import run
        res = run(["ibstat"], 60, env=json.loads(sys.argv[1]))
        print(len(res.stdout), res.truncated, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    """)
    import json

    out = subprocess.run([sys.executable, "-c", code, json.dumps(env)], capture_output=True, text=True,
                         timeout=120, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    size, truncated, rss_kb = out.stdout.split()
    assert int(size) == 64 * 1024 * 1024 and truncated == "True"
    assert int(rss_kb) < 400 * 1024, f"peak RSS {int(rss_kb) // 1024} MB"


def test_stderr_is_read_as_it_comes_and_kept_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(commands, "MAX_STDERR_BYTES", 4096)
    env = tool(tmp_path, "ibv_devinfo", "head -c 3000000 /dev/zero | tr '\\0' e >&2; echo done; exit 3\n")
    res = run(["ibv_devinfo"], 30, env=env)
    assert res.rc == 3 and res.stdout == "done\n" and len(res.stderr) == 4096


# -- 2. process groups -----------------------------------------------------------------------------

def test_a_grandchild_holding_the_pipe_does_not_hold_the_tool(tmp_path):
    """The tool exits at once, its background child keeps stdout open: the result comes at once
    (it waited the grandchild's 60 s) and the grandchild is killed with its group."""
    pid_file = tmp_path / "grandchild.pid"
    env = tool(tmp_path, "show_gids", f"sleep 60 & echo $! > {pid_file}; echo 'DEV PORT INDEX GID'\n")
    start = time.monotonic()
    res = run(["show_gids"], 30, env=env)
    assert time.monotonic() - start < 5
    assert res.ok and res.stdout == "DEV PORT INDEX GID\n"
    assert gone(int(pid_file.read_text())), "the grandchild outlived its tool"


def test_a_cut_tool_and_its_children_are_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(commands, "MAX_OUTPUT_BYTES", 64 * 1024)
    pid_file = tmp_path / "grandchild.pid"
    env = tool(tmp_path, "dmesg", f"sleep 60 & echo $! > {pid_file}; exec yes\n")
    res = run(["dmesg"], 30, env=env)
    assert res.truncated
    assert gone(int(pid_file.read_text()))


SCRIPT = """
import sys
from topodiag.live.commands import run, session
with session(60):
    print("running", flush=True)
    run(["sh", "-c", "sleep 60 & echo $! > {pid}; sleep 60"], 60)
"""


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_topodiag_killed_by_a_signal_kills_every_tool_group(tmp_path, sig, code):
    pid_file = tmp_path / "grandchild.pid"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT.format(pid=pid_file)], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE)
    try:
        grandchild = int(wait_for(pid_file))
        proc.send_signal(sig)
        assert proc.wait(timeout=20) == code
        assert gone(grandchild), "a tool's child outlived topodiag"
    finally:
        proc.kill()
        proc.wait()


def test_tools_still_running_when_topodiag_exits_are_killed(tmp_path):
    """A tool in a thread nobody waits for (a daemon thread past the deadline): atexit kills its group."""
    pid_file = tmp_path / "grandchild.pid"
    code = textwrap.dedent(f"""
        import threading, time
        from topodiag.live.commands import run
        threading.Thread(target=run, args=(["sh", "-c", "sleep 60 & echo $! > {pid_file}; sleep 60"], 60),
                         daemon=True).start()
        while True:
            try:
                if open("{pid_file}").read().strip():
                    break
            except OSError:
                pass
            time.sleep(0.05)
    """)
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                   timeout=30, check=True)
    assert gone(int(pid_file.read_text()))


# -- 3. one deadline over every command ------------------------------------------------------------

def test_the_session_deadline_bounds_each_command_and_skips_what_cannot_start(tmp_path):
    env = tool(tmp_path, "ofed_info", "sleep 30\n")
    start = time.monotonic()
    with session(1.0):
        res = run(["ofed_info", "-s"], 5.0, env=env)
        assert res.timed_out and res.reason == "no result within its 1 s --deadline (killed)"
        took = time.monotonic() - start
        late = run(["ofed_info", "-s"], 5.0, env=env)
    assert took < 15  # the tool sleeps 30 s: well under it means it was not waited for (load-tolerant)
    assert late.skipped and late.timed_out and not late.ok
    assert late.reason == "not started: no time left before the --deadline"
    assert commands.time_left() is None  # the session is over: no bound outside it


def test_a_deadline_argument_bounds_a_command(tmp_path):
    env = tool(tmp_path, "ibstat", "sleep 30\n")
    start = time.monotonic()
    res = run(["ibstat"], 20, env=env, deadline=time.monotonic() + 0.5)
    assert res.timed_out and time.monotonic() - start < 3
    assert "collection's deadline" in res.reason


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), -1.0, 0.0, 1e300, "x", True])
def test_a_deadline_that_is_not_a_finite_positive_number_is_a_usage_error(value):
    from topodiag.errors import UsageError
    from topodiag.live.collection import Options, check_deadline, collect

    with pytest.raises(UsageError) as info:
        check_deadline(value)
    assert str(info.value).startswith("--deadline: must be a number of seconds above 0")
    with pytest.raises(UsageError):
        collect(Options(deadline_s=value), sources=())


def test_a_source_that_cannot_start_before_the_deadline_is_recorded_as_not_started(tmp_path, monkeypatch):
    from topodiag.live.collection import LiveSource, Options, collect

    env = tool(tmp_path, "ibstat", "echo never\n")
    monkeypatch.setenv("PATH", env["PATH"])
    src = LiveSource("ibstat", "commands/ibstat.txt", 10.0, False, ("ibstat",))
    with session(0.05):
        time.sleep(0.1)
        [rec] = collect(Options(deadline_s=5), sources=[src])
    assert rec.status == "timed_out" and rec.timed_out and rec.member is None
    assert rec.reason.startswith("not started: no time left before the")


def test_a_cut_output_is_a_failed_source_that_keeps_what_came(tmp_path, monkeypatch):
    from topodiag.live.collection import LiveSource, Options, collect

    monkeypatch.setattr(commands, "MAX_OUTPUT_BYTES", 4096)
    env = tool(tmp_path, "ibstat", "exec yes \"CA 'mlx5_0'\"\n")
    monkeypatch.setenv("PATH", env["PATH"])
    [rec] = collect(Options(deadline_s=20), sources=[LiveSource("ibstat", "commands/ibstat.txt", 10.0, False,
                                                               ("ibstat",))])
    assert rec.status == "failed" and not rec.timed_out and rec.rc is None
    assert rec.reason == "its output passed 4096 bytes: killed and cut there"
    assert rec.text.startswith("CA 'mlx5_0'\n") and len(rec.text) == 4096
