"""`collect -o existing.tar.gz` silently replaced the file (pipeline.collect_bundle's docstring said
"UsageError for a target that exists"): it is refused now, before anything is collected, unless
--force."""

from __future__ import annotations

import tarfile
from pathlib import Path

from typer.testing import CliRunner

from topodiag.cli.app import app
from topodiag.exit_codes import ExitCode

SYSFS = Path(__file__).resolve().parents[2] / "fixtures" / "sysfs" / "hgx-h100-cx7-ndr-8rail"


def test_an_existing_archive_is_kept_without_force(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no tool: the collection is quick
    keep = tmp_path / "keep.tar.gz"
    keep.write_text("KEEP\n")
    done = CliRunner().invoke(app, ["collect", "--sysfs-root", str(SYSFS), "-o", str(keep)])
    assert done.exit_code == ExitCode.USAGE, done.output
    assert "exists; give --force" in done.output and keep.read_text() == "KEEP\n"
    done = CliRunner().invoke(app, ["collect", "--sysfs-root", str(SYSFS), "-o", str(keep), "--force"])
    assert done.exit_code == ExitCode.OK, done.output
    with tarfile.open(keep) as tar:
        assert "keep/manifest.json" in tar.getnames()
