"""prolog --mark-offline: drain on a finding, resume what topodiag drained, never replace another
reason (NHC's rule). scontrol is a script on PATH that answers `show node` from a file and logs
every `update`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.actions.slurm import parse_show_node
from tests.fakes import nvml_child

ROOT = Path(__file__).resolve().parents[2]
H100_SYSFS = ROOT / "fixtures" / "sysfs" / "hgx-h100-cx7-ndr-8rail"
AZURE_SYSFS = ROOT / "fixtures" / "sysfs" / "azure-ib-initializing-an0"  # mlx5_ib0 Initializing: IB001 error


def fake_slurm(bin_dir: Path, tmp_path: Path) -> None:
    """scontrol (show node from show.txt, updates logged to updates.log) and sinfo (-R from
    reasons.txt, -N from nodes.txt: 100 nodes unless a test says otherwise), with absolute paths
    only: they run with no PATH too."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    state, log = tmp_path / "show.txt", tmp_path / "updates.log"
    reasons, nodes = tmp_path / "reasons.txt", tmp_path / "nodes.txt"
    if not nodes.exists():
        nodes.write_text("".join(f"gpu{i:03d}\n" for i in range(1, 101)))
        reasons.write_text("")
    (bin_dir / "scontrol").write_text(f"""#!/bin/sh
if [ "$1" = "show" ]; then /bin/cat {state}; exit 0; fi
if [ "$1" = "update" ]; then echo "$@" >> {log}; exit 0; fi
exit 1
""")
    (bin_dir / "sinfo").write_text(f"""#!/bin/sh
if [ "$1" = "-R" ]; then /bin/cat {reasons}; exit 0; fi
if [ "$2" = "-N" ]; then /bin/cat {nodes}; exit 0; fi
exit 1
""")
    for tool in ("scontrol", "sinfo"):
        (bin_dir / tool).chmod(0o755)


