"""Benchmark: start-up and whole-run cost of `topodiag check` and `topodiag prolog`.

    python benchmarks/check_speed.py            # 21 runs of each, medians
    python benchmarks/check_speed.py --runs 51 --breakdown
    python benchmarks/check_speed.py --runs 9 --baseline /tmp/old   # also each topodiag command
                                # run from another tree (e.g. `git archive` of an older commit), alternating

What it measures, each in a fresh process, alternating so that machine noise hits all alike:
  pass           python -c pass (the interpreter alone: the baseline every ratio is against)
  networkx       python -c "import networkx" (what the model's graph costs to import)
  imports        python -c "import typer, rich, networkx"
  typer          python -c "import typer" (the only third-party import the prolog path needs: it
                 imports neither rich nor networkx, tests/architecture/test_import_cost.py)
  check-bundle   topodiag check --from fixtures/hosts/hgx-h100-healthy-assembled --format json
                 (topo -m, nvlink -s, ibstat, nccl-tests of an 8x H100 node: the bundle names each
                 member's source, so only those parsers load)
  check-files    the same four outputs as loose files (every parser loads to detect the source)
  check-text     the bundle with --format text (rich renders the report)
  check-1k       topodiag check --from a 1.5 KB kernel log --format json: the fixed cost every
                 `check --from FILE` pays before it reads a byte (start-up, detection, rules)
  prolog         topodiag prolog --sysfs-root fixtures/sysfs/hgx-h100-cx7-ndr-8rail (the passive
                 sources on a recorded 8-rail NDR sysfs tree; NVML as this machine has it)
Budget (issue 9): check-bundle and prolog each at most 0.6 s median, networkx included. Byte-code
is compiled first (an installed package has it; PYTHONDONTWRITEBYTECODE is cleared for the runs),
so the figures are those of an installed topodiag. --breakdown times the stages inside one process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "fixtures" / "hosts" / "hgx-h100-healthy-assembled"
SYSFS = ROOT / "fixtures" / "sysfs" / "hgx-h100-cx7-ndr-8rail"
SMALL_LOG = ROOT / "fixtures" / "kernel_log" / "kernel-log-aer-correctable-syslog-dmesg-amd-01.txt"
BUDGET_S = 0.6
TOPODIAG = [sys.executable, "-m", "topodiag"]


def commands() -> dict[str, list[str]]:
    members = sorted(str(p) for p in (SCENARIO / "commands").iterdir())
    return {
        "check-bundle": TOPODIAG + ["check", "--from", str(SCENARIO), "--format", "json"],
        "check-files": TOPODIAG + ["check", "--from", *members, "--format", "json"],
        "check-text": TOPODIAG + ["check", "--from", str(SCENARIO), "--format", "text"],
        "check-1k": TOPODIAG + ["check", "--from", str(SMALL_LOG), "--format", "json"],
        "prolog": TOPODIAG + ["prolog", "--sysfs-root", str(SYSFS)],
        "pass": [sys.executable, "-c", "pass"],
        "networkx": [sys.executable, "-c", "import networkx"],
        "imports": [sys.executable, "-c", "import typer, rich, networkx"],
        "typer": [sys.executable, "-c", "import typer"],  # what the prolog needs besides itself
    }


def wall(argv: list[str], env: dict) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+sys) of one run in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    cwd = env.get("PYTHONPATH", ROOT)  # `python -m` puts the working directory first on sys.path
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd, check=False)
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


BREAKDOWN = r"""
import io, sys, time
t = [("start", time.perf_counter())]
def mark(n): t.append((n, time.perf_counter()))
import typer; mark("import typer")
from topodiag.cli import app; mark("import topodiag.cli")
from topodiag.engine import load_catalog, load_checks, run; mark("import engine")
from topodiag.model import build; mark("import model")
from topodiag import pipeline; mark("import pipeline")
g = pipeline.load([sys.argv[1]]); mark("load + parse")
topo = pipeline.build_topology(g); mark("build model")
prof, how = pipeline.choose_profile(None, topo); mark("profiles")
cat = load_catalog(examples=False); mark("load catalog")
load_checks(); mark("import checks")
out = run(cat, pipeline.engine_inputs(g, topo, prof)); mark("run rules")
import json
from topodiag.render.json_report import report
d = pipeline.Diagnosis(out, topo, g.statuses, prof, how, catalog=cat)
json.dumps(report(d)); mark("json report")
prev = t[0][1]
for name, x in t[1:]:
    print(f"  {name:22s} {1000 * (x - prev):6.1f} ms"); prev = x
