"""topodiag/knowledge/ as data (issue 27): every fact carries its source, the lookups the checks use,
the platform inference, and the profiles agreeing with knowledge. Expected values are written by hand
from the product briefs and measured threads the data files cite."""

from __future__ import annotations

import pytest

from topodiag import knowledge as k
from topodiag.knowledge import _data
from topodiag.knowledge.platform import Hints, infer
from topodiag.profiles import load_profiles

TABLES_WITH_ROWS = {"pcie": ["x16"], "nvlink": ["gen"], "gpus": ["gpu"], "ib": ["rate"], "hca": ["hca", "sku"],
                    "clouds": ["instance"]}


def test_every_data_file_is_shipped_and_read():
    assert _data.data_files() == ["busbw", "clouds", "gpus", "hca", "ib", "nvlink", "pcie", "xid"]


@pytest.mark.parametrize("name", sorted(TABLES_WITH_ROWS))
def test_every_row_names_its_source(name):
    data = _data.table(name)
    for key in TABLES_WITH_ROWS[name]:
        rows = data[key]
        assert rows, f"{name}.{key} is empty"
        missing = [r for r in rows if not str(r.get("source") or "").strip()]
        assert not missing, f"{name}.toml [[{key}]] rows without a source: {missing}"


@pytest.mark.parametrize("name, table", [
    ("pcie", "gts_to_gen"), ("nvlink", "ga102_bridge"), ("nvlink", "tolerance"), ("nvlink", "multinode_domain"),
    ("ib", "legacy_names"), ("ib", "measured"), ("ib", "tolerance"), ("busbw", "nvlink_ring"),
    ("busbw", "pcie_p2p"), ("busbw", "host_staged"), ("busbw", "plateau"), ("xid", "xid"), ("xid", "sxid"),
])
def test_every_table_names_its_source(name, table):
    assert str(_data.table(name)[table].get("source") or "").strip()


# ConnectX SKUs: part numbers and native rates from NVIDIA's adapter user manuals (ordering part numbers).
@pytest.mark.parametrize("board_id, part, native", [
    ("MT_0000000838", None, 400.0),        # MCX75310AAS-NEAT: NDR 400 (mlxup output ties PSID and part)
    (None, "MCX653105A-ECAT", 100.0),      # ConnectX-6 HDR100
    (None, "MCX353A-QCBT", 40.0),          # ConnectX-3 QDR
    (None, "MCX353A-FCBT", 56.0),          # ConnectX-3 FDR
    (None, "MCX75310AAS-HEAT", 200.0),     # ConnectX-7 NDR200
])
def test_hca_sku_by_psid_or_part(board_id, part, native):
    sku = k.hca_sku(board_id=board_id, part=part)
    assert sku is not None and sku.native_gbit_s == native


def test_hca_model_top_rates_and_lower_skus():
    assert k.hca_model("MT4123") == "ConnectX-6" and k.hca_top_gbit_s("MT4123") == 200.0
    assert k.hca_top_gbit_s("MT4125") is None  # ConnectX-6 Dx: Ethernet only
    assert k.hca_lower_skus("ConnectX-6") == (100.0,)
    assert k.hca_lower_skus("ConnectX-7") == (200.0,)
    assert k.hca_lower_skus("ConnectX-3") == (40.0,)
    assert k.hca_lower_skus("ConnectX-8") == ()
    assert k.hca_sku(board_id="MT_0000000223") is None  # a PSID the table does not tie to a part
    assert k.ib_rate_label(40) == "QDR/FDR10" and k.ib_rate_label(56) == "FDR" and k.ib_rate_label(400) == "NDR"


