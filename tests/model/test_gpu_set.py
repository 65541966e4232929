"""The node's GPUs as one set keyed by PCI bus id: UUIDs join `nvlink -s`'s GPUs to the driver's and
the PCI tree's, before any matching by order; what is not visible to the job is marked so."""

from __future__ import annotations

import json
from pathlib import Path

from topodiag import parsers
from topodiag.live import gpu_scope_probe, sysfs_probe
from topodiag.model import build
from topodiag.model.gpu_set import inventory
from topodiag.records import ParsedInput

FX = Path(__file__).resolve().parents[2] / "fixtures" / "sysfs"
JOBSTEP = FX / "hgx-h100-jobstep-2of8"  # /dev/nvidia0-1 allowed: 0000:33:00.0 and 0000:43:00.0 (its README)

# `nvidia-smi nvlink -s` in that step: the two GPUs it may see, by index and UUID (the tree's UUIDs of
# 0000:33:00.0 and 0000:43:00.0), in the form of a real H100's output (stas00/ml-engineering debug.md)
NVLINK_S = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5a7f2c91-3e4d-4b8a-8c1f-6d2e9b0a7c45)\n"
            "\t Link 0: 26.562 GB/s\n"
            "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-8e1d4b73-9c2a-4f6e-b5d8-0a3c7e2f9b16)\n"
            "\t Link 0: 26.562 GB/s\n")


def item(source: str, text: str) -> ParsedInput:
    return ParsedInput(source, f"<{source}>", parsers.get(source).parse(text))


def test_uuids_join_the_step_s_gpus_to_the_bus_not_the_bus_order():
    topo = build([item("sysfs_infiniband", json.dumps(sysfs_probe.probe_json(sysfs_probe.probe(str(JOBSTEP))))),
                  item("gpu_scope", json.dumps(gpu_scope_probe.probe(str(JOBSTEP), env={}))),
                  item("nvidia_smi_nvlink_s", NVLINK_S)])
    assert topo.node("gpu:0")["busid"] == "0000:33:00.0" and topo.node("gpu:1")["busid"] == "0000:43:00.0"
    assert topo.node("gpu:0")["device_minor"] == 0 and topo.node("GPU-5a7f2c91-3e4d-4b8a-8c1f-6d2e9b0a7c45") \
        is topo.node("gpu:0")
    inv = inventory(topo)
    assert inv["count"] == 8 and len(topo.gpus()) == 8
    assert inv["checked"] == ["gpu:0", "gpu:1"] and inv["unchecked"] == []
    assert sorted(topo.node(g)["busid"] for g in inv["hidden"]) == \
        ["0000:13:00.0", "0000:23:00.0", "0000:93:00.0", "0000:a3:00.0", "0000:b3:00.0", "0000:c3:00.0"]
    assert not topo.conflicts()
