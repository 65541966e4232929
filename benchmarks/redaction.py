"""Benchmark: redaction of a large NCCL log (a bundle member), against copying the file.

    python benchmarks/redaction.py                       # 100 MB log in a temp dir
    python benchmarks/redaction.py --size-mb 10 100 1000 # several sizes: cost must stay linear

Builds the log the way a cluster's logs pile up: the project's real NCCL fixtures
(fixtures/nccl_debug/, fixtures/nccl_tests/, their `#@` headers dropped) appended round after
round, each round with its own host names (node0001, node0002...) and pids, so a round is not
a copy of the last. Then, for each size, in fresh processes and alternating: `redact_tree` of a
bundle folder holding that log (topodiag/bundle/redact/tree.py: the member is streamed,
topodiag/bundle/redact_stream.py) and, as the baseline, `cp` of the same file. Prints MB/s, the
ratio to cp, the redaction's CPU time (user + system: on a machine shared with other work the wall
time says more about the neighbours than about the code) and its peak RSS. Target (issue 11): >= 50 MB/s, memory flat in the size.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import sys, time
t0 = time.perf_counter()
from topodiag.bundle.redact import Redactor, redact_tree
redact_tree(sys.argv[1], sys.argv[2], Redactor())
print(time.perf_counter() - t0)
"""

_PREFIX = re.compile(r"(?m)^([A-Za-z][\w.-]*):(\d+):(\d+)(?=[ \t]+\[)")


def _sources(folders: tuple[str, ...] = ("nccl_debug", "nccl_tests")) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from topodiag.parsers.base import blank_provenance_header

    texts = []
    for folder in folders:
        for p in sorted((ROOT / "fixtures" / folder).glob("*")):
            if not p.name.endswith(".json"):
                texts.append(blank_provenance_header(p.read_text(encoding="utf-8", errors="replace")).lstrip("\n"))
    return texts


def generate(path: Path, size_mb: float, folders: tuple[str, ...] = ("nccl_debug", "nccl_tests")) -> None:
    """A log of about `size_mb` MiB: the real fixtures of `folders` appended round after round, each
    round with its own host names and pids."""
    texts = _sources(folders)
    target = int(size_mb * 1024 * 1024)
    written = rnd = 0
    with open(path, "w", encoding="utf-8") as out:
        while written < target:
            rnd += 1
            hosts: dict[str, str] = {}

            def sub(m: re.Match) -> str:
                host = hosts.setdefault(m[1], f"node{(rnd * 37 + len(hosts)) % 9999 + 1:04d}")
                return f"{host}:{int(m[2]) + rnd * 101}:{int(m[3]) + rnd * 101}"

            for text in texts:
                chunk = _PREFIX.sub(sub, text)
                out.write(chunk)
                written += len(chunk.encode())
                if written >= target:
                    break


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes: the figure that a machine shared
    with other work (load average above its core count) distorts least."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measure(log: Path, runs: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    work = Path(tempfile.mkdtemp(prefix="redact_bench_"))
    src = work / "bundle"
    (src / "logs").mkdir(parents=True)
    os.link(log, src / "logs" / "nccl.log") if os.stat(log).st_dev == os.stat(work).st_dev else shutil.copy(log, src / "logs" / "nccl.log")
    redact_runs, cpu_runs, cp_runs = [], [], []
    try:
        for i in range(runs):
            dst = work / f"out{i}"
            t0, c0 = time.perf_counter(), _children_cpu()
            proc = subprocess.run([sys.executable, "-c", CHILD, str(src), str(dst)], capture_output=True, text=True, env=env)
            redact_runs.append(time.perf_counter() - t0)
            cpu_runs.append(_children_cpu() - c0)
            if proc.returncode != 0:
                raise SystemExit(f"redaction failed: {proc.stderr.strip()[-500:]}")
            shutil.rmtree(dst)
            t0 = time.perf_counter()
            subprocess.run(["cp", str(log), str(work / "copy.log")], check=True)
            cp_runs.append(time.perf_counter() - t0)
            os.unlink(work / "copy.log")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    mb = log.stat().st_size / 1e6
    best, cp, cpu = min(redact_runs), min(cp_runs), min(cpu_runs)
    return {"size_mb": round(mb, 1), "redact_s": round(best, 3), "redact_mb_s": round(mb / best, 1),
            "cpu_s": round(cpu, 3), "cpu_mb_s": round(mb / cpu, 1), "load_avg_1m": os.getloadavg()[0],
            "cp_s": round(cp, 3), "ratio_to_cp": round(best / cp, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1), "runs": runs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, nargs="+", default=[100.0])
    ap.add_argument("--runs", type=int, default=3, help="best of this many runs (redaction and cp alternating)")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="redact_log_"))
    try:
        for size in args.size_mb:
            log = tmp / f"nccl_{size:g}mb.log"
            generate(log, size)
            res = measure(log, args.runs)
            print(f"{res['size_mb']:>8} MB  redaction {res['redact_s']:.2f} s = {res['redact_mb_s']} MB/s (target >= 50)"
                  f"  CPU {res['cpu_s']:.2f} s = {res['cpu_mb_s']} MB/s  load {res['load_avg_1m']:.1f}"
                  f"  cp {res['cp_s']:.3f} s  ratio {res['ratio_to_cp']}x  peak RSS {res['peak_rss_mb']} MB")
            print(json.dumps(res))
            log.unlink()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
