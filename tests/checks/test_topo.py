"""TOPO001-003 on corpus matrices: hand-checked findings (subjects, severity, the numbers in the message)."""

from __future__ import annotations

from pathlib import Path

import pytest

from topodiag import parsers
from topodiag.engine import Severity, load_catalog, load_checks, run
from topodiag.model.builder import ParsedInput, build

REPO = Path(__file__).resolve().parents[2]
TOPO_M = "fixtures/nvidia_smi_topo_m/"


@pytest.fixture(scope="module")
def catalog():
    load_checks()
    return load_catalog(REPO / "rules")


def findings(catalog, code, **files):
    inputs = {}
    items = []
    for source, rel in files.items():
        text = (REPO / rel).read_text(encoding="utf-8")
        parsed = parsers.get(source).parse(parsers.blank_provenance_header(text))
        inputs[source] = parsed
        items.append(ParsedInput(source, rel, parsed))
    inputs["topology"] = build(items)
    outcome = run(catalog, inputs, select=code)
    assert code in outcome.ran, outcome.skipped
    assert not outcome.crashes, outcome.crashes
    return [f for f in outcome.findings if f.code == code]


def topo(catalog, code, name):
    return findings(catalog, code, nvidia_smi_topo_m=TOPO_M + name + ".txt")


HEALTHY = ["topo-h100-hgx-nv18-8nic-pix-gpunumaid-01", "topo-a100-sxm4-80g-nv12-8nic-roce-01",
           "topo-h800-nv18-10nic-renamed-affinity-overflow-01"]


@pytest.mark.parametrize("name", HEALTHY)
@pytest.mark.parametrize("code", ["TOPO001", "TOPO002", "TOPO003"])
def test_healthy_hgx_matrices_give_nothing(catalog, code, name):
    assert topo(catalog, code, name) == []


def test_dgx1_cube_mesh_is_info_by_design_with_the_ratio(catalog):
    [f] = topo(catalog, "TOPO001", "topo-v100-dgx1-mlx5-legacy-01")
    assert f.severity == Severity.INFO
    assert "by design" in f.message and "DGX-1" in f.message
    # best NV2 = 2 x 25 GB/s one-way; SYS counted at PCIe Gen3 x16 (V100): 16 GB/s -> 3.1x
    assert "gpu:0-gpu:5 is SYS (~16 GB/s one-way) vs NV2 (~50 GB/s)" in f.message
    assert "3.1x" in f.message and "20 of 28" in f.message
    assert f.evidence and f.evidence[0].source == "nvidia_smi_topo_m"


def test_dgx1_sys_pairs_are_info(catalog):
    [f] = topo(catalog, "TOPO002", "topo-v100-dgx1-4mlx5-unordered-oldlegend-01")
    assert f.severity == Severity.INFO
    assert f.message.startswith("12 of 28 GPU pairs are SYS in topo -m")


def test_unbridged_gpu_is_a_warning_naming_the_slow_pair(catalog):
    [f] = topo(catalog, "TOPO001", "topo-rtxa6000-3gpu-nv4-bridge-ansi-01")
    assert f.severity == Severity.WARNING
    assert set(f.subjects) == {"gpu:0", "gpu:1", "gpu:2"}
    assert "gpu:0-gpu:2 is NODE" in f.message and "NV4" in f.message
    assert "gpu:2 has no NVLink" in f.message
    assert "GPU model unknown" in f.message  # topo -m alone: the assumption is stated


def test_symmetric_mesh_and_single_pair_pass(catalog):
    assert topo(catalog, "TOPO001", "topo-h100-4gpu-nv6-4nic-8numa-sparse-cpus-partial-01") == []
    assert topo(catalog, "TOPO001", "topo-2gpu-nv2-bridge-numa-na-nolegend-01") == []
    assert topo(catalog, "TOPO001", "topo-invented-1gpu-prompt-around-01") == []


def test_all_sys_vm_says_hidden_topology(catalog):
    [f] = topo(catalog, "TOPO002", "topo-pcie-8gpu-all-sys-tabs-gpunumaid-01")
    assert f.severity == Severity.WARNING
    assert len(f.subjects) == 8
    assert f.message.startswith("28 of 28 GPU pairs are SYS in topo -m")
    assert "same NUMA node" in f.message and "hidden PCIe topology" in f.message
    assert "every GPU pair is SYS" in f.message
    # GPU0-3 are NUMA 0 and GPU4-7 NUMA 1: 2 x C(4,2) = 12 same-node SYS pairs
    assert "12 of them" in f.message


