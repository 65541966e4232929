"""`topodiag rules`: the catalog listed, filtered by family and tag (SYS rules only, so other rules may come and go)."""

from __future__ import annotations

from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.exit_codes import ExitCode


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_lists_the_sys_rules():
    res = invoke("rules")
    assert res.exit_code == ExitCode.OK
    for code, slug in (("SYS001", "source-failed"), ("SYS002", "source-unparseable"), ("SYS003", "check-crashed")):
        line = next(ln for ln in res.stdout.splitlines() if ln.startswith(code))
        assert slug in line and "error" in line


def test_family_filter():
    res = invoke("rules", "--family", "sys")
    assert res.exit_code == ExitCode.OK
    lines = res.stdout.splitlines()
    assert [ln.split()[0] for ln in lines if not ln.startswith(" ")] == ["SYS001", "SYS002", "SYS003", "SYS004", "SYS005"]
    assert max(len(ln) for ln in lines) <= 80  # wrapped under the code, never cut


def test_unknown_family_is_a_usage_error():
    res = invoke("rules", "--family", "NOPE")
    assert res.exit_code == ExitCode.USAGE
    assert "SYS" in res.stderr


def test_tag_filter():
    res = invoke("rules", "--tag", "tool-health")
    assert {"SYS001", "SYS002", "SYS003"} <= {ln.split()[0] for ln in res.stdout.splitlines() if ln.strip()}
    res = invoke("rules", "--tag", "no-such-tag")
    assert res.exit_code == ExitCode.OK and res.stdout == ""
