"""Running a piece of Python in a child process under a memory ceiling (RLIMIT_AS), so that a
memory bomb fails the test with a MemoryError instead of taking the machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PRELUDE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
"""


def run_limited(code: str, limit_mb: int, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter (this checkout's topodiag importable) whose address space
    is capped at `limit_mb` MiB of address space above what the interpreter and topodiag's imports
    take (measured first, in the same way)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")
    base = _baseline_mb(env)
    limit = (base + limit_mb) << 20
    return subprocess.run([sys.executable, "-c", PRELUDE.format(limit=limit) + code], env=env, cwd=str(REPO),
                          capture_output=True, text=True, timeout=timeout)


_BASE: list[int] = []


def _baseline_mb(env: dict) -> int:
    """Virtual size (MiB) of an interpreter that imported what the tests import."""
    if not _BASE:
        probe = ("import topodiag.load.gather, topodiag.fleet.reports, topodiag.cli.app, json\n"
                 "print(open('/proc/self/status').read().split('VmPeak:')[1].split()[0])")
        out = subprocess.run([sys.executable, "-c", probe], env=env, cwd=str(REPO), capture_output=True,
                             text=True, timeout=60, check=True)
        _BASE.append(int(out.stdout.strip()) >> 10)
    return _BASE[0]
