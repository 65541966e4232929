"""collect --deadline bounds redaction too: past it the redactor refuses (RedactionError, exit 3) and
nothing is written, never a partly redacted bundle."""

from __future__ import annotations

import time

import pytest

from topodiag.bundle.redact import Redactor
from topodiag.errors import RedactionError


def test_a_redactor_past_its_deadline_refuses():
    r = Redactor(hostnames=["gpu017"], deadline=time.monotonic() - 0.001)
    with pytest.raises(RedactionError, match="before the --deadline"):
        r.redact("gpu017:1:2 [0] NCCL INFO x\n")
    assert Redactor(hostnames=["gpu017"], deadline=time.monotonic() + 60).redact("gpu017 up\n").startswith("host-")
    assert Redactor(hostnames=["gpu017"]).redact("gpu017 up\n").startswith("host-")  # no bound


def test_collect_redact_out_of_time_writes_nothing(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import topodiag.live.commands as commands
    from topodiag.cli import app

    monkeypatch.setattr(commands, "time_left", lambda: 0.0)
    monkeypatch.setenv("PATH", str(tmp_path))  # no tool: collection is quick and empty
    (tmp_path / "root" / "sys" / "class").mkdir(parents=True)
    log = tmp_path / "n.log"
    log.write_text("gpu017:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.1.2.3<0>\n")
    out = tmp_path / "b.tar.gz"
    res = CliRunner().invoke(app, ["collect", "--redact", "--nccl-log", str(log), "--sysfs-root",
                                   str(tmp_path / "root"), "-o", str(out)])
    assert res.exit_code == 3, res.output
    assert "before the --deadline" in res.output and not out.exists()
    assert not list(tmp_path.glob("*.partial*")) and not list(tmp_path.glob("b.tar.gz*"))
