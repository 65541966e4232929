"""Honest verdicts, tried as a new user would: a node that lost a GPU does not pass, a node where
nothing is visible is not "ok", inputs of two hosts are not merged, a file that is not a tool's
output is one line and exit 3 (no report), the verdict word matches the findings, the header says
how much of the checklist ran, and the prolog's drain reason never drops a subject silently."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import topodiag
from topodiag.cli import app
from topodiag.engine import Finding
from topodiag.engine.runner import Outcome
from topodiag.exit_codes import ExitCode
from topodiag.render.slurm import MAX_REASON, reason_line

ROOT = Path(__file__).resolve().parents[2]
FX = ROOT / "fixtures"
H100_PROBE = FX / "nvml" / "nvml-invented-h100-hgx-8gpu-nvswitch-01.json"
IBSTAT_DISABLED = FX / "ibstat" / "ibstat-cx6-hdr-one-port-disabled-01.txt"
HGX = FX / "hosts" / "hgx-h100-healthy-assembled"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def probe_without_gpu(tmp_path: Path, lost: int) -> Path:
    """The 8x H100 probe with one GPU gone from NVML's list (as after Xid 79 and a driver reload)."""
    text = H100_PROBE.read_text()
    data = json.loads(text[text.index("#@ ---") + len("#@ ---"):])
    data["gpus"] = [g for g in data["gpus"] if g["index"] != lost]
    data["pairs"] = [p for p in data["pairs"] if lost not in (p["a"], p["b"])]
    data["unsupported"] = {k: v for k, v in data["unsupported"].items() if f"gpu={lost})" not in k}
    out = tmp_path / "nvml-7gpu.json"
    out.write_text(f"#@ source: invented in tests/cli/test_verdicts.py: {H100_PROBE.name} without GPU {lost}\n"
                   "#@ expected: 7 H100 on an 8-GPU HGX: dgx-h100 with one GPU missing -> TOPO006\n#@ ---\n"
                   + json.dumps(data, indent=2) + "\n")
    return out


# -- a node that lost a GPU -------------------------------------------------------------------------

def test_seven_h100_is_a_dgx_h100_missing_one(tmp_path):
    d = topodiag.diagnose([probe_without_gpu(tmp_path, 7)])
    assert d.profile is not None and d.profile.name == "dgx-h100"
    assert "7 of its 8 GPUs seen" in d.profile_how
    topo006 = [f for f in d.findings if f.code == "TOPO006"]
    assert [str(f.severity) for f in topo006] == ["error"] and "7 GPU(s) seen, the profile has 8" in topo006[0].message
    assert d.exit_code == ExitCode.FINDINGS


def test_prolog_with_a_profile_fails_on_a_node_that_shows_no_gpu(tmp_path, monkeypatch):
    root = tmp_path / "root"  # a sysfs tree with no PCI device and no HCA (a container without them)
    (root / "sys" / "bus" / "pci" / "devices").mkdir(parents=True)
    (root / "sys" / "class" / "infiniband").mkdir(parents=True)
    monkeypatch.setitem(sys.modules, "pynvml", None)  # the NVML library is not there
    monkeypatch.setitem(sys.modules, "pyverbs", None)
    res = invoke("prolog", "--sysfs-root", str(root), "--profile", "dgx-h100")
    assert res.exit_code == ExitCode.FINDINGS, res.output
    assert res.stdout.startswith("topodiag: TOPO006 gpu-missing ")
    # without a profile nothing says what the node should have: not a failure, but never a bare "ok"
    res = invoke("prolog", "--sysfs-root", str(root))
    assert res.exit_code == ExitCode.OK
    assert res.stdout.startswith("topodiag: ok (no GPU or HCA visible: nothing to check")
    res = invoke("check", "--sysfs-root", str(root), "--format", "json")
    assert json.loads(res.stdout)["summary"]["verdict"] == "nothing-seen"


# -- inputs of two hosts ------------------------------------------------------------------------------

