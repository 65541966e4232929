"""Benchmark: `topodiag fleet` over 1k, 10k and 20k synthetic node reports.

    python benchmarks/fleet.py                          # 1000,10000,20000 in a temp dir, removed after
    python benchmarks/fleet.py --sizes 1000,10000 --out /tmp/fleet --keep

The reports: the JSON report `topodiag check --from fixtures/hosts/hgx-h100-healthy-assembled
--format json` prints (run once, in this process), copied as hosts node00001..., with eight
planted outliers of different kinds among the first thousand nodes (PLANTED below: a port at
200 Gb/s, an old firmware, a GPU whose nearest NIC is across the SMP link, a GPU on the wrong NUMA
node, a port Down, a GPU model, a NIC missing, a GPU lost). Each size is written twice: one
JSON-lines file (compact, one report a line, as `clush -N` fan-out gathers them) and a directory
of indented report files (as `check --format json > NODE.json` writes them).

With `--baseline DIR` (another checkout, e.g. the main branch's), every measurement is also taken
with that tree's code on the same files, run by run in turn with this tree's, so that both see the
same load (another process on the machine shifts both); the tree each imports is printed first.

Each measurement runs in a fresh process that starts `topodiag fleet PATH --format json` as its own
child and reports that child's wall time and peak RSS (`getrusage(RUSAGE_CHILDREN).ru_maxrss`), so
each figure is one run's alone; the wall time includes interpreter start, imports and writing the
JSON result. The files are synced to
disk before measuring (writeback of the freshly written reports otherwise slows the first run),
and each figure is the median of --runs runs (page cache warm). Every run must find every planted
outlier, worded as fleet words it, and nothing else.
Targets (issue 5): 10k reports under 10 s, 20k under 2.2x the 10k time, peak RSS under 1 GB;
(issue 11) 10k under 1 s and 100k within 10 s, in both forms.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "fixtures" / "hosts" / "hgx-h100-healthy-assembled"

# node number -> (what, change, the outlier text with {others} for N-1). The base node: mlx5_0..2
# at 400 Gb/s InfiniBand, firmware 28.43.2026, gpu:N nearest mlx5_N at PIX, gpu:0-3 NUMA 0, 4-7 NUMA 1.
PLANTED = {
    17: ("port rate", {"nic:mlx5_1.port1.rate_gbps": 200.0},
         "nic:mlx5_1 port 1 at 200 Gb/s, {others} others at 400"),
    42: ("firmware", {"nic:mlx5_0.firmware": "28.39.1002"},
         "firmware of mlx5_0 28.39.1002, {others} others 28.43.2026"),
    120: ("nearest NIC", {"gpu:3.nearest_nic": "mlx5_3 SYS"}, "gpu:3 nearest NIC mlx5_3 at SYS, {others} others at PIX"),
    256: ("NUMA", {"gpu:6.numa": 0}, "gpu:6 on NUMA node 0, {others} others 1"),
    333: ("port state", {"nic:mlx5_0.port1.state": "Down"}, "nic:mlx5_0 port 1 Down, {others} others Active"),
    512: ("GPU model", {"gpu.model": "NVIDIA H100 PCIe"},
          "GPU model NVIDIA H100 PCIe, {others} others NVIDIA H100 80GB HBM3"),
    777: ("NIC missing", {"nic:mlx5_2.*": None}, "nic:mlx5_2 absent ({facts} facts), {others} others have it"),
    901: ("GPU lost", {"gpu:5.lost": True}, "gpu:5 lost (fell off the bus), absent on {others} others"),
}

# The measured run: the command line an admin types, `topodiag fleet PATH --format json` (exit 1:
# the planted outliers were found).
COMMAND = [sys.executable, "-m", "topodiag", "fleet", "--format", "json"]

MEASURE = r"""
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.run(json.loads(sys.argv[1]), capture_output=True, text=True)
wall = time.perf_counter() - t0
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": p.returncode, "wall_s": wall, "peak_rss_mb": peak_kb / 1024, "child": p.stdout,
                  "stderr": p.stderr[-2000:]}))