@pytest.fixture
def scontrol(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    fake_slurm(bin_dir, tmp_path)
    state = tmp_path / "show.txt"
    log = tmp_path / "updates.log"
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("TOPODIAG_SLURM_BIN_DIRS", str(tmp_path / "no-standard-place"))  # never this machine's
    probe = ROOT / "fixtures" / "nvml" / "nvml-invented-h100-hgx-8gpu-nvswitch-01.json"
    text = "".join(ln for ln in probe.read_text().splitlines(keepends=True) if not ln.startswith("#@"))
    nvml_child.use(monkeypatch, json.loads(text))  # the H100 tree's GPUs (real pynvml, fake libnvidia-ml)
    monkeypatch.setitem(sys.modules, "pyverbs", None)

    def set_state(line: str) -> Path:
        state.write_text(line + "\n")
        return log
    return set_state


def prolog(sysfs: Path, *extra: str):
    return CliRunner().invoke(app, ["prolog", "--sysfs-root", str(sysfs), "--mark-offline", "--node", "gpu017", *extra])


def test_a_finding_drains_an_idle_node(scontrol):
    log = scontrol("NodeName=gpu017 Arch=x86_64 CoresPerSocket=48 State=IDLE ThreadsPerCore=2")
    res = prolog(AZURE_SYSFS)
    assert res.exit_code == 1 and res.stdout.startswith("topodiag: IB001 mlx5_ib0 port 1 Initializing/LinkUp")
    [update] = log.read_text().splitlines()
    assert update.startswith("update nodename=gpu017 state=drain reason=topodiag: IB001 mlx5_ib0 port 1 Initializing/LinkUp")
    assert "topodiag: drained gpu017" in res.stderr


def test_another_reason_is_never_replaced(scontrol):
    log = scontrol("NodeName=gpu017 State=IDLE+DRAIN Reason=replacing PSU [admin@2026-12-01T10:00:00] Comment=x")
    res = prolog(AZURE_SYSFS)
    assert res.exit_code == 1 and not log.exists()
    assert "reason topodiag did not set (replacing PSU): left as it is" in res.stderr


def test_a_passing_check_resumes_only_what_topodiag_drained(scontrol):
    log = scontrol("NodeName=gpu017 State=IDLE+DRAIN Reason=topodiag: IB001 mlx5_ib0 port 1 Initializing/LinkUp [root@2026-12-02T20:00:00]")
    res = prolog(H100_SYSFS)
    assert res.exit_code == 0 and log.read_text().splitlines() == ["update nodename=gpu017 state=resume"]
    log.unlink()
    scontrol("NodeName=gpu017 State=DOWN+DRAIN Reason=Not responding [slurm@2026-12-02T20:00:00]")
    res = prolog(H100_SYSFS)
    assert res.exit_code == 0 and not log.exists()


def test_show_node_lines():
    s = parse_show_node("NodeName=n1 Arch=x86_64 State=MIXED+DRAIN* Reason=topodiag: NVL001 gpu:3 [root@t] Comment=(null)", "n1")
    assert s.states == {"MIXED", "DRAIN"} and s.reason == "topodiag: NVL001 gpu:3" and s.offline and s.ours
    s = parse_show_node("NodeName=n1 State=IDLE Reason=(null)", "n1")
    assert not s.offline and s.reason is None


def test_the_readme_prolog_script_drains_and_fails_the_job(scontrol, tmp_path, monkeypatch):
    """The README's prolog script, run by sh as slurmd would, with topodiag as this checkout and the
    Azure sysfs tree (IB001) in place of /sys; no NVML in the child (it has no fake pynvml)."""
    import re
    import subprocess

    readme = (ROOT / "README.md").read_text()
    [script] = re.findall(r"```sh\n(#!/bin/sh\n# /etc/slurm/prolog\.d/topodiag\.sh.+?)```", readme, re.S)
    script = script.replace("/opt/topodiag/bin/topodiag", f"{sys.executable} -m topodiag")
    script = script.replace("--config /etc/topodiag/site.toml", f"--sysfs-root {AZURE_SYSFS}")
    path = tmp_path / "prolog.sh"
    path.write_text(script)
    monkeypatch.setenv("SLURMD_NODENAME", "gpu017")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    log = scontrol("NodeName=gpu017 State=ALLOCATED ThreadsPerCore=2")
    res = subprocess.run(["sh", str(path)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    assert res.stdout.startswith("topodiag: IB001 mlx5_ib0 port 1 Initializing/LinkUp")
    [update] = log.read_text().splitlines()
    assert update.startswith("update nodename=gpu017 state=drain reason=topodiag: IB001 mlx5_ib0 port 1 Initializing/LinkUp")


@pytest.mark.parametrize("shown", [
    "",  # an empty answer
    "slurm_load_node error: Unable to contact slurm controller (connect failure)",
    "\x00\xff garbage \x1b[31m",
    "NodeName=gpu0170 State=IDLE",  # another node's line
    "NodeName=gpu017 Arch=x86_64 CoresPerSocket=48",  # no State=
])
def test_a_node_whose_state_cannot_be_read_is_not_drained(scontrol, shown):
    """Unreadable `scontrol show node` output was taken as "online" and the node drained."""
    log = scontrol(shown)
    res = prolog(AZURE_SYSFS)
    assert res.exit_code == 1 and res.stdout.startswith("topodiag: IB001")  # the finding still fails the job
    assert not log.exists()  # no update: neither drained nor resumed
    [said] = [ln for ln in res.stderr.splitlines() if "gpu017" in ln]
    assert said.startswith("topodiag: not draining gpu017: its state is unknown") and said.endswith("left as it is")
    assert "\x1b" not in said and "\x00" not in said


def test_a_hanging_scontrol_is_bounded_by_the_deadline(scontrol, tmp_path):
    """scontrol added up to 20 s past --deadline; now every call gets only the time left."""
    import time

    script = tmp_path / "bin" / "scontrol"
    script.write_text("#!/bin/sh\nsleep 30\n")
    start = time.monotonic()
    res = prolog(AZURE_SYSFS, "--deadline", "2")
    took = time.monotonic() - start
    assert took < 15, took  # scontrol sleeps 30 s: well under it means it was not waited for
    assert res.exit_code == 1
    assert "topodiag: not draining gpu017: its state is unknown" in res.stderr


def test_show_node_garbage_is_unknown():
    assert parse_show_node("", "n1") is None
    assert parse_show_node("State=IDLE", "n1") is None  # not this node's line
    assert parse_show_node("NodeName=n10 State=IDLE", "n1") is None
    assert parse_show_node("NodeName=n1 State=IDLE", "n1").states == {"IDLE"}


def test_the_drain_reason_is_one_printable_line(scontrol, monkeypatch):
    from topodiag.actions import slurm

    log = scontrol("NodeName=gpu017 State=IDLE")
    slurm.mark("gpu017", failed=True, reason="topodiag: IB001 nic:\x1b[31mmlx5_0\nrm -rf x\x07")
    [update] = log.read_text().splitlines()
    assert update == "update nodename=gpu017 state=drain reason=topodiag: IB001 nic: [31mmlx5_0 rm -rf x"
