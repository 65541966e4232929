"""Benchmark: the floor of per-line Python work on a big NCCL log, beside grep in the same run.

    python benchmarks/line_floor.py LOG        # e.g. a log built by benchmarks/check_log.py

Issue 11 asks `check --from` a 1 GB NCCL log to cost <= 10x `grep -cE 'NCCL (INFO|WARN)'`. This prints
what the least a line-by-line reader written in Python costs on the same file: reading it in 4 MiB
chunks and splitting lines (no Python per line), then one Python-level step per line (a loop that
does nothing), then one compiled regex match per line (the least any parser that looks at a line
does), each as a ratio to grep's time. A parser that does one Python step per line cannot go below
the second figure, whatever it does with it; `check` runs two such readers (NCCL log and nccl-tests).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time


def best(fn, runs: int = 3) -> float:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def chunks(path: str):
    with open(path, "rb") as fh:
        while True:
            b = fh.read(4 << 20)
            if not b:
                return
            yield b


def main(path: str) -> None:
    grep = best(lambda: subprocess.run(["grep", "-cE", "NCCL (INFO|WARN)", path], capture_output=True))
    rx = re.compile(rb"\S+:\d+:\d+ \[\d+\] NCCL INFO ")
    n = [0]

    def split_only() -> None:
        n[0] = sum(len(c.split(b"\n")) for c in chunks(path))

    def loop() -> None:
        for c in chunks(path):
            for _line in c.split(b"\n"):
                pass

    def match() -> None:
        m = rx.match
        for c in chunks(path):
            for line in c.split(b"\n"):
                m(line)

    print(f"{path}: {n[0] or ''} grep {grep:.3f} s")
    for name, fn in (("read + split lines", split_only), ("+ a Python loop step per line", loop),
                     ("+ one regex match per line", match)):
        t = best(fn)
        print(f"  {name:32s} {t:7.3f} s = {t / grep:5.1f}x grep" + (f"  ({n[0]} lines)" if fn is split_only else ""))


if __name__ == "__main__":
    main(sys.argv[1])
