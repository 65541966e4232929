"""Issue 25 (parts 3-4), on recorded sysfs trees: a node's GPUs are one set keyed by PCI bus id (an
8-GPU node is 8 GPUs, not 16, without NVML); a job step that sees 2 of 8 GPUs is judged as such, the
other 6 "not visible to this job", never missing, live and from its bundle alike; and GPUs the PCI bus
shows that nothing checked make `check` INCOMPLETE, and the prolog pass with a line naming them
(`--strict`: exit 3)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.exit_codes import ExitCode
from topodiag.live import gpu_scope_probe, sysfs_probe

ROOT = Path(__file__).resolve().parents[2]
FX = ROOT / "fixtures"
HGX = FX / "sysfs" / "hgx-h100-cx7-ndr-8rail"
JOBSTEP = FX / "sysfs" / "hgx-h100-jobstep-2of8"  # HGX above, inside a step given /dev/nvidia0-1 (README)
TOPO = FX / "nvidia_smi_topo_m" / "topo-h100-hgx-nv18-8nic-pix-gpunumaid-01.txt"
NVML = FX / "nvml" / "nvml-invented-h100-hgx-8gpu-nvswitch-01.json"
BUS = ["0000:13:00.0", "0000:23:00.0", "0000:33:00.0", "0000:43:00.0",
       "0000:93:00.0", "0000:a3:00.0", "0000:b3:00.0", "0000:c3:00.0"]  # the trees' GPUs, bus id order
JOB = ["0000:33:00.0", "0000:43:00.0"]  # /dev/nvidia0 and /dev/nvidia1 by the tree's Device Minor lines
STEP_ENV = {"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "0", "SLURM_STEP_GPUS": "2,3", "CUDA_VISIBLE_DEVICES": "0,1"}
SCOPE_VARS = gpu_scope_probe.ENV_VARS


def run(*args: str):
    res = CliRunner().invoke(app, list(args))
    return res, json.loads(res.stdout) if res.stdout.strip().startswith("{") else None


def codes(report: dict) -> list[tuple[str, str]]:
    return sorted((f["code"], f["severity"]) for f in report["findings"])


def by_code(report: dict, code: str) -> list[dict]:
    return [f for f in report["findings"] if f["code"] == code]


@pytest.fixture
def no_nvml(tmp_path, monkeypatch):
    """A GPU node installed without the [nvml] extra: pynvml does not import; no tool on PATH; none of
    the job variables of the machine running the tests."""
    from tests.fakes import no_pynvml_child

    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setitem(sys.modules, "pyverbs", None)
    no_pynvml_child.use(monkeypatch)  # the NVML probe runs in a child process: it must not find pynvml either
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    for var in SCOPE_VARS:
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def sysfs_json(tree: Path) -> str:
    return json.dumps(sysfs_probe.probe_json(sysfs_probe.probe(str(tree))))


def nvml_of(busids: list[str]) -> dict:
    """The 8-GPU NVML probe cut to the GPUs with these bus ids, renumbered from 0: what NVML lists in a
    job step whose cgroup allows only them (the pairs kept are theirs)."""
    text = "".join(ln for ln in NVML.read_text().splitlines(keepends=True) if not ln.startswith("#@"))
    data = json.loads(text)
    keep = [g for g in data["gpus"] if g["pci_bus_id"] in busids]
    new = {g["index"]: i for i, g in enumerate(keep)}
    for g in keep:
        g["index"] = new[g["index"]]
    data["gpus"] = keep
    data["pairs"] = [dict(p, a=new[p["a"]], b=new[p["b"]]) for p in data["pairs"] if p["a"] in new and p["b"] in new]
    return data


# -- one set keyed by PCI bus id ---------------------------------------------------------------------

def test_an_8_gpu_node_without_nvml_is_8_gpus_not_16(tmp_path):
    """`topo -m` names GPU0-7 by index, the PCI tree names them by bus id: the same 8 GPUs, matched in
    bus id order (nvidia-smi's numbering), never summed."""
    import topodiag

    (tmp_path / "sysfs.json").write_text(sysfs_json(HGX))
    (tmp_path / "topo.txt").write_text(TOPO.read_text())
    d = topodiag.diagnose([tmp_path])
    assert d.topology.gpus() == [f"gpu:{i}" for i in range(8)]
    assert [d.topology.node(f"gpu:{i}")["busid"] for i in range(8)] == BUS
    assert d.topology.node("gpu:2")["pcie_link_width"] == 16  # the PCI tree's facts are on topo -m's GPU
    assert any("matched to the PCI bus's in bus id order" in n for n in d.topology.notes)
    assert not [f for f in d.findings if f.code in ("SYS005", "TOPO006")]  # topo -m listed all 8
    res, plan = run("plan", "--from", str(tmp_path), "--format", "json")
    assert res.exit_code == 0, res.output
    assert plan["gpus_per_node"] == 8


def test_index_lists_and_the_bus_are_not_matched_when_they_differ_and_never_summed(tmp_path):
    """topo -m of a 2-GPU node beside the 8-GPU PCI tree: nothing is matched (the counts differ), the
    node counts 8 (the bus's), and TOPO006 says nvidia-smi lists 2 of the 8 on the bus."""
    import topodiag

    two = FX / "nvidia_smi_topo_m"
    pick = next(p for p in sorted(two.glob("*.txt")) if topodiag.diagnose([p]).topology.gpus() == ["gpu:0", "gpu:1"])
    (tmp_path / "sysfs.json").write_text(sysfs_json(HGX))
    (tmp_path / "topo.txt").write_text(pick.read_text())
    d = topodiag.diagnose([tmp_path])
    from topodiag.model.gpu_set import inventory

    assert inventory(d.topology)["count"] == 8
    [f] = [f for f in d.findings if f.code == "TOPO006"]
    assert f.severity.name.lower() == "error" and "(2 listed of 8 on the bus visible here" in f.message


# -- no silent OK without NVML -----------------------------------------------------------------------

def test_prolog_on_a_gpu_node_without_nvml_passes_naming_the_gpus_not_checked(no_nvml):
    res = CliRunner().invoke(app, ["prolog", "--sysfs-root", str(HGX)])
    assert res.exit_code == ExitCode.OK, res.output
    assert res.stdout == "topodiag: incomplete: SYS005 gpus-not-checked gpu:0000:13:00.0, gpu:0000:23:00.0 +6 more\n"
    res = CliRunner().invoke(app, ["prolog", "--sysfs-root", str(HGX), "--strict"])
    assert res.exit_code == ExitCode.INCOMPLETE


def test_check_of_that_node_and_of_its_bundle_is_incomplete(no_nvml, tmp_path):
    res, live = run("check", "--sysfs-root", str(HGX), "--format", "json")
    assert res.exit_code == ExitCode.INCOMPLETE, res.output
    [f] = by_code(live, "SYS005")
    assert f["subjects"] == [f"gpu:{b}" for b in BUS] and f["severity"] == "warning"
    assert f["message"].startswith("8 NVIDIA GPU(s) on the PCI bus were not checked (0000:13:00.0, 0000:23:00.0, "
                                   "0000:33:00.0, 0000:43:00.0 +4 more): NVML was not read")
    assert live["summary"]["verdict"] == "incomplete" and "were not checked" in live["summary"]["verdict_detail"]
    res = CliRunner().invoke(app, ["collect", "--sysfs-root", str(HGX), "-o", str(tmp_path / "b")])
    assert res.exit_code == 0, res.output
    res, offline = run("check", "--from", str(tmp_path / "b"), "--format", "json")
    assert res.exit_code == ExitCode.INCOMPLETE
    assert codes(offline) == codes(live)


# -- a job step that sees 2 of 8 GPUs ------------------------------------------------------------------

def test_a_job_step_is_judged_on_its_own_gpus_live_and_from_its_bundle(no_nvml, tmp_path):
    for var, value in STEP_ENV.items():
        no_nvml.setenv(var, value)
    res, live = run("check", "--sysfs-root", str(JOBSTEP), "--format", "json")
    [hidden] = by_code(live, "TOPO006")
    assert hidden["severity"] == "info" and set(hidden["subjects"]) == {f"gpu:{b}" for b in BUS if b not in JOB}
    assert "6 NVIDIA GPU(s) on the PCI bus not visible to this job" in hidden["message"]
    assert "/dev/nvidia0, /dev/nvidia1" in hidden["message"] and "2 visible" in hidden["message"]
    [unchecked] = by_code(live, "SYS005")  # no NVML here: the job's two GPUs were not checked
    assert unchecked["subjects"] == [f"gpu:{b}" for b in JOB]
    assert res.exit_code == ExitCode.INCOMPLETE
    res = CliRunner().invoke(app, ["collect", "--sysfs-root", str(JOBSTEP), "-o", str(tmp_path / "b")])
    assert res.exit_code == 0, res.output
    recorded = json.loads((tmp_path / "b" / "probes" / "gpu_scope.json").read_text())
    assert recorded["env"] == STEP_ENV and "c 195:0 rwm" in recorded["cgroup"]["devices_list"]
    for var in STEP_ENV:  # judged from the bundle, elsewhere: the job's variables come from the record
        no_nvml.delenv(var)
    res, offline = run("check", "--from", str(tmp_path / "b"), "--format", "json")
    assert [(f["code"], f["severity"], f["subjects"]) for f in offline["findings"]] == \
        [(f["code"], f["severity"], f["subjects"]) for f in live["findings"]]


def test_nvml_listing_the_jobs_two_gpus_is_no_gpu_missing(tmp_path):
    """In the step NVML lists only the 2 GPUs the cgroup allows. With the scope recorded: the 6 others
    are an info; without it (before issue 25), TOPO006 called them missing."""
    (tmp_path / "sysfs.json").write_text(sysfs_json(JOBSTEP))
    (tmp_path / "nvml.json").write_text(json.dumps(nvml_of(JOB)))
    res, unscoped = run("check", "--from", str(tmp_path), "--select", "TOPO006", "--format", "json")
    assert codes(unscoped) == [("TOPO006", "error")] and "6 NVIDIA GPU(s) on the PCI bus that NVML does not list" \
        in unscoped["findings"][0]["message"]
    scope = gpu_scope_probe.probe(str(JOBSTEP), env=STEP_ENV)
    (tmp_path / "gpu_scope.json").write_text(json.dumps(scope))
    res, report = run("check", "--from", str(tmp_path), "--select", "TOPO006", "--format", "json")
    assert res.exit_code == ExitCode.OK, res.output
    assert codes(report) == [("TOPO006", "info")]
    assert set(report["findings"][0]["subjects"]) == {f"gpu:{b}" for b in BUS if b not in JOB}


def test_a_prolog_with_the_next_jobs_variables_judges_the_whole_node(tmp_path):
    """Slurm runs the prolog with SLURM_JOB_GPUS and CUDA_VISIBLE_DEVICES of the job, outside its
    cgroup: nothing is hidden there; the same variables in the job itself are its scope."""
    from topodiag.model.scope import visible
    from topodiag.parsers import gpu_scope

    env = {"SLURM_JOB_GPUS": "2,3", "CUDA_VISIBLE_DEVICES": "2,3"}
    for extra, want in (({"SLURM_SCRIPT_CONTEXT": "prolog_slurmd"}, None), ({}, JOB)):
        record = gpu_scope.parse(json.dumps(gpu_scope_probe.probe(str(HGX), env={**env, **extra})))
        assert visible(record, BUS)[0] == want
