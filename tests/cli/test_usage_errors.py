"""Usage errors are one line with where to look (exit 2); completion scripts are generated."""

from __future__ import annotations

from typer.testing import CliRunner

from topodiag.cli import app


def _run(*args):
    return CliRunner().invoke(app, list(args))


def test_an_unknown_option_is_one_line_with_the_help_to_try():
    res = _run("check", "--bogus")
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert lines == ["topodiag: error: No such option: --bogus (Possible options: --host, --tags) (try 'topodiag check -h')"] \
        or (len(lines) == 1 and lines[0].startswith("topodiag: error: No such option: --bogus") and "topodiag check -h" in lines[0])


def test_an_unknown_command_and_a_bad_choice_are_one_line():
    res = _run("bogus")
    assert res.exit_code == 2 and len([ln for ln in res.output.splitlines() if ln.strip()]) == 1
    res = _run("check", "--format", "xml", "--from", "x")
    assert res.exit_code == 2 and len([ln for ln in res.output.splitlines() if ln.strip()]) == 1
    assert "'xml' is not one of" in res.output or "xml" in res.output


def test_help_keeps_the_brackets_rich_markup_would_eat():
    res = _run("check", "-h")
    assert res.exit_code == 0 and "[[hosts]]" in res.output


def test_a_completion_script_for_the_current_shell():
    """--show-completion prints the script for the shell it runs under (detected by shellingham, which
    typer depends on); bash here and on CI."""
    res = CliRunner().invoke(app, ["--show-completion"], env={"SHELL": "/bin/bash"})
    assert res.exit_code == 0 and "_TOPODIAG_COMPLETE" in res.output and "topodiag" in res.output