def test_real_cross_socket_pairs_do_not_claim_a_vm(catalog):
    [f] = topo(catalog, "TOPO002", "topo-rtx6000ada-4gpu-4nic-2numa-01")
    assert "hidden" not in f.message
    assert "gpu:0-gpu:2, gpu:0-gpu:3, gpu:1-gpu:2, gpu:1-gpu:3" in f.message
    assert topo(catalog, "TOPO002", "topo-2gpu-node-indented-linewrapped-paste-01") == []


def test_far_nics_named_per_gpu(catalog):
    found = topo(catalog, "TOPO003", "topo-a800-nv8-4nic-dualport-01")
    assert [f.subjects[0] for f in found] == ["gpu:0", "gpu:2", "gpu:4", "gpu:5", "gpu:6"]
    by_gpu = {f.subjects[0]: f for f in found}
    assert by_gpu["gpu:0"].subjects == ("gpu:0", "nic:mlx5_0")
    assert "at NODE" in by_gpu["gpu:0"].message and "NIC0" in by_gpu["gpu:0"].message


def test_dgx1_single_hca(catalog):
    found = topo(catalog, "TOPO003", "topo-v100-dgx1-mlx5-legacy-01")
    paths = {f.subjects[0]: f.message for f in found}
    assert sorted(paths) == ["gpu:0", "gpu:1", "gpu:4", "gpu:5", "gpu:6", "gpu:7"]
    assert "at NODE" in paths["gpu:0"] and "at SYS" in paths["gpu:7"]


def test_management_nic_far_away_does_not_count(catalog):
    # NIC0 (mlx5_0) is SYS to every GPU, but each GPU has a PIX compute NIC
    assert topo(catalog, "TOPO003", "topo-h800-nv18-10nic-renamed-affinity-overflow-01") == []


def test_k40m_phb_nic(catalog):
    found = topo(catalog, "TOPO003", "topo-k40m-4gpu-mlx4-soc-oldlegend-tabs-01")
    assert [(f.subjects, "PHB" in f.message) for f in found] == [
        (("gpu:0", "nic:mlx4_0"), False), (("gpu:1", "nic:mlx4_0"), False),
        (("gpu:2", "nic:mlx4_0"), True), (("gpu:3", "nic:mlx4_0"), True)]


def test_max_path_param(catalog):
    rel = TOPO_M + "topo-a100-sxm4-80g-nv12-8nic-roce-01.txt"
    text = (REPO / rel).read_text(encoding="utf-8")
    parsed = parsers.get("nvidia_smi_topo_m").parse(parsers.blank_provenance_header(text))
    inputs = {"nvidia_smi_topo_m": parsed, "topology": build([ParsedInput("nvidia_smi_topo_m", rel, parsed)])}
    outcome = run(catalog, inputs, select="TOPO003", config={"TOPO003": {"params": {"max_path": "PIX"}}})
    assert len([f for f in outcome.findings if f.code == "TOPO003"]) == 8  # every GPU is PXB to its NIC


def test_unequal_nv_counts_ratio_from_link_counts(catalog):
    text = ("        GPU0    GPU1    GPU2    CPU Affinity    NUMA Affinity\n"
            "GPU0     X      NV18    NV18    0-47            0\n"
            "GPU1    NV18     X      NV12    0-47            0\n"
            "GPU2    NV18    NV12     X      0-47            0\n")
    parsed = parsers.get("nvidia_smi_topo_m").parse(text)
    inputs = {"nvidia_smi_topo_m": parsed, "topology": build([ParsedInput("nvidia_smi_topo_m", None, parsed)])}
    [f] = [f for f in run(catalog, inputs, select="TOPO001").findings if f.code == "TOPO001"]
    assert f.severity == Severity.WARNING and set(f.subjects) == {"gpu:1", "gpu:2"}
    # NV18 vs NV12 at 25 GB/s per link: 450 vs 300 GB/s, 1.5x whatever the generation
    assert "gpu:1-gpu:2 is NV12 (~300 GB/s one-way) vs NV18 (~450 GB/s), 1.5x" in f.message
    assert "1 of 3" in f.message and "assumed" not in f.message


def test_pcie_profile_expects_sys():
    from topodiag.profiles import load_profiles

    rel = TOPO_M + "topo-pcie-8gpu-all-sys-tabs-gpunumaid-01.txt"
    parsed = parsers.get("nvidia_smi_topo_m").parse(parsers.blank_provenance_header((REPO / rel).read_text()))
    t = build([ParsedInput("nvidia_smi_topo_m", rel, parsed)])
    from topodiag.checks.topo import gpu_pair_cross_socket

    [h] = list(gpu_pair_cross_socket(t, parsed, {}, profile=load_profiles()["pcie-8gpu"]))
    assert h.severity == Severity.INFO and h.expectation.startswith("profile pcie-8gpu")
    assert "hidden PCIe topology" in h.values["note"]
