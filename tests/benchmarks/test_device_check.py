"""benchmarks/device_check.sh, which no GPU machine of this project has run yet: it parses (bash -n),
its dry run names every step with its command and runs nothing, and on a machine without an NVIDIA
GPU (PATH without nvidia-smi) it skips the GPU steps, each with the reason, and runs the rest."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "device_check.sh"
STEPS = ["env", "install", "topo_m", "nvlink_s", "smi_q", "nvml_probe", "check_live", "prolog", "collect",
         "check_bundle", "compare", "show", "plan"]
GPU_STEPS = {"topo_m", "nvlink_s", "smi_q", "nvml_probe"}

pytestmark = pytest.mark.skipif(shutil.which("bash") is None or shutil.which("timeout") is None,
                                reason="needs bash and coreutils timeout")


def run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    env = {"PATH": "/usr/bin:/bin", "OUT": str(tmp_path / "out"), "PYTHON": sys.executable, "LC_ALL": "C",
           "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    res = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=280)
    with open(tmp_path / "out" / "steps.tsv") as fh:
        return res, list(csv.DictReader(fh, delimiter="\t"))


def test_the_script_parses():
    res = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_a_dry_run_names_every_step_and_runs_nothing(tmp_path):
    res, rows = run(tmp_path, "--dry-run")
    assert res.returncode == 0, res.stderr
    assert [r["step"] for r in rows] == STEPS
    assert all(r["exit"] == "dry-run" for r in rows[1:])
    by = {r["step"]: r["note"] for r in rows}
    assert by["topo_m"] == "nvidia-smi topo -m" and by["nvml_probe"].endswith("-m topodiag.live.nvml_probe")
    assert by["collect"].endswith(f"collect -o {tmp_path / 'out' / 'bundle'} --deadline 60")
    assert not (tmp_path / "out" / "bundle").exists() and not (tmp_path / "out" / "check-live.json").exists()


@pytest.mark.skipif(shutil.which("nvidia-smi", path="/usr/bin:/bin") is not None, reason="this machine has nvidia-smi")
def test_without_a_gpu_the_gpu_steps_are_skipped_and_the_rest_runs(tmp_path):
    res, rows = run(tmp_path)
    by = {r["step"]: r for r in rows}
    assert [r["step"] for r in rows] == STEPS
    for step in GPU_STEPS:
        assert by[step]["exit"] == "skipped" and by[step]["note"].startswith("no GPU: nvidia-smi not found")
    assert "the GPU steps are skipped, the rest runs" in res.stderr
    for step in ("check_live", "prolog", "collect", "check_bundle", "show"):
        assert by[step]["exit"] == "0", (step, by[step], res.stderr[-2000:])
    assert by["plan"]["exit"] in ("0", "3")
    # compare: 0 when this machine's live report and its bundle's agree (two collections, a moment
    # apart: a counter or a kernel line may differ on a real host; tests/cli/test_bundle_is_live.py
    # holds bundle = live on replayed hosts)
    assert by["compare"]["exit"] in ("0", "1") and (tmp_path / "out" / "compare.txt").stat().st_size > 0
    assert res.returncode == (0 if by["compare"]["exit"] == "0" else 1), res.stderr
    assert (tmp_path / "out" / "bundle" / "manifest.json").is_file()
    assert os.path.getsize(tmp_path / "out" / "summary.json") > 0