def test_two_hosts_bundles_are_not_merged():
    a, b = FX / "hosts" / "2gpu-rig-p2p-ns", FX / "hosts" / "dgx1-v100-one-hca"
    res = invoke("check", "--from", str(a), "--from", str(b))
    assert res.exit_code == ExitCode.USAGE and res.stdout == ""
    line = res.stderr.strip()
    assert "\n" not in line and "2 hosts" in line and "pahi-rig" in line and "dgx1" in line
    assert f"topodiag fleet {a} {b}" in line
    same = invoke("check", "--from", str(b), "--from", str(b), "--format", "json")  # one host twice: fine
    assert same.exit_code in (ExitCode.OK, ExitCode.FINDINGS)


# -- files that are not a tool's output ---------------------------------------------------------------

@pytest.mark.parametrize("kind,content,says", [
    ("missing", None, "no such file"),
    ("empty", b"", "empty file"),
    ("binary", b"\x7fELF\x02\x01\x01\x00\x00\x00" * 50, "binary data"),
    ("unrecognised", b"hello world\nthis is not a tool's output\n", "not the output of any tool"),
])
def test_check_from_a_file_that_is_no_tool_output_is_one_line_exit_3(tmp_path, kind, content, says):
    path = tmp_path / f"{kind}.txt"
    if content is not None:
        path.write_bytes(content)
    res = invoke("check", "--from", str(path), "--format", "json")
    assert res.exit_code == ExitCode.INCOMPLETE and res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith(f"topodiag: error: {path}: ") and says in res.stderr
    if content is not None:
        assert path.read_bytes() == content  # nothing the user gave is modified


def test_its_own_report_given_to_check_says_use_fleet(tmp_path):
    report = tmp_path / "report.json"
    report.write_text(invoke("check", "--from", str(HGX), "--format", "json").stdout)
    res = invoke("check", "--from", str(report))
    assert res.exit_code == ExitCode.INCOMPLETE and res.stdout == ""
    assert "topodiag report" in res.stderr and "topodiag fleet" in res.stderr


# -- the verdict word and the coverage ---------------------------------------------------------------

def test_ok_only_when_nothing_is_at_warning_or_above():
    healthy = invoke("check", "--from", str(HGX), "--format", "text")
    assert healthy.stdout.startswith("OK ")
    warned = invoke("check", "--from", str(IBSTAT_DISABLED), "--format", "text")  # IB001 warning
    assert warned.exit_code == ExitCode.OK
    assert warned.stdout.startswith("WARNINGS: 1 warning (not failing: --fail-on error)")


def test_fail_on_never_says_the_errors_it_does_not_fail_on():
    failing = FX / "hosts" / "v100-nvlinks-down"
    res = invoke("check", "--from", str(failing), "--format", "text", "--fail-on", "never")
    assert res.exit_code == ExitCode.OK
    first = res.stdout.splitlines()[0]
    assert first.startswith("ERRORS: ") and "1 error (not failing: --fail-on never)" in first
    data = json.loads(invoke("check", "--from", str(failing), "--format", "json", "--fail-on", "never").stdout)
    assert data["summary"]["verdict"] == "errors" and "not failing: --fail-on never" in data["summary"]["verdict_detail"]


def _checklist_size() -> int:
    """Every rule of the shipped catalog a plain check selects: all but the SYS family (topodiag's own
    failures) and the rules that run only when asked for by tag (GPU003, the prolog's view)."""
    from topodiag.engine.catalog import load_catalog

    return len([r for r in load_catalog() if not r.code.startswith("SYS") and not r.only_with_tags])


