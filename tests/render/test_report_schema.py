"""`check --format json` reports against the published schema (docs/report.schema.json): every host
scenario, a few single inputs (healthy, failing, unreadable, collapsed findings), and the schema's
version against the renderer's."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.render import json_report

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / json_report.SCHEMA_FILE).read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
HOSTS = sorted(p for p in (ROOT / "fixtures" / "hosts").iterdir() if p.is_dir())
SINGLE = [
    "fixtures/nvidia_smi_topo_m/topo-asus-esc8000a-e12-4x-rtx6000ada-cx7-node-01.txt",
    "fixtures/kernel_log/kernel-log-xid45-after-nvlink-xid149-145-01.txt",
    "fixtures/nccl_debug/nccl-gdrdma-one-node-only-bare-connection-lines-2node-01.log",
    "README.md",  # not any tool's output: exit 3, still a report
]


def _report(*paths: str):
    res = CliRunner().invoke(app, ["check", *[a for p in paths for a in ("--from", p)], "--format", "json"])
    return json.loads(res.stdout)


def test_the_schema_is_valid_and_names_the_renderers_version():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$defs"]["report"]["properties"]["schema_version"]["const"] == json_report.SCHEMA_VERSION


@pytest.mark.parametrize("host", HOSTS, ids=lambda p: p.name)
def test_host_scenario_reports_follow_the_schema(host):
    report = _report(str(host))
    errors = sorted(VALIDATOR.iter_errors(report), key=str)
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


@pytest.mark.parametrize("path", SINGLE)
def test_single_input_reports_follow_the_schema(path):
    report = _report(str(ROOT / path))
    assert not list(VALIDATOR.iter_errors(report))


def test_profile_is_a_name_or_null_with_its_reason():
    named = _report(str(ROOT / "fixtures" / "hosts" / "hgx-h100-healthy-assembled"))
    assert named["profile"] and " " not in named["profile"] and named["profile_reason"].startswith("detected from")
    none = _report(str(ROOT / SINGLE[2]))
    assert none["profile"] is None and none["profile_reason"] == "the inputs name no GPU model"


def test_a_report_missing_a_field_or_with_a_sentence_for_severity_fails():
    report = _report(str(ROOT / SINGLE[1]))
    bad = dict(report)
    del bad["profile_reason"]
    assert list(VALIDATOR.iter_errors(bad))
    bad = json.loads(json.dumps(report))
    bad["findings"][0]["severity"] = "pretty bad"
    assert list(VALIDATOR.iter_errors(bad))


def test_the_report_written_in_pieces_is_json_dumps_indented(monkeypatch):
    """render writes the indented text a piece at a time (WRITE_BYTES): the same text as
    json.dumps(report, indent=2), pieces joined wherever they are cut."""
    import io

    report = {"findings": [{"code": "SYS004", "line": k, "text": "é\u2028\"x\"", "v": [1.5, None, True]}
                           for k in range(3000)], "empty": {}, "none": []}
    monkeypatch.setattr(json_report, "report", lambda diagnosis: report)
    for size in (1, 4096, 1 << 20):
        monkeypatch.setattr(json_report, "WRITE_BYTES", size)
        out = io.StringIO()
        json_report.render(None, out)
        assert out.getvalue() == json.dumps(report, indent=2) + "\n"
