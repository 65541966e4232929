"""Host names in redaction (issue 16): every occurrence of a collected host name that is a whole
token goes, message bodies included (another case, a peer NCCL names by name, a domain after
another label); a host name that is also an ordinary word (`master`, `node`, `gpu`, `user`) goes
only where it is used as a host, and stays a word everywhere else. The whole-member and the
streamed paths agree."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from topodiag.bundle import redact_stream
from topodiag.bundle.redact import Redactor, _prompt_hosts, hostnames_in, redact_bundle_dir, redact_tree
from tests.host_fixture import HOSTS

LOG = """\
node017:1234:1234 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.17<0>
node017:1234:1300 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer node018.ibnet<53735>
node017:1234:1300 [0] NCCL WARN NET/IB : NODE017 lost its link to Node018 (node017-ib.cluster.local)
node017:1234:1234 [0] NCCL INFO comm 0x55 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0
"""
KERNEL = """\
Nov 05 13:55:26 node017 kernel: NFS: server node017 not responding, still trying
Nov 05 13:55:27 node017 kernel: mlx5_core 0000:0c:00.0 ib0: node017-ib0 link down
"""


def redact_members(tmp_path: Path, members: dict[str, str], streamed: bool, monkeypatch) -> tuple[Redactor, dict]:
    if streamed:
        monkeypatch.setattr(redact_stream, "LARGE_MEMBER_BYTES", 200)  # the logs, not the small files
    src, dst = tmp_path / "src", tmp_path / "dst"
    for rel, text in members.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    redactor = Redactor()
    renamed = redact_tree(str(src), str(dst), redactor)
    return redactor, {rel: (dst / renamed[rel]).read_text() for rel in members}


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_host_names_in_message_bodies_are_gone(tmp_path, monkeypatch, streamed):
    redactor, out = redact_members(tmp_path, {"logs/nccl.log": LOG, "logs/kern.log": KERNEL}, streamed, monkeypatch)
    text = "\n".join(out.values())
    for leaked in ("node017", "node018", "ibnet", "cluster.local", "cluster"):
        assert not re.search(re.escape(leaked), text, re.I), (leaked, text)
    mapping = redactor.mapping()
    h17, h18 = mapping["node017"], mapping["node018"]
    assert f"remote peer {h18}.{mapping['ibnet']}<53735>" in text  # the form kept: name.domain<port>
    assert f"NET/IB : {h17} lost its link to {h18} ({h17}-ib.{mapping['cluster.local']})" in text
    assert f"NFS: server {h17} not responding" in text and f"ib0: {h17}-ib0 link down" in text
    assert "localRanks 1 localRank 0" in text  # words around are untouched


def test_a_peer_named_only_in_a_message_body_is_collected(tmp_path):
    assert "node018.ibnet" in hostnames_in({"logs/nccl.log": LOG})
    (tmp_path / "nccl.log").write_text(LOG)
    assert "node018.ibnet" in redact_stream.scan(str(tmp_path / "nccl.log"), _prompt_hosts)


def test_longer_identifiers_are_not_host_names():
    r = Redactor(["node017"])
    assert r.redact("node0170 xnode017 node017_rank mynode017.foo") == "node0170 xnode017 node017_rank mynode017.foo"
    assert r.redact("x.node017") == "x.node017"  # a later label of another dotted name


WORD_TEXT = """\
master:4242:4242 [0] NCCL INFO the master rank broadcasts the unique id
master:4242:4300 [0] NCCL WARN Net : Connection closed by remote peer master<41234>
root@master:~# nvidia-smi
Nov 05 13:55:26 master kernel: NVRM: GPU at PCI:0000:0c:00: GPU has fallen off the bus, node is down
MASTER_ADDR=master MASTER_PORT=29500 torchrun --master-addr master:29500
ssh://master:22 user@master http://master:8080/ host: master
  #  Rank  0 Group  0 Pid   4242 on     master device  0 [0x0c] NVIDIA H100 80GB HBM3
