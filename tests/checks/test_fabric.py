"""FAB001, FAB002, GDR001 and NCCL002's peermem cause: the edge cases beyond the rules' examples."""

from __future__ import annotations

import pytest

import topodiag
from tests.fixtures_index import FIXTURES
from tests.parsers.test_fabric_sources import REPORT


def _diag(tmp_path, profile=None, **texts):
    paths = []
    for name, text in texts.items():
        p = tmp_path / name
        p.write_text(text)
        paths.append(str(p))
    return topodiag.diagnose(paths, profile=profile)


def _codes(d):
    return [(f.code, f.severity.name.lower(), list(f.subjects))
            for f in d.outcome.findings]


def test_fab001_groups_by_fault_and_names_the_bus_ids(tmp_path):
    d = _diag(tmp_path, **{"q.txt": REPORT})
    fab = [c for c in _codes(d) if c[0] == "FAB001"]
    assert fab == [("FAB001", "error", ["pci:0000:2a:00"])]  # clique 0 on H100: not multi-node NVLink


def test_fab001_clique_zero_under_gb200(tmp_path):
    d = _diag(tmp_path, profile="gb200-nvl", **{"q.txt": REPORT})
    fab = sorted(c for c in _codes(d) if c[0] == "FAB001")
    assert fab == [("FAB001", "error", ["pci:0000:18:00"]), ("FAB001", "error", ["pci:0000:2a:00"])]


def test_fab002_inactive_by_profile(tmp_path):
    assert ("FAB002", "warning") in [c[:2] for c in _codes(_diag(tmp_path, **{"fm.txt": "inactive\n"}))]
    assert ("FAB002", "error") in [c[:2] for c in _codes(_diag(tmp_path, profile="hgx-h200", **{"fm.txt": "inactive\n"}))]
    assert not [c for c in _codes(_diag(tmp_path, profile="pcie-8gpu", **{"fm.txt": "inactive\n"})) if c[0] == "FAB002"]


def test_fab002_nothing_to_do_on_an_nvswitch_profile_is_an_error(tmp_path):
    text = (FIXTURES / "fabricmanager" / "fabricmanager-journal-nothing-to-do-a40-nvlink-bridge-01.txt").read_text()
    assert ("FAB002", "error") in [c[:2] for c in _codes(_diag(tmp_path, profile="dgx-b200", **{"fm.txt": text}))]


# invented: two ranks of two nodes, inter-node connections via NET/IB/0 without /GDRDMA
NCCL_LOG = """\
nodea:1234:1250 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>
nodea:1234:1250 [0] NCCL INFO Using network IB
nodea:1234:1260 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0
nodea:1234:1260 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0
"""


def test_missing_peermem_and_net_ib_without_gdrdma_is_one_finding(tmp_path):
    lsmod = (FIXTURES / "peermem" / "lsmod-grep-peermem-absent-a100-nccl2.12-01.txt").read_text()
    d = _diag(tmp_path, **{"nccl.log": NCCL_LOG, "lsmod.txt": lsmod})
    found = [f for f in d.outcome.findings if f.code in ("NCCL002", "GDR001")]
    assert [f.code for f in found] == ["NCCL002"]
    assert "nvidia_peermem" in found[0].message
    assert {e.source for e in found[0].evidence} >= {"nccl_debug", "peermem"}


def test_gdr001_from_the_nccl_log_alone_when_no_connection_lines(tmp_path):
    lsmod = (FIXTURES / "peermem" / "lsmod-grep-peermem-absent-a100-nccl2.12-01.txt").read_text()
    log = "nodea:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\nnodea:1:1 [0] NCCL INFO Using network IB\n"
    d = _diag(tmp_path, **{"nccl.log": log, "lsmod.txt": lsmod})
    assert ("GDR001", "error") in [c[:2] for c in _codes(d)]


def test_nvidia_smi_q_width_feeds_topo005_and_an_idle_gen1_does_not(tmp_path):
    d = _diag(tmp_path, **{"q.txt": REPORT})
    topo5 = [c for c in _codes(d) if c[0] == "TOPO005"]
    assert topo5 == [("TOPO005", "warning", ["gpu:0"])]  # x8 of x16; GPU 2a at Gen1 of Gen5 (idle) is not judged


def test_nvml_probe_reads_gpu_fabric_info_and_fab001_judges_it(tmp_path, monkeypatch):
    """The real pynvml over a fake libnvidia-ml (tests/fakes/fake_libnvml.py) whose
    nvmlDeviceGetGpuFabricInfoV answers per GPU: the probe writes each GPU's fabric (in NVML's codes
    turned to nvidia-smi's words), the nvml parser reads it, FAB001 judges it."""
    import json

    pynvml = pytest.importorskip("pynvml")
    from tests.fakes.fake_libnvml import FakeLibNvml
    from topodiag.live import nvml_probe
    from topodiag.parsers import nvml as nvml_parser
    from topodiag.parsers.base import blank_provenance_header

    path = FIXTURES / "nvml" / "nvml-invented-h100-hgx-8gpu-nvswitch-01.json"
    recorded = json.loads(blank_provenance_header(path.read_text()))
    registered = {"state": "Completed", "status": "Success", "clique_id": 2,
                  "cluster_uuid": "dc6e40c4-d722-4357-9ba6-5291dd461278",
                  "health_mask": 2 | 2 << 2 | 2 << 4 | 2 << 6 | 1 << 8, "health_summary": "Healthy"}
    for g in recorded["gpus"]:
        g["fabric"] = dict(registered)
    recorded["gpus"][3]["fabric"].update(state="In Progress", clique_id=0,
                                         cluster_uuid="00000000-0000-0000-0000-000000000000")
    recorded["unsupported"]["nvmlDeviceGetGpuFabricInfoV(gpu=7)"] = "NVML_ERROR_NOT_SUPPORTED: Not Supported"
    recorded["unsupported"]["nvmlDeviceGetGpuFabricInfo(gpu=7)"] = "NVML_ERROR_NOT_SUPPORTED: Not Supported"
    fake = FakeLibNvml(recorded).install(monkeypatch, pynvml)
    data = nvml_probe.probe(nvml=fake)
    fabrics = [g.get("fabric") for g in data["gpus"]]
    assert fabrics[0] == {"state": "Completed", "status": "Success", "clique_id": 2,
                          "cluster_uuid": "dc6e40c4-d722-4357-9ba6-5291dd461278", "health_mask": 0x1AA,
                          "health_summary": "Healthy"}
    assert fabrics[3]["state"] == "In Progress" and fabrics[7] == "n/a"
    parsed = nvml_parser.parse(nvml_probe.dumps(data))
    assert parsed.gpus[0].fabric.health == {"summary": "Healthy", "bandwidth": "Full", "route recovery in progress": "False",
                                            "route unhealthy": "False", "access timeout recovery": "False",
                                            "incorrect configuration": "None"}
    assert parsed.gpus[7].fabric is None
    p = tmp_path / "nvml.json"
    p.write_text(nvml_probe.dumps(data))
    d = topodiag.diagnose([str(p)])
    fab = [(f.code, list(f.subjects)) for f in d.outcome.findings if f.code == "FAB001"]
    assert fab == [("FAB001", [f"pci:{data['gpus'][3]['pci_bus_id'][:-2]}"])]
