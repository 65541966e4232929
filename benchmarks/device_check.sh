#!/usr/bin/env bash
# The device check: one script, under 5 minutes on one GPU node, that installs topodiag, runs it
# the ways a site runs it and keeps every real output so that it can become a fixture.
#
#   bash benchmarks/device_check.sh [--dry-run]
#
#   OUT=DIR      where everything goes (default ./device-out; the device tool sets OUT)
#   PYTHON=EXE   the interpreter (default python3); BUDGET_S=270 the whole run's bound in seconds
#   WHEELS=DIR   a folder of wheels for an offline `pip install` when the dependencies are missing
#
# Steps, each with its exit code and wall time in OUT/steps.tsv (and OUT/summary.json):
#   env            python, kernel, nvidia-smi -L and the driver            OUT/env.txt
#   install        topodiag importable from this checkout (PYTHONPATH), else pip install -e . offline
#   topo_m, nvlink_s, smi_q   nvidia-smi topo -m, nvlink -s, -q            OUT/raw/*.txt
#   nvml_probe     the NVML probe in its own process                        OUT/raw/nvml.json
#   check_live     topodiag check --format json (this node, live)           OUT/check-live.json
#   prolog         topodiag prolog --deadline 10                            OUT/prolog.txt
#   collect        topodiag collect -o OUT/bundle                           OUT/bundle/
#   check_bundle   topodiag check --from OUT/bundle --format json           OUT/check-bundle.json
#   compare        the live and bundle reports: the same exit code, findings and inputs
#   show, plan     topodiag show and plan --from the bundle                 OUT/show.txt, OUT/plan.txt
# and, for fixtures, OUT/fixtures/<source>/recorded-<gpus>-<date>.txt: each real output with the
# `#@` provenance header the fixture index asks for (write `#@ expected:` by hand after reading it).
#
# Without an NVIDIA GPU (no nvidia-smi, or nvidia-smi -L fails) the GPU steps are skipped, each with
# its reason, and the rest runs: a host without GPU is a normal host for topodiag. --dry-run prints
# each step's command and runs nothing. The script exits 0 when every step that ran exited as
# expected (check, prolog: 0 or 1, findings are results), else 1.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT="${OUT:-./device-out}"
PY="${PYTHON:-python3}"
BUDGET_S="${BUDGET_S:-270}"
DRY=0
case "${1:-}" in
  --dry-run) DRY=1 ;;
  "") ;;
  *) echo "usage: bash benchmarks/device_check.sh [--dry-run]" >&2; exit 2 ;;
esac
export LC_ALL=C
mkdir -p "$OUT/raw" || exit 2
OUT=$(cd "$OUT" && pwd)
STEPS="$OUT/steps.tsv"
printf 'step\texit\tseconds\tnote\n' > "$STEPS"
START=$(date +%s)
FAILED=0

record() {  # name, exit, seconds, note
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$STEPS"
  printf 'device_check: %-13s exit %-8s %6ss  %s\n' "$1" "$2" "$3" "$4" >&2
}

skip() {  # name, why
  record "$1" skipped 0 "$2"
}

# step NAME LIMIT_S OUTFILE OK_CODES -- CMD...: run CMD under the time left (at most LIMIT_S), stdout
# to OUT/OUTFILE, stderr to OUT/OUTFILE.stderr; OK_CODES (e.g. "0 1") are the exits that are results.
step() {
  local name=$1 limit=$2 outfile=$3 ok=$4
  shift 5
  local left=$((BUDGET_S - ($(date +%s) - START)))
  if [ "$DRY" = 1 ]; then
    record "$name" dry-run 0 "$*"
    return 0
  fi
  if [ "$left" -le 3 ]; then
    skip "$name" "no time left of the ${BUDGET_S} s budget"
    return 0
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout -k 5 "$limit" "$@" > "$OUT/$outfile" 2> "$OUT/$outfile.stderr"
  rc=$?
  t1=$(date +%s.%N)
  local note="-> $outfile"
  [ "$rc" = 124 ] && note="timed out after ${limit} s"
  case " $ok " in *" $rc "*) ;; *) FAILED=1; note="$note (unexpected exit; see $outfile.stderr)" ;; esac
  record "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" "$note"
  return "$rc"
}

# -- env, GPU or not ---------------------------------------------------------------------------
GPU=0
WHY_NO_GPU=""
if ! command -v nvidia-smi > /dev/null 2>&1; then
  WHY_NO_GPU="nvidia-smi not found: no NVIDIA driver on this machine"
elif ! timeout 30 nvidia-smi -L > /dev/null 2>&1; then
  WHY_NO_GPU="nvidia-smi -L failed (no GPU visible, or the driver is not loaded)"
else
  GPU=1
fi
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname 2>/dev/null)"
  echo "kernel: $(uname -r)"
  echo "python: $("$PY" -c 'import sys; print(sys.version.split()[0])' 2>&1)"
  echo "checkout: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [ "$GPU" = 1 ]; then
    nvidia-smi -L 2>&1
    echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
  else
    echo "gpu: none ($WHY_NO_GPU)"
  fi
} > "$OUT/env.txt"
record env 0 0 "-> env.txt"
[ "$GPU" = 1 ] || echo "device_check: no GPU: $WHY_NO_GPU; the GPU steps are skipped, the rest runs" >&2

