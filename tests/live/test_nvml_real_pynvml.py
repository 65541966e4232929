"""The NVML probe against the REAL pynvml (nvidia-ml-py), with a fake libnvidia-ml below it
(tests/fakes/fake_libnvml.py: CFUNCTYPE functions typed as nvml.h declares them). pynvml's wrappers,
structures and errors run as on a node, so a call that is wrong for the real library fails here:
a structure handed by value where NVML takes a pointer, a structure name this pynvml lacks, a tuple
where a C int goes. The devices are the recorded probes of fixtures/nvml, replayed, and variants of
them: an H100 NVSwitch node and a GB200 tray with fabric info, an A100 without, a MIG-enabled GPU, a
lost GPU, nvmlInit failing."""

from __future__ import annotations

import copy
import ctypes
import json
from pathlib import Path

import pytest

from tests.fakes.fake_libnvml import FakeLibNvml, FabricInfoV2, FabricInfoV3, struct_version
from topodiag.live import nvml_probe
from topodiag.live.nvml_probe import NA, probe
from topodiag.parsers import blank_provenance_header, nvml as nvml_parser, to_jsonable

pynvml = pytest.importorskip("pynvml")

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "nvml"
REPLAYABLE = sorted(p for p in FIX.glob("*.json") if not p.name.endswith((".expected.json", ".conclusion.json"))
                    and "parse_error" not in json.loads(p.with_name(p.name[:-5] + ".expected.json").read_text()))
H100 = FIX / "nvml-invented-h100-hgx-8gpu-nvswitch-01.json"
FNF = "NVML_ERROR_FUNCTION_NOT_FOUND: Function Not Found"
NS = "NVML_ERROR_NOT_SUPPORTED: Not Supported"
FABRIC_CALLS = ("nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetGpuFabricInfo")
# The fabric block of a real MNNVL node (fixtures/nvidia_smi_q/nvidia-smi-q-fabric-completed-unhealthy-01.txt,
# kubernetes-sigs/dra-driver-nvidia-gpu#626): clique 2 of cluster dc6e40c4-...; its health made healthy here.
GB200_CLUSTER = "dc6e40c4-d722-4357-9ba6-5291dd461278"
HEALTHY_MASK = 2 | 2 << 2 | 2 << 4 | 2 << 6 | 1 << 8  # full bandwidth, no recovery, no timeout, config None


def recorded(path: Path) -> dict:
    return json.loads(blank_provenance_header(path.read_text()))


def run(monkeypatch, data: dict, **knobs) -> tuple[dict, FakeLibNvml]:
    lib = FakeLibNvml(data, **knobs)
    return probe(nvml=lib.install(monkeypatch)), lib


def fabric_refused(data: dict, reason: str) -> dict:
    """What the probe adds to a recording made without fabric calls when the driver refuses them:
    fabric "n/a" and an `unsupported` entry per call, on every GPU that was reached."""
    want = copy.deepcopy(data)
    for g in want["gpus"]:
        if not g["lost"] and g["name"] != NA or g["nvlinks"]:
            g["fabric"] = NA
            want["unsupported"].update({f"{fn}(gpu={g['index']})": reason for fn in FABRIC_CALLS})
    return want


def with_fabric(data: dict, name: str, fabric: dict, **changes) -> dict:
    out = copy.deepcopy(data)
    for g in out["gpus"]:
        g.update(name=name, fabric=dict(fabric), **changes)
    return out


# -- the recorded probes, through the real pynvml ----------------------------------------------------
@pytest.mark.parametrize("path", REPLAYABLE, ids=lambda p: p.name)
def test_recorded_probes_replay_through_the_real_pynvml(monkeypatch, path: Path) -> None:
    """A driver without the fabric symbols (before r535): the recording, plus fabric refused."""
    data = recorded(path)
    got, lib = run(monkeypatch, data, missing=FABRIC_CALLS)
    assert got == (fabric_refused(data, FNF) if data["ok"] else data)
    assert lib.initialised == 0  # nvmlShutdown after every nvmlInit that succeeded
    expected = json.loads(path.with_name(path.name[:-5] + ".expected.json").read_text())
    assert to_jsonable(nvml_parser.parse(nvml_probe.dumps(data))) == expected


def test_consumer_gpu_refuses_most_calls(monkeypatch) -> None:
    data = recorded(FIX / "nvml-invented-rtx5090-2gpu-consumer-na-01.json")
    got, lib = run(monkeypatch, data)  # the fabric symbols are there; a GeForce GPU says Not Supported
    assert got == fabric_refused(data, NS)
    assert got["gpus"][0]["serial"] == NA and got["gpus"][0]["nvlinks"] == []
    assert "nvmlDeviceGetGpuFabricInfo(gpu=1)" in lib.calls  # V refused NOT_SUPPORTED: the old call is asked too