"""


def base_report() -> dict:
    sys.path.insert(0, str(ROOT))
    from topodiag.fleet.reports import bundle_report

    return bundle_report(str(SCENARIO))


def make(base: dict, i: int) -> dict:
    r = dict(base)
    r["host"] = f"node{i:05d}"
    if i in PLANTED:
        fp = dict(base["fingerprint"])
        for key, value in PLANTED[i][1].items():
            if key.endswith(".*"):
                for k in [k for k in fp if k.startswith(key[:-1])]:
                    del fp[k]
            else:
                fp[key] = value
        r["fingerprint"] = fp
    return r


def expected(base: dict, n: int) -> list[str]:
    facts = sum(1 for k in base["fingerprint"] if k.startswith("nic:mlx5_2."))
    return [f"node{i:05d}: " + text.format(others=n - 1, facts=facts)
            for i, (_, _, text) in sorted(PLANTED.items()) if i <= n]


def write(base: dict, n: int, where: Path) -> tuple[Path, Path]:
    where.mkdir(parents=True, exist_ok=True)
    jsonl = where / f"fleet-{n}.jsonl"
    folder = where / f"fleet-{n}"
    folder.mkdir(exist_ok=True)
    with open(jsonl, "w") as out:
        for i in range(1, n + 1):
            r = make(base, i)
            out.write(json.dumps(r) + "\n")
            (folder / f"node{i:05d}.json").write_text(json.dumps(r, indent=2) + "\n")
    return jsonl, folder


def _env(root: Path) -> dict:
    """The environment that makes `python -m topodiag` import the tree at `root` (run with cwd=root:
    `-m` puts the working directory first on sys.path)."""
    return dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def imported_from(root: Path) -> str:
    """The topodiag a measurement of `root` imports (its __init__.py)."""
    p = subprocess.run([sys.executable, "-c", "import topodiag; print(topodiag.__file__)"], capture_output=True,
                       text=True, env=_env(root), cwd=root, check=True)
    return p.stdout.strip()


def measure(path: Path, root: Path = ROOT) -> dict:
    p = subprocess.run([sys.executable, "-c", MEASURE, json.dumps(COMMAND + [str(path)])], capture_output=True,
                       text=True, env=_env(root), cwd=root, check=True)
    got = json.loads(p.stdout)
    if got["rc"] not in (0, 1):
        raise SystemExit(f"topodiag fleet failed on {path} (exit {got['rc']}):\n{got['stderr']}")
    out = json.loads(got["child"])
    got["child"] = {"nodes": out["nodes"], "failed": out["failed"], "lines": [o["line"] for o in out["outliers"]],
                    "splits": len(out["splits"]), "keys": out["keys_compared"], "rc": got["rc"]}
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,20000")
    ap.add_argument("--out", help="where to write the reports (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the reports written")
    ap.add_argument("--runs", type=int, default=3, help="runs per measurement (the median is kept)")
    ap.add_argument("--baseline", metavar="DIR", help="also measure the topodiag checkout at DIR (e.g. the main "
                                                      "branch's), run by run in turn with this tree")
    args = ap.parse_args()
    trees = [("this", ROOT)] + ([("baseline", Path(args.baseline).resolve())] if args.baseline else [])
    for name, root in trees:
        print(f"{name}: {imported_from(root)}", file=sys.stderr)
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "topodiag")], check=True)
    where = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="topodiag-fleet-bench-"))
    base = base_report()
    results = []
    try:
        for n in sizes:
            t0 = time.perf_counter()
            jsonl, folder = write(base, n, where)
            made = time.perf_counter() - t0
            if hasattr(os, "sync"):
                os.sync()
            size_mb = jsonl.stat().st_size / 1e6
            want = expected(base, n)
            for form, path in (("jsonl", jsonl), ("dir", folder)):
                by_tree: dict = {name: [] for name, _ in trees}
                for _ in range(max(1, args.runs)):  # the trees in turn, run by run: both see the same load
                    for name, root in trees:
                        by_tree[name].append(measure(path, root))
                for name, _ in trees:
                    runs = sorted(by_tree[name], key=lambda m: m["wall_s"])
                    m = runs[len(runs) // 2]
                    c = m["child"]
                    found = all(r["child"]["lines"] == want and r["child"]["nodes"] == n and r["child"]["failed"] == 0
                                and r["child"]["rc"] == (1 if want else 0) for r in runs)
                    results.append({"code": name, "reports": n, "form": form, "wall_s": round(m["wall_s"], 3),
                                    "wall_min_s": round(runs[0]["wall_s"], 3),
                                    "wall_max_s": round(runs[-1]["wall_s"], 3),
                                    "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs), 1),
                                    "jsonl_mb": round(size_mb, 1),
                                    "planted": len(want), "outliers": len(c["lines"]), "all_found_nothing_else": found,
                                    "splits": c["splits"], "keys": c["keys"], "write_s": round(made, 1)})
                    if not found:
                        print(f"MISMATCH at {n} ({form}, {name}):\n  want {want}\n  got  {c['lines']}", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(where, ignore_errors=True)
    ended = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"{started} - {ended}; load average (1, 5, 15 min) before {load_before}, after {load_after}")
    print(f"{'code':8s} {'reports':>8s} {'form':6s} {'wall':>8s} {'min-max':>13s} {'peak RSS':>9s} "
          f"{'planted':>8s} {'found':>6s}   (median of {args.runs})")
    for r in results:
        print(f"{r['code']:8s} {r['reports']:8d} {r['form']:6s} {r['wall_s']:7.2f}s "
              f"{r['wall_min_s']:5.2f}-{r['wall_max_s']:5.2f}s {r['peak_rss_mb']:7.1f}MB {r['planted']:8d} "
              f"{'all' if r['all_found_nothing_else'] else 'NO':>6s}")
    verdicts: dict = {}
    for name, _ in trees:
        for form in ("jsonl", "dir"):
            by = {r["reports"]: r for r in results if r["form"] == form and r["code"] == name}
            v = {}
            if 10000 in by:
                v["10k_under_10s"] = by[10000]["wall_s"] < 10
                v["10k_under_1s"] = by[10000]["wall_s"] < 1
            if 100000 in by:
                v["100k_within_10s"] = by[100000]["wall_s"] <= 10
            if 10000 in by and 20000 in by:
                v["20k_over_10k"] = round(by[20000]["wall_s"] / by[10000]["wall_s"], 2)
                v["linear_under_2.2x"] = v["20k_over_10k"] < 2.2
            if 10000 in by and 100000 in by:
                v["100k_over_10k"] = round(by[100000]["wall_s"] / by[10000]["wall_s"], 2)
            v["rss_under_1GB"] = all(r["peak_rss_mb"] < 1024 for r in by.values())
            v["all_found"] = all(r["all_found_nothing_else"] for r in by.values())
            verdicts.setdefault(name, {})[form] = v
            print(f"{name} {form}: " + ", ".join(f"{k} {val}" for k, val in v.items()))
    info = ("20k_over_10k", "100k_over_10k")
    met = all(val for v in verdicts["this"].values() for k, val in v.items() if k not in info)
    print("targets met (this tree)" if met else "targets MISSED (this tree)")
    print(json.dumps({"results": results, "verdicts": verdicts, "met": met, "runs": args.runs,
                      "started": started, "ended": ended, "load_before": load_before, "load_after": load_after,
                      "python": sys.version.split()[0], "cpus": os.cpu_count()}))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
