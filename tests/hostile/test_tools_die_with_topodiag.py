"""A SIGKILLed topodiag used to leave every tool it had started running, re-parented to init (each
tool is its own session, so the killer's process-group kill missed them too): a hung nvidia-smi
left by every prolog that overran. Tools now get PR_SET_PDEATHSIG(SIGKILL)
(topodiag/live/commands.py `_spawn`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from ._limits import REPO

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

PARENT = """
import sys, time
from topodiag.live import commands
proc = commands._spawn(["sleep", "300"], {"PATH": "/usr/bin:/bin"})
print(proc.pid, flush=True)
time.sleep(300)
"""


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie waiting for init
    except FileNotFoundError:
        return True


def test_a_tool_dies_when_topodiag_is_killed():
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(REPO)), cwd=str(REPO))
    tool = int(parent.stdout.readline())
    try:
        assert not _gone(tool)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        for _ in range(200):  # the kernel delivers the signal at once; allow a loaded machine to run it
            if _gone(tool):
                break
            time.sleep(0.05)
        assert _gone(tool), "the tool outlived topodiag"
    finally:
        if not _gone(tool):
            os.kill(tool, signal.SIGKILL)
