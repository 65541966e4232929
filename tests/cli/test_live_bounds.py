"""Live commands under issue 16's bounds: --deadline refused when it is no bound (nan, inf, 0,
negative), a slow tool (ofed_info included) ending the run at --deadline, and prolog judging with the
default settings when the site config cannot be used (non-zero only for findings unless --strict).
No hardware: the `node` fixture of test_live (fake pynvml, recorded sysfs, tools as scripts)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.exit_codes import ExitCode
from tests.cli.test_live import H100_SYSFS, node  # noqa: F401 (the fixture)

AZURE = Path(__file__).resolve().parents[2] / "fixtures" / "sysfs" / "azure-ib-initializing-an0"  # IB001 error


@pytest.mark.parametrize("command", [["check"], ["collect"], ["prolog"], ["check", "--from", "fixtures"]])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "1e300"])
def test_a_deadline_that_is_no_bound_is_a_usage_error(command, value):
    res = CliRunner().invoke(app, [*command, f"--deadline={value}"])
    assert res.exit_code == ExitCode.USAGE, res.output
    [line] = res.stderr.splitlines()
    assert line.startswith("topodiag: error: --deadline: must be a number of seconds above 0")


def slow(node, tmp_path: Path) -> None:
    """Every nvidia-smi call and ofed_info hang (ofed_info ran 5 s past --deadline)."""
    node("sleep 30\n")
    ofed = Path(str(tmp_path)) / "bin" / "ofed_info"
    ofed.write_text("#!/bin/sh\nsleep 30\n")
    ofed.chmod(0o755)


def test_check_with_a_slow_tool_ends_at_the_deadline(node, tmp_path):
    slow(node, tmp_path)
    start = time.monotonic()
    res = CliRunner().invoke(app, ["check", "--sysfs-root", str(H100_SYSFS), "--deadline", "1", "--format", "json"])
    took = time.monotonic() - start
    assert res.exit_code == ExitCode.INCOMPLETE, res.output
    assert took < 15, took  # the tools sleep 30 s: well under it means they were not waited for


def test_collect_with_a_slow_tool_and_ofed_info_ends_at_the_deadline(node, tmp_path):
    slow(node, tmp_path)
    start = time.monotonic()
    res = CliRunner().invoke(app, ["collect", "--sysfs-root", str(H100_SYSFS), "--deadline", "1",
                                   "-o", str(tmp_path / "b")])
    took = time.monotonic() - start
    assert res.exit_code == ExitCode.OK, res.output
    assert took < 15, took  # the tools sleep 30 s: well under it means they were not waited for
    import json

    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["facts"]["ofed"] is None  # not waited for past the deadline
    topo = next(e for e in manifest["sources"] if e["source"] == "nvidia_smi_topo_m")
    assert topo["status"] == "timed_out" and topo["timed_out"] is True


BROKEN = {
    "not TOML": "profile = [",
    "nan threshold": "[rules.IB002.params]\nexpected_rate_gbps = nan\n",
    "no such rule": "[rules.XX999]\nenabled = false\n",
    "bad severity": "[rules.IB001]\nseverity = 'loud'\n",
    "unknown profile": "profile = 'no-such-platform'\n",
}


@pytest.mark.parametrize("what", BROKEN)
def test_prolog_judges_with_the_defaults_when_the_site_config_is_unusable(node, tmp_path, what):
    config = tmp_path / "site.toml"
    config.write_text(BROKEN[what])
    res = CliRunner().invoke(app, ["prolog", "--sysfs-root", str(H100_SYSFS), "--config", str(config)])
    assert res.exit_code == ExitCode.OK, res.output  # a healthy node: no finding, so 0
    assert res.stdout.startswith("topodiag: ok")
    [said] = [ln for ln in res.stderr.splitlines() if "site config" in ln]
    assert said.startswith("topodiag: error: ") and said.endswith(
        "judging with the default settings (the site config is not used; --strict fails instead)")
    res = CliRunner().invoke(app, ["prolog", "--sysfs-root", str(AZURE), "--config", str(config)])
    assert res.exit_code == ExitCode.FINDINGS and res.stdout.startswith("topodiag: IB001")  # findings still fail
    strict = CliRunner().invoke(app, ["prolog", "--sysfs-root", str(H100_SYSFS), "--config", str(config), "--strict"])
    assert strict.exit_code == ExitCode.USAGE, strict.output
    assert len(strict.stderr.splitlines()) == 1 and strict.stderr.startswith("topodiag: error: ")


def test_check_refuses_a_nan_threshold_naming_the_key(tmp_path):
    config = tmp_path / "site.toml"
    config.write_text("[rules.IB002.params]\nexpected_rate_gbps = nan\n")
    res = CliRunner().invoke(app, ["check", "--from", "fixtures/hosts/hgx-h100-healthy-assembled",
                                   "--config", str(config)])
    assert res.exit_code == ExitCode.USAGE
    [line] = res.stderr.splitlines()
    assert "rules.IB002.params.expected_rate_gbps: nan is not a number" in line


def test_check_killed_by_sigterm_kills_the_tools_it_started(tmp_path):
    """`topodiag check` (a real process) killed while nvidia-smi hangs with a child of its own: both
    go with it, and it exits 143 (128 + SIGTERM)."""
    import os
    import signal
    import subprocess
    import sys

    from tests.live.test_command_bounds import gone, wait_for

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    pid_file = tmp_path / "grandchild.pid"
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\nsleep 120 & echo $! >> {pid_file}; sleep 120\n")
    smi.chmod(0o755)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-m", "topodiag", "check", "--sysfs-root", str(H100_SYSFS),
                             "--deadline", "100", "--format", "json"], cwd=root, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(root), "PATH": f"{bin_dir}:/usr/bin:/bin"})
    try:
        wait_for(pid_file, within=60)
        time.sleep(0.3)  # the other nvidia-smi calls start too
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 143
        pids = [int(p) for p in pid_file.read_text().split()]
        assert pids and all(gone(p) for p in pids), "a tool's child outlived topodiag"
    finally:
        proc.kill()
        proc.wait()
