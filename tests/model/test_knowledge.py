"""knowledge.py against docs/domain.md, number by number (hand-written on purpose: a typo in the table
must not be able to hide in a loop over the same table)."""

from __future__ import annotations

import pytest

from topodiag import knowledge as k


# docs/domain.md "PCIe (x16)"
def test_pcie_x16_table():
    assert k.pcie_one_way_gbyte_s(3) == 16
    assert k.pcie_bidir_gbyte_s(3) == 32
    assert k.pcie_one_way_gbyte_s(4) == 32
    assert k.pcie_bidir_gbyte_s(4) == 64
    assert k.pcie_one_way_gbyte_s(5) == 64
    assert k.pcie_bidir_gbyte_s(5) == 128


def test_pcie_width_scaling_and_unknown_gen():
    assert k.pcie_one_way_gbyte_s(4, width=8) == 16
    assert k.pcie_one_way_gbyte_s(5, width=4) == 16
    assert k.pcie_one_way_gbyte_s(3, width=1) == 1
    assert k.pcie_bidir_gbyte_s(5, width=8) == 64
    assert k.pcie_one_way_gbyte_s(2) is None
    assert k.pcie_one_way_gbyte_s(6) is None
    assert k.pcie_one_way_gbyte_s(None) is None
    with pytest.raises(ValueError):
        k.pcie_one_way_gbyte_s(4, width=0)


@pytest.mark.parametrize("text, gen", [
    ("16.0 GT/s PCIe", 4), ("32.0 GT/s PCIe", 5), ("32.0 GT/s", 5), ("16 GT/s", 4), ("8 GT/s", 3),
    ("8.0 GT/s PCIe", 3), ("2.5 GT/s", 1), ("5 GT/s", 2), ("64.0 GT/s PCIe", 6), (16.0, 4), (8, 3),
    ("Gen4", 4), ("PCIe Gen5", 5), ("Unknown", None), ("", None), (None, None), ("12 GT/s", None),
])
def test_pcie_gen_from_link_speed(text, gen):
    assert k.pcie_gen_from_link_speed(text) == gen


# docs/domain.md "NVLink"
def test_nvlink_table():
    v2, v3, v4, v5 = (k.NVLINK_GENS[i] for i in (2, 3, 4, 5))
    assert (v2.arch, v2.per_link_bidir_gbyte_s, v2.links_per_gpu, v2.per_gpu_bidir_gbyte_s) == ("Volta", 50, 6, 300)
    assert (v3.arch, v3.per_link_bidir_gbyte_s, v3.links_per_gpu, v3.per_gpu_bidir_gbyte_s) == ("Ampere", 50, 12, 600)
    assert (v4.arch, v4.per_link_bidir_gbyte_s, v4.links_per_gpu, v4.per_gpu_bidir_gbyte_s) == ("Hopper", 50, 18, 900)
    assert (v5.arch, v5.per_link_bidir_gbyte_s, v5.links_per_gpu, v5.per_gpu_bidir_gbyte_s) == ("Blackwell", 100, 18, 1800)
    for g in (v2, v3, v4, v5):  # the table's own arithmetic
        assert g.per_link_bidir_gbyte_s * g.links_per_gpu == g.per_gpu_bidir_gbyte_s
    assert v4.per_link_one_way_gbyte_s == 25
    assert v5.per_link_one_way_gbyte_s == 50
    assert v4.per_gpu_one_way_gbyte_s == 450


def test_nvlink_vs_pcie_ratios():
    # "NVLink 4.0 is about 7x PCIe 5.0, NVLink 5.0 about 14x" (bidir against bidir)
    assert round(k.NVLINK_GENS[4].per_gpu_bidir_gbyte_s / k.pcie_bidir_gbyte_s(5)) == 7
    assert round(k.NVLINK_GENS[5].per_gpu_bidir_gbyte_s / k.pcie_bidir_gbyte_s(5)) == 14
    # "about 18x on an H100 node: 900 GB/s NVLink vs 50 GB/s per NDR NIC"
    assert k.NVLINK_GENS[4].per_gpu_bidir_gbyte_s / k.IB_RATES["NDR"].link_4x_gbyte_s == 18


def test_nvlink_printed_speeds():
    assert k.nvlink_nominal_speed_gbps(2) == 25.781
    assert k.nvlink_nominal_speed_gbps(3) == 25.781
    assert k.nvlink_nominal_speed_gbps(4) == 26.562
    assert k.nvlink_nominal_speed_gbps(5) == 53.125
    assert k.nvlink_nominal_speed_gbps(3, bridge=True) == 14.062


