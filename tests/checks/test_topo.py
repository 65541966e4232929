"""TOPO001-003 on corpus matrices: hand-checked findings (subjects, severity, the numbers in the message)."""

from __future__ import annotations

from pathlib import Path

import pytest

from topodiag import parsers
from topodiag.engine import Severity, load_catalog, load_checks, run
from topodiag.model import build
from topodiag.records import ParsedInput

from .wording import worded

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
    assert f.message.startswith("12 of 28 GPU pairs are SYS (PCIe plus the inter-socket link)")


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
    # No NVLink pair at all and SYS within one NUMA node: a PCIe-only VM by design (issue 27): info.
    assert f.severity == Severity.INFO
    assert "joins its GPUs over PCIe by design" in f.message and "PCIe-only node" in f.expectation
    assert len(f.subjects) == 8
    assert f.message.startswith("28 of 28 GPU pairs are SYS (PCIe plus the inter-socket link)")
    assert "same NUMA node" in f.message and "hidden PCIe topology" in f.message
    assert "every GPU pair is SYS" in f.message
    # GPU0-3 are NUMA 0 and GPU4-7 NUMA 1: 2 x C(4,2) = 12 same-node SYS pairs
    assert "12 of them" in f.message


def test_real_cross_socket_pairs_do_not_claim_a_vm(catalog):
    [f] = topo(catalog, "TOPO002", "topo-rtx6000ada-4gpu-4nic-2numa-01")
    assert "hidden" not in f.message
    assert "gpu:0-gpu:2, gpu:0-gpu:3, gpu:1-gpu:2, gpu:1-gpu:3" in f.message
    assert topo(catalog, "TOPO002", "topo-2gpu-node-indented-linewrapped-paste-01") == []


def test_far_nics_named_per_nic_and_class(catalog):
    """A800 (corpus): GPU0 and GPU2 have no NIC closer than NIC0 (mlx5_0) at NODE; GPU4, 5 and 6 none
    closer than NIC2 (mlx5_2) at NODE (NIC2 and NIC3 are PIX to GPU7 only)."""
    found = topo(catalog, "TOPO003", "topo-a800-nv8-4nic-dualport-01")
    assert [f.subjects for f in found] == [("gpu:0", "gpu:2", "nic:mlx5_0"),
                                           ("gpu:4", "gpu:5", "gpu:6", "nic:mlx5_2")]
    assert found[0].message.startswith("gpu:0, gpu:2 are nearest to nic:mlx5_0 (NIC0) at NODE (worse than PXB)")
    assert "derived" not in found[0].message


def test_dgx1_single_hca(catalog):
    """DGX-1 (corpus): one HCA mlx5_0, PIX to GPU2/3, NODE to GPU0/1, SYS to GPU4-7."""
    found = topo(catalog, "TOPO003", "topo-v100-dgx1-mlx5-legacy-01")
    assert [(f.subjects, "at NODE" in f.message, "at SYS" in f.message) for f in found] == [
        (("gpu:0", "gpu:1", "nic:mlx5_0"), True, False),
        (("gpu:4", "gpu:5", "gpu:6", "gpu:7", "nic:mlx5_0"), False, True)]


def test_far_nic_from_nccl_topology_xml(catalog):
    """Azure NDv2 topology file (corpus): GPUs 0001-0004 and the only NIC 0101 under CPU 0 (no PCIe
    switch in the file: PHB), GPUs 0005-0008 under CPU 1 (SYS)."""
    found = findings(catalog, "TOPO003", nccl_topo_xml="fixtures/nccl_topo_xml/nccl-topo-xml-azure-ndv2-static-01.xml")
    assert [(f.subjects[:-1], f.subjects[-1]) for f in found] == [
        (("gpu:0001:00:00.0", "gpu:0002:00:00.0", "gpu:0003:00:00.0", "gpu:0004:00:00.0"), "nic:0101:00:00.0"),
        (("gpu:0005:00:00.0", "gpu:0006:00:00.0", "gpu:0007:00:00.0", "gpu:0008:00:00.0"), "nic:0101:00:00.0")]
    assert " at PHB " in found[0].message and " at SYS " in found[1].message
    assert "derived from NCCL's topology XML" in found[1].message


