"""Benchmark: `topodiag parse` and `topodiag check --from` a big NCCL log, beside grep, at several sizes.

    python benchmarks/check_log.py                           # 10 and 100 MB
    python benchmarks/check_log.py --size-mb 10 100 1000     # and 1 GB (needs ~1 GB of /tmp)
    python benchmarks/check_log.py --size-mb 100 1000 --logs issue --only check \
        --variants w1 w2 pure-w1 pure-w2                     # the worker curve, compiled and pure

The log is built the way a cluster's logs pile up (benchmarks/redaction.py `generate`): real fixtures
(their `#@` headers dropped) appended round after round, each round with its own host names and pids.
Two kinds (--logs): "issue", the recipe of issue 11 (the NCCL_DEBUG logs of fixtures/nccl_debug/, which
hold nccl-tests runs too), and "mixed", those and every nccl-tests output of fixtures/nccl_tests/ (half
of its lines nccl-tests output, a zoo of formats: harder on the nccl-tests reader). Either is both an
NCCL_DEBUG log and thousands of nccl-tests runs, so `check` reads it with both parsers (each whole in
one of two processes: topodiag/scan/onepass.py) and runs every rule on it.

For each size, in fresh processes (the CLI as a user runs it, `python -m topodiag`, output to a file),
alternating so that all see the same machine: `grep -cE 'NCCL (INFO|WARN)' LOG` (the page cache is
warm after the first), `topodiag parse LOG --format json` (the parser detection picks: nccl_tests),
`topodiag parse LOG --source nccl_debug --format json`, and `topodiag check --from LOG --format json`.
Wall time (best of --runs), peak RSS of each (os.wait4: the process and the worker it waited for),
each as a ratio to grep's time in the same run; then, per command, how its time grows with 10x the
input (budget, issue 11: check <= 10x grep at 1 GB, peak RSS <= 150 MB, 10x input <= 11x time).
--variants adds `check` runs with TOPODIAG_WORKERS=N (`wN`) and/or the pure-Python line scans
(`pure`: TOPODIAG_PURE=1), e.g. `pure-w2`. CPU time (user+sys of the process and the workers it
waited for) is printed beside wall, and its ratio to grep's CPU. The files are deleted afterwards.
Bytecode is compiled first (this environment sets PYTHONDONTWRITEBYTECODE).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from redaction import generate  # noqa: E402  (the same real-fixture log as the redaction benchmark)

GREP = ["grep", "-cE", "NCCL (INFO|WARN)"]
LOGS = {"issue": ("nccl_debug",), "mixed": ("nccl_debug", "nccl_tests")}


def commands(log: Path, out: Path) -> dict[str, list[str]]:
    py = [sys.executable, "-m", "topodiag"]
    return {
        "grep": GREP + [str(log)],
        "parse": py + ["parse", str(log), "--format", "json"],
        "parse_nccl_debug": py + ["parse", str(log), "--source", "nccl_debug", "--format", "json"],
        "check": py + ["check", "--from", str(log), "--format", "json"],
    }


def variant_env(env: dict, variant: str) -> dict:
    """The environment of a --variants entry: "w2" (TOPODIAG_WORKERS=2), "pure", "pure-w1"."""
    env = dict(env)
    env.pop("TOPODIAG_WORKERS", None)
    env.pop("TOPODIAG_PURE", None)
    for part in variant.split("-"):
        if part == "pure":
            env["TOPODIAG_PURE"] = "1"
        elif part.startswith("w") and part[1:].isdigit():
            env["TOPODIAG_WORKERS"] = part[1:]
        else:
            raise SystemExit(f"unknown variant part {part!r} (wN, pure)")
    return env


def timed(argv: list[str], out: Path, env: dict) -> tuple[float, float, int, float]:
    """(wall s, peak RSS MB, exit status, CPU s) of one run, stdout to `out`."""
    with open(out, "wb") as f:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=f, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # check exits 1 for findings
        raise SystemExit(f"{' '.join(argv[:6])} exited {proc.returncode}: {proc.stderr.read().decode()[-800:]}")
    proc.stderr.close()
    return wall, usage.ru_maxrss / 1024.0, proc.returncode, usage.ru_utime + usage.ru_stime


def measure(log: Path, runs: int, only: list[str], variants: list[str] = ()) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = log.with_suffix(".out")
    best: dict[str, list] = {}
    cmds = {name: (argv, env) for name, argv in commands(log, out).items() if name == "grep" or name in only}
    for v in variants:
        cmds[f"check {v}"] = (commands(log, out)["check"], variant_env(env, v))
    try:
        for _ in range(max(1, runs)):
            for name, (argv, e) in cmds.items():
                wall, rss, _, cpu = timed(argv, out, e)
                if name == "check":
                    report = json.loads(out.read_text())
                    findings = {f["code"]: f.get("count") or 1 for f in report["findings"]}
                    best.setdefault("check_findings", findings)
                if name not in best or wall < best[name][0]:
                    best[name] = [wall, max(rss, best.get(name, [0, 0, 0])[1]), cpu]
                else:
                    best[name][1] = max(best[name][1], rss)
    finally:
        out.unlink(missing_ok=True)
    grep, grep_cpu = best["grep"][0], max(best["grep"][2], 1e-3)
    res = {"size_mb": round(log.stat().st_size / 1e6, 1), "grep_s": round(grep, 3), "grep_cpu_s": round(grep_cpu, 3),
           "load_1m": os.getloadavg()[0]}
    for name in [n for n in cmds if n != "grep"]:
        wall, rss, cpu = best[name]
        res[name] = {"wall_s": round(wall, 2), "x_grep": round(wall / grep, 1), "peak_rss_mb": round(rss, 1),
                     "cpu_s": round(cpu, 2), "cpu_x_grep": round(cpu / grep_cpu, 1)}
    if "check_findings" in best:
        res["check_findings"] = best["check_findings"]
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, nargs="+", default=[10.0, 100.0])
    ap.add_argument("--runs", type=int, default=2, help="best of this many runs of each command")
    ap.add_argument("--only", nargs="+", default=["parse", "parse_nccl_debug", "check"],
                    choices=["parse", "parse_nccl_debug", "check"], help="the commands to time (grep always)")
    ap.add_argument("--variants", nargs="*", default=[], help="also `check` with wN (TOPODIAG_WORKERS=N), pure, pure-wN")
    ap.add_argument("--dir", type=Path, default=None, help="where to write the logs (default: a temp dir)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the generated logs in --dir (e.g. to profile one: python -m cProfile -s cumtime -m topodiag ...)")
    ap.add_argument("--logs", nargs="+", default=["issue", "mixed"], choices=sorted(LOGS),
                    help="which logs: issue (fixtures/nccl_debug/), mixed (and fixtures/nccl_tests/)")
    args = ap.parse_args(argv)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "topodiag")], check=False)
    tmp = Path(tempfile.mkdtemp(prefix="check_log_", dir=args.dir))
    by_log: dict[str, list] = {}
    try:
        for kind in args.logs:
            results = by_log[kind] = []
            for size in args.size_mb:
                log = tmp / f"nccl_{kind}_{size:g}mb.log"
                t0 = time.perf_counter()
                generate(log, size, LOGS[kind])
                print(f"generated {log.name}: {log.stat().st_size / 1e6:.1f} MB in {time.perf_counter() - t0:.0f} s",
                      file=sys.stderr)
                res = measure(log, args.runs, args.only, args.variants)
                res["log"] = kind
                if not args.keep:
                    log.unlink()
                results.append(res)
                names = args.only + [f"check {v}" for v in args.variants]
                cells = "  ".join(f"{n} {res[n]['wall_s']} s = {res[n]['x_grep']}x grep (CPU {res[n]['cpu_s']} s = "
                                  f"{res[n]['cpu_x_grep']}x), {res[n]['peak_rss_mb']} MB" for n in names)
                print(f"{kind:>5} {res['size_mb']:>8} MB  grep {res['grep_s']} s (CPU {res['grep_cpu_s']} s)  {cells}  "
                      f"(load {res['load_1m']:.1f})")
                print(json.dumps(res))
    finally:
        if args.keep:
            print(f"logs kept in {tmp}", file=sys.stderr)
        else:
            for p in tmp.iterdir():
                p.unlink()
            tmp.rmdir()
    for kind, results in by_log.items():
        _growth(kind, results, args.only + [f"check {v}" for v in args.variants])
    return 0


def _growth(kind: str, results: list, only: list) -> None:
    for a, b in zip(results, results[1:]):
        growth = b["size_mb"] / a["size_mb"]
        cells = "  ".join(f"{n} {b[n]['wall_s'] / a[n]['wall_s']:.1f}x" for n in only)
        print(f"{kind}: {a['size_mb']:g} -> {b['size_mb']:g} MB ({growth:.1f}x input): grep {b['grep_s'] / a['grep_s']:.1f}x  "
              f"{cells}  (budget: <= {1.1 * growth:.0f}x for 10x)")


if __name__ == "__main__":
    sys.exit(main())
