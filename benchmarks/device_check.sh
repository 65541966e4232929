#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: record real nvidia-smi outputs and an NVML probe as fixtures,
# and time live collection (the NVML probe against the nvidia-smi commands).
#
#   bash benchmarks/device_check.sh [OUTDIR]      # default: $OUT if set, else ./device-check-out
#
# Writes, each with a `#@` provenance header saying where and when it was recorded:
#   OUTDIR/nvidia_smi_topo_m/recorded-<gpu>-<date>.txt     nvidia-smi topo -m
#   OUTDIR/nvidia_smi_nvlink_s/recorded-<gpu>-<date>.txt   nvidia-smi nvlink -s
#   OUTDIR/nvidia_smi_nvlink_e/recorded-<gpu>-<date>.txt   nvidia-smi nvlink -e
#   OUTDIR/nvidia_smi_topo_p2p/recorded-<gpu>-<date>.txt   nvidia-smi topo -p2p r
#   OUTDIR/nvml/recorded-<gpu>-<date>.json                 python -m topodiag.sources.nvml_probe
#   OUTDIR/timings.json                                    wall times, 5 runs each, and the check's verdict
# Copy the fixture folders into fixtures/ and write each one's .expected.json by hand-checking the
# parser's output (see tests/fixtures_index.py). Needs python3 with topodiag importable (pip install
# -e . or PYTHONPATH=.) and nvidia-ml-py for the NVML probe. Exits 2 without nvidia-smi.
set -uo pipefail
cd "$(dirname "$0")/.."
OUTDIR="${1:-${OUT:-./device-check-out}}"
PY="${PYTHON:-python3}"
export LC_ALL=C

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "device_check: nvidia-smi not found: run this on a machine with an NVIDIA GPU" >&2
  exit 2
fi
mkdir -p "$OUTDIR"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-' | tr -cd 'A-Za-z0-9-')
count=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
day=$(date -u +%Y%m%d)
name="recorded-${count}x${gpu:-gpu}-${day}"
when=$(date -u +%Y-%m-%dT%H:%M:%SZ)

header() {  # $1: command, $2: expected line
  printf '#@ source: recorded by benchmarks/device_check.sh on %s (%s x %s, driver %s)\n' "$when" "$count" "${gpu:-?}" "${driver:-?}"
  printf '#@ url: none (recorded on a lent test machine, not published)\n'
  printf '#@ hardware (as stated): %s x %s, driver %s\n' "$count" "${gpu:-?}" "${driver:-?}"
  printf '#@ command: %s (LC_ALL=C)\n' "$1"
  printf '#@ expected: %s\n' "$2"
  printf '#@ ---\n'
}

record() {  # $1: source folder, $2: expected line, rest: argv
  local src=$1 expected=$2; shift 2
  mkdir -p "$OUTDIR/$src"
  local out="$OUTDIR/$src/$name.txt"
  { header "$*" "$expected"; timeout 60 "$@" 2>&1; } > "$out"
  echo "device_check: wrote $out (exit ${PIPESTATUS[0]})" >&2
}

record nvidia_smi_topo_m "fill in after reading: the GPU-GPU classes, NICs, NUMA" nvidia-smi topo -m
record nvidia_smi_nvlink_s "fill in after reading: links per GPU and their speed" nvidia-smi nvlink -s
record nvidia_smi_nvlink_e "fill in after reading: error counters" nvidia-smi nvlink -e
record nvidia_smi_topo_p2p "fill in after reading: P2P read status per pair" nvidia-smi topo -p2p r

mkdir -p "$OUTDIR/nvml"
{ header "python3 -m topodiag.sources.nvml_probe" "fill in after reading: GPUs, NVLinks, pairs"; \
  timeout 60 "$PY" -m topodiag.sources.nvml_probe; } > "$OUTDIR/nvml/$name.json"
echo "device_check: wrote $OUTDIR/nvml/$name.json" >&2

"$PY" - "$OUTDIR" <<'EOF'
import json, statistics, subprocess, sys, time
out = sys.argv[1]
runs = {
    "nvml_probe": [sys.executable, "-m", "topodiag.sources.nvml_probe"],
    "nvidia_smi_topo_m": ["nvidia-smi", "topo", "-m"],
    "nvidia_smi_nvlink_s": ["nvidia-smi", "nvlink", "-s"],
    "check_live_json": [sys.executable, "-m", "topodiag", "check", "--format", "json"],
    "prolog": [sys.executable, "-m", "topodiag", "prolog"],
}
times = {}
for name, argv in runs.items():
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        ts.append(time.perf_counter() - t)
    times[name] = {"median_s": round(statistics.median(ts), 3), "min_s": round(min(ts), 3), "max_s": round(max(ts), 3)}
verdict = subprocess.run([sys.executable, "-m", "topodiag", "check", "--format", "json"], capture_output=True, text=True)
report = json.loads(verdict.stdout) if verdict.stdout.strip().startswith("{") else {}
summary = {"timings": times, "check_exit_code": verdict.returncode,
           "findings": [(f["code"], f["severity"], f["message"][:160]) for f in report.get("findings", [])],
           "inputs": report.get("inputs", [])}
with open(f"{out}/timings.json", "w") as fh:
    json.dump(summary, fh, indent=1)
print(json.dumps(times, indent=1))
EOF