@pytest.mark.parametrize("printed, gen, ok", [
    (25.781, 2, True), (25.781, 3, True), (25.0, 3, True), (26.562, 4, True), (53.125, 5, True),
    (50.0, 5, True), (13.281, 4, False), (12.891, 3, False), (25.781, 5, False), (26.562, 5, False),
    (20.0, 2, False), (24.5, 3, True), (24.0, 3, False),
])
def test_nvlink_speed_ok(printed, gen, ok):
    assert k.nvlink_speed_ok(printed, gen) is ok


def test_nvlink_speed_ok_bridge_and_generation_spellings():
    assert k.nvlink_speed_ok(14.062, 3, bridge=True)
    assert not k.nvlink_speed_ok(14.062, 3)
    assert not k.nvlink_speed_ok(7.031, 3, bridge=True)
    for spelling in (4, 4.0, "4", "4.0", "NVLink4", "nvlink 4.0", k.NVLINK_GENS[4]):
        assert k.nvlink_speed_ok(26.562, spelling)
    for bad in (1, 6, "Hopper", "", True, 4.5):
        with pytest.raises(ValueError):
            k.nvlink_gen(bad)


# docs/domain.md "Between nodes" (InfiniBand table)
def test_ib_table():
    edr, hdr, ndr, xdr = (k.IB_RATES[n] for n in ("EDR", "HDR", "NDR", "XDR"))
    assert (edr.lane_gbit_s, edr.link_4x_gbit_s, edr.link_4x_gbyte_s) == (25, 100, 12.5)
    assert (hdr.lane_gbit_s, hdr.link_4x_gbit_s, hdr.link_4x_gbyte_s) == (50, 200, 25)
    assert (ndr.lane_gbit_s, ndr.link_4x_gbit_s, ndr.link_4x_gbyte_s) == (100, 400, 50)
    assert (xdr.lane_gbit_s, xdr.link_4x_gbit_s, xdr.link_4x_gbyte_s) == (200, 800, 100)
    for r in (edr, hdr, ndr, xdr):
        assert r.lane_gbit_s * 4 == r.link_4x_gbit_s
        assert k.gbit_to_gbyte(r.link_4x_gbit_s) == r.link_4x_gbyte_s
    # docs/architecture.md "Numbers the rules use": measured NDR ~50 GB/s, HDR ~24 GB/s per NIC
    assert k.IB_MEASURED_GBYTE_S == {"NDR": 50.0, "HDR": 24.0}


@pytest.mark.parametrize("rate, lanes, name", [
    (100, 4, "EDR"), (200, 4, "HDR"), (400, 4, "NDR"), (800, 4, "XDR"), (400.0, 4, "NDR"),
    (103.125, 4, "EDR"), (100, 2, "HDR"), (200, 2, "NDR"), (25, 1, "EDR"),
    (56, 4, None), (40, 4, None), (10, 4, None), (0, 4, None), (None, 4, None), (300, 4, None),
])
def test_ib_rate_name(rate, lanes, name):
    assert k.ib_rate_name(rate, lanes=lanes) == name


# docs/domain.md "`nvidia-smi topo -m` link classes (best to worst)"
def test_path_classes_order():
    assert k.PATH_CLASSES == ("NV#", "PIX", "PXB", "PHB", "NODE", "SYS")
    ranks = [k.path_rank(t) for t in ("NV18", "PIX", "PXB", "PHB", "NODE", "SYS")]
    assert ranks == [0, 1, 2, 3, 4, 5]
    assert k.path_rank("SOC") == k.path_rank("SYS")
    assert k.path_rank("NV1") == k.path_rank("NV18") == 0
    assert k.path_rank(" pix ") == 1


