"""The man page names every command and option the CLI has, and every exit code."""

from __future__ import annotations

import re

import pytest
from pathlib import Path

import typer

from topodiag.cli import app
from topodiag.exit_codes import ExitCode

MAN = (Path(__file__).resolve().parents[2] / "man" / "topodiag.1").read_text()
# groff escapes hyphens as \- ; compare against the unescaped text
MAN_TEXT = MAN.replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")


def _commands():
    # commands load lazily (cli/app.py): load them all, as help does, so this test does not depend on
    # which tests ran before it; typer >= 0.2x vendors click (typer._click); duck-type so both work
    from topodiag.cli.app import load_all_commands

    load_all_commands()
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


def _live(info) -> str:
    """How live collection gets a source, in the words of the SOURCES section and the README."""
    return "command" if info.argv else "probe" if info.probe else "files"


def test_sources_section_names_every_parser_with_its_tool() -> None:
    """SOURCES has one entry per parser of the registry, each giving its INFO's tool and how it is
    collected live: `.TP`, `.B name`, then `\\fBtool\\fR; live: \\fIcommand|probe|files\\fR. ...`."""
    from topodiag.parsers import get, infos, names

    section = MAN.split("\n.SH SOURCES\n", 1)[1].split("\n.SH ", 1)[0]
    entries = re.findall(r"^\.TP\n\.B (\S+)\n\\fB(.+?)\\fR; live: \\fI(\w+)\\fR\. \S", section, re.M)
    assert len(entries) == section.count(".TP\n"), "a SOURCES entry not in the form .B name / \\fBtool\\fR; live: ..."
    documented = {name: (tool.replace("\\-", "-"), live) for name, tool, live in entries}
    assert len(documented) == len(entries), "a source documented twice"
    assert sorted(documented) == names()
    for info in infos():
        tool, live = documented[info.source]
        assert live == _live(info), f"{info.source}: the man page says live {live}, its INFO {_live(info)}"
        if hasattr(get(info.source), "INFO"):  # a parser still without INFO has no tool to compare
            assert tool == info.tool, f"{info.source}: the man page says {tool!r}, its INFO {info.tool!r}"


def test_the_man_page_is_installed_with_the_package():
    """pip installs man/topodiag.1 as the wheel's shared data into <env>/share/man/man1, where `man
    topodiag` finds it (man looks beside the bin/ on PATH); declared in pyproject.toml."""
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert '"man/topodiag.1" = "share/man/man1/topodiag.1"' in (root / "pyproject.toml").read_text()
    installed = Path(sys.prefix) / "share" / "man" / "man1" / "topodiag.1"
    if sys.prefix == sys.base_prefix:
        pytest.skip("not running inside the environment topodiag was installed into")
    assert installed.is_file(), f"{installed}: pip install did not place the man page"
    assert installed.read_text().startswith(".TH TOPODIAG 1")
