"""The NVML probe, run against the fake pynvml: round trips of the recorded probes, calls that
degrade to "n/a", nvmlInit failures, lost GPUs, pynvml absent. No GPU, no libnvidia-ml needed."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.fake_pynvml import CONSTANTS, ERROR_CODES, ERROR_TEXTS, FakeNvml, nvml_error
from topodiag.parsers import blank_provenance_header, nvml as nvml_parser, to_jsonable
from topodiag.live import nvml_probe
from topodiag.live.nvml_probe import MISSING_FUNCTION, NA, PYNVML_MISSING, probe

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "nvml"
REPLAYABLE = sorted(p for p in FIX.glob("*.json") if not p.name.endswith((".expected.json", ".conclusion.json"))
                    and "parse_error" not in json.loads(p.with_name(p.name[:-5] + ".expected.json").read_text()))
NS = "NVML_ERROR_NOT_SUPPORTED: Not Supported"


def recorded(name: str) -> dict:
    return json.loads(blank_provenance_header((FIX / name).read_text()))


H100 = "nvml-invented-h100-hgx-8gpu-nvswitch-01.json"
V100 = "nvml-invented-v100-dgx1-gpu3-2-inactive-links-01.json"


def test_there_are_probes_to_replay() -> None:
    assert len(REPLAYABLE) >= 5


@pytest.mark.parametrize("path", REPLAYABLE, ids=lambda p: p.name)
def test_round_trip(path: Path) -> None:
    """probe(fake replaying X) == X, and it goes through the same parser to the same expected JSON."""
    data = json.loads(blank_provenance_header(path.read_text()))
    fake = FakeNvml.from_probe(data)
    got = probe(nvml=fake)
    assert got == data
    assert json.loads(nvml_probe.dumps(got)) == got
    expected = json.loads(path.with_name(path.name[:-5] + ".expected.json").read_text())
    assert to_jsonable(nvml_parser.parse(nvml_probe.dumps(got))) == expected
    assert fake.initialised == 0  # nvmlShutdown after every successful nvmlInit
    if data["ok"]:
        assert fake.calls[0] == "nvmlInit()" and fake.calls[-1] == "nvmlShutdown()"


def test_link_walk_stops_where_nvml_refuses_the_index() -> None:
    fake = FakeNvml.from_probe(recorded(H100))
    probe(nvml=fake)
    states = [c for c in fake.calls if c.startswith("nvmlDeviceGetNvLinkState(gpu=0,")]
    assert len(states) == 19 and states[-1] == "nvmlDeviceGetNvLinkState(gpu=0, link=18)"
    # inactive links are not asked for their far end or speed
    fake = FakeNvml.from_probe(recorded(V100))
    probe(nvml=fake)
    assert "nvmlDeviceGetNvLinkRemotePciInfo(gpu=3, link=3)" not in fake.calls
    assert "nvmlDeviceGetNvLinkRemotePciInfo(gpu=3, link=4)" in fake.calls
    # the older driver: GET_SPEED refused, the legacy per-link field asked instead
    assert "nvmlDeviceGetFieldValues(gpu=3, link=4, field=NVML_FI_DEV_NVLINK_SPEED_MBPS_L4)" in fake.calls


def test_pynvml_p2p_read_index_tuple_is_unwrapped() -> None:
    fake = FakeNvml.from_probe(recorded(H100))
    assert fake.NVML_P2P_CAPS_INDEX_READ == (0,)  # as nvidia-ml-py 13.615.71 defines it
    out = probe(nvml=fake)
    assert {p["p2p"]["read"] for p in out["pairs"]} == {"OK"}
    assert not any("P2P" in k for k in out["unsupported"])


def test_unsupported_calls_degrade_to_na() -> None:
    data = recorded(H100)
    fake = FakeNvml.from_probe(data)
    fake.unsupported.update({
        "nvmlDeviceGetSerial(gpu=2)": NS,
        "nvmlDeviceGetMaxPcieLinkWidth(gpu=2)": "NVML_ERROR_FUNCTION_NOT_FOUND: Function Not Found",
        "nvmlDeviceGetNvLinkRemoteDeviceType(gpu=2, link=5)": NS,
        "nvmlDeviceGetNvLinkVersion(gpu=2, link=6)": "NVML_ERROR_UNKNOWN: Unknown Error",
        "nvmlDeviceGetFieldValues(gpu=2, link=7, field=NVML_FI_DEV_NVLINK_GET_SPEED)": NS,
        "nvmlDeviceGetFieldValues(gpu=2, link=7, field=NVML_FI_DEV_NVLINK_SPEED_MBPS_L7)": NS,
        "nvmlDeviceGetTopologyCommonAncestor(a=1, b=2)": NS,
        "nvmlDeviceGetP2PStatus(a=1, b=2, caps=NVML_P2P_CAPS_INDEX_ATOMICS)": NS,
        "nvmlSystemGetNVMLVersion()": NS,
    })
    out = probe(nvml=fake)
    g2 = out["gpus"][2]
    assert out["ok"] and g2["serial"] == NA and g2["pcie"]["max_width"] == NA and g2["pcie"]["max_gen"] == 5
    assert g2["nvlinks"][5]["remote_device_type"] == NA and g2["nvlinks"][5]["speed_gbps"] == 26.562
    assert g2["nvlinks"][6]["version"] == NA and g2["nvlinks"][7]["speed_gbps"] == NA
    assert len(g2["nvlinks"]) == 18 and out["nvml_version"] == NA
    p12 = next(p for p in out["pairs"] if (p["a"], p["b"]) == (1, 2))
    assert p12["topology"] == NA and p12["topology_level"] == NA and p12["p2p"]["atomics"] == NA
    assert p12["p2p"]["read"] == "OK"
    assert out["unsupported"]["nvmlDeviceGetMaxPcieLinkWidth(gpu=2)"] == (
        "NVML_ERROR_FUNCTION_NOT_FOUND: Function Not Found")
    assert out["unsupported"]["nvmlDeviceGetNvLinkVersion(gpu=2, link=6)"] == "NVML_ERROR_UNKNOWN: Unknown Error"
    # and the degraded probe replays to itself and parses, n/a -> null
    assert probe(nvml=FakeNvml.from_probe(out)) == out
    parsed = nvml_parser.parse(nvml_probe.dumps(out))
    assert parsed.gpus[2].serial is None and parsed.gpus[2].nvlinks[7].speed_gbps is None
    assert parsed.pairs[7].topology is None  # pair 1-2 is the 8th (0-1..0-7, then 1-2)


def test_function_missing_from_pynvml_and_odd_exceptions() -> None:
    fake = FakeNvml.from_probe(recorded(H100))
    fake.nvmlDeviceGetCpuAffinity = None  # an older nvidia-ml-py

    def broken(handle, link):
        raise TypeError("argument 2: wrong type")

    fake.nvmlDeviceGetNvLinkRemotePciInfo = broken
    out = probe(nvml=fake)
    assert out["ok"] and out["gpus"][0]["cpu_affinity"] == NA
    assert out["unsupported"]["nvmlDeviceGetCpuAffinity(gpu=0)"] == MISSING_FUNCTION
    assert out["gpus"][0]["nvlinks"][0]["remote_pci_bus_id"] == NA
    assert out["unsupported"]["nvmlDeviceGetNvLinkRemotePciInfo(gpu=0, link=0)"] == "TypeError: argument 2: wrong type"
    again = FakeNvml.from_probe(out)  # a recorded missing function is missing in the replay
    assert again.nvmlDeviceGetCpuAffinity is None


@pytest.mark.parametrize("name, words", [
    ("NVML_ERROR_DRIVER_NOT_LOADED", "kernel module is not loaded"),
    ("NVML_ERROR_LIBRARY_NOT_FOUND", "library not found"),
    ("NVML_ERROR_NO_PERMISSION", "may not open /dev/nvidia"),
    ("NVML_ERROR_LIB_RM_VERSION_MISMATCH", "different driver versions"),
    ("NVML_ERROR_UNKNOWN", "unknown error"),
])
def test_init_failure(name: str, words: str) -> None:
    fake = FakeNvml.init_failing(name)
    out = probe(nvml=fake)
    assert out["ok"] is False and out["error_name"] == name
    assert out["error"].startswith(f"nvmlInit failed: {name} (") and "\n" not in out["error"]
    assert words in out["error"].lower()
    assert out["gpus"] == [] and out["pairs"] == [] and out["unsupported"] == {}
    assert "nvmlShutdown()" not in fake.calls
    parsed = nvml_parser.parse(nvml_probe.dumps(out))
    assert parsed.ok is False and parsed.error_name == name


def test_device_count_failure_still_shuts_down() -> None:
    fake = FakeNvml.zero_gpus()
    fake.count_error = nvml_error("NVML_ERROR_NO_PERMISSION")
    out = probe(nvml=fake)
    assert out["ok"] is False and out["error_name"] == "NVML_ERROR_NO_PERMISSION"
    assert out["error"].startswith("nvmlDeviceGetCount failed:") and out["driver_version"] == "570.133.20"
    assert fake.calls[-1] == "nvmlShutdown()" and fake.initialised == 0
    assert probe(nvml=FakeNvml.from_probe(out)) == out


def test_zero_gpus() -> None:
    out = probe(nvml=FakeNvml.zero_gpus())
    assert out["ok"] is True and out["error"] is None and out["gpus"] == [] and out["pairs"] == []
    assert out["driver_version"] == "570.133.20" and out["cuda_driver_version"] == "12.8"
    assert nvml_parser.parse(nvml_probe.dumps(out)).gpus == ()


def test_lost_gpu_before_its_handle() -> None:
    fake = FakeNvml.from_probe(recorded(H100)).lose(3)
    out = probe(nvml=fake)
    g3 = out["gpus"][3]
    assert out["ok"] and g3["lost"] is True and g3["name"] == NA and g3["nvlinks"] == []
    assert out["unsupported"]["nvmlDeviceGetHandleByIndex(gpu=3)"] == "NVML_ERROR_GPU_IS_LOST: GPU is lost"
    assert not [c for c in fake.calls if "gpu=3," in c or c.endswith("(gpu=3)") and "Handle" not in c]
    with3 = [p for p in out["pairs"] if 3 in (p["a"], p["b"])]
    assert len(with3) == 7 and all(p["topology"] == NA and set(p["p2p"].values()) == {NA} for p in with3)
    assert out["gpus"][2]["lost"] is False and len(out["gpus"][2]["nvlinks"]) == 18
    assert probe(nvml=FakeNvml.from_probe(out)) == out
    parsed = nvml_parser.parse(nvml_probe.dumps(out))
    assert [g.index for g in parsed.gpus if g.lost] == [3]


def test_gpu_lost_in_the_middle_of_its_link_walk() -> None:
    data = recorded(H100)
    fake = FakeNvml.from_probe(data)
    fake.unsupported["nvmlDeviceGetNvLinkState(gpu=1, link=5)"] = "NVML_ERROR_GPU_IS_LOST: GPU is lost"
    out = probe(nvml=fake)
    g1 = out["gpus"][1]
    assert g1["lost"] is True and g1["name"] == "NVIDIA H100 80GB HBM3" and len(g1["nvlinks"]) == 5
    assert not any(c.startswith("nvmlDeviceGetNvLinkState(gpu=1, link=6)") for c in fake.calls)
    assert all(p["topology"] == NA for p in out["pairs"] if 1 in (p["a"], p["b"]))
    assert probe(nvml=FakeNvml.from_probe(out)) == out


def test_pynvml_not_installed(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    out = probe()
    assert out["ok"] is False and out["error"] == PYNVML_MISSING
    assert out["probe"] == "nvml" and out["schema_version"] == 1
    assert nvml_parser.parse(json.dumps(out)).error == "pynvml not installed (pip install nvidia-ml-py)"


def test_never_raises_on_a_module_that_is_not_pynvml() -> None:
    out = probe(nvml=object())
    assert out["ok"] is False and out["error"].startswith("nvmlInit failed: AttributeError")
    fake = FakeNvml.from_probe(recorded(H100))
    fake.nvmlDeviceGetCount = lambda: "eight"  # not a number
    out = probe(nvml=fake)
    assert out["ok"] is False and "nvmlDeviceGetCount failed: ValueError" in out["error"]


def test_importing_the_probe_does_not_import_pynvml() -> None:
    code = "import sys, topodiag.live.nvml_probe; print('pynvml' in sys.modules, 'json' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split()[0] == "False"


def test_module_main_prints_probe_json() -> None:
    """Whatever this machine has (no GPU here: NVML's library is missing), the output is a probe."""
    proc = subprocess.run([sys.executable, "-m", "topodiag.live.nvml_probe"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    parsed = nvml_parser.parse(proc.stdout)
    assert parsed.source == "nvml"
    if not parsed.ok:
        assert parsed.error


def test_fake_constants_match_the_installed_pynvml() -> None:
    pynvml = pytest.importorskip("pynvml")
    for name, value in CONSTANTS.items():
        assert getattr(pynvml, name) == value, name
    for name, value in ERROR_CODES.items():
        cls = pynvml.NVMLError._valClassMapping[value]
        fake_cls = type(FakeNvml.init_failing(name).init_error)
        assert cls.__name__ == fake_cls.__name__ and fake_cls(None).value == value
        assert str(pynvml.NVMLError(value)) == str(nvml_error(name)) if value in ERROR_TEXTS else True
    for name in ("nvmlInit", "nvmlShutdown", "nvmlSystemGetDriverVersion", "nvmlSystemGetCudaDriverVersion",
                 "nvmlSystemGetNVMLVersion", "nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex", "nvmlDeviceGetName",
                 "nvmlDeviceGetUUID", "nvmlDeviceGetSerial", "nvmlDeviceGetPciInfo", "nvmlDeviceGetMemoryAffinity",
                 "nvmlDeviceGetCpuAffinity", "nvmlDeviceGetNumaNodeId", "nvmlDeviceGetCurrPcieLinkGeneration",
                 "nvmlDeviceGetMaxPcieLinkGeneration", "nvmlDeviceGetCurrPcieLinkWidth",
                 "nvmlDeviceGetMaxPcieLinkWidth", "nvmlDeviceGetNvLinkState", "nvmlDeviceGetNvLinkVersion",
                 "nvmlDeviceGetNvLinkRemotePciInfo", "nvmlDeviceGetNvLinkRemoteDeviceType",
                 "nvmlDeviceGetFieldValues", "nvmlDeviceGetTopologyCommonAncestor", "nvmlDeviceGetP2PStatus"):
        assert callable(getattr(pynvml, name)), name
        assert callable(getattr(FakeNvml, name)), name


@pytest.mark.parametrize("raw, norm", [
    ("00000000:18:00.0", "0000:18:00.0"),
    ("00000000:9A:00.0", "0000:9a:00.0"),
    ("0000E4A3:00:00.0", "e4a3:00:00.0"),
    ("00010000:01:00.1", "10000:01:00.1"),
    ("18:00.0", "0000:18:00.0"),
    ("garbage", "garbage"),
])
def test_normalise_bus_id(raw: str, norm: str) -> None:
    assert nvml_probe.normalise_bus_id(raw) == norm


def test_cpu_list() -> None:
    assert nvml_probe.cpu_list([(1 << 48) - 1, (1 << 64) - (1 << 32), (1 << 16) - 1, 0]) == "0-47,96-143"
    assert nvml_probe.cpu_list([0b1011]) == "0-1,3"
    assert nvml_probe.cpu_list([0, 0]) == ""


def test_deep_copy_of_a_probe_is_not_changed_by_replay() -> None:
    data = recorded(V100)
    before = copy.deepcopy(data)
    probe(nvml=FakeNvml.from_probe(data))
    assert data == before
