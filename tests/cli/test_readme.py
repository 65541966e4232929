"""The README's two set-up commands stay true: CI runs the test command verbatim, the example exists."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
SETUP = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
COMMANDS = re.findall(r"```sh\n(.+?)\n```", SETUP)


def test_two_setup_commands() -> None:
    assert len(COMMANDS) == 2, COMMANDS


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert COMMANDS[1] in ci


def test_example_command_names_a_real_fixture() -> None:
    words = shlex.split(COMMANDS[0].split("&&")[-1].replace(";", " "))
    paths = [w for w in words if w.startswith("fixtures/")]
    assert paths and all((ROOT / p).exists() for p in paths)
