"""The library API (topodiag/pipeline/) as a program uses it: results, typed errors, formats."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import topodiag
from topodiag.cli import app
from topodiag.errors import BundleError, ConfigError, InputError, ProfileError, SelectionError, UsageError
from topodiag.render import FORMATS

ROOT = Path(__file__).resolve().parents[1]
HGX = ROOT / "fixtures" / "hosts" / "hgx-h100-healthy-assembled"


def test_diagnose_gives_what_check_prints():
    d = topodiag.diagnose([HGX])
    res = CliRunner().invoke(app, ["check", "--from", str(HGX), "--format", "json"])
    cli = json.loads(res.stdout)
    api = json.loads(json.dumps(d.to_json()))
    assert res.exit_code == d.exit_code
    assert api["findings"] == cli["findings"] and api["inputs"] == cli["inputs"]
    assert api["profile"] == cli["profile"] and api["fingerprint"] == cli["fingerprint"]


def test_diagnose_takes_the_options_of_check():
    d = topodiag.diagnose([HGX], select=["NVL"], fail_on="never", profile="dgx-h100")
    assert d.profile is not None and d.profile.name == "dgx-h100" and d.profile_how == "dgx-h100 (given)"
    assert {code[:3] for code in d.outcome.ran} <= {"NVL", "SYS"}
    assert d.exit_code == 0


@pytest.mark.parametrize("kwargs, error, text", [
    ({"profile": "no-such"}, ProfileError, "unknown profile 'no-such'"),
    ({"select": ["NOPE999"]}, SelectionError, "'NOPE999' names no rule"),
    ({"fail_on": "sometimes"}, UsageError, "--fail-on"),
])
def test_bad_options_are_usage_errors(kwargs, error, text):
    with pytest.raises(error, match=text) as info:
        topodiag.diagnose([HGX], **kwargs)
    assert isinstance(info.value, UsageError) and "\n" not in str(info.value)


def test_a_bad_site_config_is_a_config_error(tmp_path):
    cfg = tmp_path / "site.toml"
    cfg.write_text("[rules.NOPE999]\nenabled = false\n")
    with pytest.raises(ConfigError):
        topodiag.diagnose([HGX], config=cfg)


def test_unreadable_inputs_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no files to read"):
        topodiag.diagnose([tmp_path])  # an empty directory
    bad = tmp_path / "b.tar.gz"
    bad.write_text("not an archive")
    with pytest.raises(BundleError):
        topodiag.diagnose([bad])
    with pytest.raises(InputError, match="missing.txt: no such file"):  # a file named: one line, no report
        topodiag.diagnose([tmp_path / "missing.txt"])
    folder = tmp_path / "outputs"  # a file found in a directory that no tool wrote: a finding of the report
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n")
    d = topodiag.diagnose([folder])
    assert d.exit_code == 3 and [f.code for f in d.findings] == ["SYS002"]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_renders_a_diagnosis(fmt):
    d = topodiag.diagnose([HGX])
    out = io.StringIO()
    d.render(fmt, out)
    text = out.getvalue()
    assert text.strip(), fmt
    if fmt in ("json", "topology-json"):
        json.loads(text)
    if fmt == "slurm":
        assert text.startswith("topodiag: ") and text.count("\n") == 1


def test_survey_builds_the_model_without_rules():
    d = topodiag.survey([HGX])
    assert d.outcome is None and d.topology.gpus() and d.statuses


def test_the_api_names_are_lazy_and_documented():
    import subprocess
    import sys

    code = "import sys, topodiag; print('topodiag.pipeline' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"
    for name in topodiag.__all__:
        assert getattr(topodiag, name) is not None


def test_the_profile_is_chosen_once_and_reported_as_used():
    """Only an nccl-tests run of 2x8 H100: the header names the profile its rank lines match, and
    PERF001 judges against that same profile (it no longer detects one of its own)."""
    run = ROOT / "fixtures/nccl_tests/nccltests-allreduce-2x8h100-ndr-degraded-155-srun-prefix-01.txt"
    d = topodiag.diagnose([run])
    assert d.profile is not None and d.profile.name == "dgx-h100"
    assert d.profile_how == "dgx-h100 (detected from NVIDIA H100 80GB HBM3 x8 per node in an nccl-tests run)"
    [perf] = [f for f in d.findings if f.code == "PERF001"]
    assert perf.expectation.startswith("profile dgx-h100:")