def test_pcie_busbw_expectations_per_generation_and_transport():
    # P2P: x16 one-way x 0.70 (Gen3 16 -> 11.2, Gen4 32 -> 22.4, Gen5 64 -> 44.8)
    assert k.pcie_busbw_gbyte_s(3) == pytest.approx(11.2)
    assert k.pcie_busbw_gbyte_s(4) == pytest.approx(22.4)
    assert k.pcie_busbw_gbyte_s(5) == pytest.approx(44.8)
    # host-staged: x 0.35 (Gen4 x16 -> 11.2); x8 halves it
    assert k.pcie_busbw_gbyte_s(4, staged=True) == pytest.approx(11.2)
    assert k.pcie_busbw_gbyte_s(4, 8, staged=True) == pytest.approx(5.6)
    assert k.pcie_busbw_gbyte_s(6) is None
    assert k.NVLINK_RING_EFFICIENCY == 0.77


def test_gpu_design_facts_consumer_and_bridged():
    assert k.gpu_facts("NVIDIA GeForce RTX 4090").gpudirect_rdma is False
    assert k.gpu_facts("NVIDIA GeForce RTX 5090").gpudirect_rdma is False
    assert k.gpu_facts("NVIDIA GeForce RTX 3090").gpudirect_rdma is False
    assert k.gpu_facts("NVIDIA RTX A6000").gpudirect_rdma is True
    assert k.gpu_facts("NVIDIA RTX 6000 Ada Generation").pcie_only
    assert k.gpu_facts("NVIDIA H100 NVL").pcie_only and k.gpu_facts("NVIDIA H100 NVL").nvlinks_accepted == (0, 12)
    assert not k.gpu_facts("NVIDIA H100 80GB HBM3").pcie_only
    assert all(f.source for f in k.GPU_MODELS.values())


def test_platform_from_the_gpu_model_and_layout():
    p = infer(Hints(gpu_models=("NVIDIA H100 80GB HBM3",), gpu_count=8, nic_count=8, nv_pairs=28))
    assert p.confidence == "high" and p.label.startswith("H100 SXM x8") and p.pcie_only is False
    p = infer(Hints(gpu_models=("NVIDIA RTX A6000",), gpu_count=3, nv_pairs=1, pcie_pairs=2))
    assert p.confidence == "high" and p.bridged and p.pcie_only


def test_platform_without_a_model():
    grace = infer(Hints(gpu_count=4, nic_count=8, nv_pairs=6, grace_numa=True, gpu_nic_all_sys=True))
    assert grace.grace and grace.confidence == "medium" and "GPU NUMA ids" in grace.words()
    pcie = infer(Hints(gpu_count=2, pcie_pairs=1, p2p_gns=True))
    assert pcie.pcie_only and pcie.gpudirect_rdma is False and "GNS" in pcie.words()
    # NUMA ids alone (an x86 host may print them) are not Grace: the GPU-NIC paths must all be SYS too
    assert not infer(Hints(gpu_count=8, nv_pairs=28, grace_numa=True, nic_count=8)).grace
    assert infer(Hints()).confidence == "none"


def test_platform_fits_a_published_cloud_layout():
    p = infer(Hints(gpu_models=("NVIDIA A100-SXM4-40GB",), gpu_count=8, nic_count=4, nv_pairs=28))
    assert p.cloud == "AWS p4d.24xlarge"
    p = infer(Hints(gpu_models=("NVIDIA H100 80GB HBM3",), gpu_count=8, nic_count=8, nv_pairs=28))
    assert p.cloud is None  # Azure ND H100 v5 and GCP a3-megagpu-8g both have 8 NICs: no single fit


def test_profiles_agree_with_knowledge():
    """A profile repeats what knowledge says of its GPU: link count and the printed link speed."""
    for prof in load_profiles().values():
        facts = k.gpu_facts(prof.match[0])
        if facts is None or facts.nvlink_generation is None:
            assert prof.nvlinks_per_gpu == 0 or facts is None, prof.name
            continue
        assert prof.nvlinks_per_gpu in facts.nvlinks_accepted, prof.name
        if prof.nvlink_speed_gbps is not None:
            assert k.nvlink_speed_ok(prof.nvlink_speed_gbps, facts.nvlink_generation), prof.name
        if prof.nic_rate_gbps is not None:
            assert k.ib_rate_name(prof.nic_rate_gbps) is not None, prof.name
