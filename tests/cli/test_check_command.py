"""`topodiag check`: exit codes one by one, the JSON report's shape, the text report, --config.

These tests do not depend on which checklist rules exist: they run the SYS rules (`--select SYS`)
or a throwaway catalog with probe checks (monkeypatched in), except one smoke test over the real
catalog on a healthy all-NV18 H100 matrix.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import topodiag.engine as engine
from topodiag.cli import app
from topodiag.engine import Catalog, Rule, Severity, check, hit, registry
from topodiag.engine.runner import FALLBACK_RULES
from topodiag.exit_codes import ExitCode

ROOT = Path(__file__).resolve().parents[2]
HGX = ROOT / "fixtures/nvidia_smi_topo_m/topo-h100-hgx-nv18-8nic-pix-gpunumaid-01.txt"
BROKEN = ROOT / "fixtures/nvidia_smi_topo_m/topo-invented-row-too-many-cells-01.txt"
PROBE = Rule(code="ZZZ001", slug="probe-gpus", title="probe", severity=Severity.ERROR,
             message="{n} GPUs seen", why="because", fix="nothing", params={"limit": 1})


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture
def probe_catalog(monkeypatch):
    """A catalog of the SYS rules and ZZZ001, whose check reports when the model has > limit GPUs."""
    monkeypatch.setattr(engine, "load_catalog", lambda *a, **k: Catalog(list(FALLBACK_RULES) + [PROBE]))
    with registry.scoped():
        @check("ZZZ001")
        def probe(topology, params):
            n = len(topology.gpus())
            if n > params["limit"]:
                yield hit(topology.gpus()[:1], n=n, expectation="at most limit GPUs")
        yield


def test_exit_0_ok_on_a_healthy_matrix_with_the_sys_rules():
    res = invoke("check", "--from", str(HGX), "--select", "SYS", "--format", "json")
    assert res.exit_code == ExitCode.OK, res.output
    data = json.loads(res.stdout)
    assert data["summary"]["exit_code"] == 0
    assert data["inputs"] == [{"path": str(HGX), "source": "nvidia_smi_topo_m", "status": "parsed", "reason": ""}]


def test_exit_1_findings(probe_catalog):
    res = invoke("check", "--from", str(HGX), "--format", "json")
    assert res.exit_code == ExitCode.FINDINGS, res.output
    data = json.loads(res.stdout)
    (f,) = data["findings"]
    assert {k: f[k] for k in ("code", "slug", "severity", "subjects", "message", "expectation")} == {
        "code": "ZZZ001", "slug": "probe-gpus", "severity": "error", "subjects": ["gpu:0"],
        "message": "8 GPUs seen", "expectation": "at most limit GPUs"}
    assert "evidence" in f
    for key in ("schema_version", "tool", "host", "inputs", "findings", "skipped", "summary"):
        assert key in data
    assert data["summary"]["exit_code"] == 1 and data["summary"]["findings"]["error"] == 1


def test_fail_on_critical_makes_an_error_pass(probe_catalog):
    assert invoke("check", "--from", str(HGX), "--fail-on", "critical").exit_code == ExitCode.OK


def test_exit_2_usage_bad_deadline_and_tags():
    assert invoke("check", "--deadline", "0").exit_code == ExitCode.USAGE
    res = invoke("check", "--from", str(HGX), "--tags", "nosuchtag")
    assert res.exit_code == ExitCode.USAGE and "no rule's tag" in res.stderr


@pytest.mark.parametrize("args", [("--fail-on", "fatal"), ("--select", "NOPE999"), ("--profile", "no-such")])
def test_exit_2_usage_bad_values(args):
    res = invoke("check", "--from", str(HGX), *args)
    assert res.exit_code == ExitCode.USAGE, res.output
    assert res.stderr.startswith("topodiag: error: ")


def test_exit_3_incomplete_on_an_unparseable_input():
    res = invoke("check", "--from", str(BROKEN), "--select", "SYS", "--format", "json")
    assert res.exit_code == ExitCode.INCOMPLETE, res.output
    data = json.loads(res.stdout)
    assert [f["code"] for f in data["findings"]] == ["SYS002"]
    assert data["inputs"][0]["status"] == "unparseable"


def test_exit_3_for_a_broken_bundle_archive(tmp_path):
    bundle = tmp_path / "node.tar.gz"
    bundle.write_bytes(b"\x1f\x8b")
    res = invoke("check", "--from", str(bundle))
    assert res.exit_code == ExitCode.INCOMPLETE
    assert res.stderr.startswith(f"topodiag: error: {bundle}: ") and "archive" in res.stderr


def test_exit_4_internal_when_a_check_crashes(monkeypatch):
    monkeypatch.setattr(engine, "load_catalog", lambda *a, **k: Catalog(list(FALLBACK_RULES) + [PROBE]))
    with registry.scoped():
        @check("ZZZ001")
        def probe(topology):
            raise RuntimeError("boom")

        res = invoke("check", "--from", str(HGX), "--format", "json")
    assert res.exit_code == ExitCode.INTERNAL, res.output
    assert [f["code"] for f in json.loads(res.stdout)["findings"]] == ["SYS003"]


def test_config_overrides_params_severity_and_enabled(probe_catalog, tmp_path):
    conf = tmp_path / "site.toml"
    conf.write_text('[rules.probe-gpus]\nseverity = "warning"\n[rules.probe-gpus.params]\nlimit = 2\n')
    res = invoke("check", "--from", str(HGX), "--config", str(conf), "--format", "json")
    assert res.exit_code == ExitCode.OK, res.output  # a warning is below --fail-on error
    assert json.loads(res.stdout)["findings"][0]["severity"] == "warning"
    conf.write_text("[rules.ZZZ001]\nenabled = false\n")
    res = invoke("check", "--from", str(HGX), "--config", str(conf), "--format", "json")
    assert res.exit_code == ExitCode.OK
    assert json.loads(res.stdout)["skipped"][0]["reason"] == "disabled in the config"


@pytest.mark.parametrize("text", ["[rules.ZZZ001]\nseverity = 'fatal'\n", "[rules.NOPE001]\n", "colour = 1\n", "[[["])
def test_bad_config_is_a_usage_error(probe_catalog, tmp_path, text):
    conf = tmp_path / "site.toml"
    conf.write_text(text)
    res = invoke("check", "--from", str(HGX), "--config", str(conf))
    assert res.exit_code == ExitCode.USAGE, res.output


def test_text_report_has_summary_matrix_and_findings_without_colour(probe_catalog):
    res = invoke("check", "--from", str(HGX), "--format", "text")
    out = res.stdout
    assert res.exit_code == ExitCode.FINDINGS
    assert out.startswith("FINDINGS") and "1 finding of 1 rule (1 error)" in " ".join(out.split())
    assert "NV18" in out and "mlx5_7" in out
    assert "\nERROR ZZZ001 8 GPUs seen" in out and "(why: topodiag explain ZZZ001)" in " ".join(out.split())
    assert "why: because" in invoke("check", "--from", str(HGX), "--format", "text", "-v").stdout
    assert "\x1b[" not in out
    assert out.count(out.splitlines()[0]) == 2  # the verdict first and last


def test_a_directory_and_extra_paths(tmp_path):
    (tmp_path / "topo.txt").write_text(HGX.read_text())
    (tmp_path / "topo.expected.json").write_text("{}")
    (tmp_path / ".hidden").write_text("x")
    (tmp_path / "notes.txt").write_text("hello, nothing to see\n")
    res = invoke("check", "--from", str(tmp_path), "--select", "SYS", "--format", "json")
    data = json.loads(res.stdout)
    assert [(Path(i["path"]).name, i["status"]) for i in data["inputs"]] == [
        ("notes.txt", "unparseable"), ("topo.txt", "parsed")]
    assert res.exit_code == ExitCode.INCOMPLETE
    res = invoke("check", "--from", str(HGX), str(HGX), "--select", "SYS", "--format", "json")
    assert len(json.loads(res.stdout)["inputs"]) == 2


def test_missing_file_is_one_line_and_exit_3_not_a_report(tmp_path):
    res = invoke("check", "--from", str(tmp_path / "nope.txt"), "--select", "SYS", "--format", "json")
    assert res.exit_code == ExitCode.INCOMPLETE
    assert res.stdout == "" and res.stderr.strip() == f"topodiag: error: {tmp_path / 'nope.txt'}: no such file"


def test_smoke_the_real_catalog_on_a_healthy_hgx_matrix():
    res = invoke("check", "--from", str(HGX), "--format", "json")
    assert res.exit_code in (ExitCode.OK, ExitCode.FINDINGS), res.output
    data = json.loads(res.stdout)
    assert not [f for f in data["findings"] if f["code"] == "SYS003"]


def test_profile_is_detected_from_gpu_models_or_given():
    from topodiag.pipeline import choose_profile
    from topodiag.model import Topology

    topo = Topology()
    for i in range(8):
        topo.add_node(f"gpu:{i}", "gpu", model="NVIDIA H100 80GB HBM3")
    prof, how = choose_profile(None, topo)
    assert prof is not None and prof.name == "dgx-h100" and "detected" in how
    prof, how = choose_profile("pcie-8gpu", topo)
    assert prof.name == "pcie-8gpu" and how == "pcie-8gpu (given)"
    assert choose_profile(None, Topology())[0] is None


def test_an_nccl_tests_run_with_nccl_debug_is_read_as_both_sources():
    log = ROOT / "fixtures/nccl_tests/nccl-collnet-sharp-fallback-ib-gdrdma-01.log"
    res = invoke("check", "--from", str(log), "--select", "SYS", "--format", "json")
    assert res.exit_code == ExitCode.OK, res.output
    inputs = json.loads(res.stdout)["inputs"]
    assert {(i["source"], i["status"]) for i in inputs} == {("nccl_tests", "parsed"), ("nccl_debug", "parsed")}


def test_every_file_of_one_source_is_judged_with_its_own_evidence():
    """Two nccl-tests runs (155 and 90 GB/s busbw on 2x8 H100 NDR): PERF001 judges each, and each
    finding's evidence names the file and line of that run's largest size."""
    a = ROOT / "fixtures/nccl_tests/nccltests-allreduce-2x8h100-ndr-degraded-155-srun-prefix-01.txt"
    b = ROOT / "fixtures/nccl_tests/nccltests-allreduce-2x8h100-ndr-ring-degraded-90-srun-prefix-01.txt"
    res = invoke("check", "--from", str(a), str(b), "--select", "PERF001", "--format", "json")
    assert res.exit_code == ExitCode.FINDINGS, res.output
    perf = [f for f in json.loads(res.stdout)["findings"] if f["code"] == "PERF001"]
    assert len(perf) == 2
    files = [f["evidence"][0]["file"] for f in perf]
    assert files == [str(a), str(b)]
    assert "155.57 GB/s" in perf[0]["message"] and "89.9 GB/s" in perf[1]["message"]


def test_an_empty_directory_is_incomplete(tmp_path):
    res = invoke("check", "--from", str(tmp_path))
    assert res.exit_code == ExitCode.INCOMPLETE and "no files to read" in res.stderr


def test_matrix_colours_by_class():
    from topodiag.render.text import class_style

    assert class_style("NV18") == "green" and class_style("PIX") == "cyan"
    assert class_style("NODE") == "yellow" and class_style("SYS") == "red" and class_style(None) == "dim"


def test_config_host_blocks_follow_the_host(probe_catalog, tmp_path):
    """[[hosts]] blocks apply by the host the inputs come from (--host, or what a bundle or log says);
    the JSON report says which patterns matched."""
    conf = tmp_path / "site.toml"
    conf.write_text('[[hosts]]\nmatch = "gpu[001-064]"\n[hosts.rules.ZZZ001]\nseverity = "info"\n')
    res = invoke("check", "--from", str(HGX), "--config", str(conf), "--host", "gpu017", "--format", "json")
    report = json.loads(res.stdout)
    assert res.exit_code == ExitCode.OK, res.output  # the probe's error became info on this host
    assert report["host"] == "gpu017" and report["findings"][0]["severity"] == "info"
    assert report["config"] == {"file": str(conf), "host": "gpu017", "matched": ["gpu[001-064]"]}
    res = invoke("check", "--from", str(HGX), "--config", str(conf), "--host", "gpu065", "--format", "json")
    assert res.exit_code == ExitCode.FINDINGS and json.loads(res.stdout)["config"]["matched"] == []


def test_unknown_profile_in_the_config_is_a_usage_error(probe_catalog, tmp_path):
    conf = tmp_path / "site.toml"
    conf.write_text('profile = "dgx-z900"\n')
    res = invoke("check", "--from", str(HGX), "--config", str(conf))
    assert res.exit_code == ExitCode.USAGE and "dgx-z900" in res.stderr


@pytest.mark.parametrize("args, code", [
    (["rules"], ExitCode.OK),
    (["check", "--from", str(ROOT / "fixtures/hosts/hgx-h100-healthy-assembled"), "--format", "text"], ExitCode.OK),
    (["check", "--from", str(ROOT / "fixtures/hosts/b300-rails-disabled"), "--format", "text"], ExitCode.FINDINGS),
])
def test_a_reader_that_stops_early_does_not_change_the_exit_code(args, code):
    """`topodiag check | head -1`: the verdict is the exit code, with nothing on stderr (click alone
    exits 1 when a write meets the closed pipe). The text reports are written line by line, so the
    lines after the first meet the closed pipe."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "topodiag", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT)
    proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == code and err == b""


