"""The prolog's drain reason is one safe line whatever the subjects hold (issue 16: a host name with
escape codes or a newline went raw into `scontrol update ... reason=`)."""

from __future__ import annotations

import topodiag
from topodiag.engine import Finding
from topodiag.engine.runner import Outcome
from topodiag.exit_codes import ExitCode
from topodiag.render.slurm import MAX_REASON, reason_line, safe


def _outcome(*subjects):
    f = Finding("TOPO006", "gpu-missing", topodiag.engine.Severity.CRITICAL, tuple(subjects), "m")
    return Outcome(findings=(f,), skipped=(), ran=("TOPO006",), crashes=(),
                   fail_on=topodiag.engine.Severity.ERROR, exit_code=ExitCode.FINDINGS)


def test_a_hostile_subject_becomes_one_safe_line():
    evil = 'host:gpu1\n\x1b]0;x\x07\x1b[2J"; scontrol update nodename=all state=down reason=\'$(id)`id`\\\u202e\x9b'
    line = reason_line(_outcome(evil, "gpu:0" + "x" * 400))
    assert line.startswith("topodiag: TOPO006 gpu-missing host:gpu1 ?]0;x??[2J?; scontrol")
    assert len(line) <= MAX_REASON and line.isascii() and line.isprintable()
    assert not any(c in line for c in "\"'`\\$\n\r")


def test_plain_reasons_are_unchanged():
    assert reason_line(_outcome("gpu:3")) == "topodiag: TOPO006 gpu-missing gpu:3"
    assert safe("topodiag: IB001 ib-port-down nic:mlx5_0, nic:mlx5_1 +1 more") == \
        "topodiag: IB001 ib-port-down nic:mlx5_0, nic:mlx5_1 +1 more"
