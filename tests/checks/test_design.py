"""The platform inferred from the hints real inputs carry (issue 27), and the verdict naming it.
Expected values read by hand from the fixtures' matrices and headers."""

from __future__ import annotations

import io

import topodiag
from topodiag import pipeline
from topodiag.checks._design import hints_of, platform_of

from .test_topo import REPO


def topology_of(*paths: str):
    return pipeline.build_topology(pipeline.load([str(REPO / p) for p in paths]))


def test_hints_of_a_real_hgx_h100_node():
    t = topology_of("fixtures/hosts/hgx-h100-healthy-assembled")
    h = hints_of(t)
    # 8 GPUs all NV18 (28 pairs), 8 ConnectX-7 NICs; the model from nvlink -s (topo -m prints none)
    assert (h.gpu_count, h.nv_pairs, h.pcie_pairs, h.nic_count) == (8, 28, 0, 8)
    assert h.gpu_model_source == "nvidia-smi nvlink -s" and set(h.hca_models) == {"ConnectX-7"}
    p = platform_of(t)
    assert p.confidence == "high" and p.label.startswith("H100 SXM x8") and not p.pcie_only


def test_grace_inferred_from_a_gb200_matrix_without_a_model():
    t = topology_of("fixtures/nvidia_smi_topo_m/topo-gb200-4gpu-nv18-8nic-all-sys-01.txt")
    h = hints_of(t)
    # GPU NUMA IDs 2, 10, 18, 26 and every GPU-NIC cell SYS
    assert h.gpu_models == () and h.grace_numa and h.gpu_nic_all_sys and h.nv_pairs == 6
    assert platform_of(t).grace and platform_of(t).confidence == "medium"


def test_an_x86_hgx_with_gpu_numa_column_is_not_grace():
    # HGX H100 topo -m with a "GPU NUMA ID" column of N/A and PIX NICs: not Grace
    t = topology_of("fixtures/nvidia_smi_topo_m/topo-h100-hgx-nv18-8nic-pix-gpunumaid-01.txt")
    assert not hints_of(t).grace_numa and not platform_of(t).grace


def test_consumer_board_from_topo_p2p_gns():
    t = topology_of("fixtures/hosts/rtx5090-workstation-no-p2p")
    h = hints_of(t)
    assert h.p2p_gns and h.pcie_pairs == 1 and h.nv_pairs == 0
    p = platform_of(t)
    assert p.pcie_only and p.gpudirect_rdma is False


def test_the_verdict_names_the_platform_its_hints_and_what_did_not_run():
    d = topodiag.diagnose([str(REPO / "fixtures/nvidia_smi_topo_m/topo-gb200-4gpu-nv18-8nic-all-sys-01.txt")])
    assert d.profile is None
    assert d.platform.startswith("Grace-based node") and "confidence medium" in d.platform
    assert "GPU NUMA ids (Grace GPU memory nodes)" in d.platform and "every GPU-NIC path SYS" in d.platform
    assert "no profile, so not judged: TOPO006" in d.platform and "TOPO007" in d.platform
    out = io.StringIO()
    d.render("text", out, width=200)
    assert "Platform: Grace-based node" in out.getvalue()


def test_two_gpus_per_node_in_nccl_tests_is_named_though_no_profile_fits():
    # 2 DGX nodes x 2 H100 per node ("# Rank" lines): no 8-GPU profile fits 2 GPUs, the platform is still named
    d = topodiag.diagnose([str(REPO / "fixtures/nccl_tests/nccltests-allreduce-h100-2node-2gpu-147busbw-01.txt")])
    assert d.profile is None
    assert d.platform.startswith("H100 SXM x2") and "an nccl-tests run's rank lines" in d.platform
    assert "no profile, so not judged: TOPO006" in d.platform


def test_gdr001_on_geforce_boards_is_info(tmp_path):
    """NCCL over IB, no peer-memory module, on a host whose GPUs refuse P2P (topo -p2p GNS: GeForce, no
    GPUDirect RDMA by design): GDR001 says so as info, never an error (issue 27). The same log and lsmod
    without the GeForce topology stay an error (tests/checks/test_fabric.py)."""
    lsmod = (REPO / "fixtures/peermem/lsmod-grep-peermem-absent-a100-nccl2.12-01.txt").read_text()
    log = "nodea:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>\nnodea:1:1 [0] NCCL INFO Using network IB\n"
    (tmp_path / "nccl.log").write_text(log)
    (tmp_path / "lsmod.txt").write_text(lsmod)
    paths = [str(tmp_path / "nccl.log"), str(tmp_path / "lsmod.txt"),
             str(REPO / "fixtures/hosts/rtx5090-workstation-no-p2p/commands/nvidia_smi_topo_m.txt"),
             str(REPO / "fixtures/hosts/rtx5090-workstation-no-p2p/commands/nvidia_smi_topo_p2p.txt")]
    d = topodiag.diagnose(paths)
    gdr = [f for f in d.findings if f.code == "GDR001"]
    assert [str(f.severity) for f in gdr] == ["info"] and "no GPUDirect RDMA by design" in gdr[0].message