def test_path_helpers():
    assert k.is_nvlink("NV18") and k.is_nvlink("NV4") and k.is_nvlink("nv12")
    assert not k.is_nvlink("PIX") and not k.is_nvlink("SYS") and not k.is_nvlink("X") and not k.is_nvlink("NV")
    assert k.nvlink_count("NV18") == 18
    assert k.nvlink_count("NV2") == 2
    assert k.nvlink_count("PXB") == 0
    assert k.normalize_path_class("SOC") == "SYS"
    assert k.is_path_class("NODE") and not k.is_path_class("X") and not k.is_path_class("OK")
    for bad in ("X", "", "NV", "N/A", "OK"):
        with pytest.raises(ValueError):
            k.path_rank(bad)
    order = sorted(["SYS", "NV2", "PIX", "NV18", "SOC", "NODE", "NV12", "PHB", "PXB"], key=k.path_sort_key)
    assert order == ["NV18", "NV12", "NV2", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC"]


def test_path_nominal_bandwidth():
    # NV# = count x per-link one-way of the generation (docs/architecture.md: "NV18 450 GB/s")
    assert k.path_nominal_gbyte_s("NV18", nvlink_generation=4) == 450
    assert k.path_nominal_gbyte_s("NV18", nvlink_generation=4, bidir=True) == 900
    assert k.path_nominal_gbyte_s("NV12", nvlink_generation=3) == 300
    assert k.path_nominal_gbyte_s("NV18", nvlink_generation=5) == 900
    assert k.path_nominal_gbyte_s("NV6", nvlink_generation=4) == 150
    # PCIe classes = the platform's PCIe x16 (docs/architecture.md: "SYS pair ~ 64 GB/s")
    for cls in ("PIX", "PXB", "PHB", "NODE", "SYS", "SOC"):
        assert k.path_nominal_gbyte_s(cls, pcie_gen=5) == 64
        assert k.path_nominal_gbyte_s(cls, pcie_gen=4) == 32
    assert k.path_nominal_gbyte_s("SYS", pcie_gen=5, bidir=True) == 128
    assert k.path_nominal_gbyte_s("PIX", pcie_gen=4, pcie_width=8) == 16
    assert k.path_nominal_gbyte_s("NV4", nvlink_generation=3, bridge=True) == 56.25
    assert k.path_nominal_gbyte_s("NV4", nvlink_generation=3, bridge=True, bidir=True) == 112.5
    assert k.path_nominal_gbyte_s("NV18", nvlink_generation=4, bridge=True) == 450  # bridge: NVLink 3 only
    assert k.path_nominal_gbyte_s("NV18") is None
    assert k.path_nominal_gbyte_s("SYS") is None
    # the docs/architecture.md example ratio: NV18 vs SYS on a PCIe 5 Hopper node is 7x
    ratio = k.path_nominal_gbyte_s("NV18", nvlink_generation=4) / k.path_nominal_gbyte_s("SYS", pcie_gen=5)
    assert round(ratio) == 7


@pytest.mark.parametrize("name, model, arch, gen, links, pcie", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM", "Hopper", 4, 18, 5),
    ("Tesla V100-SXM2-32GB", "V100 SXM2", "Volta", 2, 6, 3),
    ("Tesla V100-SXM2-16GB", "V100 SXM2", "Volta", 2, 6, 3),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM4", "Ampere", 3, 12, 4),
    ("NVIDIA H800", "H800 SXM", "Hopper", 4, 8, 5),
    ("NVIDIA H100 PCIe", "H100 PCIe", "Hopper", 4, 12, 5),
    ("NVIDIA B200", "B200", "Blackwell", 5, 18, 5),
    ("NVIDIA GB200", "GB200", "Blackwell", 5, 18, 5),
    ("NVIDIA RTX A6000", "GA102 (RTX A6000 class)", "Ampere", 3, 4, 4),
    ("NVIDIA GeForce RTX 5090", "Blackwell client (RTX 5090 class)", "Blackwell", None, 0, 5),
    ("NVIDIA H200", "H200 SXM", "Hopper", 4, 18, 5),
    ("NVIDIA H20", "H20", "Hopper", 4, 18, 5),
    ("A800", "A800 SXM4", "Ampere", 3, 8, 4),
    ("NVIDIA A800 SXM", "A800 SXM4", "Ampere", 3, 8, 4),
    ("NVIDIA A100-PCIE-40GB", "A100 PCIe", "Ampere", 3, 12, 4),
    ("Tesla V100-PCIE-32GB", "V100 PCIe", "Volta", None, 0, 3),
    ("NVIDIA RTX 6000 Ada Generation", "Ada (RTX 6000 Ada / L40 class)", "Ada Lovelace", None, 0, 4),
    ("Tesla K40m", "Kepler (K40/K80)", "Kepler", None, 0, 3),
    ("NVIDIA H200 NVL", "H200 NVL", "Hopper", 4, 18, 5),
    ("NVIDIA H100 NVL", "H100 NVL", "Hopper", 4, 12, 5),
])
def test_gpu_facts(name, model, arch, gen, links, pcie):
    f = k.gpu_facts(name)
    assert f is not None
    assert (f.model, f.arch, f.nvlink_generation, f.nvlinks, f.pcie_gen) == (model, arch, gen, links, pcie)
    assert f.nvlinks in f.nvlinks_accepted