def test_management_nic_far_away_does_not_count(catalog):
    # NIC0 (mlx5_0) is SYS to every GPU, but each GPU has a PIX compute NIC
    assert topo(catalog, "TOPO003", "topo-h800-nv18-10nic-renamed-affinity-overflow-01") == []


def test_k40m_phb_nic(catalog):
    found = topo(catalog, "TOPO003", "topo-k40m-4gpu-mlx4-soc-oldlegend-tabs-01")
    assert [(f.subjects, "PHB" in f.message) for f in found] == [
        (("gpu:0", "gpu:1", "nic:mlx4_0"), False), (("gpu:2", "gpu:3", "nic:mlx4_0"), True)]


def test_max_path_param(catalog):
    rel = TOPO_M + "topo-a100-sxm4-80g-nv12-8nic-roce-01.txt"
    text = (REPO / rel).read_text(encoding="utf-8")
    parsed = parsers.get("nvidia_smi_topo_m").parse(parsers.blank_provenance_header(text))
    inputs = {"nvidia_smi_topo_m": parsed, "topology": build([ParsedInput("nvidia_smi_topo_m", rel, parsed)])}
    outcome = run(catalog, inputs, select="TOPO003", config={"TOPO003": {"params": {"max_path": "PIX"}}})
    # every GPU is PXB to its NICs (GPU0/1 to NIC0/1 ...); the nearest tie goes to the lower NIC
    assert [f.subjects for f in outcome.findings if f.code == "TOPO003"] == [
        ("gpu:0", "gpu:1", "nic:mlx5_0"), ("gpu:2", "gpu:3", "nic:mlx5_2"),
        ("gpu:4", "gpu:5", "nic:mlx5_4"), ("gpu:6", "gpu:7", "nic:mlx5_6")]


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

    [h] = list(gpu_pair_cross_socket(t, {}, profile=load_profiles()["pcie-8gpu"]))
    assert h.severity == Severity.INFO and h.expectation.startswith("profile pcie-8gpu")
    assert "hidden PCIe topology" in worded("TOPO002", h)


P2P = "fixtures/nvidia_smi_topo_p2p/"


def test_p2p_refused_on_consumer_gpus(catalog):
    """RTX 5090 workstation (corpus, same report): topo -m GPU0-GPU1 PHB, topo -p2p rw GNS both ways."""
    [f] = findings(catalog, "TOPO004", nvidia_smi_topo_m=TOPO_M + "topo-rtx5090-2gpu-phb-tabs-workstation-01.txt",
                   nvidia_smi_topo_p2p=P2P + "topo-p2p-rw-rtx5090-2gpu-gns-01.txt")
    # GNS: the GPU itself offers no P2P (a GeForce board): its design, info (issue 27).
    assert f.subjects == ("gpu:0", "gpu:1") and f.severity == Severity.INFO
    assert f.message.startswith("P2P access refused between 1 GPU pair(s): gpu:0-gpu:1: GNS (GPU not supported "
                                "(GeForce/consumer boards refuse P2P)); topo -m path PHB; GNS means the GPU itself")


def test_p2p_all_ok_and_one_way_refusals(catalog):
    assert findings(catalog, "TOPO004", nvidia_smi_topo_p2p=P2P + "topo-p2p-r-h100-8gpu-all-ok-01.txt") == []
    found = findings(catalog, "TOPO004", nvidia_smi_topo_p2p=P2P + "topo-p2p-invented-w-4gpu-asymmetric-prompt-crlf-01.txt")
    assert found and all("write" in f.message for f in found)


def test_p2p_refused_on_an_nvlinked_pair_is_an_error(catalog):
    topo_text = ("        GPU0    GPU1    CPU Affinity    NUMA Affinity\n"
                 "GPU0     X      NV4     0-31            0\n"
                 "GPU1    NV4      X      0-31            0\n")
    p2p_text = "$ nvidia-smi topo -p2p n\n        GPU0    GPU1\n GPU0   X       NS\n GPU1   NS      X\n"
    items = [ParsedInput(src, None, parsers.get(src).parse(text))
             for src, text in (("nvidia_smi_topo_m", topo_text), ("nvidia_smi_topo_p2p", p2p_text))]
    inputs = {i.source: i.result for i in items}
    inputs["topology"] = build(items)
    [f] = [f for f in run(catalog, inputs, select="TOPO004").findings if f.code == "TOPO004"]
    assert f.severity == Severity.ERROR and "over NVLink" in f.message and "NVLinked (gpu:0-gpu:1 NV4)" in f.message
    # the same NS over NVLink between two PCIe GPUs is by design: no finding
    items[0] = ParsedInput("nvidia_smi_topo_m", None, parsers.get("nvidia_smi_topo_m").parse(topo_text.replace("NV4", "PHB")))
    inputs = {i.source: i.result for i in items}
    inputs["topology"] = build(items)
    assert [f for f in run(catalog, inputs, select="TOPO004").findings if f.code == "TOPO004"] == []