def test_the_header_says_how_much_of_the_checklist_ran():
    res = invoke("check", "--from", str(IBSTAT_DISABLED), "--format", "text")
    # the header: the verdict line, when and from what ("generated ..."), then the coverage; unwrapped
    header = " ".join(res.stdout.split("\n\n")[0].split())
    assert header.startswith("WARNINGS: 1 warning (not failing: --fail-on error) - host ")
    assert " Generated " in header and "collected: not recorded" in header  # loose files carry no time
    second = header[header.index(" 6 of ") + 1:]
    total = _checklist_size()
    assert total >= 30
    # the IB rules an ibstat file runs: IB001-IB005 and IB011 (software RDMA). Each family none of
    # whose rules ran is named by the input that would run most of its rules (checked by hand against
    # the rules' `requires` and who gives each capability; of equals the first rule's first input):
    #   FAB  FAB001 gpu.fabric_state (nvidia_smi_q, nvml), FAB002 fabricmanager.state: 1 each -> nvidia_smi_q
    #   GDR  gdr.peermem -> peermem;  GPU  kernel.messages for GPU001/2/4, nvidia_smi.failures once -> kernel_log
    #   NCCL nccl_debug gives 11 of 12;  NVL  gpu.nvlinks x3 (nvlink_s, nvml), nvlink_errors -> nvidia_smi_nvlink_s
    #   PCI  lspci_vvv (PCI001, 002) = kernel_log (002, 003) -> lspci_vvv;  PERF  nccl_tests 3 = nvbandwidth 3
    #   TOPO nvml gives TOPO001-006 (6), nvidia_smi_topo_m 5 -> nvml
    missing = ["nvidia_smi_q", "peermem", "kernel_log", "nccl_debug", "nvidia_smi_nvlink_s", "lspci_vvv", "nccl_tests",
               "nvml"]
    assert second.startswith(f"6 of {total} checks ran: no {', '.join(missing[:-1])} or nvml input")
    data = json.loads(invoke("check", "--from", str(IBSTAT_DISABLED), "--format", "json").stdout)
    cov = data["summary"]["coverage"]
    assert (cov["checks_run"], cov["checks_selected"]) == (6, total)
    assert cov["inputs_missing"] == missing


def test_a_family_skipped_without_a_missing_input_is_named_by_its_letters():
    from topodiag.engine.runner import Skipped
    from topodiag.engine.verdict import family_input

    assert family_input("NCCL", [Skipped("NCCL001", "x", "disabled in the config")]) == "NCCL"
    # a capability given by a combined view (ib_links) is named by the view's first part
    assert family_input("IB", [Skipped("IB007", "x", "", ("fabric.links",))]) == "iblinkinfo"
    # a capability no input gives stands for itself
    assert family_input("XX", [Skipped("XX001", "x", "", ("gpu.no_such_fact",))]) == "gpu.no_such_fact"


# -- the prolog's drain reason -----------------------------------------------------------------------

def _finding(code, slug, severity, *subjects):
    return Finding(code, slug, severity, subjects, "m")


def _outcome(*findings):
    return Outcome(findings=tuple(findings), skipped=(), ran=tuple(f.code for f in findings), crashes=(),
                   fail_on=topodiag.engine.Severity.ERROR, exit_code=ExitCode.FINDINGS)


def test_drain_reason_counts_the_subjects_it_leaves_out():
    eight = [f"gpu:{i}" for i in range(8)]
    line = reason_line(_outcome(_finding("NVL001", "nvlink-inactive", "error", *eight)))
    assert line == "topodiag: NVL001 nvlink-inactive gpu:0, gpu:1 +6 more"


def test_drain_reason_groups_by_rule_worst_first_and_counts_rules_cut():
    findings = [_finding("IB001", "ib-port-down", "error", "nic:mlx5_3"),
                _finding("TOPO006", "gpu-missing", "critical", "gpu:3")]
    findings += [_finding(f"NVL00{i}", "x" * 60, "error", "gpu:1") for i in range(1, 5)]
    line = reason_line(_outcome(*findings))
    assert line.startswith("topodiag: TOPO006 gpu-missing gpu:3; ")
    assert len(line) <= MAX_REASON and line.endswith("more rules")
    shown = line.count(";")  # parts shown + the "+N more rules" tail
    assert f"+{6 - shown} more rules" in line
    same_rule = reason_line(_outcome(_finding("IB001", "ib-port-down", "error", "nic:mlx5_0"),
                                     _finding("IB001", "ib-port-down", "error", "nic:mlx5_1"),
                                     _finding("IB001", "ib-port-down", "error", "nic:mlx5_2")))
    assert same_rule == "topodiag: IB001 ib-port-down nic:mlx5_0, nic:mlx5_1 +1 more"
