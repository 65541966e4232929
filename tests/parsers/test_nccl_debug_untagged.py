"""The NCCL_DEBUG reader's untagged lines (reader.py `_untagged`): the lines it hands to `Facts.other`
are those that hold "ProcessGroupNCCL" (PyTorch's c10d watchdog) or an untagged mark ("NCCL error",
"NCCL failure", "NCCL version") and no tag ("NCCL INFO", "NCCL WARN", "NCCL TRACE") -- the rule stated
without the line scan, against every line scan (the split one, the loop, the compiled one where it
was built), on generated logs. The watchdog's lines are found by the line scan's marks (lines.py
`_MARK_RE`), not by a search of their own."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest

from topodiag.parsers.nccl_debug import lines as nccl_lines
from topodiag.parsers.nccl_debug import parse
from topodiag.parsers.nccl_debug.facts import Facts

SCANS = [nccl_lines.tagged_py, nccl_lines.tagged_loop] + (
    [nccl_lines.tagged_c] if nccl_lines.compiled is not None else [])
PIECES = [b"h:1:2 [0]", b"NCCL INFO x", b"NCCL INFO", b"NCCL WARN y", b"NCCL TRACE z", b"NCCL error in: a.cc:1",
          b"NCCL failure", b"NCCL version 2.18.1",
          b"[E ProcessGroupNCCL.cpp:607] Watchdog caught collective operation timeout",
          b"ProcessGroupNCCL", b"ProcessGroupNCCL INFOx", b"ProcessGroup", b"NCCL", b"plain text", b"[rank0]:"]
TAGS = (b"NCCL INFO", b"NCCL WARN", b"NCCL TRACE")
MARKS = (b"ProcessGroupNCCL", b"NCCL error", b"NCCL failure", b"NCCL version")


def _read_by_other(text: bytes, scan, monkeypatch) -> set[str]:
    seen: set[str] = set()
    real = Facts.other

    def other(self, line_no: int, line: str) -> bool:
        seen.add(line)
        return real(self, line_no, line)

    with monkeypatch.context() as m:
        m.setattr(Facts, "other", other)
        m.setattr(nccl_lines, "tagged", scan)
        parse(text.decode())
    return seen


@pytest.mark.parametrize("scan", SCANS, ids=lambda f: f.__name__)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.lists(st.sampled_from(PIECES), min_size=1, max_size=3), max_size=10))
def test_untagged_lines_are_the_rule(scan, lines: list, monkeypatch) -> None:
    text = b"h:1:2 [0] NCCL INFO start\n" + b"".join(b" ".join(pieces) + b"\n" for pieces in lines)
    want = {line.decode().strip() for line in text.split(b"\n")
            if any(m in line for m in MARKS) and not any(t in line for t in TAGS)}
    assert _read_by_other(text, scan, monkeypatch) == want


def test_watchdog_lines_read(monkeypatch) -> None:
    """Hand-checked: of five lines, the two without a tag that hold "ProcessGroupNCCL" are read (the
    watchdog's timeout among the errors); the one inside an INFO text, the one before a WARN tag and
    the one after an INFO tag are not."""
    text = (b"[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: "
            b"WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.\n"
            b"h:1:2 [0] NCCL INFO ProcessGroupNCCL in a text\n"
            b"ProcessGroupNCCL h:1:2 [0] x.cc:1 NCCL WARN y\n"
            b"h:1:2 [0] NCCL INFO a ProcessGroupNCCL\n"
            b"[rank1]:[E ProcessGroupNCCL.cpp:1] something else\n")
    for scan in SCANS:
        got = _read_by_other(text, scan, monkeypatch)
        assert got == {text.split(b"\n")[0].decode(), "[rank1]:[E ProcessGroupNCCL.cpp:1] something else"}
    r = parse(text.decode())
    assert [e.kind for e in r.errors] == ["watchdog_timeout"]


def test_watchdog_lines_of_real_shapes(monkeypatch) -> None:
    """The shapes PyTorch c10d's lines take in public threads (pytorch/pytorch#118369: after a tqdm bar
    with no newline; vllm-project/vllm#6042: behind a Ray worker's prefix; sgl-project/sglang#1693: a
    stack frame and the "Exception raised from" line; the values here are invented), one NCCL INFO line
    that names the watchdog in its text, and one whose tag follows it: each scan reads the five
    untagged ones, and the first two are the watchdog's timeouts."""
    lines = [
        "Epoch 0:   6%|\u2588\u2588        | 320/5001 [6:28<94:39,  1.37it/s, loss=2.6][E ProcessGroupNCCL.cpp:458] "
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96, OpType=ALLREDUCE, "
        "Timeout(ms)=1800000) ran for 1800123 milliseconds before timing out.",
        "(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective "
        "operation timeout: WorkNCCL(SeqNum=15, OpType=GATHER, NumelIn=28, NumelOut=0, Timeout(ms)=600000) "
        "ran for 600027 milliseconds before timing out.",
        "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
        "std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f3b6e71a8d2 in /usr/lib/libtorch_cuda.so)",
        "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most "
        "recent call first):",
        "[rank0]:[E1206 18:44:12.715 ProcessGroupNCCL.cpp:1664] [PG 1 Rank 0] Exception (either an error or "
        "timeout) detected by watchdog at work: 7, last enqueued NCCL work: 9, last completed NCCL work: 6.",
        "node1:12:34 [0] NCCL INFO ProcessGroupNCCL is named in this text",
        "[I ProcessGroupNCCL.cpp:1] node1:12:34 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
    ]
    text = ("node1:12:34 [0] NCCL INFO start\n" + "\n".join(lines) + "\n").encode()
    for scan in SCANS:
        assert _read_by_other(text, scan, monkeypatch) == set(lines[:5]), scan.__name__
    r = parse(text.decode())
    assert [e.kind for e in r.errors][:2] == ["watchdog_timeout", "watchdog_timeout"]