def test_text_report_gives_why_and_fix_once_per_rule():
    """B300 scenario: seven IB001 findings and one IB002 -> each message once (the seven that differ
    only in their NIC as one entry), what to do after "->", the rule's fix once; why with -v."""
    res = invoke("check", "--from", str(ROOT / "fixtures/hosts/b300-rails-disabled"), "--format", "text")
    out = res.stdout
    findings = out.split("\n\n")[1]  # right under the header: the first screen says what, where, what to do
    entries = [ln for ln in findings.splitlines() if not ln.startswith(" ")]
    assert entries[0].startswith("ERROR IB001 mlx5_0, mlx5_1") and entries[1].startswith("WARNING IB002 ")
    assert len(entries) == 2
    flat = " ".join(findings.split())
    assert ("ERROR IB001 mlx5_0, mlx5_1, mlx5_6, mlx5_7, mlx5_8, mlx5_9, mlx5_10 (7): port 1 is Down / Disabled"
            in flat)
    assert "it carries no traffic -> reseat or replace the cable or transceiver WARNING IB002 " in flat
    assert " ".join(out.split()).count("port 1 is Down / Disabled") == 1  # printed once, not three times
    todo = " ".join(out.split("\nWhat to do\n")[1].split("\n\n")[0].split())  # each rule's fix once, then where its why is
    assert todo.startswith("IB001 fix: Disabled: enable the port") and "(why: topodiag explain IB001) IB002 fix: " in todo
    assert out.count(" fix: ") == 2
    lines = out.rstrip("\n").splitlines()
    assert lines[-2:] == lines[:2] and lines[0].startswith("FINDINGS")  # the verdict first and last
    assert "8 findings of 2 rules (7 error, 1 warning)" in " ".join(out.split("\n\n")[0].split())
    verbose = invoke("check", "--from", str(ROOT / "fixtures/hosts/b300-rails-disabled"), "--format", "text", "-v").stdout
    assert verbose.count("\nERROR IB001 mlx5_") == 7  # --verbose: each finding on its own
    assert "  IB001 why: A port carries RDMA traffic" in verbose


