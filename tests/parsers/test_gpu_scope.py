"""The gpu_scope parser (the probe's JSON: env, cgroup device rules, the driver's GPUs) and
topodiag.model.scope, which says from it which GPUs a job step or container sees."""

from __future__ import annotations

import json

import pytest

from topodiag.model.scope import visible
from topodiag.parsers import ParseError, gpu_scope

BUS = ["0000:13:00.0", "0000:23:00.0", "0000:33:00.0", "0000:43:00.0"]
MINORS = {"0000:13:00.0": 2, "0000:23:00.0": 3, "0000:33:00.0": 0, "0000:43:00.0": 1}

# A real file (canonical/lxd#3950, GeForce GTX 650, an older driver: no "Device Minor" line yet)
LXD_INFORMATION = """Model:           GeForce GTX 650
IRQ:             44
GPU UUID:        GPU-e3f822b9-8c5f-95a5-b379-8dfdeefd7758
Video BIOS:      80.07.35.00.80
Bus Type:        PCIe
DMA Size:        40 bits
DMA Mask:        0xffffffffff
Bus Location:    0000:04:00.0
"""
# A real H100's (landontclipp.github.io/sysadmin/gpu), tabs as the driver prints them
H100_INFORMATION = ("Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 10\nGPU UUID: \t GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b\n"
                    "Video BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\n"
                    "Bus Location: \t 0000:62:00.0\nDevice Minor: \t 5\nGPU Firmware: \t 535.129.03\nGPU Excluded:\t No\n")


def record(env=None, cgroup_self=None, devices=None, gpus=None) -> gpu_scope.GpuScope:
    gpus = MINORS if gpus is None else gpus
    data = {"probe": "gpu_scope", "schema_version": 1, "root": "/", "ok": True, "error": None, "env": env or {},
            "cgroup": {"self": cgroup_self, "devices_path": "x" if devices is not None else None, "devices_list": devices},
            "driver_gpus": [{"bdf": b, "information": f"GPU UUID: \t GPU-{i}aaa-{b}\nBus Location: \t {b}\n"
                                                      f"Device Minor: \t {m}\n"} for i, (b, m) in enumerate(gpus.items())]}
    return gpu_scope.parse(json.dumps(data))


def test_the_drivers_information_files():
    g = gpu_scope.information("0000:62:00.0", H100_INFORMATION)
    assert (g.bdf, g.minor, g.uuid, g.model, g.excluded) == \
        ("0000:62:00.0", 5, "GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b", "NVIDIA H100 80GB HBM3", False)
    old = gpu_scope.information("0000:04:00.0", LXD_INFORMATION)
    assert (old.minor, old.uuid, old.model, old.excluded) == \
        (None, "GPU-e3f822b9-8c5f-95a5-b379-8dfdeefd7758", "GeForce GTX 650", None)


def test_device_rules_and_cgroup_version():
    r = record(cgroup_self="12:devices:/slurm/uid_1000/job_1/step_0\n", devices="c 195:0 rwm\nc 195:255 rwm\nbogus\na *:* rwm\n")
    assert r.cgroup_version == 1
    assert r.device_rules == (gpu_scope.DeviceRule("c", 195, 0, "rwm"), gpu_scope.DeviceRule("c", 195, 255, "rwm"),
                              gpu_scope.DeviceRule("a", None, None, "rwm"))
    v2 = record(cgroup_self="0::/system.slice/slurmstepd.scope/job_1/step_0\n")
    assert (v2.cgroup_version, v2.device_rules) == (2, None)


@pytest.mark.parametrize("devices, env, want", [
    ("c 195:0 rwm\nc 195:1 rwm\nc 195:255 rwm\nc 195:254 rwm\n", {}, ["0000:33:00.0", "0000:43:00.0"]),  # minors 0, 1
    ("c 195:0 rwm\nc 195:1 rwm\n", {"CUDA_VISIBLE_DEVICES": "1"}, ["0000:43:00.0"]),  # CUDA indexes the job's GPUs
    ("a *:* rwm\n", {}, None),  # every device: no restriction
    ("c 195:* rwm\n", {}, None),  # every NVIDIA minor (the container toolkit's rule)
    ("c *:* m\nb *:* m\nc 195:3 rw\n", {}, ["0000:23:00.0"]),  # Docker's mknod-only rules grant no access
    (None, {"SLURM_STEP_GPUS": "2,3", "SLURM_JOB_GPUS": "0,1,2,3"}, ["0000:33:00.0", "0000:43:00.0"]),  # cgroup v2
    (None, {"SLURM_JOB_GPUS": "1", "CUDA_VISIBLE_DEVICES": "0"}, ["0000:23:00.0"]),  # CUDA relative to the job's
    (None, {"SLURM_JOB_GPUS": "2,3", "CUDA_VISIBLE_DEVICES": "2,3"}, ["0000:33:00.0", "0000:43:00.0"]),  # global ids
    (None, {"CUDA_VISIBLE_DEVICES": "NoDevFiles"}, []),  # Slurm's value for a job without GPUs
    (None, {"CUDA_VISIBLE_DEVICES": "3,7,0"}, ["0000:43:00.0"]),  # CUDA stops at the first bad entry
    (None, {"CUDA_VISIBLE_DEVICES": "GPU-2aaa"}, ["0000:33:00.0"]),  # a unique UUID prefix
    (None, {"NVIDIA_VISIBLE_DEVICES": "all"}, None),
    (None, {"NVIDIA_VISIBLE_DEVICES": "void"}, []),
    (None, {"SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURM_JOB_GPUS": "2"}, None),  # a prolog: the whole node
    (None, {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}, None),  # all of them: no restriction
])
def test_what_the_job_sees(devices, env, want):
    self_text = "12:devices:/slurm/uid_1000/job_1/step_0\n" if devices is not None else "0::/x\n"
    seen, how = visible(record(env=env, cgroup_self=self_text, devices=devices), BUS)
    assert seen == want and bool(how) == (want is not None)


@pytest.mark.parametrize("text, line", [
    ("", 0), ("{\n", 2), ('{"probe": "sysfs"}', 1),
    ('{"probe": "gpu_scope", "env": {"PATH": 3}}', 1),
    ('{"probe": "gpu_scope", "driver_gpus": [{"bdf": "nope"}]}', 1),
    ('{"probe": "gpu_scope", "cgroup": {"devices_list": 7}}', 1),
])
def test_what_is_not_the_probes_json(text, line):
    with pytest.raises(ParseError) as err:
        gpu_scope.parse(text)
    assert err.value.line_no == line
