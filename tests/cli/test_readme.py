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


def test_the_python_api_example_runs(monkeypatch, capsys) -> None:
    """The README's Python API example, run as written from the repository root."""
    section = README.split("## Python API", 1)[1].split("\n## ", 1)[0]
    [code] = re.findall(r"```python\n(.+?)\n```", section, re.S)
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    d, report = namespace["d"], namespace["report"]
    assert d.exit_code in (0, 1) and report["host"] and report["summary"]["exit_code"] == d.exit_code
    assert d.topology.graph.number_of_nodes() > 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(str(d.exit_code)) and out[1].endswith("nodes in the networkx graph")