def test_text_report_reads_at_80_columns():
    """Through rich's console width: no line over 80 characters, the matrix split into GPU and NIC blocks
    with NIC0..NICn and a legend, wrapped lines indented, the verdict first and last, skipped rules as
    one summary line unless --verbose."""
    import io

    import topodiag

    d = topodiag.diagnose([str(ROOT / "fixtures/hosts/hgx-h100-nvlink-xids-assembled")])
    buf = io.StringIO()
    d.render("text", buf, width=80)
    out = buf.getvalue()
    lines = out.splitlines()
    assert max(len(ln) for ln in lines) <= 80, [ln for ln in lines if len(ln) > 80]
    assert "Paths between GPUs" in out and "Paths from GPUs to NICs" in out and "NIC7: mlx5_7" in out
    header = out.split("\n\n")[0].splitlines()[0]
    assert header.startswith("FINDINGS") and out.rstrip().endswith(out.split("\n\n")[0].splitlines()[1].strip()) \
        and out.count(header) == 2  # the verdict first and again last
    assert "..." not in out  # wrapped, never cut
    assert not any(ln and not ln[0].isspace() and ln[0].islower() for ln in lines), "a wrapped line at column 0"
    assert sum(1 for ln in lines if ln.startswith("Skipped")) == 1 and "--verbose lists why" in out
    verbose = io.StringIO()
    d.render("text", verbose, width=80, verbose=True)
    assert "Skipped (" in verbose.getvalue() and "    subjects: " in verbose.getvalue()


