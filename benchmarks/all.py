"""Every input class at a size, beside grep, in one command (issue 29).

    python benchmarks/all.py --size-mb 100              # every class at 100 MB (the fabric: 10k nodes)
    python benchmarks/all.py --size-mb 10 100 --runs 3  # and the growth for 10x the input
    python benchmarks/all.py --size-mb 100 --only nccl_progress --workers 1 2   # the worker curve

For each class of benchmarks/inputs.py (built in a temp dir, deleted afterwards unless --keep), in a
fresh process as a user runs it: `python -m topodiag check --from FILE --format json` (stdout to a
file), beside `grep -cE 'NCCL (INFO|WARN)' FILE` in the same run (grep reads every byte of any
file: the cost of reading it). Printed: wall (best of --runs), CPU (user+sys of the process and its
workers), the wall ratio to grep, peak RSS (os.wait4: the largest of the process and its workers),
the exit code (1: findings; 3: not any tool's output, e.g. the one-line log), and, with two sizes,
each class's time growth for the size ratio. The fabric class (ibnetdiscover) is sized in nodes,
not MB: 10,000 nodes at the largest size asked, 1/8 of that at a smaller one (--nodes overrides).
--workers N... runs each check with TOPODIAG_WORKERS=N as well (the default follows the CPUs: the
worker curve); --pure runs each of those again with the pure-Python line scans (TOPODIAG_PURE=1), for
the classes that have a compiled one (inputs.PURE_CLASSES: the NCCL logs, the kernel logs and the bug
reports); --prolog adds the prolog's start-up against its bare imports (benchmarks/check_speed.py).
Budgets (issue 29): peak RSS <= 150 MB and 10x input <= 11x time, every run; check <= 10x grep at the
largest size, with the default workers (all cores), compiled, and pure for the NCCL logs
(inputs.PURE_BUDGET_CLASSES: the kernel logs' pure runs are printed, their budget is the compiled
one's); prolog <= 1.5x the imports it needs. `ok`/`NOT MET` is printed for each. Every budget in one command:

    python benchmarks/all.py --size-mb 100 1000 --workers 1 --pure --prolog
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import inputs  # noqa: E402

ROOT = inputs.ROOT
GREP = ["grep", "-cE", "NCCL (INFO|WARN)"]
RSS_BUDGET_MB = 150
RATIO_BUDGET = 10.0


def timed(argv: list[str], out: Path, env: dict) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MB, exit code) of one run in a fresh process (its children included:
    os.wait4 on the process, getrusage of the children for the workers it forked)."""
    with open(out, "wb") as fh:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def _env(workers: int | None, pure: bool = False) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("TOPODIAG_WORKERS", None)
    env.pop("TOPODIAG_PURE", None)
    if workers is not None:
        env["TOPODIAG_WORKERS"] = str(workers)
    if pure:
        env["TOPODIAG_PURE"] = "1"
    return env


def measure(path: Path, runs: int, workers: list, tmp: Path, pure: bool = False) -> dict:
    """grep and check (once per worker setting, and pure too with `pure`) on one file, best wall of
    `runs` each."""
    cmds = {"grep": (GREP + [str(path)], None, False)}
    for p in (False, True) if pure else (False,):
        for w in workers:
            cmds[f"check{' pure' if p else ''} w={w or 'cpus'}"] = (
                [sys.executable, "-m", "topodiag", "check", "--from", str(path), "--format", "json"], w, p)
    best: dict = {}
    for _ in range(runs):
        for name, (argv, w, p) in cmds.items():
            got = timed(argv, tmp / "out.txt", _env(w, p))
            if name not in best or got[0] < best[name][0]:
                best[name] = got
    return best


def _prolog() -> list[str]:
    """check_speed.py's medians (9 runs): the prolog against its bare imports; its lines printed, the
    verdict returned."""
    got = subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "check_speed.py"), "--runs", "9"],
                         capture_output=True, text=True, cwd=ROOT)
    print(got.stdout, end="")
    line = next((x for x in got.stdout.splitlines() if x.startswith("prolog / bare imports")), "")
    try:
        ratio = float(line.split(":", 1)[1].split("x", 1)[0])
        alone = float(line.split(";", 1)[1].split("x", 1)[0])
    except (IndexError, ValueError):
        return [f"NOT MET: prolog: check_speed.py gave no ratio (rc {got.returncode})"]
    return [f"{'ok' if ratio <= 1.5 else 'NOT MET'}: prolog {ratio:.2f}x typer+rich+networkx, the imports the "
            f"issue measured it against (<= 1.5x); {alone:.2f}x typer alone, the one third-party import it "
            f"still makes (its own start-up and checks are the rest)"]


