"""Hand-checked facts of the NVML probe fixtures (against the nvidia-smi outputs they were
reconstructed from), and the refusals. Fuzzing is in test_fuzz.py (every source)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect
from topodiag.parsers import nvml

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "nvml"
H100 = "nvml-invented-h100-hgx-8gpu-nvswitch-01.json"
A6000 = "nvml-invented-rtxa6000-3gpu-bridge-01.json"
V100 = "nvml-invented-v100-dgx1-gpu3-2-inactive-links-01.json"
RTX5090 = "nvml-invented-rtx5090-2gpu-consumer-na-01.json"
NO_DRIVER = "nvml-invented-driver-not-loaded-01.json"


def load(name: str) -> nvml.NvmlProbe:
    return nvml.parse((FIX / name).read_text())


def pair(r: nvml.NvmlProbe, a: int, b: int) -> nvml.Pair:
    return next(p for p in r.pairs if (p.a, p.b) == (a, b))


def test_h100_hgx_matches_topo_m_and_nvlink_s() -> None:
    r = load(H100)
    assert r.ok and r.error is None and r.driver_version == "570.133.20" and r.cuda_driver_version == "12.8"
    assert [g.index for g in r.gpus] == list(range(8))
    assert {g.model for g in r.gpus} == {"NVIDIA H100 80GB HBM3"}
    assert r.gpus[0].uuid == "GPU-abcdefab-cdef-abdc-abcd-abababababab"  # as nvlink -s shows it
    for g in r.gpus:
        assert g.nvlink_count == g.active_nvlinks == 18  # NV18
        assert {ln.speed_gbps for ln in g.nvlinks} == {26.562}  # nvlink -s: 26.562 GB/s
        assert {ln.version_name for ln in g.nvlinks} == {"4.0"} and {ln.version for ln in g.nvlinks} == {6}
        assert {ln.remote_device_type for ln in g.nvlinks} == {"switch"}
        assert g.nvlink_end_error == "NVML_ERROR_INVALID_ARGUMENT"
        # topo -m: NUMA Affinity 0 for GPU0-3, 1 for GPU4-7; GPU NUMA ID N/A
        assert g.numa_node == (0 if g.index < 4 else 1) and g.numa_affinity == (g.numa_node,)
        assert g.cpu_affinity == ("0-47,96-143" if g.index < 4 else "48-95,144-191")
        assert g.gpu_numa_id is None
        assert g.pcie == nvml.Pcie(5, 5, 16, 16)
    # GPU0's links to the 4 NVSwitches: 4/5/5/4 (nvidia-smi nvlink -R, NVIDIA/nccl#1182)
    per_switch = {}
    for ln in r.gpus[0].nvlinks:
        per_switch[ln.remote_pci_bus_id] = per_switch.get(ln.remote_pci_bus_id, 0) + 1
    assert per_switch == {"0000:05:00.0": 4, "0000:06:00.0": 5, "0000:07:00.0": 5, "0000:08:00.0": 4}
    assert r.gpus[0].pci_bus_id == "0000:13:00.0" and r.gpus[0].pci_bus_id_raw == "00000000:13:00.0"
    assert r.gpus[4].pci_bus_id == "0000:93:00.0"
    assert len(r.pairs) == 28
    assert pair(r, 0, 3).topology == "NODE" and pair(r, 0, 3).path_class == "NODE"
    assert pair(r, 4, 7).topology_level == 40
    assert pair(r, 0, 4).topology == "SYSTEM" and pair(r, 3, 4).path_class == "SYS"
    assert all(p.p2p == nvml.P2P("OK", "OK", "OK", "OK") for p in r.pairs)
    assert [u.call for u in r.unsupported] == [f"nvmlDeviceGetNumaNodeId(gpu={i})" for i in range(8)]
    assert {u.error_name for u in r.unsupported} == {"NVML_ERROR_NOT_SUPPORTED"}
    assert r.notes == ()


def test_rtxa6000_bridge_on_two_of_three() -> None:
    r = load(A6000)
    g0, g1, g2 = r.gpus
    assert (g0.uuid, g2.uuid) == ("GPU-5baec991-de63-c196-1766-04c38407e133", "GPU-02c05ee3-bdb5-aac7-f9e8-a4c8f3f725b3")
    # nvlink -s: GPU0 and GPU1 4 links each at 14.062 GB/s; GPU2 all links inactive
    assert g0.active_nvlinks == g1.active_nvlinks == 4
    assert {ln.remote_pci_bus_id for ln in g0.nvlinks} == {g1.pci_bus_id}
    assert {ln.remote_pci_bus_id for ln in g1.nvlinks} == {g0.pci_bus_id}
    assert {ln.speed_gbps for ln in g0.nvlinks + g1.nvlinks} == {14.062}
    assert {ln.remote_device_type for ln in g0.nvlinks} == {"gpu"}
    assert {ln.version_name for ln in g0.nvlinks} == {"3.1"}
    assert g2.nvlink_count == 4 and g2.active_nvlinks == 0
    assert all(ln.remote_pci_bus_id is None and ln.speed_gbps is None for ln in g2.nvlinks)
    # topo -m: GPU2 NODE to both; all NUMA 0, CPUs 0-31,64-95
    assert pair(r, 0, 2).topology == pair(r, 1, 2).topology == "NODE"
    assert {g.numa_node for g in r.gpus} == {0} and {g.cpu_affinity for g in r.gpus} == {"0-31,64-95"}
    assert pair(r, 0, 1).p2p.nvlink == "OK" and pair(r, 0, 2).p2p.nvlink == "NS"
    assert pair(r, 1, 2).p2p.read == "OK"


def test_v100_gpu3_two_inactive_links() -> None:
    r = load(V100)
    g3 = r.gpus[3]
    assert g3.model == "Tesla V100-SXM2-32GB"
    # nvlink -s: links 0,1,2,4 at 25.781 GB/s, 3 and 5 <inactive>
    assert [(ln.link, ln.active) for ln in g3.nvlinks] == [(0, True), (1, True), (2, True), (3, False), (4, True),
                                                           (5, False)]
    assert [ln.speed_gbps for ln in g3.nvlinks] == [25.781, 25.781, 25.781, None, 25.781, None]
    assert g3.active_nvlinks == 4 and g3.nvlink_count == 6
    # the far ends of the two dead links are down too
    assert [ln.active for ln in r.gpus[2].nvlinks].count(False) == 1 and not r.gpus[2].nvlinks[4].active
    assert not r.gpus[7].nvlinks[0].active
    assert sum(g.active_nvlinks for g in r.gpus) == 44
    assert {ln.version_name for g in r.gpus for ln in g.nvlinks} == {"2.0"}
    # DGX-1 cube mesh: GPU0 NV1 to 1 and 2, NV2 to 3 and 4
    by_bus = {g.pci_bus_id: g.index for g in r.gpus}
    peers = [by_bus[ln.remote_pci_bus_id] for ln in r.gpus[0].nvlinks]
    assert sorted(peers) == [1, 2, 3, 3, 4, 4]
    assert pair(r, 0, 1).path_class == "PIX" and pair(r, 0, 2).path_class == "PHB"
    assert pair(r, 0, 5).path_class == "SYS"
    assert pair(r, 3, 7).p2p == nvml.P2P("CNS", "CNS", "NS", "NS")  # its only NVLink is down
    assert pair(r, 2, 3).p2p.nvlink == "OK"  # one of its two links is left
    # the older driver: no nvmlDeviceGetNumaNodeId, no GET_SPEED field (speeds from the legacy fields)
    numa = [u for u in r.unsupported if u.call.startswith("nvmlDeviceGetNumaNodeId")]
    assert len(numa) == 8 and {u.error_name for u in numa} == {"NVML_ERROR_FUNCTION_NOT_FOUND"}
    assert sum("NVML_FI_DEV_NVLINK_GET_SPEED" in u.call for u in r.unsupported) == 44


def test_rtx5090_consumer_calls_are_null() -> None:
    r = load(RTX5090)
    assert [g.serial for g in r.gpus] == [None, None]
    assert all(g.nvlinks == () and g.nvlink_end_error == "NVML_ERROR_NOT_SUPPORTED" for g in r.gpus)
    p = pair(r, 0, 1)
    # topo -m: PHB; topo -p2p rw: GNS both ways
    assert (p.topology, p.topology_level, p.path_class) == ("HOSTBRIDGE", 30, "PHB")
    assert p.p2p == nvml.P2P(read="GNS", write="GNS", nvlink=None, atomics="GNS")
    assert len(r.unsupported) == 5
    assert "nvmlDeviceGetP2PStatus(a=0, b=1, caps=NVML_P2P_CAPS_INDEX_NVLINK)" in {u.call for u in r.unsupported}


def test_nvml_failure_parses() -> None:
    r = load(NO_DRIVER)
    assert r.ok is False and r.error_name == "NVML_ERROR_DRIVER_NOT_LOADED"
    assert r.error.startswith("nvmlInit failed:") and "kernel module" in r.error
    assert r.gpus == () and r.pairs == () and r.driver_version is None


def test_detection() -> None:
    for f in FIX.glob("*.json"):
        if not f.name.endswith((".expected.json", ".conclusion.json")):
            text = blank_provenance_header(f.read_text())
            assert nvml.sniff(text) == 0.95 and detect(text) == "nvml"
    assert nvml.sniff('{"probe": "sysfs", "schema_version": 1}') == 0.0
    assert nvml.sniff("GPU 0: NVIDIA H100 (UUID: GPU-1)\n\t Link 0: 26.562 GB/s\n") == 0.0


def _probe(**over) -> str:
    base = {"probe": "nvml", "schema_version": 1, "ok": True, "gpus": [], "pairs": [], "unsupported": {}}
    base.update(over)
    return json.dumps(base, indent=1)


@pytest.mark.parametrize("text, line_no, words", [
    ("", 0, "no text"),
    ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n", 1, "not json"),
    ('{\n "probe": "nvml",\n "schema_version": 1,\n "ok": true,\n', 5, "broken json"),
    ('["probe", "nvml"]', 1, "not an nvml probe"),
    ('{\n "probe": "sysfs",\n "ok": true\n}', 2, '"probe": "sysfs"'),
    ('{"ok": true, "gpus": []}', 1, 'no "probe" key'),
    (_probe(schema_version=2), 3, "schema_version 2"),
    (_probe(schema_version="1"), 3, "schema_version"),
    (_probe(ok="yes"), 4, "ok: expected true or false"),
    (_probe(gpus={"0": {}}), 5, "gpus: expected a list"),
    (_probe(gpus=[{"index": 0, "pcie": {"max_gen": "five"}}]), 0, "gpus[0].pcie.max_gen"),
    (_probe(gpus=[{"index": 0, "nvlinks": [{"link": 0, "active": "yes"}]}]), 0, "nvlinks[0].active"),
    (_probe(pairs=[{"a": 0}]), 0, "pairs[0].a"),
    ('{"probe": "nvml", "schema_version": 1, "ok": true, "gpus": [{"nvlinks": [{"speed_gbps": NaN}]}]}', 0,
     "nan"),
    ("[" * 100000, 0, "nested too deeply"),
])
def test_refused(text: str, line_no: int, words: str) -> None:
    with pytest.raises(ParseError) as info:
        nvml.parse(text)
    assert info.value.line_no == line_no, info.value
    assert words.lower() in info.value.message.lower()


def test_tolerated_and_noted() -> None:
    text = _probe(gpus=[{"index": 0, "nvlinks": [{"link": 0, "active": True, "remote_device_type": "bridge9"}]}],
                  pairs=[{"a": 0, "b": 5, "topology": "NODE", "topology_level": 50, "p2p": {"read": "ZZ"}}],
                  extra_key_from_a_later_probe={"x": 1})
    r = nvml.parse(text)
    p = r.pairs[0]
    assert p.topology == "SYSTEM" and p.path_class == "SYS"  # the level wins over a disagreeing name
    assert p.p2p.read == "ZZ" and p.p2p.write is None
    notes = " | ".join(r.notes)
    assert "bridge9" in notes and "0-5" in notes and "'ZZ'" not in notes and "ZZ" in notes and "level 50" in notes
    # a GPU NUMA id NVML gives as -1 means none
    assert nvml.parse(_probe(gpus=[{"index": 0, "gpu_numa_id": -1}])).gpus[0].gpu_numa_id is None


def test_header_lines_are_blanked_not_refused() -> None:
    text = (FIX / RTX5090).read_text()
    assert text.startswith("#@ ")
    assert nvml.parse(text) == nvml.parse(blank_provenance_header(text))
