"""`topodiag explain CODE`: one rule in full; an unknown code is a usage error that hints the known ones."""

from __future__ import annotations

from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.engine import load_catalog
from topodiag.exit_codes import ExitCode


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_explains_a_rule_by_code_and_by_slug():
    rule = load_catalog().get("SYS002")
    for key in ("SYS002", "sys002", "source-unparseable"):
        res = invoke("explain", key)
        assert res.exit_code == ExitCode.OK
        out = res.stdout
        assert out.startswith(f"SYS002 source-unparseable: {rule.title}")
        assert "severity: error" in out and "why:" in out and "fix:" in out
        assert rule.why.split()[0] in out
        if rule.how_to_check:
            assert "how to check:" in out
        if rule.references:
            assert rule.references[0] in out


def test_unknown_code_hints_the_known_ones():
    res = invoke("explain", "SYS01")
    assert res.exit_code == ExitCode.USAGE
    assert "did you mean" in res.stderr and "SYS001" in res.stderr and "topodiag rules" in res.stderr


def test_params_are_listed(monkeypatch):
    import topodiag.engine as engine
    from topodiag.engine import Catalog, Rule, Severity

    rule = Rule(code="ZZZ001", slug="probe", title="t", severity=Severity.WARNING, message="m", why="w",
                fix="f", params={"min_ratio": 0.8}, references=("https://example.org/doc",))
    monkeypatch.setattr(engine, "load_catalog", lambda *a, **k: Catalog([rule]))
    out = invoke("explain", "ZZZ001").stdout
    assert "min_ratio = 0.8" in out and "https://example.org/doc" in out and "severity: warning" in out


def test_explain_wraps_to_the_terminal_without_breaking_words(monkeypatch):
    """The TOML prose is wrapped at ~100 columns in the file; explain re-flows it to the terminal."""
    from typer.testing import CliRunner

    from topodiag.cli import app

    monkeypatch.setenv("COLUMNS", "80")
    out = CliRunner().invoke(app, ["explain", "GPU002"]).stdout
    long = [ln for ln in out.splitlines() if len(ln) > 80 and " " in ln.strip()]
    assert not long, long
    assert "  An SXid is the NVSwitch driver's error report" in out
