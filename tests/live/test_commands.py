"""Running tools: argv only, LC_ALL=C, timeouts that kill the process group, exit codes as reasons.
The tools are small scripts written into a temporary PATH."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from topodiag.live.commands import run


def tool(tmp_path: Path, name: str, body: str) -> dict:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"}


def test_output_and_lc_all(tmp_path):
    env = tool(tmp_path, "ibstat", 'echo "CA \'mlx5_0\'"; echo "LC_ALL=$LC_ALL"\n')
    res = run(["ibstat"], 5, env=env)
    assert res.ok and res.rc == 0 and res.reason == ""
    assert res.stdout.splitlines() == ["CA 'mlx5_0'", "LC_ALL=C"]


def test_not_installed_is_a_record_not_an_exception(tmp_path):
    res = run(["ibstat"], 5, env={"PATH": str(tmp_path)})
    assert res.not_found and res.rc is None and not res.ok
    assert res.reason == "ibstat is not installed (not on PATH)"


def test_nvidia_smi_fell_off_the_bus(tmp_path):
    env = tool(tmp_path, "nvidia-smi", 'echo "Unable to determine the device handle for GPU0000:4E:00.0: '
               'GPU is lost.  Reboot the system to recover this GPU" >&2; exit 15\n')
    res = run(["nvidia-smi", "topo", "-m"], 5, env=env)
    assert res.rc == 15 and not res.ok
    assert res.reason.startswith("nvidia-smi exit 15: a GPU has fallen off the bus or has otherwise become "
                                 "inaccessible (Unable to determine the device handle")


@pytest.mark.parametrize("rc, meaning", [(9, "the NVIDIA driver is not loaded"),
                                         (12, "the NVML shared library could not be found or loaded"),
                                         (255, "other error or internal driver error")])
def test_nvidia_smi_documented_codes(tmp_path, rc, meaning):
    env = tool(tmp_path, "nvidia-smi", f"exit {rc}\n")
    assert run(["nvidia-smi"], 5, env=env).reason == f"nvidia-smi exit {rc}: {meaning}"


def test_other_tools_give_their_last_stderr_line(tmp_path):
    env = tool(tmp_path, "ibv_devinfo", 'echo "Failed to get IB devices list: Function not implemented" >&2; exit 255\n')
    res = run(["ibv_devinfo"], 5, env=env)
    assert res.reason == "ibv_devinfo exit 255: failed (Failed to get IB devices list: Function not implemented)"


def test_a_hanging_tool_and_its_children_are_killed_at_the_timeout(tmp_path):
    pid_file = tmp_path / "child.pid"
    env = tool(tmp_path, "nvidia-smi", f"sleep 60 & echo $! > {pid_file}; echo partial; sleep 60\n")
    start = time.monotonic()
    res = run(["nvidia-smi", "nvlink", "-s"], 0.5, env=env)
    took = time.monotonic() - start
    assert res.timed_out and res.rc is None and not res.ok and took < 30  # the tool sleeps 60 s
    assert res.reason == "no result within its 0.5 s timeout (killed)"
    assert res.stdout.strip() == "partial"
    child = int(pid_file.read_text())
    for _ in range(50):  # the background child went with its process group
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the tool's child outlived the timeout")
