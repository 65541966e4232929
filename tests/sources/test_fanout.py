"""The ClusterShell fan-out, for real: ClusterShell's exec worker runs a local command per node name
(%h), so timeouts, exit codes and missing output are those of real processes."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("ClusterShell", reason="ClusterShell is in the test extra")

from topodiag.sources.fanout import FanOutError, fan_out  # noqa: E402


@pytest.fixture
def scripts(tmp_path):
    """One shell script per node name: what that node 'prints'."""
    def write(**per_node: str):
        for name, body in per_node.items():
            (tmp_path / f"{name}.sh").write_text(body)
        return f"sh {tmp_path}/%h.sh"
    return write


def test_every_node_comes_back_as_output_or_a_reason(scripts):
    command = scripts(n1='echo \'{"a": 1}\'\n', n2="echo report; exit 1\n", n3="sleep 20\n",
                      n4="echo 'topodiag: error: bad' >&2; exit 2\n", n5="exit 0\n")
    started = time.monotonic()
    out = fan_out("n[1-5,6]", command, fanout=8, timeout_s=2, local=True)
    elapsed = time.monotonic() - started
    assert out.nodes == ["n1", "n2", "n3", "n4", "n5", "n6"]
    assert out.outputs == {"n1": '{"a": 1}', "n2": "report"}  # check exits 1 with a report: kept
    assert out.failures["n3"] == "no answer within 2 s (timed out)"
    assert out.failures["n4"] == "no output (exit 2): topodiag: error: bad"
    assert out.failures["n5"] == "no output (exit 0)"
    assert out.failures["n6"].startswith("no output (exit 2): sh: ") and "n6.sh" in out.failures["n6"]
    assert set(out.outputs) | set(out.failures) == set(out.nodes)
    assert elapsed < 10  # the sleeping node was cut at its timeout, not waited for


def test_fanout_bounds_how_many_run_at_once(scripts, tmp_path):
    """4 nodes of 1 s each with fanout 2 take two rounds."""
    body = "sleep 1; echo ok\n"
    command = scripts(**{f"m{i}": body for i in range(4)})
    started = time.monotonic()
    out = fan_out("m[0-3]", command, fanout=2, timeout_s=10, local=True)
    elapsed = time.monotonic() - started
    assert sorted(out.outputs) == ["m0", "m1", "m2", "m3"] and not out.failures
    assert elapsed >= 1.9


@pytest.mark.parametrize("nodes, text", [("gpu[3-1", "is not a node set"), ("", "names no node")])
def test_a_bad_node_set_is_a_usage_error(nodes, text):
    with pytest.raises(FanOutError) as info:
        fan_out(nodes, "true", local=True)
    assert text in str(info.value) and info.value.usage


def test_a_timed_out_command_leaves_no_process_behind(scripts, tmp_path):
    """A launcher (`srun -w %h ...`) that hangs is killed with everything it started."""
    import os

    pidfile = tmp_path / "child.pid"
    command = scripts(s1=f"sleep 60 & echo $! > {pidfile}; wait\n")
    out = fan_out("s1", command, timeout_s=1, local=True)
    assert out.failures == {"s1": "no answer within 1 s (timed out)"}
    pid = int(pidfile.read_text())
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the timed-out command's child {pid} is still running")
