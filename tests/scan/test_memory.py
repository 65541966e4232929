"""scan/memory.py: a big input raises glibc malloc's mmap and trim thresholds once per process (in a
child process here: the thresholds are the process's); a small one, a second call, or an environment
that sets a threshold itself changes nothing. The same call makes the collector's young generation
run every YOUNG allocations, unless the program set its own threshold."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILD = ("from topodiag.scan import memory as m; "
         "print(m.big_input(m.BIG_INPUT - 1), m.big_input(m.BIG_INPUT), m.big_input(m.BIG_INPUT))")


def _glibc() -> bool:
    try:
        import ctypes

        return hasattr(ctypes.CDLL("libc.so.6"), "mallopt")
    except OSError:
        return False


def _run(**env) -> str:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    return subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env=dict(base, PYTHONPATH=str(ROOT), **env), check=True).stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _glibc(), reason="glibc malloc only")
def test_once_for_a_big_input() -> None:
    assert _run() == "False True False"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")
def test_the_environment_wins() -> None:
    assert _run(MALLOC_MMAP_THRESHOLD_="1048576") == "False False False"


GC_CHILD = ("import gc; from topodiag.scan import memory as m; {setup}"
            "m.big_input(m.BIG_INPUT - 1); a = gc.get_threshold(); m.big_input(m.BIG_INPUT); "
            "print(a[0], gc.get_threshold()[0], gc.get_threshold()[1:] == a[1:], gc.isenabled())")


@pytest.mark.parametrize("setup, want", [("", f"{700 if sys.version_info < (3, 13) else 2000} 10000 True True"),
                                         ("gc.set_threshold(500); ", "500 500 True True")])
def test_a_big_input_collects_the_young_generation_less_often(setup, want) -> None:
    got = subprocess.run([sys.executable, "-c", GC_CHILD.format(setup=setup)], capture_output=True, text=True,
                         timeout=60, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True).stdout.strip()
    assert got == want
