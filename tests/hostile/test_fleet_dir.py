"""`topodiag fleet DIR` over a directory someone else can write into (topodiag/fleet/reports.py).

Reproducers: a `*.json` entry that is a symbolic link to /dev/zero (it used to be read as one
endless line: all memory), a FIFO named `*.json` (the open blocked forever), a link to a file
outside (its first line was quoted in the failure: `s.json -> /etc/shadow` printed root's hash
line), and a plain file that is not a report (its first line was quoted too)."""

from __future__ import annotations

import json
import os

import pytest

from topodiag.fleet.reports import Failure, _capped_lines, read_reports
from topodiag.render.json_report import SCHEMA_VERSION

from ._limits import run_limited

SECRET = "root:$6$SECRETSALT$hashhashhash:20228:0:99999:7:::"


def _report(host: str) -> str:
    return json.dumps({"schema_version": SCHEMA_VERSION, "host": host, "fingerprint": {"gpu:count": 8},
                       "findings": []}, indent=2) + "\n"


@pytest.fixture
def planted(tmp_path):
    d = tmp_path / "reports"
    d.mkdir()
    (d / "node01.json").write_text(_report("node01"))
    (d / "evil.json").symlink_to("/dev/zero")
    os.mkfifo(d / "fifo.json")
    secret = tmp_path / "shadow"
    secret.write_text(SECRET + "\n")
    (d / "s.json").symlink_to(secret)
    (d / "notes.json").write_text(SECRET + "\n")
    (d / "bundle.tar.gz").symlink_to(secret)
    return d


def test_fleet_reads_regular_files_only_and_quotes_nothing(planted):
    code = f"""
import sys
from topodiag.cli.app import app
sys.argv = ["topodiag", "fleet", {str(planted)!r}, "--format", "json"]
app()
"""
    done = run_limited(code, limit_mb=400, timeout=60)  # the /dev/zero link alone took gigabytes
    out = json.loads(done.stdout)
    reasons = {os.path.basename(f["input"]): f["reason"] for f in out["failures"]}
    assert out["nodes"] == 1
    assert set(reasons) == {"evil.json", "fifo.json", "s.json", "notes.json", "bundle.tar.gz"}
    for name in ("evil.json", "s.json", "bundle.tar.gz"):
        assert "symbolic link" in reasons[name] and "not followed" in reasons[name]
    assert "named pipe (FIFO), not a regular file: not opened" in reasons["fifo.json"]
    assert "not JSON" in reasons["notes.json"]
    assert "SECRET" not in done.stdout + done.stderr and "root:" not in done.stdout + done.stderr


def test_a_device_named_on_the_command_line_is_refused():
    items = list(read_reports(["/dev/zero"]))
    assert items == [Failure("/dev/zero", "a character device, not a regular file: not opened")]


def test_reading_is_capped_while_it_reads():
    import io

    lines = _capped_lines(io.StringIO("x" * 5000), line_cap=1000)
    with pytest.raises(Exception, match="line 1 is longer than"):
        list(lines)
    lines = _capped_lines(io.StringIO("ab\n" * 1000), line_cap=1000, total_cap=2000)
    with pytest.raises(Exception, match="the rest is not read"):
        list(lines)


def test_a_fifo_named_on_the_command_line_is_still_a_stream(tmp_path):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "w") as fh:
            fh.write(json.dumps(json.loads(_report("n7"))) + "\n")

    t = threading.Thread(target=write)
    t.start()
    items = list(read_reports([str(fifo)]))
    t.join()
    assert [getattr(i, "host", None) for i in items] == ["n7"]


def test_a_node_with_an_error_finding_fails_the_sweep_by_default_and_is_named(tmp_path):
    """7 healthy reports and one whose GPU needs a reset (four GPU001 errors), distinct hosts: fleet
    exited 0 and its summary said "GPU001 1 node" without naming it."""
    from typer.testing import CliRunner

    from topodiag.cli.app import app

    d = tmp_path / "r"
    d.mkdir()
    for i in range(1, 9):
        r = json.loads(_report(f"node{i:02d}"))
        if i == 8:
            r["findings"] = [{"code": "GPU001", "severity": "error"}] * 4
        (d / f"node{i:02d}.json").write_text(json.dumps(r, indent=2) + "\n")
    done = CliRunner().invoke(app, ["fleet", str(d), "--format", "text"])
    assert done.exit_code == 1, done.output
    assert "GPU001: node08" in done.stdout and "worst finding error: node08" in done.stdout
    data = json.loads(CliRunner().invoke(app, ["fleet", str(d), "--format", "json"]).stdout)
    assert data["summary"]["findings"] == [{"code": "GPU001", "nodes": 1, "named": ["node08"]}]
    assert CliRunner().invoke(app, ["fleet", str(d), "--fail-on", "never"]).exit_code == 0
