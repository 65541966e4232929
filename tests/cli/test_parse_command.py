"""`topodiag parse`: exit codes one by one, error messages for people, JSON on a pipe."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from topodiag.exit_codes import ExitCode
from tests.fixtures_index import FIXTURES, parser_fixtures

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "topodiag", *args], cwd=ROOT, input=stdin, capture_output=True,
        timeout=60, env={**os.environ, **(env or {})},
    )


def first_fixture(source: str) -> Path:
    for fx in parser_fixtures():
        if fx.source == source and "parse_error" not in fx.expected():
            return fx.path
    pytest.skip(f"no {source} fixture yet")


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    err = proc.stderr.decode()
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("topodiag: error: ")
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert proc.stdout == b""


def test_ok_json_with_format_json() -> None:
    path = first_fixture("nvidia_smi_topo_m")
    proc = run("parse", str(path), "--format", "json")
    assert proc.returncode == ExitCode.OK, proc.stderr
    data = json.loads(proc.stdout)
    assert data["source"] == "nvidia_smi_topo_m"
    assert data["devices"] and data["links"]


def test_a_pipe_gets_text_unless_asked_for_json() -> None:
    """stdout is a pipe here: text for the person reading it; JSON with --format json or
    $TOPODIAG_FORMAT=json (the man page's ENVIRONMENT)."""
    path = first_fixture("nvidia_smi_topo_m")
    assert run("parse", str(path)).stdout.decode().startswith("source: nvidia_smi_topo_m")
    env = run("parse", str(path), env={"TOPODIAG_FORMAT": "json"})
    assert json.loads(env.stdout)["source"] == "nvidia_smi_topo_m"
    assert run("parse", str(path), "--format", "text", env={"TOPODIAG_FORMAT": "json"}).stdout.startswith(b"source:")


def test_ok_text_format() -> None:
    path = first_fixture("nvidia_smi_topo_m")
    proc = run("parse", str(path), "--format", "text")
    assert proc.returncode == ExitCode.OK, proc.stderr
    out = proc.stdout.decode()
    assert out.startswith("source: nvidia_smi_topo_m")
    assert "GPU0" in out


def test_stdin_dash() -> None:
    path = first_fixture("nvidia_smi_topo_m")
    proc = run("parse", "-", "--format", "json", stdin=path.read_bytes())
    assert proc.returncode == ExitCode.OK, proc.stderr
    assert json.loads(proc.stdout)["source"] == "nvidia_smi_topo_m"


def test_named_source_overrides_detection() -> None:
    path = first_fixture("nvidia_smi_topo_m")
    proc = run("parse", str(path), "--source", "nccl_tests")
    assert proc.returncode == ExitCode.INCOMPLETE
    assert_one_line_error(proc, str(path))


def test_missing_file_exits_3(tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"
    proc = run("parse", str(missing))
    assert proc.returncode == ExitCode.INCOMPLETE
    assert_one_line_error(proc, str(missing), "no such file")


def test_directory_exits_3(tmp_path: Path) -> None:
    proc = run("parse", str(tmp_path))
    assert proc.returncode == ExitCode.INCOMPLETE
    assert_one_line_error(proc, str(tmp_path), "is a directory")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_exits_3(tmp_path: Path) -> None:
    f = tmp_path / "locked.txt"
    f.write_text("GPU0\n")
    f.chmod(0)
    proc = run("parse", str(f))
    assert proc.returncode == ExitCode.INCOMPLETE
    assert_one_line_error(proc, "permission denied")


def test_binary_garbage_exits_3(tmp_path: Path) -> None:
    f = tmp_path / "core.bin"
    f.write_bytes(bytes(range(256)) * 64)
    proc = run("parse", str(f))
    assert proc.returncode == ExitCode.INCOMPLETE
    assert_one_line_error(proc, str(f), "binary")


def test_gzip_exits_3_with_hint(tmp_path: Path) -> None:
    import gzip

    f = tmp_path / "bundle.tar.gz"
    f.write_bytes(gzip.compress(b"GPU0 GPU1\n" * 100))
    proc = run("parse", str(f))
    assert proc.returncode == ExitCode.INCOMPLETE
    assert_one_line_error(proc, str(f))


def test_empty_file_exits_3(tmp_path: Path) -> None:
    f = tmp_path / "empty.txt"
    f.write_bytes(b"")
    proc = run("parse", str(f))
    assert proc.returncode == ExitCode.INCOMPLETE
    assert_one_line_error(proc, str(f), "empty")


def test_blank_file_exits_3(tmp_path: Path) -> None:
    f = tmp_path / "blank.txt"
    f.write_bytes(b"\n  \r\n\t\n")
    proc = run("parse", str(f))
    assert proc.returncode == ExitCode.INCOMPLETE
    assert_one_line_error(proc, str(f), "no output")


def test_unrecognised_text_exits_3(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("Dear support,\nmy training job is slow since Tuesday.\nThanks\n")
    proc = run("parse", str(f))
    assert proc.returncode == ExitCode.INCOMPLETE
    assert_one_line_error(proc, str(f), "--source")


def test_wrong_tool_names_file_and_line(tmp_path: Path) -> None:
    path = first_fixture("nvidia_smi_topo_m")
    proc = run("parse", str(path), "--source", "ibstat")
    assert proc.returncode == ExitCode.INCOMPLETE
    err = proc.stderr.decode().strip()
    assert_one_line_error(proc, str(path))
    assert err.startswith(f"topodiag: error: {path}:")


def test_input_file_is_not_modified(tmp_path: Path) -> None:
    src = first_fixture("nvidia_smi_topo_m")
    f = tmp_path / src.name
    f.write_bytes(src.read_bytes())
    before = (f.read_bytes(), f.stat().st_mtime_ns)
    assert run("parse", str(f)).returncode == ExitCode.OK
    assert (f.read_bytes(), f.stat().st_mtime_ns) == before


def test_unknown_option_is_usage_error() -> None:
    proc = run("parse", "--frobnicate", "x")
    assert proc.returncode == ExitCode.USAGE
    assert b"Traceback" not in proc.stderr


def test_unknown_source_is_usage_error() -> None:
    proc = run("parse", "x.txt", "--source", "dmesg")
    assert proc.returncode == ExitCode.USAGE
    assert b"unknown source" in proc.stderr


def test_missing_argument_is_usage_error() -> None:
    proc = run("parse")
    assert proc.returncode == ExitCode.USAGE


def test_internal_error_exits_4_without_traceback(tmp_path: Path) -> None:
    # A parser bug (an exception other than ParseError) must become exit 4 and one line.
    shim = tmp_path / "sitecustomize.py"
    shim.write_text(
        "import topodiag.parsers as p\n"
        "m = p.get('nvidia_smi_topo_m')\n"
        "def boom(text):\n    raise ZeroDivisionError('planted bug')\n"
        "m.parse = boom\n"
        "if hasattr(m, 'parse_lines'): del m.parse_lines\n"
    )
    path = first_fixture("nvidia_smi_topo_m")
    proc = run("parse", str(path), env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"})
    assert proc.returncode == ExitCode.INTERNAL
    err = proc.stderr.decode()
    assert "Traceback" not in err and "planted bug" in err and "--debug" in err


def test_version() -> None:
    proc = run("--version")
    assert proc.returncode == ExitCode.OK
    assert proc.stdout.decode().startswith("topodiag ")
    from topodiag.scan import lines

    want = "line scanner: compiled" if lines.COMPILED else "line scanner: pure Python"
    assert want in proc.stdout.decode()


def test_version_says_the_pure_scanner_when_asked() -> None:
    import os
    import subprocess
    import sys

    env = dict(os.environ, TOPODIAG_PURE="1")
    proc = subprocess.run([sys.executable, "-m", "topodiag", "--version"], capture_output=True, env=env, cwd=ROOT)
    assert proc.returncode == ExitCode.OK
    assert "line scanner: pure Python" in proc.stdout.decode()


def test_exit_code_table_is_in_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    for code in ExitCode:
        assert f"| {code.value} |" in readme, f"exit code {code.value} missing from README table"


@pytest.mark.parametrize("fx", parser_fixtures(), ids=lambda f: f.id)
def test_every_fixture_through_the_cli(fx) -> None:
    """In-process (CliRunner) for speed; the subprocess tests above cover the entry point."""
    from typer.testing import CliRunner

    from topodiag.cli import app

    result = CliRunner().invoke(app, ["parse", str(fx.path), "--source", fx.source, "--format", "json"])
    expected = fx.expected()
    if "parse_error" in expected:
        assert result.exit_code == ExitCode.INCOMPLETE, result.output
        return
    assert result.exit_code == ExitCode.OK, result.output
    assert json.loads(result.stdout) == expected


def test_source_help_names_every_source() -> None:
    import typer

    from topodiag.cli import app
    from topodiag.parsers import names

    parse = typer.main.get_command(app).get_command(None, "parse")  # loads the lazy command
    source_help = next(p.help for p in parse.params if p.name == "source")
    assert f": {', '.join(names())}." in source_help


def test_list_prints_every_source_with_its_tool_and_live_command() -> None:
    from topodiag.parsers import infos

    proc = run("parse", "--list")
    assert proc.returncode == ExitCode.OK, proc.stderr
    text = proc.stdout.decode()
    assert max(len(ln) for ln in text.splitlines()) <= 80  # folded, one block a source
    blocks = re.split(r"\n(?=\S)", text.strip())
    cells = []
    for block in blocks:  # "source: tool (prolog-safe: yes)" / "    live: argv" / "    description"
        first, rest = re.split(r"\n    (?=live: )", block, maxsplit=1)
        live, _, description = rest.partition("\n    ")
        source, _, tool = " ".join(first.split()).partition(": ")
        tool, prolog = re.fullmatch(r"(.*) \(prolog-safe: (yes|no)\)", tool).groups()
        cells.append([source, tool, " ".join(live.split())[len("live: "):], prolog, " ".join(description.split())])
    expected = [[i.source, i.tool or "-",
                 " ".join(i.argv) if i.argv else f"probe {i.probe}" if i.probe else "-",
                 "yes" if i.prolog_safe else "no", " ".join(i.description.split())] for i in infos()]
    assert cells == expected
    assert proc.stderr == b""


def test_list_needs_no_file() -> None:
    assert run("parse", "--list", "no-such-file.txt").returncode == ExitCode.OK
    proc = run("parse")
    assert proc.returncode == ExitCode.USAGE and b"FILE" in proc.stderr
