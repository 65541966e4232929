"""NCCL009-NCCL012 and PERF005-PERF007: the edge cases the rule examples do not show."""

from __future__ import annotations

from pathlib import Path

import topodiag
from topodiag.checks import nccl_env as env_checks
from topodiag.checks import p2p_bench
from topodiag.parsers import nccl_diag, nccl_env, nvbandwidth

REPO = Path(__file__).resolve().parents[2]
B300 = REPO / "fixtures/ibstat/ibstat-b300-cx8-disabled-cx7-100g-11ca-01.txt"
MIXED = REPO / "fixtures/ibstat/ibstat-cx4lx-eth-25g-plus-cx6-hdr-ib-4ca-01.txt"


def found(tmp_path, env: str, *others: Path, name: str = "env.txt"):
    p = tmp_path / name
    p.write_text(env)
    d = topodiag.diagnose([str(p)] + [str(o) for o in others])
    return [(f.code, str(f.severity), f.message, list(f.subjects)) for f in d.findings if f.code.startswith("NCCL")]


def test_parse_list_reads_nccl_syntax():
    p = env_checks.parse_list("^=mlx5_0:1,mlx5_3")
    assert p["exclude"] and p["exact"] and p["items"] == [("mlx5_0", 1, "mlx5_0:1"), ("mlx5_3", None, "mlx5_3")]
    assert not p["problems"]
    assert env_checks.parse_list("=^mlx5_0")["problems"]  # '^' after '=' is part of the name
    assert env_checks.parse_list('"mlx5_0"')["problems"]


def test_exact_names_have_no_prefix_collision(tmp_path):
    assert not [f for f in found(tmp_path, "NCCL_IB_HCA==mlx5_1:1,mlx5_2:1\n", B300) if "prefix" in f[2]]
    hits = found(tmp_path, "NCCL_IB_HCA=mlx5_1:1,mlx5_2:1\n", B300)
    assert any("mlx5_1 also selects mlx5_10" in m for _, _, m, _ in hits)


def test_an_exclusion_by_prefix_also_excludes_the_longer_names(tmp_path):
    hits = found(tmp_path, "NCCL_IB_HCA=^mlx5_1\n", B300)
    assert any("mlx5_1 also excludes mlx5_10" in m and "nic:mlx5_10" in s for _, _, m, s in hits)


def test_ethernet_port_next_to_infiniband_and_a_missing_exclusion(tmp_path):
    hits = found(tmp_path, "NCCL_IB_HCA=mlx5_0,mlx5_2\n", MIXED)
    assert [(c, s) for c, s, m, _ in hits if "Ethernet" in m] == [("NCCL009", "warning")]
    hits = found(tmp_path, "NCCL_IB_HCA=^mlx5_7\n", MIXED)  # excludes nothing: the 25GbE port stays in
    assert sorted((c, s, "Ethernet" in m) for c, s, m, _ in hits) == [("NCCL009", "info", False),
                                                                     ("NCCL009", "warning", True)]


def test_socket_ifname_exclusions_pass_and_multi_node_logs_are_errors(tmp_path):
    assert not found(tmp_path, "NCCL_SOCKET_IFNAME=^lo,docker0\n")
    assert [(c, s) for c, s, _, _ in found(tmp_path, "NCCL_SOCKET_IFNAME==veth12ab\n")] == [("NCCL010", "warning")]
    log = ("a:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to lo\n"
           "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n")
    assert ("NCCL010", "error") in [(c, s) for c, s, _, _ in found(tmp_path, log, name="job.log")]


def test_switches_from_a_log_leave_p2p_and_ib_to_nccl003_and_nccl001(tmp_path):
    log = ("a:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n"
           "a:1:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1\n"
           "a:1:1 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1\n")
    codes = [(c, m.split(" ")[0]) for c, _, m, _ in found(tmp_path, log, name="job.log") if c == "NCCL011"]
    assert codes == [("NCCL011", "NCCL_SHM_DISABLE=1")]


