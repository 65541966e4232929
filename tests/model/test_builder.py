"""The builder on real fixtures: facts checked by hand against the raw text of each file."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pytest

from topodiag.model import Topology, build
from topodiag.model.paths import topo_nvlink_count
from topodiag.parsers import blank_provenance_header, get
from topodiag.records import ParsedInput

FIX = Path(__file__).resolve().parents[2] / "fixtures"
H100_TOPO = "topo-h100-hgx-nv18-8nic-pix-gpunumaid-01.txt"
DGX1_TOPO = "topo-v100-dgx1-mlx5-legacy-01.txt"
H20_IBSTAT = "ibstat-cx7-ndr-400-ib-active-h20-01.txt"


def parsed(source: str, name: str) -> ParsedInput:
    path = FIX / source / name
    text = blank_provenance_header(path.read_bytes().decode("utf-8"))
    return ParsedInput(source, str(path), get(source).parse(text))


def from_text(source: str, text: str) -> ParsedInput:
    return ParsedInput(source, "inline.txt", get(source).parse(text))


@pytest.fixture(scope="module")
def h100() -> Topology:
    return build([parsed("nvidia_smi_topo_m", H100_TOPO)])


@pytest.fixture(scope="module")
def dgx1() -> Topology:
    return build([parsed("nvidia_smi_topo_m", DGX1_TOPO)])


# -- nvidia-smi topo -m -----------------------------------------------------------------------

def test_h100_hgx_matrix(h100):
    assert h100.gpus() == [f"gpu:{i}" for i in range(8)]
    assert h100.nics() == [f"nic:mlx5_{i}" for i in range(8)]  # joined through the NIC Legend
    pairs = h100.gpu_pairs()
    assert len(pairs) == 28 and {c for _, _, c in pairs} == {"NV18"}
    assert h100.pair("gpu:0", "gpu:7")["link_count"] == 18
    for i in range(8):  # 1:1 rails, GPUi-NICi PIX
        assert h100.nearest_nic(f"gpu:{i}") == (f"nic:mlx5_{i}", "PIX")
        assert h100.numa_of(f"gpu:{i}") == (0 if i < 4 else 1)
    assert h100.pair_class("nic:mlx5_0", "nic:mlx5_3") == "NODE"
    assert h100.pair_class("nic:mlx5_0", "nic:mlx5_4") == "SYS"
    assert h100.node("numa:1")["cpu_affinity"] == "48-95,144-191"
    assert h100.resolve("GPU5") == "gpu:5" and h100.resolve("NIC6") == "nic:mlx5_6"
    src = h100.pair("gpu:0", "gpu:1")["sources"][0]
    assert src["source"] == "nvidia_smi_topo_m" and src["file"].endswith(H100_TOPO) and src["line_no"] == 9
    assert [topo_nvlink_count(h100, g) for g in h100.gpus()] == [18] * 8  # switched: not 7 x 18
    assert h100.conflicts() == []


def test_dgx1_hybrid_cube_mesh(dgx1):
    assert dgx1.nics() == ["nic:mlx5_0"]  # a column named mlx5_0, no legend
    cls = {(a, b): c for a, b, c in dgx1.gpu_pairs()}
    assert [cls[("gpu:0", f"gpu:{j}")] for j in range(1, 8)] == ["NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS"]
    assert cls[("gpu:4", "gpu:7")] == "NV2" and cls[("gpu:3", "gpu:7")] == "NV1" and cls[("gpu:1", "gpu:4")] == "SYS"
    for g in dgx1.gpus():  # 4 NVLink peers each, 2 x NV1 + 2 x NV2 = 6 links
        peers = [p for a, b, c in dgx1.gpu_pairs() if g in (a, b) and c.startswith("NV") for p in (a, b) if p != g]
        assert len(peers) == 4
        assert topo_nvlink_count(dgx1, g) == 6
    nearest = [dgx1.nearest_nic(g)[1] for g in dgx1.gpus()]
    assert nearest == ["NODE", "NODE", "PIX", "PIX", "SYS", "SYS", "SYS", "SYS"]
    assert dgx1.node("gpu:4")["cpu_affinity"] == "12-23,36-47"
    assert dgx1.numa_of("gpu:0") is None  # this driver prints no NUMA Affinity column


# -- nvidia-smi nvlink -s ---------------------------------------------------------------------

def test_nvlink_elided_output_is_no_conflict():
    t = build([parsed("nvidia_smi_topo_m", H100_TOPO),
               parsed("nvidia_smi_nvlink_s", "nvlink-status-h100-elided-short-01.txt")])
    g0 = t.node("gpu:0")
    assert g0["model"] == "NVIDIA H100 80GB HBM3" and g0["name"] == "GPU0"
    assert [ln["link"] for ln in t.nvlinks("gpu:0")] == [0, 17]
    assert g0["nvlink"]["truncated"] and g0["nvlink"]["speeds_gbps"] == [26.562]
    assert t.nvlinks("gpu:1") == []
    assert t.conflicts() == []  # two links shown of an elided list say nothing about the count


def test_topo_nv18_vs_12_active_links_is_a_conflict():
    lines = ["GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)"]
    lines += [f"\t Link {i}: 26.562 GB/s" for i in range(12)]
    lines += [f"\t Link {i}: <inactive>" for i in range(12, 18)]
    t = build([from_text("nvidia_smi_nvlink_s", "\n".join(lines) + "\n"),
               parsed("nvidia_smi_topo_m", H100_TOPO)])  # merge order does not depend on argument order
    [c] = t.conflicts()
    assert c["subject"] == "gpu:0" and c["field"] == "nvlink_count"
    assert [v["value"] for v in c["values"]] == [18, 12]
    assert [v["source"]["source"] for v in c["values"]] == ["nvidia_smi_topo_m", "nvidia_smi_nvlink_s"]
    assert t.pair_class("gpu:0", "gpu:1") == "NV18"  # the matrix is kept as printed
    assert t.node("gpu:0")["nvlink"]["active_count"] == 12


def test_v100_two_inactive_links_conflict_with_dgx1_matrix():
    t = build([parsed("nvidia_smi_topo_m", DGX1_TOPO),
               parsed("nvidia_smi_nvlink_s", "nvlink-s-v100-sxm2-2-inactive-links-01.txt")])
    links = t.nvlinks("gpu:3")
    assert [ln["link"] for ln in links if not ln["active"]] == [3, 5]
    assert {ln["speed_gbps"] for ln in links if ln["active"]} == {25.781}
    [c] = t.conflicts()
    assert c["subject"] == "gpu:3" and [v["value"] for v in c["values"]] == [6, 4]
    assert c["values"][0]["source"]["line_no"] == 12  # GPU3's row of the matrix
    assert c["values"][1]["source"]["line_no"] == 9  # the "GPU 3:" header of nvlink -s
    elided = t.observations("nvidia_smi_nvlink_s")
    assert elided and elided[0]["elided_gpu_indices"] == [0, 1, 2]


# -- InfiniBand -------------------------------------------------------------------------------

def test_ibstat_joins_topo_nics_by_device_name():
    t = build([parsed("nvidia_smi_topo_m", H100_TOPO), parsed("ibstat", H20_IBSTAT)])
    assert len(t.nics()) == 8  # no duplicate nodes
    nic = t.node("NIC0")
    assert nic["firmware"] == "28.43.2026" and nic["ca_type"] == "MT4129"
    assert {s["source"] for s in nic["sources"]} == {"nvidia_smi_topo_m", "ibstat"}
    ports = t.ib_ports()
    assert [n for n, _ in ports] == ["nic:mlx5_0", "nic:mlx5_1", "nic:mlx5_2"]  # the excerpt stops in mlx5_2
    p0 = ports[0][1]
    assert (p0["port"], p0["state"], p0["physical_state"], p0["rate_gbps"], p0["link_layer"]) == (
        1, "Active", "LinkUp", 400.0, "InfiniBand")
    assert p0["base_lid"] == 50 and p0["sources"][0]["line_no"] == 15
    assert t.nearest_nic("gpu:1") == ("nic:mlx5_1", "PIX")
    assert t.conflicts() == []


def test_ibstat_vs_ibv_devinfo_disagreement_is_kept():
    t = build([parsed("ibv_devinfo", "ibv_devinfo-cx7-ib-port-down-01.txt"), parsed("ibstat", H20_IBSTAT)])
    nic = t.node("nic:mlx5_0")
    assert nic["firmware"] == "28.43.2026"  # ibstat is merged first, whatever the argument order
    assert nic["hardware_version"] == "0x0"  # "0" and "0x0" are one value, no conflict
    found = {(c["subject"], c["field"]): [v["value"] for v in c["values"]] for c in t.conflicts()}
    assert found[("nic:mlx5_0", "firmware")] == ["28.43.2026", "28.39.2048"]
    assert found[("nic:mlx5_0 port 1", "state")] == ["Active", "Down"]
    assert not any(f.endswith("_raw") or f == "hardware_version" for _, f in found)
    port = dict(t.ib_ports())["nic:mlx5_0"]
    assert port["state"] == "Active" and port["active_mtu"] == 4096  # ibv_devinfo adds what ibstat lacks
    assert [s["source"] for s in port["sources"]] == ["ibstat", "ibv_devinfo"]


# -- NCCL topology XML ------------------------------------------------------------------------

def test_nccl_xml_pci_tree_and_numa():
    t = build([parsed("nccl_topo_xml", "nccl-topo-dump-a100pcie-2gpu-roce-nccl2.30-01.xml")])
    assert t.gpus() == ["gpu:0", "gpu:1"] and t.nics() == ["nic:mlx5_0", "nic:mlx5_1"]
    assert t.resolve("0000:69:00.0") == "gpu:0" and t.resolve("0000:b1:00.0") == "gpu:1"
    assert t.numa_of("gpu:0") == 0 and t.numa_of("gpu:1") == 1 and t.numa_of("nic:mlx5_1") == 0
    assert t.edge("gpu:1", "cpu:1", "pci")["pcie_link_width"] == 16
    assert t.edge("nic:mlx5_0", "cpu:0", "pci")["pcie_link_gts"] == 16.0
    assert t.node("cpu:0")["cpu_affinity"] == t.node("numa:0")["cpu_affinity"]
    assert t.node("nic:mlx5_1")["net_port"] == 2 and t.node("nic:mlx5_0")["gdr"] == 0
    assert t.node("gpu:0")["gdr"] == 1 and t.node("gpu:0")["sm"] == 80


def test_nccl_xml_nvswitch_aggregate():
    t = build([parsed("nccl_topo_xml", "nccl-topo-invented-h200-vm-closed-paste-01.xml")])
    [(peer, data)] = t.nvlink_edges("gpu:0")
    assert peer == "nvswitch:fffffff:ff:ff.0" and data["link_count"] == 18 and "nominal_gbps" not in data
    assert t.node(peer)["kind"] == "nvswitch"


def test_nccl_xml_static_file_gpus_by_busid():
    t = build([parsed("nccl_topo_xml", "nccl-topo-xml-aws-p4d-24xl-static-01.xml")])
    assert len(t.gpus()) == 8 and all(g.startswith("gpu:0000:") for g in t.gpus())
    assert len(t.nodes("pcisw")) == 4
    assert t.edge("gpu:0000:10:1c.0", "pcisw:ffff:ff:01.0", "pci") is not None


# -- NCCL logs and nccl-tests -----------------------------------------------------------------

def test_nccl_observations_on_the_host():
    t = build([parsed("nccl_debug", "nccl-ib-gdrdma-p2p-direct-2node-01.log"),
               parsed("nccl_tests", "nccltests-allreduce-h100-2node-2gpu-147busbw-01.txt")], host="nodea")
    assert t.host() == "host:nodea"
    [log] = t.observations("nccl_debug")
    assert log["gdr"] is True and log["hosts"] == ["nodea", "nodeb"]
    assert log["transports"]["NET/IB/GDRDMA"] == 2 and "P2P/direct pointer" in log["transports"]
    [res] = t.observations("nccl_tests")
    assert res["avg_busbw_gbps"] == 48.0299 and res["peak_busbw_gbps"] == 147.98
    assert res["largest"]["size_bytes"] == 8589934592 and res["largest"]["line_no"] == 51


# -- the whole -------------------------------------------------------------------------------

def test_built_topology_round_trips_through_json():
    inputs = [parsed("nvidia_smi_topo_m", DGX1_TOPO),
              parsed("nvidia_smi_nvlink_s", "nvlink-s-v100-sxm2-2-inactive-links-01.txt"),
              parsed("ibstat", H20_IBSTAT),
              parsed("nccl_tests", "nccltests-allreduce-h100-2node-2gpu-147busbw-01.txt")]
    t = build(inputs)
    data = json.loads(json.dumps(t.to_json()))
    back = Topology.from_json(data)
    assert back.to_json() == data
    assert back.conflicts() == t.conflicts() and back.nearest_nic("gpu:2") == ("nic:mlx5_0", "PIX")
    assert build(list(reversed(inputs))).to_json() == t.to_json()


def test_unknown_source_is_noted():
    t = build([ParsedInput("show_gids", "gids.txt", object())])
    assert any("show_gids" in n for n in t.notes)


def test_nccl_xml_derives_path_classes_where_topo_m_is_absent():
    t = build([parsed("nccl_topo_xml", "nccl-topo-dump-a100pcie-2gpu-roce-nccl2.30-01.xml")])
    # GPU0 (0000:69) and the NIC (0000:16) hang off CPU 0; GPU1 (0000:b1) off CPU 1; no <nvlink>.
    assert t.nearest_nic("gpu:0") == ("nic:mlx5_0", "PHB") and t.pair("gpu:0", "nic:mlx5_0")["derived"]
    assert t.nearest_nic("gpu:1") == ("nic:mlx5_0", "SYS")
    assert t.gpu_pairs() == [("gpu:0", "gpu:1", "SYS")]


def test_nccl_xml_static_file_gives_no_gpu_pair_classes():
    t = build([parsed("nccl_topo_xml", "nccl-topo-xml-aws-p4d-24xl-static-01.xml")])
    assert {c for _, _, c in t.gpu_pairs()} == {None}  # no <gpu> elements: NVLink unknown
    assert t.nearest_nic("gpu:0000:10:1c.0") == ("nic:0000:10:1b.0", "PIX")  # same (virtual) switch


def test_nccl_xml_cpu_with_unknown_numa_is_one_cpu_and_its_devices_are_phb():
    # a VM's dump: <cpu numaid="-1"> holds GPU0 (0000:05:00.0) and mlx5_0 (0000:0d:00.0), no switch
    t = build([parsed("nccl_topo_xml", "nccl-topo-invented-h200-vm-closed-paste-01.xml")])
    assert t.nodes("cpu") == ["cpu:numa-unknown"] and t.nodes("numa") == []
    assert t.node("cpu:numa-unknown")["numa_known"] is False and t.node("cpu:numa-unknown")["arch"] == "x86_64"
    assert t.edge("gpu:0", "cpu:numa-unknown", "pci")["pcie_link_gts"] == 16.0
    assert t.edge("nic:mlx5_0", "cpu:numa-unknown", "pci") is not None
    assert t.numa_of("gpu:0") is None
    assert t.nearest_nic("gpu:0") == ("nic:mlx5_0", "PHB") and t.pair("gpu:0", "nic:mlx5_0")["derived"]


def test_nccl_xml_two_cpus_of_unknown_numa_are_not_guessed_apart():
    t = build([from_text("nccl_topo_xml", UNKNOWN_NUMA_XML)])
    assert t.nodes("cpu") == [] and t.pair("gpu:0", "nic:mlx5_0") is None
    assert any("unknown numaid" in n for n in t.notes)
    # beside a known CPU, the one unknown CPU is another CPU: SYS across them
    mixed = build([from_text("nccl_topo_xml", UNKNOWN_NUMA_XML.replace('numaid="-1"', 'numaid="0"', 1))])
    assert mixed.nodes("cpu") == ["cpu:0", "cpu:numa-unknown"]
    assert mixed.nearest_nic("gpu:0") == ("nic:mlx5_0", "SYS")


UNKNOWN_NUMA_XML = """<system version="1">
  <cpu numaid="-1" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="207">
    <pci busid="0000:05:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="90" rank="0" gdr="1"/>
    </pci>
  </cpu>
  <cpu numaid="-1" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="207">
    <pci busid="0000:0d:00.0" class="0x020000" link_speed="16.0 GT/s PCIe" link_width="16">
      <nic>
        <net name="mlx5_0" dev="0" speed="400000" port="1" gdr="1"/>
      </nic>
    </pci>
  </cpu>
