"""`topodiag --debug prolog`: a crashed check's traceback on stderr before the line (cli/prolog.py
does this itself since it no longer imports cli/check.py, issue 29)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.engine import load_checks, registry

SYSFS = Path(__file__).resolve().parents[2] / "fixtures" / "sysfs" / "hgx-h100-cx7-ndr-8rail"


def _boom(topology):
    raise ZeroDivisionError("planted prolog bug")


def _run(*args: str):
    load_checks()
    with registry.scoped():
        registry._checks["TOPO001"] = registry._spec("TOPO001", _boom)
        return CliRunner().invoke(app, [*args, "prolog", "--sysfs-root", str(SYSFS)])


def test_debug_prints_the_crashed_checks_traceback():
    res = _run("--debug")
    assert "Traceback" in res.stderr and "ZeroDivisionError: planted prolog bug" in res.stderr
    assert res.stdout.startswith("topodiag: ") and "Traceback" not in res.stdout


def test_without_debug_no_traceback():
    res = _run()
    assert "Traceback" not in res.output
    assert res.stdout.startswith("topodiag: ")
