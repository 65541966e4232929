"""Host scenarios (fixtures/hosts/<name>/, the bundle layout): `check` reports exactly what their
hand-written <name>.expected.json says, from the members' `#@ expected:` conclusions; and bundle
directories that cannot be trusted are refused with one line and exit 3."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.exit_codes import ExitCode
from tests.host_fixture import HOSTS, sha256

SCENARIOS = sorted(p.name for p in HOSTS.iterdir() if p.is_dir())


def check_json(path: Path):
    res = CliRunner().invoke(app, ["check", "--from", str(path), "--format", "json"])
    return res, json.loads(res.stdout) if res.stdout.strip().startswith("{") else None


def test_there_are_healthy_and_broken_scenarios():
    exits = {json.loads((HOSTS / f"{n}.expected.json").read_text())["exit_code"] for n in SCENARIOS}
    assert len(SCENARIOS) >= 10 and exits >= {0, 1}
    healthy = [n for n in SCENARIOS if not json.loads((HOSTS / f"{n}.expected.json").read_text())["findings"]]
    assert len(healthy) >= 2


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_findings_are_exactly_the_expected_ones(name):
    expected = json.loads((HOSTS / f"{name}.expected.json").read_text())
    res, report = check_json(HOSTS / name)
    assert report is not None, res.output
    assert res.exit_code == expected["exit_code"], res.output
    got = [(f["code"], f["severity"], set(f["subjects"])) for f in report["findings"]]
    want = [(f["code"], f["severity"], set(f["subjects"])) for f in expected["findings"]]
    assert sorted((c, s) for c, s, _ in got) == sorted((c, s) for c, s, _ in want), report["findings"]
    unmatched = list(got)
    for code, sev, subjects in want:  # each expected finding names (at least) its subjects
        match = next((g for g in unmatched if g[0] == code and g[1] == sev and subjects <= g[2]), None)
        assert match is not None, (code, sev, subjects, got)
        unmatched.remove(match)


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_members_are_whole_and_say_where_they_come_from(name):
    manifest = json.loads((HOSTS / name / "manifest.json").read_text())
    assert manifest["notes"], "a scenario's manifest says where its outputs came from"
    invented = any("invented" in n for n in manifest["notes"])
    for e in manifest["sources"]:
        if e["member"] is None:
            continue
        path = HOSTS / name / e["member"]
        assert sha256(path) == e["sha256"]
        first = path.read_text(errors="replace").splitlines()[0]
        assert first.startswith("#@ ") or invented, f"{e['member']}: a copy keeps its #@ provenance header"


# -- bundles that cannot be trusted ------------------------------------------------------------

def bundle(tmp_path: Path, sources: list[dict], files: dict[str, str] | None = None) -> Path:
    root = tmp_path / "b"
    (root / "commands").mkdir(parents=True)
    for rel, text in (files or {}).items():
        (root / rel).write_text(text)
    (root / "manifest.json").write_text(json.dumps({"schema_version": 1, "host": "n1", "sources": sources}))
    return root


TOPO = (HOSTS / "dgx1-v100-one-hca" / "commands" / "nvidia_smi_topo_m.txt").read_text()


@pytest.mark.parametrize("member, why", [
    ("../outside.txt", "relative path inside the bundle"),
    ("/etc/passwd", "relative path inside the bundle"),
    ("commands/../../outside.txt", "relative path inside the bundle"),
    ("commands/missing.txt", "not in the bundle"),
])
def test_members_outside_the_bundle_or_missing_are_refused(tmp_path, member, why):
    (tmp_path / "outside.txt").write_text(TOPO)
    root = bundle(tmp_path, [{"source": "nvidia_smi_topo_m", "status": "ok", "member": member}])
    res = CliRunner().invoke(app, ["check", "--from", str(root)])
    assert res.exit_code == ExitCode.INCOMPLETE and why in res.stderr and res.stdout == ""


def test_a_member_that_is_a_link_is_refused(tmp_path):
    (tmp_path / "outside.txt").write_text(TOPO)
    root = bundle(tmp_path, [{"source": "nvidia_smi_topo_m", "status": "ok", "member": "commands/t.txt"}])
    os.symlink(tmp_path / "outside.txt", root / "commands" / "t.txt")
    res = CliRunner().invoke(app, ["check", "--from", str(root)])
    assert res.exit_code == ExitCode.INCOMPLETE and "a link; bundles hold plain files only" in res.stderr


def test_a_member_changed_after_collection_is_reported_not_read(tmp_path):
    root = bundle(tmp_path, [{"source": "nvidia_smi_topo_m", "status": "ok", "member": "commands/t.txt",
                              "sha256": "0" * 64}], {"commands/t.txt": TOPO})
    res, report = check_json(root)
    assert res.exit_code == ExitCode.INCOMPLETE
    [f] = report["findings"]
    assert f["code"] == "SYS002" and "sha256 differs" in f["message"]


@pytest.mark.parametrize("manifest, why", [
    ("{not json", "not valid JSON"),
    ('{"schema_version": 2, "sources": []}', "schema_version 2"),
    ('{"schema_version": 1, "sources": {}}', "sources: expected a list"),
    ('{"schema_version": 1, "sources": [{"source": "ibstat", "status": "maybe"}]}', "sources[0].status"),
    ('{"schema_version": 1, "sources": [{"source": "ibstat", "status": "ok"}]}', "sources[0].member"),
])
def test_a_bad_manifest_is_one_line_and_exit_3(tmp_path, manifest, why):
    root = tmp_path / "b"
    root.mkdir()
    (root / "manifest.json").write_text(manifest)
    res = CliRunner().invoke(app, ["check", "--from", str(root)])
    assert res.exit_code == ExitCode.INCOMPLETE
    [line] = res.stderr.strip().splitlines()
    assert line.startswith("topodiag: error: ") and "manifest.json" in line and why in line


def test_a_tool_that_is_not_on_the_host_is_no_problem(tmp_path):
    root = bundle(tmp_path, [
        {"source": "nvidia_smi_topo_m", "status": "ok", "member": "commands/t.txt"},
        {"source": "ibstat", "status": "not_available", "member": None, "reason": "ibstat is not installed"}],
        {"commands/t.txt": TOPO})
    res, report = check_json(root)
    assert res.exit_code == ExitCode.OK and not [f for f in report["findings"] if f["code"].startswith("SYS")]
    assert {"path": f"{root}: ibstat", "source": "ibstat", "status": "absent",
            "reason": "ibstat is not installed"} in report["inputs"]
    assert report["host"] == "n1"


def test_bundle_and_loose_files_read_alike(tmp_path):
    """The scenario's member given as a loose file gives the same findings as the bundle."""
    name = "rtxa6000-3gpu-one-bridge"
    _, from_bundle = check_json(HOSTS / name)
    loose = tmp_path / "loose"
    shutil.copytree(HOSTS / name / "commands", loose)
    _, from_files = check_json(loose)
    strip = lambda r: [(f["code"], f["severity"], f["message"]) for f in r["findings"]]  # noqa: E731
    assert strip(from_bundle) == strip(from_files)