</system>
"""


SWITCHED_XML = """<system version="1">
  <cpu numaid="0" affinity="ffffffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:18:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:19:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="90" rank="0" gdr="1">
          <nvlink target="0000:05:00.0" count="9" tclass="0x068000"/>
          <nvlink target="0000:06:00.0" count="9" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:1a:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="1" sm="90" rank="1" gdr="1">
          <nvlink target="0000:05:00.0" count="9" tclass="0x068000"/>
          <nvlink target="0000:06:00.0" count="9" tclass="0x068000"/>
        </gpu>
      </pci>
    </pci>
  </cpu>
</system>
"""


def test_nccl_xml_nvswitch_pair_and_topo_m_class_stands():
    t = build([from_text("nccl_topo_xml", SWITCHED_XML)])
    assert t.pair_class("gpu:0", "gpu:1") == "NV18"  # 9 + 9 links through the two shared switches
    assert t.nodes("nvswitch") == ["nvswitch:0000:05:00.0", "nvswitch:0000:06:00.0"]
    assert t.edge("gpu:1", "pcisw:0000:18:00.0", "pci")["pcie_link_gts"] == 32.0
    both = build([from_text("nccl_topo_xml", SWITCHED_XML), parsed("nvidia_smi_topo_m", H100_TOPO)])
    data = both.pair("gpu:0", "gpu:1")
    assert data["class"] == "NV18" and "derived" not in data  # the matrix is merged first and wins
    assert both.resolve("0000:1a:00.0") == "gpu:1" and both.node("gpu:1")["cuda_dev"] == 1


def test_b300_eleven_cas_in_natural_order():
    t = build([parsed("ibstat", "ibstat-b300-cx8-disabled-cx7-100g-11ca-01.txt")])
    assert t.nics() == [f"nic:mlx5_{i}" for i in range(11)]  # mlx5_10 last, not after mlx5_1
    states = {nic: (p["state"], p["physical_state"], p["rate_gbps"]) for nic, p in t.ib_ports()}
    for i in (0, 1, 6, 7, 8, 9, 10):  # ConnectX-8: not linked
        assert states[f"nic:mlx5_{i}"] == ("Down", "Disabled", 10.0)
    for i in (2, 3, 4, 5):  # ConnectX-7 at 100
        assert states[f"nic:mlx5_{i}"] == ("Active", "LinkUp", 100.0)