def test_ib_disable_is_an_error_where_ib_is_active(tmp_path):
    hits = found(tmp_path, "NCCL_IB_DISABLE=1\n", MIXED)
    assert [(c, s) for c, s, _, _ in hits] == [("NCCL011", "error")]
    assert [(c, s) for c, s, _, _ in found(tmp_path, "NCCL_IB_DISABLE=1\n")] == [("NCCL011", "warning")]


def test_proto_exclusion_is_info():
    sev = env_checks._switch({"name": "NCCL_PROTO", "value": "^LL128", "source": "nccl_env", "line": 1}, None, None)
    assert env_checks._switch({"name": "NCCL_DEBUG", "value": "INFO", "source": "nccl_env", "line": 1}, None, None) == (None, None)
    assert sev == ("forced_proto", env_checks.Severity.INFO)


def test_diag_failure_without_nvml_uses_cuda_numbers_and_partial_alone_is_a_warning():
    r = nccl_diag.parse("h:1 NCCL DIAG [INFO] p2p: import failed srcRank=0 srcCudaDev=2 dstRank=1 dstCudaDev=6 "
                        "path=NVL handle=CUMEM_POSIX_FD reason=import; check\n")
    [h] = list(__import__("topodiag.checks.nccl_diag", fromlist=["x"]).nccl012(r))
    assert list(h.subjects[:2]) == ["gpu:2", "gpu:6"] and h.variant == "nvlink"


def test_perf007_needs_three_gpus_and_names_the_low_one():
    text = ("Running device_to_host_memcpy_ce.\nmemcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)\n"
            "  0 1 2 3\n0 26.7 26.5 9.1 26.6\n\nSUM device_to_host_memcpy_ce 88.9\n")
    [h] = list(p2p_bench.perf007(nvbandwidth.parse(text), {}))
    assert list(h.subjects) == ["gpu:2"] and h.values["ratio"] == "34%"
    two = "Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n 0 1\n0 26.0 9.0\n"
    assert list(p2p_bench.perf007(nvbandwidth.parse(two), {})) == []


def test_perf006_on_a_p2p_matrix():
    from topodiag.parsers import p2p_bandwidth_latency as p2p

    text = ("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\D 0 1 2\n"
            "  0 900.0 25.1 25.0\n  1 24.9 901.0 8.0\n  2 25.2 25.0 899.0\n")
    [h] = list(p2p_bench.perf006({}, p2p_bandwidth_latency=p2p.parse(text)))
    assert list(h.subjects) == ["gpu:1", "gpu:2"] and "1->2 8 vs 2->1 25" in h.values["pairs"]


def test_env_probe_of_a_host_without_nccl_variables_is_no_finding(tmp_path):
    assert not found(tmp_path, '{"probe": "nccl_env", "ok": true, "env": {}}\n', name="nccl_env.json")
    assert nccl_env.parse('{"probe": "nccl_env", "ok": true, "env": {}}').env == {}


def test_perf007_joins_lspci_by_the_bus_id_nvbandwidth_prints():
    from topodiag.parsers import lspci_vvv

    nv = nvbandwidth.parse(
        "nvbandwidth Version: v0.8\n"
        "Device 0: NVIDIA H100 80GB HBM3 (00000000:18:00)\nDevice 1: NVIDIA H100 80GB HBM3 (00000000:2a:00)\n"
        "Device 2: NVIDIA H100 80GB HBM3 (00000000:3a:00)\n\n"
        "Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
        "           0         1         2\n 0     55.10     27.40     55.20\n\nSUM host_to_device_memcpy_ce 137.70\n")
    pci = lspci_vvv.parse(
        "0000:2a:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
        "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n"
        "\t\tLnkSta:\tSpeed 32GT/s, Width x8 (downgraded)\n")
    [h] = list(p2p_bench.perf007(nv, {}, lspci_vvv=pci))
    assert list(h.subjects) == ["gpu:1", "pci:0000:2a:00.0"] and "link" in h.notes
    assert (h.values["width"], h.values["max_width"]) == (8, 16)
    [h] = list(p2p_bench.perf007(nv, {}))
    assert list(h.subjects) == ["gpu:1"] and not h.notes