# -- a probe's JSON that says it could not collect ---------------------------------------------

ROOT_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
NVML_FAILED = ROOT_FIXTURES / "nvml" / "nvml-invented-driver-not-loaded-01.json"
PYVERBS_FAILED = ROOT_FIXTURES / "sysfs_infiniband" / "pyverbs-no-rdma-devices.json"
NVML_ERROR = ("nvmlInit failed: NVML_ERROR_DRIVER_NOT_LOADED (Driver Not Loaded): the NVIDIA kernel module is "
              "not loaded (lsmod | grep nvidia; dmesg)")


@pytest.mark.parametrize("path, source, reason", [
    (NVML_FAILED, "nvml", NVML_ERROR),
    (PYVERBS_FAILED, "sysfs_infiniband", "no RDMA devices (Failed to get devices list)"),
])
def test_a_loose_probe_json_with_ok_false_is_a_failed_source(path, source, reason):
    res, report = check_json(path)
    assert res.exit_code == ExitCode.INCOMPLETE, res.output
    [f] = report["findings"]  # nothing about the GPUs or HCAs from it
    assert (f["code"], f["severity"], f["subjects"]) == ("SYS001", "error", [f"source:{source}"])
    assert f["message"] == f"{source} could not be collected: {reason}"
    assert report["inputs"] == [{"path": str(path), "source": source, "status": "failed", "reason": reason}]


def test_a_probe_json_with_ok_false_in_a_bundle_follows_its_manifest_entry(tmp_path):
    """Under an "ok" entry the JSON's ok false still fails the source (once); a "failed" entry is
    reported once, by the manifest; a "not_available" one is no problem."""
    text = NVML_FAILED.read_text()
    for status, want in (("ok", ["SYS001"]), ("failed", ["SYS001"]), ("not_available", [])):
        root = bundle(tmp_path / status, [{"source": "nvml", "status": status, "member": "commands/nvml.json",
                                           "reason": NVML_ERROR}], {"commands/nvml.json": text})
        _, report = check_json(root)
        assert [f["code"] for f in report["findings"]] == want, (status, report["findings"])
        rows = [r["status"] for r in report["inputs"] if r["source"] == "nvml"]
        assert rows == {"ok": ["failed"], "failed": ["failed", "parsed"], "not_available": ["absent"]}[status]