def test_the_checklist_view_says_what_was_checked_and_what_decided_it():
    """The seed's symptom table over the run: IB ports down decide 'poor multi-node scaling'; no
    nccl-tests input leaves 'step time' unchecked; GPU utilisation is outside topodiag."""
    from topodiag.engine.checklist import checklist

    d = topodiag_diagnose(ROOT / "fixtures/hosts/b300-rails-disabled")
    rows = {r.symptom: r for r in checklist(d.outcome)}
    assert rows["poor multi-node scaling"].state == "found" and rows["poor multi-node scaling"].fact.startswith("IB001: ")
    assert rows["step time far above expectation"].state == "not checked"
    assert rows["GPU utilisation low for long stretches"].state == "outside"
    healthy = {r.symptom: r for r in checklist(topodiag_diagnose(ROOT / "fixtures/hosts/hgx-h100-healthy-assembled").outcome)}
    assert healthy["step time far above expectation"].state == "ok" and "PERF001" in healthy["step time far above expectation"].fact
    out = invoke("check", "--from", str(ROOT / "fixtures/hosts/b300-rails-disabled"), "--format", "text").stdout
    assert "Checklist (symptom: what decided it)" in out
    assert "[x] poor multi-node scaling: IB001, IB002: see the findings above" in " ".join(out.split())


def topodiag_diagnose(path):
    import topodiag

    return topodiag.diagnose([str(path)])
