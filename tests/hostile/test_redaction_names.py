"""Redaction (topodiag/bundle/redact/) on names that look like something else.

- N16: with hostname gpu-node12 and `--nccl-log nccl-gpu-node12.log`, the ".log" after the host was
  read as its domain: the member became `logs/01-nccl-host-0001.domain-02.invalid` and every
  `X.log` of the bundle `X.domain-02.invalid` (NCCL_DEBUG_FILE included).
- N17: a host named `h100` turned "NVIDIA H100 80GB HBM3" into "NVIDIA host-0001 80GB HBM3", and
  the redacted bundle gave a PERF001 the original did not.
- N25: one private-use character (an icon font's glyph in a job name) made the whole bundle refused.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from topodiag.bundle.redact import Redactor, redact_bundle_dir

REPO = Path(__file__).resolve().parents[2]
HOST = REPO / "fixtures" / "hosts" / "hgx-h100-healthy-assembled"


def test_a_file_suffix_after_the_host_is_not_a_domain():
    r = Redactor(["gpu-node12"])
    text = ('"NCCL_DEBUG_FILE": "/home/u/nccl.%h.log"\nmember logs/01-nccl-gpu-node12.log\nother.log\n'
            "peer gpu-node12.cluster.local\n")
    out = r.redact(text)
    assert "logs/01-nccl-host-0001.log" in out and "nccl.%h.log" in out and "\nother.log" in out
    assert "host-0001.domain-01.invalid" in out  # a real domain still goes
    assert "log" not in r.mapping() and "gpu-node12" not in out


def test_a_host_named_like_a_gpu_model_leaves_the_model_alone():
    r = Redactor(["h100"])
    out = r.redact("#  Rank  0 Group  0 Pid   1 on h100 device  0 [0x18] NVIDIA H100 80GB HBM3\n"
                   "h100:1234:1235 [0] NCCL INFO Bootstrap : Using eth0\n")
    assert "on host-0001 device" in out and "NVIDIA H100 80GB HBM3" in out
    assert out.splitlines()[1].startswith("host-0001:1234:1235")


def _codes(path) -> list:
    from topodiag.pipeline import diagnose

    return sorted((f["code"], f["severity"]) for f in diagnose([str(path)]).to_json()["findings"])


def test_the_redacted_bundle_of_a_host_named_h100_gives_the_same_findings(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(HOST, src)
    redact_bundle_dir(str(src), str(tmp_path / "red"), Redactor(["h100"]))
    red_tests = (tmp_path / "red" / "commands" / "nccl_tests.txt").read_text()
    assert "NVIDIA H100 80GB HBM3" in red_tests
    assert _codes(tmp_path / "red") == _codes(src)


def test_a_private_use_character_is_replaced_not_refused():
    out = Redactor(["gpu-node12"]).redact("gpu-node12:1:1 [0] NCCL INFO job \U000F0001 \U0010FFFD\n")
    assert out == "host-0001:1:1 [0] NCCL INFO job \ufffd \ufffd\n"


def test_what_survived_redaction_before():
    """N18 (part): a peer named with its port in a message body, a Slurm node list, a user's home and
    e-mail address, a baseboard serial."""
    from topodiag.bundle.redact import hostnames_in

    text = ("NCCL_DEBUG_FILE=/home/alice77/nccl.%h.log\nSLURM_JOB_NODELIST=gpu-node[12-13],login77\n"
            "mail alice77@example.com\nh:1:1 [0] NCCL INFO Connected to jobhost99:29500\n"
            "Baseboard Serial Number : BB77777\n")
    r = Redactor(["gpu-node12", *hostnames_in({"commands/notes.txt": text})])
    out = r.redact(text)
    for leak in ("alice77", "example.com", "jobhost99", "gpu-node[", "login77", "BB77777"):
        assert leak not in out, leak
    assert "/home/user-0001/nccl.%h.log" in out and "Connected to host-0002:29500" in out