def test_nic_pcie_link_below_its_ports(catalog):
    """nccl #2397 (corpus): the ConnectX-6 Dx 0000:16:00.0 (mlx5_0 port 1, mlx5_1 port 2, 100000 Mb/s
    each) at link_speed 16.0 GT/s, link_width 8: Gen4 x8 = 32 * 8/16 = 16 GB/s < 2 x 12.5 = 25 GB/s."""
    found = findings(catalog, "TOPO005", nccl_topo_xml="fixtures/nccl_topo_xml/nccl-topo-dump-a100pcie-2gpu-roce-nccl2.30-01.xml")
    [f] = found
    assert f.subjects == ("nic:mlx5_0", "nic:mlx5_1")
    assert f.message.startswith("NIC 0000:16:00.0 (mlx5_0, mlx5_1): PCIe Gen4 x8 carries 16 GB/s one-way, less than "
                                "its port(s) 100 + 100 Gb/s = 25 GB/s; the slot caps the NIC at 64%")


def test_gpu_pcie_link_narrower_than_x16(catalog):
    xml = ('<system version="1">\n <cpu numaid="0" affinity="ffffffff" arch="x86_64" vendor="GenuineIntel">\n'
           '  <pci busid="0000:17:00.0" class="0x030200" vendor="0x10de" device="0x2330" link_speed="32.0 GT/s PCIe" link_width="8">\n'
           '   <gpu dev="0" sm="90" rank="0" gdr="1"/>\n  </pci>\n'
           '  <pci busid="0000:18:00.0" class="0x030200" vendor="0x10de" device="0x2330" link_speed="32.0 GT/s PCIe" link_width="16">\n'
           '   <gpu dev="1" sm="90" rank="1" gdr="1"/>\n  </pci>\n </cpu>\n</system>\n')
    parsed = parsers.get("nccl_topo_xml").parse(xml)
    inputs = {"nccl_topo_xml": parsed, "topology": build([ParsedInput("nccl_topo_xml", None, parsed)])}
    [f] = [f for f in run(catalog, inputs, select="TOPO005").findings if f.code == "TOPO005"]
    assert f.subjects == ("gpu:0",)
    assert f.message.startswith("gpu:0: PCIe link runs x8 instead of x16: 32 of 64 GB/s one-way host<->GPU bandwidth")


def test_healthy_pcie_links(catalog):
    assert findings(catalog, "TOPO005", nccl_topo_xml="fixtures/nccl_topo_xml/nccl-topo-xml-azure-ndv4-static-01.xml") == []
    assert findings(catalog, "TOPO005", nccl_topo_xml="fixtures/nccl_topo_xml/nccl-topo-xml-aws-p4d-24xl-static-01.xml") == []


NVLINK_S_CUT = "fixtures/nvidia_smi_nvlink_s/nvlink-s-a100-sxm4-12links-25gbs-elided-01.txt"


def _topo006(catalog, profile: str, **texts):
    """TOPO006 under a profile for inputs given as {source: (file, text)} (file None: inline)."""
    from topodiag.profiles import load_profiles
    items = [ParsedInput(source, rel, parsers.get(source).parse(parsers.blank_provenance_header(text)))
             for source, (rel, text) in texts.items()]
    inputs = {**{i.source: i.result for i in items}, "topology": build(items), "profile": load_profiles()[profile]}
    outcome = run(catalog, inputs, select="TOPO006")
    assert not outcome.crashes, outcome.crashes
    return [f for f in outcome.findings if f.code == "TOPO006"]


