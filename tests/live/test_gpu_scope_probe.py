"""The gpu_scope probe on recorded trees: what it records (only the GPU variables of the
environment, the cgroup v1 device list, the driver's GPUs), read under the root, never raising."""

from __future__ import annotations

import json
from pathlib import Path

from topodiag.live import gpu_scope_probe
from topodiag.parsers import gpu_scope

FX = Path(__file__).resolve().parents[2] / "fixtures" / "sysfs"
JOBSTEP = FX / "hgx-h100-jobstep-2of8"


def test_a_job_step_tree_is_recorded_as_read():
    out = gpu_scope_probe.probe(str(JOBSTEP), env={"CUDA_VISIBLE_DEVICES": "0,1", "HOME": "/home/u", "AWS_SECRET": "x"})
    assert out["ok"] and out["error"] is None
    assert out["env"] == {"CUDA_VISIBLE_DEVICES": "0,1"}  # nothing else of the environment
    assert out["cgroup"]["devices_path"] == "sys/fs/cgroup/devices/slurm/uid_1000/job_4242/step_0/devices.list"
    assert "c 195:1 rwm" in out["cgroup"]["devices_list"]
    assert [g["bdf"] for g in out["driver_gpus"]] == ["0000:13:00.0", "0000:23:00.0", "0000:33:00.0", "0000:43:00.0",
                                                       "0000:93:00.0", "0000:a3:00.0", "0000:b3:00.0", "0000:c3:00.0"]
    parsed = gpu_scope.parse(json.dumps(out))
    assert [g.minor for g in parsed.driver_gpus] == [2, 3, 0, 1, 6, 7, 4, 5]  # the tree's README


def test_a_tree_without_driver_or_cgroup_and_a_missing_root(tmp_path):
    (tmp_path / "sys").mkdir()
    out = gpu_scope_probe.probe(str(tmp_path), env={})
    assert out["ok"] and out["driver_gpus"] == [] and out["cgroup"] == {"self": None, "devices_path": None,
                                                                        "devices_list": None}
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "self" / "cgroup").write_text("0::/user.slice\n")  # cgroup v2: no list to read
    assert gpu_scope_probe.probe(str(tmp_path), env={})["cgroup"]["devices_list"] is None
    gone = gpu_scope_probe.probe(str(tmp_path / "nope"), env={})
    assert not gone["ok"] and "is not a directory" in gone["error"]


def test_a_link_out_of_the_root_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "information").write_text("Device Minor: \t 0\n")
    gpus = tmp_path / "root" / "proc" / "driver" / "nvidia" / "gpus" / "0000:13:00.0"
    gpus.mkdir(parents=True)
    (gpus / "information").symlink_to(outside / "information")
    out = gpu_scope_probe.probe(str(tmp_path / "root"), env={})
    assert out["driver_gpus"] == [{"bdf": "0000:13:00.0", "information": None}]