# -- fabric info: the call that crashed on the real library -------------------------------------------
def test_h100_nvswitch_fabric_through_the_real_pynvml(monkeypatch) -> None:
    fabric = {"state": "Completed", "status": "Success", "clique_id": 0,
              "cluster_uuid": "00000000-0000-0000-0000-000000000000", "health_mask": HEALTHY_MASK,
              "health_summary": "Healthy"}
    data = with_fabric(recorded(H100), "NVIDIA H100 80GB HBM3", fabric)
    got, lib = run(monkeypatch, data)
    assert got == data  # every GPU's fabric, written by the C side through the pointer pynvml passed
    assert [c for c in lib.calls if "Fabric" in c] == [f"nvmlDeviceGetGpuFabricInfoV(gpu={i})" for i in range(8)]


def test_gb200_clique_ids_v3_and_a_driver_that_knows_only_v2(monkeypatch) -> None:
    fabric = {"state": "Completed", "status": "Success", "clique_id": 2, "cluster_uuid": GB200_CLUSTER,
              "health_mask": HEALTHY_MASK, "health_summary": "Healthy"}
    data = with_fabric(recorded(H100), "NVIDIA GB200", fabric)
    data["gpus"], data["pairs"] = data["gpus"][:4], [p for p in data["pairs"] if p["b"] < 4]  # a 4-GPU tray
    data["unsupported"] = {k: v for k, v in data["unsupported"].items() if k.endswith(("=0)", "=1)", "=2)", "=3)"))}
    got, _ = run(monkeypatch, data)
    assert got == data and {g["fabric"]["clique_id"] for g in got["gpus"]} == {2}
    parsed = nvml_parser.parse(nvml_probe.dumps(got))
    assert parsed.gpus[0].fabric.clique_id == "2" and parsed.gpus[0].fabric.cluster_uuid == GB200_CLUSTER
    # a driver that knows nvmlGpuFabricInfo v2 only: v3 is refused with ARGUMENT_VERSION_MISMATCH, v2 asked
    got, lib = run(monkeypatch, data, fabric_versions=(2,))
    assert [g["fabric"]["health_summary"] for g in got["gpus"]] == [None] * 4  # v2 has no summary
    assert {g["fabric"]["clique_id"] for g in got["gpus"]} == {2} and got["unsupported"] == data["unsupported"]
    assert lib.calls.count("nvmlDeviceGetGpuFabricInfoV(gpu=0)") == 2


def test_nvidia_ml_py_12_575_structure_names(monkeypatch) -> None:
    """nvidia-ml-py 12.575 has c_nvmlGpuFabricInfoV_t (v2) and c_nvmlGpuFabricInfo_t, no _v3_t."""
    fabric = {"state": "In Progress", "status": "Success", "clique_id": 0,
              "cluster_uuid": "00000000-0000-0000-0000-000000000000", "health_mask": 0, "health_summary": None}
    data = with_fabric(recorded(H100), "NVIDIA H100 80GB HBM3", fabric)
    monkeypatch.delattr(pynvml, "c_nvmlGpuFabricInfo_v3_t")
    got, _ = run(monkeypatch, data)
    assert got == data
    # and a pynvml with only the old call (and its structure) uses that one, by pointer too
    monkeypatch.delattr(pynvml, "nvmlDeviceGetGpuFabricInfoV")
    got, lib = run(monkeypatch, data)
    assert [g["fabric"]["state"] for g in got["gpus"]] == ["In Progress"] * 8
    assert got["gpus"][0]["fabric"]["health_mask"] is None  # nvmlGpuFabricInfo_t has no health
    assert "nvmlDeviceGetGpuFabricInfo(gpu=7)" in lib.calls


def test_a100_has_no_fabric_info(monkeypatch) -> None:
    """Pre-Hopper: the driver has the symbols, the GPU says Not Supported; FAB001 has nothing to read."""
    data = recorded(H100)
    for g in data["gpus"]:
        g["name"], g["nvlinks"] = "NVIDIA A100-SXM4-80GB", g["nvlinks"][:12]
        for link in g["nvlinks"]:
            link.update(version=4, speed_gbps=25.0)
    got, _ = run(monkeypatch, data)
    assert got == fabric_refused(data, NS)
    assert all(g.fabric is None for g in nvml_parser.parse(nvml_probe.dumps(got)).gpus)