def test_gpu_count_is_not_taken_from_an_output_cut_short(catalog):
    """The A100 paste (nccl-tests #228) shows GPUs 0-2 and stops with '......' inside GPU 2: under
    dgx-a100 (8 GPUs) its 3 GPUs prove none missing; the same 3 GPUs as a whole output do."""
    cut = (REPO / NVLINK_S_CUT).read_text(encoding="utf-8")
    assert _topo006(catalog, "dgx-a100", nvidia_smi_nvlink_s=(NVLINK_S_CUT, cut)) == []
    whole = cut.replace("......\n", "".join(f"\t Link {i}: 25 GB/s\n" for i in range(1, 12)))
    [f] = _topo006(catalog, "dgx-a100", nvidia_smi_nvlink_s=(None, whole))
    assert f.severity is Severity.ERROR and f.message.startswith("3 GPU(s) seen, the profile has 8")


def test_gpu_count_still_comes_from_the_inputs_not_cut_short(catalog):
    """Beside the cut paste, a whole `topo -m` of 2 GPUs: gpu:0 and gpu:1 are listed in full, gpu:2 only
    by the cut paste, so 2 GPUs are counted against the profile's 8."""
    cut = (REPO / NVLINK_S_CUT).read_text(encoding="utf-8")
    two = TOPO_M + "topo-2gpu-nv2-bridge-numa-na-nolegend-01.txt"
    [f] = _topo006(catalog, "dgx-a100", nvidia_smi_nvlink_s=(NVLINK_S_CUT, cut),
                   nvidia_smi_topo_m=(two, (REPO / two).read_text(encoding="utf-8")))
    assert f.message.startswith("2 GPU(s) seen, the profile has 8")
    eight = TOPO_M + "topo-a100-sxm4-80g-nv12-8nic-roce-01.txt"
    assert _topo006(catalog, "dgx-a100", nvidia_smi_nvlink_s=(NVLINK_S_CUT, cut),
                    nvidia_smi_topo_m=(eight, (REPO / eight).read_text(encoding="utf-8"))) == []


# --- Grace-based nodes (GB200, GH200) and topo -m without NICs ------------------------------------

GB200_TOPO = TOPO_M + "topo-gb200-4gpu-nv18-8nic-all-sys-01.txt"
GB200_NVLINK_S = "fixtures/nvidia_smi_nvlink_s/nvlink-s-gb200-18links-53gbs-elided-01.txt"


def with_profile(catalog, code, profile_name, **files):
    from topodiag.pipeline import named_profile

    inputs, items = {}, []
    for source, rel in files.items():
        parsed = parsers.get(source).parse(parsers.blank_provenance_header((REPO / rel).read_text(encoding="utf-8")))
        inputs[source] = parsed
        items.append(ParsedInput(source, rel, parsed))
    inputs["topology"] = build(items)
    inputs["profile"] = named_profile(profile_name) if profile_name else None
    outcome = run(catalog, inputs, select=code)
    assert not outcome.crashes, outcome.crashes
    return [f for f in outcome.findings if f.code == code]


def test_gb200_all_sys_nics_without_a_model_is_grace_by_inference(catalog):
    """topo -m alone names no GPU model, but the GPUs carry their own NUMA ids (2, 10, 18, 26: GPU memory
    nodes, as on Grace) and every GPU-NIC cell is SYS: a Grace-based node, inferred (issue 27): info."""
    found = topo(catalog, "TOPO003", "topo-gb200-4gpu-nv18-8nic-all-sys-01")
    assert [str(f.severity) for f in found] == ["info"]
    assert "Grace, inferred from the GPUs' own NUMA ids" in found[0].message


def test_gb200_named_by_nvlink_s_is_info_by_design(catalog):
    found = findings(catalog, "TOPO003", nvidia_smi_topo_m=GB200_TOPO, nvidia_smi_nvlink_s=GB200_NVLINK_S)
    assert len(found) == 1 and str(found[0].severity) == "info"
    f = found[0]
    assert f.subjects[:4] == ("gpu:0", "gpu:1", "gpu:2", "gpu:3") or list(f.subjects[:4]) == ["gpu:0", "gpu:1", "gpu:2", "gpu:3"]
    assert "Grace-based node (NVIDIA GB200)" in f.message and "NVLink-C2C" in f.message
    assert "8 NIC(s) on the node" in f.message and "at SYS" in f.message


