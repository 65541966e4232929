"""The ClusterShell fan-out, for real: ClusterShell's exec worker runs a local command per node name
(%h), so timeouts, exit codes and missing output are those of real processes. ClusterShell comes
with the test extra; the fan-out must run in CI, so its absence is an error here, never a skip."""

from __future__ import annotations

import time

import pytest

import ClusterShell  # noqa: F401 -- in the test extra: a CI without it must fail here, not skip

from topodiag.actions.fanout import FanOutError, fan_out


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


def test_without_clustershell_the_fan_out_says_how_to_get_it(monkeypatch):
    import sys

    from typer.testing import CliRunner

    from topodiag.cli import app

    monkeypatch.setitem(sys.modules, "ClusterShell.NodeSet", None)  # import fails as when not installed
    with pytest.raises(FanOutError) as info:
        fan_out("n[1-2]", "true", local=True)
    assert "pip install 'topodiag[fleet]'" in str(info.value) and not info.value.usage
    res = CliRunner().invoke(app, ["fleet", "--nodes", "n[1-2]"])
    assert res.exit_code == 3 and "--nodes needs ClusterShell" in res.stderr and res.stdout == ""


def test_the_ssh_worker_with_a_stand_in_ssh(tmp_path, monkeypatch):
    """The remote path (ClusterShell's ssh worker, its argv and options) with an `ssh` on PATH that
    runs the command here as FAKE_HOST=node, and refuses hosts named down*, as ssh does (exit 255)."""
    ssh = tmp_path / "bin" / "ssh"
    ssh.parent.mkdir()
    argv_log = tmp_path / "argv.log"
    ssh.write_text(f"""#!/bin/sh
echo "$@" >> {argv_log}
while [ $# -gt 0 ]; do
  case "$1" in
    -o*) shift ;;
    -l|-p|-i) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
host="$1"; shift
case "$host" in
  down*) echo "ssh: connect to host $host port 22: Connection refused" >&2; exit 255 ;;
esac
FAKE_HOST="$host" exec sh -c "$*"
""")
    ssh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{ssh.parent}:/usr/bin:/bin")
    out = fan_out("up[1-2],down1", 'echo "report of $FAKE_HOST"', timeout_s=10, connect_timeout_s=7)
    assert out.outputs == {"up1": "report of up1", "up2": "report of up2"}
    assert out.failures == {"down1": "ssh failed (exit 255): ssh: connect to host down1 port 22: Connection refused"}
    argv = argv_log.read_text()
    assert "-oBatchMode=yes" in argv and "-oConnectTimeout=7" in argv  # never a password prompt


def test_a_command_that_ignores_sigterm_leaves_nothing_behind(scripts, tmp_path):
    """A TERM-ignoring command (ignored signals are inherited: its sleep ignores TERM too) and a
    finished command's background job are both gone once fan_out returns."""
    import os

    pids = tmp_path / "pids"
    command = scripts(t1=f"trap '' TERM; sleep 30 & echo $! >> {pids}; wait\n",
                      t2=f"sleep 30 & echo $! >> {pids}; echo done\n")
    started = time.monotonic()
    out = fan_out("t[1-2]", command, timeout_s=1, local=True)
    assert time.monotonic() - started < 10
    assert out.failures == {"t1": "no answer within 1 s (timed out)"} and out.outputs == {"t2": "done"}
    for pid in map(int, pids.read_text().split()):
        for _ in range(50):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"{pid} is still running")
