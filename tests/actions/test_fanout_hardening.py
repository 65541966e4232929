"""The fan-out against hostile node names, node sets and outputs (issue 16)."""

from __future__ import annotations

import os
import time

import pytest

import ClusterShell  # noqa: F401 -- in the test extra

from topodiag.actions.fanout import FanOutError, fan_out, substitute


def test_the_node_name_is_quoted_where_it_is_substituted():
    assert substitute("echo %h %host %n %rank %% %%h", "a'b", 3) == "echo 'a'\"'\"'b' 'a'\"'\"'b' 3 3 % %h"
    assert substitute("srun -w %h x", "gpu01", 0) == "srun -w gpu01 x"


@pytest.mark.parametrize("nodes, says", [
    ("-oProxyCommand=touch", "starts with '-'"),
    ("gpu1,-oProxyCommand=x", "starts with '-'"),
    ("a;touch${IFS}x", "has ';'"),
    ("gpu`id`", "has '`'"),
    ("gpu\x1b]0;x\x07", "has '\\x1b'"),
])
def test_a_node_name_that_is_not_a_host_name_is_refused_before_anything_runs(nodes, says, tmp_path):
    marker = tmp_path / "ran"
    with pytest.raises(FanOutError) as info:
        fan_out(nodes, f"touch {marker}", local=True)
    msg = str(info.value)
    assert info.value.usage and says in msg and "\n" not in msg and "\x1b" not in msg
    assert not marker.exists()


def test_a_huge_node_set_is_refused_before_expanding():
    started = time.monotonic()
    with pytest.raises(FanOutError) as info:
        fan_out("n[1-1000]-[1-1000]", "true", local=True)
    assert info.value.usage and "names more than 100000 nodes" in str(info.value)
    assert time.monotonic() - started < 2


def test_ssh_gets_the_node_after_a_double_dash(tmp_path, monkeypatch):
    ssh = tmp_path / "bin" / "ssh"
    ssh.parent.mkdir()
    log = tmp_path / "argv.log"
    ssh.write_text(f'#!/bin/sh\nfor a in "$@"; do echo "[$a]" >> {log}; done\necho "{{}}"\n')
    ssh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{ssh.parent}:/usr/bin:/bin")
    out = fan_out("gpu01", "topodiag check --format json", timeout_s=10)
    assert out.outputs == {"gpu01": "{}"}
    argv = log.read_text().split("\n")
    assert argv[argv.index("[--]") + 1:argv.index("[--]") + 3] == ["[gpu01]", "[topodiag check --format json]"]


def test_output_past_the_cap_is_cut_and_the_node_is_a_failure(tmp_path):
    for name, body in (("big", "head -c 200000 /dev/zero | tr '\\\\0' x\n"), ("endless", "yes\n"),
                       ("fine", "echo '{}'\n")):
        (tmp_path / f"{name}.sh").write_text(body)
    started = time.monotonic()
    out = fan_out("big,endless,fine", f"sh {tmp_path}/%h.sh", local=True, timeout_s=30, max_output=100_000)
    assert time.monotonic() - started < 10  # the endless one was killed at the cap, not at the timeout
    assert out.failures == {"big": "more than 100000 bytes of output (cut; a report is a few KB)",
                            "endless": "more than 100000 bytes of output (cut; a report is a few KB)"}
    assert out.outputs == {"fine": "{}"}


def test_outputs_are_spooled_on_disk_and_removed_on_close(tmp_path):
    out = fan_out("a[1-3]", "echo '{\"n\": \"%h\"}'", local=True)
    assert dict(out.outputs) == {f"a{i}": f'{{"n": "a{i}"}}' for i in (1, 2, 3)}
    spool = out.spool
    assert spool and len(os.listdir(spool)) == 3 and (os.stat(spool).st_mode & 0o077) == 0
    out.close()
    assert not os.path.exists(spool)


def test_sigterm_to_topodiag_kills_every_running_node(tmp_path):
    import signal
    import subprocess
    import sys

    pids = tmp_path / "pids"
    code = ("from topodiag.actions.fanout import fan_out; "
            f"fan_out('s[1-3]', 'sleep 60 & echo $! >> {pids}; wait', local=True, timeout_s=60)")
    proc = subprocess.Popen([sys.executable, "-c", code])
    for _ in range(100):
        if pids.exists() and len(pids.read_text().split()) == 3:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 128 + signal.SIGTERM
    for pid in map(int, pids.read_text().split()):
        for _ in range(50):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"{pid} outlived topodiag")


def test_a_reaped_command_s_group_is_never_signalled(monkeypatch):
    """Once a node's command is reaped its pid (its group's id) may be another process group's: the
    fan-out's kills (deadline, output cap, Ctrl-C) go through live.commands.kill_group, which signals
    only a group whose leader is not reaped yet."""
    import os
    import subprocess

    from topodiag.actions import fanout

    proc = subprocess.Popen(["true"], start_new_session=True)
    proc.wait()
    sent = []
    monkeypatch.setattr(os, "killpg", lambda pid, sig: sent.append((pid, sig)))
    fanout.kill_group(proc)
    assert sent == []
