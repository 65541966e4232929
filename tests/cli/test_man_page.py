"""The man page names every command and option the CLI has, and every exit code."""

from __future__ import annotations

from pathlib import Path

import typer

from topodiag.cli import app
from topodiag.exit_codes import ExitCode

MAN = (Path(__file__).resolve().parents[2] / "man" / "topodiag.1").read_text()
# groff escapes hyphens as \- ; compare against the unescaped text
MAN_TEXT = MAN.replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")


def _commands():
    # typer >= 0.2x vendors click (typer._click); duck-type so both work
    group = typer.main.get_command(app)
    return dict(group.commands), group


def test_every_command_is_in_the_man_page() -> None:
    commands, _ = _commands()
    assert commands
    for name in commands:
        assert f"topodiag {name}" in MAN_TEXT or f".B {name}" in MAN_TEXT, name


def test_every_option_is_in_the_man_page() -> None:
    commands, group = _commands()
    params = list(group.params)
    for cmd in commands.values():
        params += cmd.params
    for param in params:
        if getattr(param, "param_type_name", "") == "option":
            for opt in param.opts + param.secondary_opts:
                assert opt in MAN_TEXT, f"option {opt} missing from man/topodiag.1"


def test_every_exit_code_is_in_the_man_page() -> None:
    section = MAN_TEXT.split(".SH EXIT STATUS", 1)[1].split(".SH", 1)[0]
    for code in ExitCode:
        assert f".B {code.value}\n" in section


def test_every_source_is_documented() -> None:
    from topodiag.cli.parse import parse_command  # noqa: F401  (the --source help text)
    from topodiag.parsers import names

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    commands, _ = _commands()
    source_help = next(p.help for p in commands["parse"].params if p.name == "source")
    for name in names():
        assert name in MAN_TEXT, f"source {name} missing from man/topodiag.1"
        assert f"`{name}`" in readme, f"source {name} missing from README's parse table"
        assert name in source_help, f"source {name} missing from parse --source help"