"master mlx5_0"  "MF0;master:MQM8700/U1"
the master branch; a master switch; run on node 3 with gpu 0; the gpu node; Master Boot Record
master.cluster.local answers; NVIDIA Tesla V100 on Ubuntu 22.04
"""


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_host_named_like_a_word_goes_where_it_is_a_host_only(tmp_path, monkeypatch, streamed):
    members = {"logs/mixed.log": WORD_TEXT,
               "probes/sysfs.json": json.dumps({"probe": "sysfs", "hostname": "master.cluster.local"}) + "\n",
               "sysfs/proc/sys/kernel/hostname": "master\n"}
    redactor, out = redact_members(tmp_path, members, streamed, monkeypatch)
    mapping = redactor.mapping()
    m = mapping["master"]
    text = out["logs/mixed.log"]
    for host_use in (f"{m}:4242:4242 [0] NCCL INFO the master rank", f"remote peer {m}<41234>", f"root@{m}:~#",
                     f"13:55:26 {m} kernel:", f"MASTER_ADDR={m} ", f"--master-addr {m}:29500",
                     f"ssh://{m}:22 user@{m} http://{m}:8080/ host: {m}", f"on     {m} device  0",
                     f'"{m} mlx5_0"', f'"MF0;{m}:MQM8700/U1"', f"{m}.{mapping['cluster.local']} answers"):
        assert host_use in text, (host_use, text)
    for word_use in ("the master branch; a master switch; run on node 3 with gpu 0; the gpu node; Master Boot Record",
                     "NVIDIA Tesla V100 on Ubuntu 22.04", "node is down", "broadcasts the unique id"):
        assert word_use in text, (word_use, text)
    assert json.loads(out["probes/sysfs.json"])["hostname"] == f"{m}.{mapping['cluster.local']}"
    assert out["sysfs/proc/sys/kernel/hostname"] == f"{m}\n"


def test_word_hosts_and_identifier_hosts_together():
    r = Redactor(["gpu", "node", "gpu-node-07"])
    text = "gpu:1:2 [0] NCCL INFO gpu node gpu-node-07 ready; node:3:4 [1] x"
    got = r.redact(text)
    g, n, g7 = (r.mapping()[h] for h in ("gpu", "node", "gpu-node-07"))
    assert got == f"{g}:1:2 [0] NCCL INFO gpu node {g7} ready; node:3:4 [1] x" or \
        got == f"{g}:1:2 [0] NCCL INFO gpu node {g7} ready; {n}:3:4 [1] x"
    assert r.redact("node:3:4 [1] x") == f"{n}:3:4 [1] x"  # a prefix at a line's start is a host


def test_the_same_host_in_any_case_gets_one_token():
    r = Redactor(["DGX-A100-01", "dgx-a100-02"])
    assert r.redact("dgx-a100-01 DGX-A100-01 Dgx-A100-01") == "host-0001 host-0001 host-0001"
    assert r.redact("DGX-A100-02") == "host-0002"
    assert r.mapping()["DGX-A100-01"] == "host-0001"  # the mapping keeps the name as first seen


def test_a_bundle_whose_host_is_an_ordinary_word_keeps_its_findings(tmp_path):
    """cx6-hdr-ib-disabled-by-env: a real NCCL log whose host is named `user`; its help texts say
    "user" as a word. The redacted bundle reads the same, and `user` is gone from every host
    position (NCCL and MPI prefixes, the manifest)."""
    from tests.bundle.test_redact import check_json

    src = HOSTS / "cx6-hdr-ib-disabled-by-env"
    dst = tmp_path / "redacted"
    redactor = redact_bundle_dir(str(src), str(dst))
    token = redactor.mapping()["user"]
    log = (dst / "commands" / "nccl_debug.log").read_text()
    assert not re.search(r"(?m)^\[?user:\d+", log)
    assert re.search(rf"(?m)^{token}:\d+:\d+ \[\d\] NCCL INFO", log) and f"[{token}:852715]" in log
    assert json.loads((dst / "manifest.json").read_text())["host"] == token
    before, after = check_json(src), check_json(dst)
    digest = lambda r: sorted((f["code"], f["severity"]) for f in r["findings"])  # noqa: E731
    assert before["exit_code"] == after["exit_code"] and digest(before) == digest(after)
    shutil.rmtree(dst)