def test_gb200_profile_alone_makes_it_info(catalog):
    found = with_profile(catalog, "TOPO003", "gb200-nvl", nvidia_smi_topo_m=GB200_TOPO)
    assert [str(f.severity) for f in found] == ["info"]
    assert "gb200-nvl" in found[0].expectation


def test_grace_names():
    from topodiag import knowledge

    for name in ("NVIDIA GB200", "NVIDIA GH200 480GB", "NVIDIA GH200 144G HBM3e", "NVIDIA Grace Hopper", "GB300"):
        assert knowledge.is_grace(name), name
    for name in ("NVIDIA B200", "NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"):
        assert not knowledge.is_grace(name), name
    assert knowledge.gpu_facts("NVIDIA GH200 480GB").model == "GH200"


def test_topo_m_without_nics_where_the_profile_has_eight(catalog):
    rel = TOPO_M + "topo-h200-8gpu-nv18-no-nic-docker-vm-01.txt"
    found = with_profile(catalog, "TOPO007", "hgx-h200", nvidia_smi_topo_m=rel)
    assert len(found) == 1 and str(found[0].severity) == "warning"
    assert "8 GPU(s) and no NIC" in found[0].message and "expects 8 compute NICs" in found[0].message
    assert not with_profile(catalog, "TOPO007", None, nvidia_smi_topo_m=rel)  # no profile: not judged
    assert not with_profile(catalog, "TOPO007", "pcie-8gpu", nvidia_smi_topo_m=rel)  # profile without NICs
    # the HGX H100 matrix with its 8 NICs: nothing
    assert not with_profile(catalog, "TOPO007", "dgx-h100",
                            nvidia_smi_topo_m=TOPO_M + "topo-h100-hgx-nv18-8nic-pix-gpunumaid-01.txt")


# Issue 16: cells the topo -m parser accepts (CELL_RE: X, NV<n>, any 2-5 character upper-case word) but
# that are no path class. TOPO001 crashed on them (ValueError from knowledge.path_nominal_gbyte_s).
ODD_CELLS = ["N18", "NV", "SY", "XX", "PHBX", "A1", "NVL", "NV0", "NV00", "NV999", "SOC"]


def _odd_matrix(cell: str, others: str, nic: bool) -> str:
    names = ["GPU0", "GPU1", "GPU2", "GPU3"] + (["NIC0"] if nic else [])
    cells = {(a, b): "X" if a == b else others for a in names for b in names}
    cells[("GPU0", "GPU1")] = cells[("GPU1", "GPU0")] = cell
    if nic:
        for g in names[:4]:
            cells[(g, "NIC0")] = cells[("NIC0", g)] = cell
    text = "\t" + "\t".join(names) + "\tCPU Affinity\tNUMA Affinity\n"
    for a in names:
        text += a + "\t" + "\t".join(cells[(a, b)] for b in names) + ("\t0-15\t0\n" if a.startswith("GPU") else "\n")
    return text + ("\nNIC Legend:\n\n  NIC0: mlx5_0\n" if nic else "")


@pytest.mark.parametrize("nic", [False, True])
@pytest.mark.parametrize("others", ["NV12", "SYS", "PIX"])
@pytest.mark.parametrize("cell", ODD_CELLS)
def test_odd_cells_the_parser_accepts_crash_no_rule(catalog, cell, others, nic):
    parsed = parsers.get("nvidia_smi_topo_m").parse(_odd_matrix(cell, others, nic))
    inputs = {"nvidia_smi_topo_m": parsed,
              "topology": build([ParsedInput("nvidia_smi_topo_m", "odd.txt", parsed)])}
    outcome = run(catalog, inputs, select="TOPO")
    assert not outcome.crashes, outcome.crashes
    if cell not in ("NV0", "NV00", "NV999", "SOC"):  # no path class: never named as one
        assert all(f"is {cell} " not in f.message and f"at {cell}" not in f.message for f in outcome.findings)


def test_odd_cell_is_not_judged_as_the_slowest_pair(catalog):
    parsed = parsers.get("nvidia_smi_topo_m").parse(_odd_matrix("N18", "NV12", False))
    inputs = {"nvidia_smi_topo_m": parsed, "topology": build([ParsedInput("nvidia_smi_topo_m", "odd.txt", parsed)])}
    outcome = run(catalog, inputs, select="TOPO001")
    assert not outcome.crashes and [f for f in outcome.findings if f.code == "TOPO001"] == []