# -- install -----------------------------------------------------------------------------------
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
IMPORTS='import topodiag, typer, rich, networkx; print(topodiag.__version__)'
if [ "$DRY" = 1 ] || "$PY" -c "$IMPORTS" > /dev/null 2>&1; then
  step install 60 install.txt "0" -- "$PY" -c "$IMPORTS"
else  # the dependencies are missing: pip, offline (the device machine reaches nothing outside)
  step install 120 install.txt "0" -- "$PY" -m pip install --no-index ${WHEELS:+--find-links "$WHEELS"} -e "$ROOT[nvml]"
fi
TD=("$PY" -m topodiag)

# -- the real outputs --------------------------------------------------------------------------
if [ "$GPU" = 1 ] || [ "$DRY" = 1 ]; then
  step topo_m 60 raw/nvidia_smi_topo_m.txt "0" -- nvidia-smi topo -m
  step nvlink_s 60 raw/nvidia_smi_nvlink_s.txt "0" -- nvidia-smi nvlink -s
  step smi_q 90 raw/nvidia_smi_q.txt "0" -- nvidia-smi -q
  step nvml_probe 60 raw/nvml.json "0" -- "$PY" -m topodiag.live.nvml_probe
else
  for s in topo_m nvlink_s smi_q nvml_probe; do skip "$s" "no GPU: $WHY_NO_GPU"; done
fi

# -- topodiag as a site runs it ----------------------------------------------------------------
step check_live 90 check-live.json "0 1 3" -- "${TD[@]}" check --format json --deadline 60
step prolog 30 prolog.txt "0 1" -- "${TD[@]}" prolog --deadline 10
rm -rf "$OUT/bundle"
step collect 90 collect.txt "0" -- "${TD[@]}" collect -o "$OUT/bundle" --deadline 60
if [ -f "$OUT/bundle/manifest.json" ] || [ "$DRY" = 1 ]; then
  step check_bundle 60 check-bundle.json "0 1 3" -- "${TD[@]}" check --from "$OUT/bundle" --format json
  step compare 30 compare.txt "0" -- "$PY" - "$OUT/check-live.json" "$OUT/check-bundle.json" "$OUT/bundle" <<'EOF'
import json, sys
live_path, bundle_path, root = sys.argv[1:4]
def load(path, old):
    text = open(path).read()
    if not text.lstrip().startswith("{"):
        sys.exit(f"{path}: no JSON report")
    report = json.loads(text.replace(old, "live") if old else text)
    return {k: report.get(k) for k in ("findings", "inputs", "summary")}
live, offline = load(live_path, None), load(bundle_path, root)
same = {k: live[k] == offline[k] for k in live}
print(json.dumps({"same": same, "live_findings": [(f["code"], f["severity"], f["subjects"]) for f in live["findings"]],
                  "bundle_findings": [(f["code"], f["severity"], f["subjects"]) for f in offline["findings"]]}, indent=1))
sys.exit(0 if same["findings"] and same["summary"] else 1)
EOF
  step show 60 show.txt "0" -- "${TD[@]}" show --from "$OUT/bundle"
  # plan needs GPUs in the inputs: without one it exits 3 (no GPU in the inputs), a result too
  step plan 60 plan.txt "$([ "$GPU" = 1 ] && echo 0 || echo '0 3')" -- "${TD[@]}" plan --from "$OUT/bundle" --nodes 2
else
  for s in check_bundle compare show plan; do skip "$s" "collect wrote no bundle"; done
fi

# -- fixture-ready copies ----------------------------------------------------------------------
if [ "$DRY" = 0 ] && [ "$GPU" = 1 ]; then
  gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-' | tr -cd 'A-Za-z0-9-')
  count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
  name="recorded-${count}x${gpus:-gpu}-$(date -u +%Y%m%d)"
  for pair in nvidia_smi_topo_m:"nvidia-smi topo -m" nvidia_smi_nvlink_s:"nvidia-smi nvlink -s" \
              nvidia_smi_q:"nvidia-smi -q" nvml:"python -m topodiag.live.nvml_probe"; do
    src=${pair%%:*} cmd=${pair#*:}
    raw="$OUT/raw/$src.txt"; [ "$src" = nvml ] && raw="$OUT/raw/nvml.json"
    [ -s "$raw" ] || continue
    ext=txt; [ "$src" = nvml ] && ext=json
    mkdir -p "$OUT/fixtures/$src"
    {
      printf '#@ source: recorded by benchmarks/device_check.sh on %s (%s x %s, driver %s)\n' \
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$count" "${gpus:-?}" "${driver:-?}"
      printf '#@ command: %s (LC_ALL=C)\n' "$cmd"
      printf '#@ expected: FILL IN BY HAND after reading the output\n#@ ---\n'
      cat "$raw"
    } > "$OUT/fixtures/$src/$name.$ext"
  done
fi

# -- summary -----------------------------------------------------------------------------------
"$PY" - "$STEPS" "$OUT/summary.json" "$GPU" "$DRY" "$((  $(date +%s) - START ))" <<'EOF' || true
import csv, json, sys
steps_path, out, gpu, dry, total = sys.argv[1:6]
with open(steps_path) as fh:
    rows = list(csv.DictReader(fh, delimiter="\t"))
json.dump({"gpu": gpu == "1", "dry_run": dry == "1", "total_s": int(total), "steps": rows}, open(out, "w"), indent=1)
EOF
echo "device_check: $(( $(date +%s) - START )) s in all; steps in $STEPS, outputs in $OUT" >&2
exit "$FAILED"