print(f"  {'total':22s} {1000 * (t[-1][1] - t[0][1]):6.1f} ms")
"""

# --startup: where check-1k's CPU goes, its stages imported one by one before main() runs the rest.
STARTUP = r"""
import sys, time
T = time.process_time
t = [("start", T())]
def mark(n): t.append((n, T()))
import typer; mark("import typer")
import topodiag.cli; mark("import topodiag.cli (app only)")
import topodiag.cli.check; mark("import cli.check")
from topodiag import parsers, catalogues
f = sys.argv[1]; text = open(f).read()
for s in parsers.SOURCES: parsers.get(s)
mark("import every parser (detection)")
parsers.detect_all(text); mark("sniff (nvidia-smi catalogue)")
catalogues.for_reader("kernel_log"); mark("kernel_log catalogues (5)")
from topodiag.engine import load_catalog, load_checks; mark("import engine")
cat = load_catalog(examples=False); mark("rule catalogue (63 TOML)")
load_checks(); mark("import check modules")
from topodiag import pipeline; mark("import pipeline")
sys.argv = ["topodiag", "check", "--from", f, "--format", "json"]
import io, contextlib
with contextlib.redirect_stdout(io.StringIO()):
    try: topodiag.cli.main()
    except SystemExit: pass
mark("the run itself (rest)")
prev = t[0][1]
for n, x in t[1:]:
    print(f"  {n:34s} {1000*(x-prev):6.1f} ms"); prev = x
print(f"  {'total (CPU, this process)':34s} {1000*(t[-1][1]):6.1f} ms")
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--breakdown", action="store_true")
    ap.add_argument("--startup", action="store_true", help="only the stages of check-1k in one process, CPU ms")
    ap.add_argument("--baseline", metavar="TREE", help="a source tree (with topodiag/) to run each topodiag "
                    "command from as well, as NAME@base, alternating with this one")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    if args.startup:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "topodiag")], check=True)
        return subprocess.run([sys.executable, "-c", STARTUP, str(SMALL_LOG)], env=env, cwd=ROOT).returncode
    envs: dict[str, dict] = {}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "topodiag")], check=True)
    cmds = commands()
    if args.baseline:
        base_tree = str(Path(args.baseline).resolve())
        subprocess.run([sys.executable, "-m", "compileall", "-q", base_tree + "/topodiag"], check=True)
        for name in [n for n, argv in cmds.items() if argv[:3] == TOPODIAG]:
            cmds[name + "@base"] = cmds[name]
            envs[name + "@base"] = {**env, "PYTHONPATH": base_tree}
    for name, argv in cmds.items():  # warm-up: byte-code of site-packages, page cache
        wall(argv, envs.get(name, env))
    times: dict[str, list[float]] = {name: [] for name in cmds}
    cpu: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(args.runs):
        for name, argv in cmds.items():
            w, c = wall(argv, envs.get(name, env))
            times[name].append(w)
            cpu[name].append(c)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    med_cpu = {name: statistics.median(ts) for name, ts in cpu.items()}
    print(f"{'command':18s} {'median':>8s} {'min':>8s} {'max':>8s} {'cpu med':>8s}  (n={args.runs}, wall; cpu = user+sys)")
    for name, ts in times.items():
        print(f"{name:18s} {1000 * med[name]:7.0f}ms {1000 * min(ts):7.0f}ms {1000 * max(ts):7.0f}ms "
              f"{1000 * med_cpu[name]:7.0f}ms")
    base = med["pass"]
    for tag in ("", "@base") if args.baseline else ("",):
        print(f"prolog{tag} / bare imports (medians): {med['prolog' + tag] / med['imports']:.2f}x typer+rich+networkx "
              f"wall, {med_cpu['prolog' + tag] / med_cpu['imports']:.2f}x CPU; {med['prolog' + tag] / med['typer']:.2f}x "
              f"typer alone (issue 29: <= 1.5x the imports it needs)")
    print("ratios to `python -c pass` (medians):", ", ".join(f"{k} {med[k] / base:.1f}x" for k in med if k != "pass"))
    for name in ("check-bundle", "prolog"):
        verdict = "met" if med[name] <= BUDGET_S else "MISSED"
        print(f"{name}: {1000 * med[name]:.0f} ms median (budget {1000 * BUDGET_S:.0f} ms): {verdict}")
    print(json.dumps({"runs": args.runs, "median_ms": {k: round(1000 * v, 1) for k, v in med.items()},
                      "median_cpu_ms": {k: round(1000 * v, 1) for k, v in med_cpu.items()},
                      "ratio_to_pass": {k: round(v / base, 2) for k, v in med.items()},
                      "python": sys.version.split()[0], "cpus": os.cpu_count()}))
    if args.breakdown:
        print("inside one process (check-bundle):")
        subprocess.run([sys.executable, "-c", BREAKDOWN, str(SCENARIO)], env=env, cwd=ROOT, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
