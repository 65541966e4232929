"""`check --from` on what a hostile folder can hold (issue 16): a folder's symbolic links are not
followed (one pointing at /etc/shadow was read as root), FIFOs, devices and sockets are never opened
(a FIFO named in --from blocked forever), and names with escape codes are never shown raw."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.exit_codes import ExitCode

ROOT = Path(__file__).resolve().parents[2]
IBSTAT = ROOT / "fixtures" / "ibstat" / "ibstat-cx7-ndr-400-ib-active-h20-01.txt"
TOPO = ROOT / "fixtures" / "nvidia_smi_topo_m" / "topo-h100-hgx-nv18-8nic-pix-gpunumaid-01.txt"


def check(*paths) -> tuple[int, dict | None, str]:
    res = CliRunner().invoke(app, ["check", "--from", *map(str, paths), "--format", "json"])
    out = res.stdout
    return res.exit_code, (json.loads(out) if out.strip().startswith("{") else None), res.stderr


def topodiag_in_child(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """The CLI in a child process with a timeout: what used to block forever fails the test instead
    of hanging the suite."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "topodiag", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=str(ROOT))


def test_a_link_in_a_folder_to_a_file_outside_is_not_read(tmp_path):
    secret = tmp_path / "shadow"  # stands for /etc/shadow: what a link could make root read
    secret.write_text(IBSTAT.read_text())
    folder = tmp_path / "outputs"
    folder.mkdir()
    (folder / "topo.txt").write_text(TOPO.read_text())
    os.symlink(secret, folder / "ibstat.txt")
    code, report, err = check(folder)
    inputs = {Path(i["path"]).name: i for i in report["inputs"]}
    assert inputs["topo.txt"]["status"] == "parsed"
    assert inputs["ibstat.txt"]["status"] == "ignored" and "symbolic link" in inputs["ibstat.txt"]["reason"]
    assert not any(i.get("source") == "ibstat" for i in report["inputs"])
    assert "ibstat.txt: a symbolic link" in err and len([ln for ln in err.splitlines() if "note:" in ln]) == 1


def test_a_link_named_on_the_command_line_is_read(tmp_path):
    link = tmp_path / "topo.txt"
    os.symlink(TOPO, link)  # the user chose it: followed
    code, report, _ = check(link)
    assert [i["status"] for i in report["inputs"]] == ["parsed"]


def test_a_fifo_named_in_from_is_refused_at_once(tmp_path):
    fifo = tmp_path / "ibstat.txt"
    os.mkfifo(fifo)  # no writer: opening it for reading used to wait forever
    res = topodiag_in_child("check", "--from", str(fifo))
    assert res.returncode == ExitCode.INCOMPLETE, res.stderr
    assert "named pipe (FIFO)" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_a_fifo_named_like_an_archive_is_refused_at_once(tmp_path):
    fifo = tmp_path / "node.tar.gz"
    os.mkfifo(fifo)
    res = topodiag_in_child("check", "--from", str(fifo))
    assert res.returncode == ExitCode.INCOMPLETE, res.stderr
    assert "not a regular file" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_a_fifo_named_in_parse_is_refused_at_once(tmp_path):
    fifo = tmp_path / "ibstat.txt"
    os.mkfifo(fifo)
    res = topodiag_in_child("parse", str(fifo))
    assert res.returncode == ExitCode.INCOMPLETE, res.stderr
    assert "named pipe (FIFO)" in res.stderr


def test_fifos_devices_and_sockets_in_a_folder_are_passed_over(tmp_path):
    folder = tmp_path / "outputs"
    folder.mkdir()
    (folder / "topo.txt").write_text(TOPO.read_text())
    os.mkfifo(folder / "a-fifo.txt")
    os.symlink("/dev/null", folder / "b-null")  # a link to a device: a link, not followed
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(folder / "c-sock"))
    except OSError:  # a file system without sockets
        sock = None
    try:
        res = topodiag_in_child("check", "--from", str(folder), "--format", "json")
    finally:
        if sock is not None:
            sock.close()
    report = json.loads(res.stdout)
    inputs = {Path(i["path"]).name: i for i in report["inputs"]}
    assert inputs["topo.txt"]["status"] == "parsed"
    assert inputs["a-fifo.txt"]["status"] == "ignored" and "FIFO" in inputs["a-fifo.txt"]["reason"]
    assert inputs["b-null"]["status"] == "ignored" and "symbolic link" in inputs["b-null"]["reason"]
    if sock is not None:
        assert inputs["c-sock"]["status"] == "ignored" and "socket" in inputs["c-sock"]["reason"]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_file_names_with_escape_codes_are_never_shown_raw(tmp_path, fmt):
    folder = tmp_path / "outputs"
    folder.mkdir()
    (folder / "topo.txt").write_text(TOPO.read_text())
    (folder / "x\x1b[2J\x1b]0;owned\x07.txt").write_text("not a tool's output\n")
    os.mkfifo(folder / "y\x1b[31m.fifo")
    os.symlink(TOPO, folder / "z\x9b1m.lnk")
    res = CliRunner().invoke(app, ["check", "--from", str(folder), "--format", fmt])
    assert res.exit_code in (ExitCode.OK, ExitCode.FINDINGS, ExitCode.INCOMPLETE, 1), res.output
    for stream in (res.stdout, res.stderr):
        assert "\x1b" not in stream and "\x9b" not in stream and "\x07" not in stream
    assert "\\x1b[2J" in res.stdout + res.stderr


def test_a_file_named_with_escape_codes_is_refused_without_them(tmp_path):
    missing = tmp_path / "gone\x1b[2J.txt"
    res = CliRunner().invoke(app, ["parse", str(missing)])
    assert res.exit_code == ExitCode.INCOMPLETE
    assert "\x1b" not in res.stderr and "\\x1b[2J" in res.stderr


def test_check_refuses_a_missing_file_named_with_escape_codes_in_one_line(tmp_path):
    missing = tmp_path / "gone\x1b[2J.txt"
    code, report, err = check(missing)
    assert code == ExitCode.INCOMPLETE and report is None
    assert "\x1b" not in err and "\\x1b[2J" in err and len(err.strip().splitlines()) == 1


def test_stdin_is_spooled_to_a_file_not_held_in_memory(monkeypatch):
    """`-` is copied a block at a time into an unnamed temporary file: the parsers then stream it as
    they stream a file (OpenedText.binary() is a seekable file), whatever its size."""
    import io
    import sys

    from topodiag.load.files import open_text

    data = b"x" * (3 << 20) + b"\n"

    class FakeStdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", FakeStdin())
    opened = open_text("-")
    try:
        raw = opened.binary()
        assert raw is not None and raw.seekable() and opened.name == "<stdin>"
        assert len(raw.read()) == len(data)
        # a line parser gets at most LINE_LIMIT characters of a line; the rest is read in pieces and dropped
        from topodiag.load.files import LINE_LIMIT
        assert [len(line) for line in opened.lines()] == [LINE_LIMIT]
    finally:
        opened.close()
