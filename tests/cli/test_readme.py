"""The README stays true: CI runs its test command verbatim, its example exists, and its table of
sources is the parser registry's."""

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


def _live(info) -> str:
    """How live collection gets a source, in the words of the README's table and the man page."""
    return "command" if info.argv else "probe" if info.probe else "files"


def test_sources_table_names_every_parser_with_its_tool() -> None:
    """One row per parser: | `source` | `tool` (notes) | command, probe or files | fields |, the
    tool exactly its INFO's (notes may follow it), the live column how live collection gets it."""
    from topodiag.parsers import get, infos, names

    section = README.split("## `topodiag parse FILE`", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("| `")]
    rows = [re.match(r"\| `(\w+)` \| `([^`]+)`[^|]* \| (\w+) \| ", ln) for ln in lines]
    assert all(rows), [ln for ln, row in zip(lines, rows) if not row]
    documented = {row[1]: (row[2], row[3]) for row in rows}
    assert len(documented) == len(rows), "a source listed twice"
    assert sorted(documented) == names()
    for info in infos():
        tool, live = documented[info.source]
        assert live == _live(info), f"{info.source}: the README says live {live}, its INFO {_live(info)}"
        if hasattr(get(info.source), "INFO"):  # a parser still without INFO has no tool to compare
            assert tool == info.tool, f"{info.source}: the README says {tool!r}, its INFO {info.tool!r}"
