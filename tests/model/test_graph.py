"""The graph queries on real fixtures: nearest_nic, nvlink_domains, pci_path (networkx underneath)."""

from __future__ import annotations

from pathlib import Path

import pytest

from topodiag.load.gather import gather
from topodiag.model import Topology, build
from topodiag.model.topology import class_rank, source_ref

from .test_builder import DGX1_TOPO, FIX, H100_TOPO, SWITCHED_XML, from_text, parsed

P4D = "nccl-topo-xml-aws-p4d-24xl-static-01.xml"  # 4 virtual switches, each 2 GPUs + 1 NIC; 2 CPUs
A100_DUMP = "nccl-topo-dump-a100pcie-2gpu-roce-nccl2.30-01.xml"  # GPU0 and the NIC under CPU 0, GPU1 under CPU 1


def _loop_nearest_nic(t: Topology, gpu: str) -> tuple[str, str] | None:
    """nearest_nic as it was written before the graph: every NIC's pair class, strictly better wins."""
    gpu, best = t.resolve(gpu), None
    for nic in t.nics():
        cls = t.pair_class(gpu, nic)
        if cls is not None and (best is None or class_rank(cls) < best[0]):
            best = (class_rank(cls), nic, cls)
    return (best[1], best[2]) if best else None


def _fixture_targets() -> list[str]:
    hosts = sorted(str(p) for p in (FIX / "hosts").iterdir() if p.is_dir())
    files = sorted(str(p) for d in ("nvidia_smi_topo_m", "nccl_topo_xml", "nvml", "sysfs_infiniband")
                   for p in (FIX / d).iterdir() if p.is_file() and not p.name.endswith(".expected.json"))
    return hosts + files


@pytest.mark.parametrize("target", _fixture_targets(), ids=lambda p: Path(p).name)
def test_nearest_nic_is_what_the_pair_class_loop_gave(target):
    g = gather([target])
    t = build(g.parsed, host=g.host)
    for gpu in t.gpus():
        assert t.nearest_nic(gpu) == _loop_nearest_nic(t, gpu)


def test_nearest_nic_by_hand():
    h100 = build([parsed("nvidia_smi_topo_m", H100_TOPO)])
    assert [h100.nearest_nic(f"GPU{i}") for i in (0, 5)] == [("nic:mlx5_0", "PIX"), ("nic:mlx5_5", "PIX")]
    p4d = build([parsed("nccl_topo_xml", P4D)])
    assert p4d.nearest_nic("gpu:0000:90:1d.0") == ("nic:0000:90:1b.0", "PIX")  # GPU 5, NIC 2: switch 2
    dump = build([parsed("nccl_topo_xml", A100_DUMP)])
    assert dump.nearest_nic("gpu:1") == ("nic:mlx5_0", "SYS")  # two NICs equally far: the lower
    assert dump.nearest_nic("gpu:9") is None


# -- NVLink domains ------------------------------------------------------------------------------

def test_nvlink_domain_of_the_dgx1_cube_mesh():
    # NV1/NV2 pairs only, GPU0 not NVLinked to GPU5-7: still one domain through the mesh
    t = build([parsed("nvidia_smi_topo_m", DGX1_TOPO)])
    assert t.pair_class("gpu:0", "gpu:5") == "SYS"
    assert t.nvlink_domains() == [[f"gpu:{i}" for i in range(8)]]


@pytest.mark.parametrize("source,name", [
    ("nvidia_smi_topo_m", "topo-rtxa6000-3gpu-nv4-bridge-ansi-01.txt"),  # GPU0-GPU1 NV4, GPU2 SYS
    ("nvml", "nvml-invented-rtxa6000-3gpu-bridge-01.json"),             # the same rig through NVML
])
def test_nvlink_domain_of_a_bridged_pair(source, name):
    t = build([parsed(source, name)])
    assert len(t.gpus()) == 3 and t.nvlink_domains() == [["gpu:0", "gpu:1"]]