def test_structure_by_value_is_refused_at_the_c_boundary(monkeypatch) -> None:
    """The mistake of issue 25, made by hand: refused as the header's pointer argument refuses it."""
    FakeLibNvml(recorded(H100)).install(monkeypatch)
    pynvml.nvmlInit()
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        with pytest.raises(ctypes.ArgumentError, match="pointer"):
            pynvml.nvmlDeviceGetGpuFabricInfoV(handle, pynvml.c_nvmlGpuFabricInfo_v3_t())
        with pytest.raises(ctypes.ArgumentError, match="pointer"):
            pynvml.nvmlDeviceGetGpuFabricInfo(handle, pynvml.c_nvmlGpuFabricInfo_t())
        info = pynvml.c_nvmlGpuFabricInfo_v3_t()
        info.version = 0x01000010  # a version the driver does not know
        with pytest.raises(pynvml.NVMLError_ArgumentVersionMismatch):
            pynvml.nvmlDeviceGetGpuFabricInfoV(handle, ctypes.byref(info))
        # nvidia-ml-py 13's NVML_P2P_CAPS_INDEX_READ is the tuple (0,): not a C int
        with pytest.raises(ctypes.ArgumentError):
            pynvml.nvmlDeviceGetP2PStatus(handle, handle, (0,))
    finally:
        pynvml.nvmlShutdown()


def test_the_fake_structures_are_the_headers() -> None:
    """nvmlGpuFabricInfo_v2/_v3 as pynvml writes the version: NVML_STRUCT_VERSION(sizeof, ver)."""
    assert struct_version(FabricInfoV2, 2) == pynvml.nvmlGpuFabricInfo_v2 == 0x02000024
    assert struct_version(FabricInfoV3, 3) == pynvml.nvmlGpuFabricInfo_v3 == 0x03000028
    assert ctypes.sizeof(pynvml.c_nvmlGpuFabricInfo_t) == 28 and ctypes.sizeof(pynvml.c_nvmlFieldValue_t) == 40


# -- MIG, lost GPUs, nvmlInit failing ------------------------------------------------------------------
def test_mig_enabled_gpu(monkeypatch) -> None:
    """With MIG on, NVML enumerates the parent GPUs (a MIG device has no index handle) and peer-to-peer
    with that GPU is not supported: the probe lists 8 GPUs and NS for its pairs."""
    data = recorded(H100)
    for p in data["pairs"]:
        if 0 in (p["a"], p["b"]):
            p["p2p"] = {cap: "NS" for cap in p["p2p"]}
    got, lib = run(monkeypatch, data, missing=FABRIC_CALLS)
    assert got == fabric_refused(data, FNF) and len(got["gpus"]) == 8
    assert {p["p2p"]["read"] for p in got["pairs"] if p["a"] == 0} == {"NS"}
    assert lib.calls.count("nvmlDeviceGetHandleByIndex(gpu=0)") == 1


def test_lost_gpu(monkeypatch) -> None:
    data = recorded(H100)
    got, lib = run(monkeypatch, data, lost=(3,), missing=FABRIC_CALLS)
    g3 = got["gpus"][3]
    assert g3["lost"] is True and g3["name"] == NA and g3["nvlinks"] == [] and "fabric" not in g3
    assert got["unsupported"]["nvmlDeviceGetHandleByIndex(gpu=3)"] == "NVML_ERROR_GPU_IS_LOST: GPU is lost"
    assert not [c for c in lib.calls if "(gpu=3" in c and "HandleByIndex" not in c]
    assert all(p["topology"] == NA for p in got["pairs"] if 3 in (p["a"], p["b"]))
    assert [g.index for g in nvml_parser.parse(nvml_probe.dumps(got)).gpus if g.lost] == [3]


@pytest.mark.parametrize("name", ["NVML_ERROR_DRIVER_NOT_LOADED", "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
                                  "NVML_ERROR_NO_PERMISSION"])
def test_init_failure(monkeypatch, name: str) -> None:
    got, lib = run(monkeypatch, recorded(H100), init_error=name)
    assert got["ok"] is False and got["error_name"] == name and got["error"].startswith(f"nvmlInit failed: {name} (")
    assert lib.calls == ["nvmlInit()"]


def test_device_count_failure_still_shuts_down(monkeypatch) -> None:
    got, lib = run(monkeypatch, recorded(H100), count_error="NVML_ERROR_NO_PERMISSION")
    assert got["ok"] is False and got["error"].startswith("nvmlDeviceGetCount failed: NVML_ERROR_NO_PERMISSION")
    assert lib.calls[-1] == "nvmlShutdown()" and lib.initialised == 0