def test_gpu_facts_details():
    h100 = k.gpu_facts("NVIDIA H100 80GB HBM3")
    assert h100.nvlink_speed_gbps == 26.562 and h100.nvlink_bidir_gbyte_s == 900 and not h100.nvlink_bridge
    assert k.gpu_facts("NVIDIA H100 SXM5 80GB").model == "H100 SXM"
    pcie = k.gpu_facts("NVIDIA H100 PCIe")
    assert pcie.nvlink_bridge and pcie.nvlinks_accepted == (0, 12) and pcie.nvlink_bidir_gbyte_s == 600
    assert pcie.note  # the uncertainty is written down
    a100 = k.gpu_facts("NVIDIA A100-SXM4-80GB")
    assert a100.nvlink_bidir_gbyte_s == 600 and k.nvlink_speed_ok(25.0, a100.nvlink_generation)
    assert k.gpu_facts("Tesla V100-SXM2-32GB").nvlink_bidir_gbyte_s == 300
    b200 = k.gpu_facts("NVIDIA B200")
    assert b200.nvlink_bidir_gbyte_s == 1800 and b200.nvlink_one_way_gbyte_s == 900
    ga102 = k.gpu_facts("NVIDIA RTX A6000")
    assert ga102.nvlink_speed_gbps == 14.062 and ga102.nvlink_bridge and ga102.nvlink_bidir_gbyte_s == 112.5
    assert k.gpu_facts("NVIDIA H800").nvlinks_accepted == (8, 18)
    assert k.gpu_facts("NVIDIA H800").nvlink_bidir_gbyte_s == 400
    assert k.gpu_facts("NVIDIA GeForce RTX 5090").nvlink_bidir_gbyte_s is None
    assert k.gpu_facts("NVIDIA GB200").form_factor == "superchip"
    assert k.gpu_facts("NVIDIA B300 SXM6 AC").pcie_gen == 6
    # B200 must not be mistaken for GB200 or the other way round; H20 is not H200
    assert k.gpu_facts("NVIDIA B200").model == "B200"
    assert k.gpu_facts("NVIDIA H20").model == "H20"
    assert k.gpu_facts("NVIDIA GB10").nvlink_generation is None
    assert k.gpu_facts("Matrox G200") is None
    assert k.gpu_facts("") is None


def test_normalize_gpu_name():
    assert k.normalize_gpu_name("NVIDIA A100-SXM4-80GB") == "A100 SXM4 80GB"
    assert k.normalize_gpu_name("Tesla V100-SXM2-32GB") == "V100 SXM2 32GB"
    assert k.normalize_gpu_name("  NVIDIA GeForce RTX 5090 ") == "RTX 5090"


# docs/domain.md "Bus bandwidth (nccl-tests)"
def test_busbw_factors():
    assert k.busbw_factor("all_reduce", 8) == 2 * 7 / 8 == 1.75
    assert k.busbw_factor("all_reduce", 2) == 1.0
    assert k.busbw_factor("all_reduce", 1) == 0.0
    assert k.busbw_factor("all_gather", 8) == 7 / 8
    assert k.busbw_factor("reduce_scatter", 4) == 3 / 4
    assert k.busbw_factor("broadcast", 8) == 1
    assert k.busbw_factor("reduce", 16) == 1
    assert k.busbw_factor("sendrecv", 8) == 1
    assert k.busbw_factor("alltoall", 8) == 7 / 8
    assert k.busbw_factor("gather", 8) == 7 / 8
    assert k.busbw_factor("all_reduce_perf", 16) == 2 * 15 / 16
    assert k.busbw_factor("AllReduce", 4) == 1.5
    assert k.busbw_from_algbw(100.0, "all_reduce", 8) == 175.0
    with pytest.raises(ValueError):
        k.busbw_factor("all_reduce", 0)
    with pytest.raises(ValueError):
        k.busbw_factor("hypercube_nonsense", 8)