def _size_label(cls: str, size: float, nodes: int) -> str:
    return f"{nodes:,} nodes" if cls == "ibnetdiscover" else f"{size:g} MB"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, nargs="+", default=[100.0])
    ap.add_argument("--only", nargs="+", choices=sorted(inputs.WRITERS), default=list(inputs.WRITERS))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--workers", type=int, nargs="*", default=[], help="also run with TOPODIAG_WORKERS=N")
    ap.add_argument("--pure", action="store_true", help="also each check of the classes with a compiled scan with TOPODIAG_PURE=1")
    ap.add_argument("--prolog", action="store_true", help="also the prolog against its imports (check_speed.py)")
    ap.add_argument("--nodes", type=int, nargs="*", default=None, help="fabric sizes (default 10k, and 1/8 of it)")
    ap.add_argument("--dir", default=None, help="where to build the inputs (default: a temp dir)")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)
    sizes = sorted(args.size_mb)
    top = max(sizes)
    nodes = args.nodes or [max(1, round(10000 * s / top)) if s != top else 10000 for s in sizes]
    nodes = sorted(nodes)
    if len(nodes) > 1 and args.nodes is None:
        nodes = [1250] + nodes[1:] if nodes[0] < 1250 else nodes
    workers = [None] + [w for w in args.workers]
    tmp = Path(args.dir or tempfile.mkdtemp(prefix="topodiag-all-"))
    tmp.mkdir(parents=True, exist_ok=True)
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, {os.cpu_count()} CPUs "
          f"({len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'} usable), "
          f"load {os.getloadavg()[0]:.2f}, python {sys.version.split()[0]}")
    print("| class | size | grep (CPU) | check | CPU | ratio | CPU ratio | peak RSS | rc |")
    print("|---|---|---|---|---|---|---|---|---|")
    results: dict = {}
    verdicts = []
    try:
        for cls in args.only:
            steps = list(zip(nodes, nodes)) if cls == "ibnetdiscover" else [(s, None) for s in sizes]
            for size, n in steps:
                path = tmp / (f"{cls}-{size:g}" + (".log" if cls != "bug_report" else "-nvidia-bug-report.log"))
                if not path.exists():
                    inputs.WRITERS[cls](path, n if cls == "ibnetdiscover" else int(size * 1024 * 1024))
                best = measure(path, args.runs, workers, tmp, args.pure and cls in inputs.PURE_CLASSES)
                g, g_cpu = best["grep"][0], max(best["grep"][1], 1e-3)
                label = f"{n:,} nodes ({path.stat().st_size / 1e6:.1f} MB)" if n else f"{path.stat().st_size / 1e6:.1f} MB"
                for name, (wall, cpu, rss, rc) in best.items():
                    if name == "grep":
                        continue
                    ratio = wall / g if g > 0 else float("inf")
                    results[(cls, name, size)] = (wall, rss, ratio)
                    print(f"| {cls} | {label} | {g:.3f} s ({g_cpu:.2f} s) | {name}: {wall:.2f} s | {cpu:.2f} s | "
                          f"{ratio:.1f}x | {cpu / g_cpu:.1f}x | {rss:.0f} MB | {rc} |", flush=True)
                if cls != "ibnetdiscover" and not args.keep:
                    path.unlink()
        print()
        for (cls, name, size), (wall, rss, ratio) in results.items():
            if rss > RSS_BUDGET_MB:
                verdicts.append(f"NOT MET: {cls} {name} at {_size_label(cls, size, size)}: peak RSS {rss:.0f} MB > {RSS_BUDGET_MB}")
            if (cls != "ibnetdiscover" and size == top and name.endswith("w=cpus") and ratio > RATIO_BUDGET
                    and ("pure" not in name or cls in inputs.PURE_BUDGET_CLASSES)):
                verdicts.append(f"NOT MET: {cls} {name} at {size:g} MB: {ratio:.1f}x grep > {RATIO_BUDGET:g}x")
        for cls in args.only:
            steps = nodes if cls == "ibnetdiscover" else sizes
            for name in {k[1] for k in results if k[0] == cls}:
                if len(steps) > 1 and (cls, name, steps[0]) in results:
                    grow = results[(cls, name, steps[-1])][0] / results[(cls, name, steps[0])][0]
                    factor = steps[-1] / steps[0]
                    ok = grow <= factor * 1.1
                    verdicts.append(f"{'ok' if ok else 'NOT MET'}: {cls} {name}: {factor:g}x input -> {grow:.2f}x time")
        if args.prolog:
            verdicts += _prolog()
        for v in verdicts:
            print(v)
        if not any(v.startswith("NOT MET") for v in verdicts):
            print("every budget met")
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