def test_nvlink_domains_through_nvswitches():
    assert build([parsed("nvml", "nvml-invented-h100-hgx-8gpu-nvswitch-01.json")]).nvlink_domains() == [
        [f"gpu:{i}" for i in range(8)]]
    assert build([from_text("nccl_topo_xml", SWITCHED_XML)]).nvlink_domains() == [["gpu:0", "gpu:1"]]
    vm = build([parsed("nccl_topo_xml", "nccl-topo-invented-h200-vm-closed-paste-01.xml")])
    assert vm.nvlink_domains() == [["gpu:0"]]  # 18 links into an NVSwitch, no peer in the file


@pytest.mark.parametrize("source,name", [
    ("nvidia_smi_topo_m", "topo-pcie-8gpu-all-sys-tabs-gpunumaid-01.txt"),
    ("nccl_topo_xml", P4D),  # a static file names no NVLinks
])
def test_no_nvlink_no_domain(source, name):
    t = build([parsed(source, name)])
    assert t.gpus() and t.nvlink_domains() == []


def test_nvlink_domains_split_and_zero_link_edges():
    t = Topology()
    ref = source_ref("nccl_topo_xml", "x.xml", None)
    for i in range(4):
        t.add_node(f"gpu:{i}", "gpu", ref, index=i)
    t.add_edge("gpu:3", "nvswitch:b", "nvlink", ref, link_count=18)
    t.add_edge("gpu:2", "nvswitch:b", "nvlink", ref, link_count=18)
    t.add_edge("gpu:0", "nvswitch:a", "nvlink", ref, link_count=18)
    t.add_edge("gpu:1", "nvswitch:a", "nvlink", ref, link_count=0)  # a link that counts none is none
    t.add_edge("gpu:0", "gpu:1", "path", ref, **{"class": "PIX"})
    assert t.nvlink_domains() == [["gpu:0"], ["gpu:2", "gpu:3"]]


# -- PCI paths -----------------------------------------------------------------------------------

def test_pci_path_in_the_p4d_tree():
    t = build([parsed("nccl_topo_xml", P4D)])
    gpu0, gpu1, gpu2, gpu4 = "gpu:0000:10:1c.0", "gpu:0000:10:1d.0", "gpu:0000:20:1c.0", "gpu:0000:90:1c.0"
    assert t.pci_path(gpu0, gpu1) == [gpu0, "pcisw:ffff:ff:01.0", gpu1]
    assert t.pci_path(gpu0, "nic:0000:10:1b.0") == [gpu0, "pcisw:ffff:ff:01.0", "nic:0000:10:1b.0"]
    assert t.pci_path(gpu0, gpu2) == [gpu0, "pcisw:ffff:ff:01.0", "cpu:0", "pcisw:ffff:ff:02.0", gpu2]
    assert t.pci_path(gpu0, gpu4) is None  # CPU 0 to CPU 1 is no PCI edge
    assert t.pci_path("0000:10:1c.0", "0000:10:1d.0") == [gpu0, "pcisw:ffff:ff:01.0", gpu1]  # bus ids
    assert t.pci_path(gpu0, gpu0) == [gpu0]


def test_pci_path_in_a_dump_and_where_there_is_no_tree():
    t = build([parsed("nccl_topo_xml", A100_DUMP)])
    assert t.pci_path("gpu:0", "nic:mlx5_1") == ["gpu:0", "cpu:0", "nic:mlx5_1"]
    assert t.pci_path("gpu:1", "nic:mlx5_0") is None and t.pci_path("gpu:0", "gpu:7") is None
    both = build([from_text("nccl_topo_xml", SWITCHED_XML), parsed("nvidia_smi_topo_m", H100_TOPO)])
    assert both.pci_path("GPU0", "GPU1") == ["gpu:0", "pcisw:0000:18:00.0", "gpu:1"]  # topo -m names
    assert build([parsed("nvidia_smi_topo_m", H100_TOPO)]).pci_path("gpu:0", "nic:mlx5_0") is None
