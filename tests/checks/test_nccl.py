"""NCCL001-NCCL005 over the corpus logs: hand-checked verdicts, severities, reasons and line numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from topodiag import parsers
from topodiag.checks import nccl
from topodiag.engine import Severity
from topodiag.model import build
from topodiag.records import ParsedInput

from .wording import worded as said

REPO = Path(__file__).resolve().parents[2]
DEBUG = REPO / "fixtures" / "nccl_debug"
TOPO_A100_8NIC = "fixtures/nvidia_smi_topo_m/topo-a100-sxm4-80g-nv12-8nic-roce-01.txt"


def parse(name: str, text: str | None = None):
    raw = text if text is not None else (DEBUG / name).read_text(encoding="utf-8", errors="replace")
    return parsers.get("nccl_debug").parse(parsers.blank_provenance_header(raw))


def hits(result) -> list:
    if result is None:
        return []
    return [result] if hasattr(result, "values") and not hasattr(result, "__next__") else list(result)


def topology(**sources: str):
    items = []
    for source, path in sources.items():
        text = (REPO / path).read_text(encoding="utf-8") if path.startswith("fixtures/") else path
        items.append(ParsedInput(source, path if path.startswith("fixtures/") else None,
                                 parsers.get(source).parse(parsers.blank_provenance_header(text))))
    return build(items)


# -- NCCL001 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    "nccl-socket-fallback-ib-no-device-channels-01.log",
    "nccl-socket-ring-2.5-01.log",
    "nccl-socket-fallback-aws-noib-02-rings.log",
    "nccl-shm-plus-socket-2node-01.log",
    "nccl-socket-forced-netsocket-2.11-01.log",
])
def test_socket_without_a_forcing_env_is_an_error(name):
    """Each of these logs proves the job spans nodes (connections via NET/Socket, or two hosts)."""
    [h] = hits(nccl.nccl001(parse(name)))
    assert h.severity is None  # the rule's default: error


def test_socket_on_a_log_that_does_not_show_the_nodes_is_a_warning():
    """The Azure VM excerpt: one host, no nNodes line, no connection line: sockets may have carried
    nothing (a single-node job), so not an error; the message says what is missing."""
    [h] = hits(nccl.nccl001(parse("nccl-socket-azure-vm-2.17-01.log")))
    assert h.severity is Severity.WARNING and "nodes_unknown" in h.notes


def test_socket_in_a_single_node_communicator_is_info():
    text = ("n1:1:1 [0] NCCL INFO NET/IB : No device found.\n"
            "n1:1:1 [0] NCCL INFO Failed to initialize NET plugin IB\n"
            "n1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
            "n1:1:1 [0] NCCL INFO Initialized NET plugin Socket\n"
            "n1:1:1 [0] NCCL INFO Assigned NET plugin Socket to comm\n"
            "n1:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n"
            "n1:1:2 [1] NCCL INFO comm 0x2 rank 1 nRanks 2 nNodes 1 localRanks 2 localRank 1 MNNVL 0\n")
    r = parse("", text)
    assert r.nnodes == 1 and r.net_plugins_failed == ("IB",) and r.net_plugin_assigned == "Socket"
    [h] = hits(nccl.nccl001(r))
    assert h.severity is Severity.INFO and h.variant == "using_socket" and "single_node" in h.notes
    text = said("NCCL001", h)
    assert "Assigned NET plugin Socket to comm" in text and "Failed to initialize NET plugin IB" in text
    assert "NCCL reports nNodes 1" in text


def test_socket_device_list_without_using_network_line():
    """NCCL 2.4-era: 'NET/IB : No device found.' then 'NET/Socket : Using', no 'Using network' line."""
    text = ("a:1:1 [0] NCCL INFO NET/IB : No device found.\n"
            "a:1:1 [0] NCCL INFO NET/Socket : Using [0]ib0:10.1.0.1<0>\n"
            "b:2:2 [0] NCCL INFO NET/Socket : Using [0]ib0:10.1.0.2<0>\n")
    [h] = hits(nccl.nccl001(parse("", text)))
    assert h.variant == "socket_device" and h.severity is None  # two hosts: an error
    assert "ipoib" in h.notes and "IPoIB" in said("NCCL001", h) and "ib0" in said("NCCL001", h)


def test_nccl_23_internal_network_socket():
    text = ("a:1:1 [0] NCCL INFO NET : Using interface eth0:10.0.0.1<0>\n"
            "a:1:1 [0] NCCL INFO NET/Socket : 1 interfaces found\n"
            "a:1:1 [0] NCCL INFO Using internal Network Socket\n"
            "a:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 4 cudaDev 0 nvmlDev 0 - Init COMPLETE\n")
    r = parse("", text)
    assert r.network == "Socket"
    [h] = hits(nccl.nccl001(r))
    assert h.variant == "using_socket" and h.severity is Severity.WARNING  # 4 ranks, 1 GPU seen: nodes unknown


def test_a_backquoted_prefix_names_the_host_without_the_quote():
    r = parse("", "`gpu7:1:2 [0] NCCL INFO Using network IB`\n")
    assert r.hosts == ("gpu7",)


def test_socket_counts_the_connection_lines():
    [h] = hits(nccl.nccl001(parse("nccl-socket-fallback-aws-noib-02-rings.log")))
    assert "(10 connection line(s) via NET/Socket)" in said("NCCL001", h)
    assert len(h.subjects) == 8  # 15 hosts in the log, subjects capped at 8


@pytest.mark.parametrize("name", ["nccl-ib-disabled-socket-mpi-interleaved-01.log",
                                  "nccl-socket-loopback-topo-dump-01.log"])
def test_ib_disabled_by_the_user_is_reported_as_a_warning_with_the_variable(name):
    [h] = hits(nccl.nccl001(parse(name)))
    assert h.severity == Severity.WARNING
    assert "NCCL_IB_DISABLE=1" in said("NCCL001", h)


def test_printed_reason_is_passed_on():
    text = ("n1:1:1 [0] NCCL INFO NET/IB : No device found.\n"
            "n1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
            "n1:1:1 [0] NCCL INFO Using network Socket\n")
    [h] = hits(nccl.nccl001(parse("", text)))
    assert "No device found" in said("NCCL001", h) and h.severity is Severity.WARNING  # one host: nodes unknown


def test_nccl_net_socket_env_is_forced():
    text = ("n1:1:1 [0] NCCL INFO NCCL_NET set by environment to Socket\n"
            "n1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
            "n1:1:1 [0] NCCL INFO Using network Socket\n")
    result = parse("", text)
    if (parsers.base.to_jsonable(result)["env"] or {}).get("NCCL_NET") != "Socket":
        pytest.skip("the parser does not report NCCL_NET from this line")
    [h] = hits(nccl.nccl001(result))
    assert h.severity == Severity.WARNING and "NCCL_NET=Socket" in said("NCCL001", h)


@pytest.mark.parametrize("name", [
    "nccl-ib-gdrdma-p2p-direct-2node-01.log",
    "nccl-collnet-sharp-fallback-ib-gdrdma-01.log",
    "nccl-ofi-plugin-on-roce-fallback-ib-2.27-channels-01.log",
    "nccl-single-node-shm-no-p2p-01.log",
    "nccl-roce-macvlan-gid-2.13-01.log",
])
def test_ib_or_no_network_is_not_a_socket_fallback(name):
    assert hits(nccl.nccl001(parse(name))) == []


# -- NCCL002 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    "nccl-ib-gdrdma-p2p-direct-2node-01.log",          # NET/IB/0/GDRDMA
    "nccl-ib-roce-mixed-gdr-2.16-gather-01.log",       # GPU Direct RDMA Enabled
    "nccl-collnet-sharp-fallback-ib-gdrdma-01.log",    # NET/IBext_v8/GDRDMA
    "nccl-ib-single-hca-a100pcie-2.19-01.log",         # no evidence in the fragment
    "nccl-socket-loopback-topo-dump-01.log",           # GDR disabled for 'lo', but Socket, not IB
])
def test_gdr_on_or_unknown_gives_nothing(name):
    assert hits(nccl.nccl002(parse(name))) == []


def test_ib_connections_without_gdrdma():
    text = ("a:1:1 [0] NCCL INFO Using network IB\n"
            "a:1:2 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0\n"
            "a:1:2 [0] NCCL INFO Channel 01/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n")
    [h] = hits(nccl.nccl002(parse("", text)))
    assert "without GPUDirect RDMA: 1 connection line(s) via NET/IB without /GDRDMA" in said("NCCL002", h)
    assert "only on some" in said("NCCL002", h)


def test_gdr_split_by_rank_when_no_line_names_a_host():
    """nccl #897: two connection lines quoted bare; rank 9 sends via /GDRDMA, rank 2 receives without."""
    [h] = hits(nccl.nccl002(parse("nccl-gdrdma-one-node-only-bare-connection-lines-2node-01.log")))
    assert h.subjects == ("rank:2",) or list(h.subjects) == ["rank:2"]
    text = said("NCCL002", h)
    assert "GPUDirect RDMA for rank(s) 9 but not for rank(s) 2" in text and "nvidia_peermem" in text


def test_gdr_by_rank_needs_both_sides():
    """Every hostless rank without GDRDMA is the plain finding, not a split."""
    text = ("NCCL INFO 9[1a000] -> 2[6b000] [send] via NET/IB/0\n"
            "NCCL INFO 9[1a000] -> 2[6b000] [receive] via NET/IB/1\n")
    [h] = hits(nccl.nccl002(parse("", text)))
    assert h.variant != "some_ranks" and "2 connection line(s) via NET/IB without /GDRDMA" in said("NCCL002", h)


# -- NCCL003 -----------------------------------------------------------------------------------

def test_shm_without_topology_is_a_warning():
    [h] = hits(nccl.nccl003(parse("nccl-single-node-shm-no-p2p-01.log")))
    assert h.values["count"] == 11 and h.severity is None


def test_shm_on_an_nvlinked_node_is_an_error():
    topo = topology(nvidia_smi_topo_m=TOPO_A100_8NIC)
    [h] = hits(nccl.nccl003(parse("nccl-single-node-shm-no-p2p-01.log"), topology=topo))
    assert h.severity == Severity.ERROR
    assert "NV12" in said("NCCL003", h) and "28 NVLink pair(s)" in said("NCCL003", h)


@pytest.mark.parametrize("name", ["nccl-ofi-plugin-on-roce-fallback-ib-2.27-channels-01.log",
                                  "nccl-socket-fallback-ib-no-device-channels-01.log",
                                  "nccl-nvls-multinode-init-complete-01.log"])
def test_p2p_or_nvls_gives_nothing(name):
    assert hits(nccl.nccl003(parse(name))) == []


# -- NCCL004 -----------------------------------------------------------------------------------

def test_completion_error_4_names_status_vendor_code_and_lines():
    [h] = hits(nccl.nccl004(parse("nccl-warn-ib-completion-error4-h100-01.log")))
    assert h.values["what"] == "IB completion error" and h.values["count"] == 3
    assert h.values["lines"] == "7, 12, 17"
    assert "status 4 = IBV_WC_LOC_PROT_ERR" in said("NCCL004", h) and "vendor err 81" in said("NCCL004", h)
    assert [e.line_no for e in h.evidence] == [7, 12, 17]
    assert set(h.subjects) == {"host:H100-1", "host:H100-2", "host:H100-5"}


def test_a_count_of_the_listed_lines_says_so_when_the_log_has_more():
    """Past the errors list's cap (MAX_LIST, the first by line), the count of a kind is of the lines
    listed: the message says how many the log has, so "x200" is not read as all of them."""
    from topodiag.parsers.nccl_debug import MAX_LIST

    one = parsers.blank_provenance_header((DEBUG / "nccl-warn-ib-completion-error4-h100-01.log").read_text(
        encoding="utf-8", errors="replace"))  # three completion errors
    [h] = hits(nccl.nccl004(parse("", one * 100)))
    assert (h.values["count"], h.values["listed"], h.values["total"]) == (MAX_LIST, MAX_LIST, 300)
    assert f"(x{MAX_LIST} of the first {MAX_LIST} error lines, which are listed; the log has 300)" in said("NCCL004", h)
    [h] = hits(nccl.nccl004(parse("", one)))
    assert h.values["count"] == 3 and "the log has" not in said("NCCL004", h)


def test_completion_status_12_is_retry_exceeded():
    [h] = hits(nccl.nccl004(parse("nccl-warn-ib-completion-error-ipv6gid-01.log")))
    assert "IBV_WC_RETRY_EXC_ERR" in said("NCCL004", h) and "vendor err 129" in said("NCCL004", h)


def test_watchdog_timeouts_are_errors_by_kind():
    found = {h.values["what"]: h for h in hits(nccl.nccl004(parse("nccl-pytorch-watchdog-timeout-allreduce-01.log")))}
    timeout = found["collective timeout (PyTorch watchdog)"]
    assert timeout.values["lines"] == "7, 8" and timeout.severity is None
    assert "SeqNum=1580" in said("NCCL004", timeout)


def test_plain_warn_lines_are_warnings():
    [h] = hits(nccl.nccl004(parse("nccl-collnet-sharp-fallback-ib-gdrdma-01.log")))
    assert h.severity == Severity.WARNING and h.values["count"] == 8
    assert h.values["lines"].startswith("165, 169, 177")


@pytest.mark.parametrize("name", ["nccl-nvls-multinode-init-complete-01.log", "nccl-ib-gdrdma-p2p-direct-2node-01.log",
                                  "nccl-socket-ring-2.5-01.log"])
def test_clean_logs_give_nothing(name):
    assert hits(nccl.nccl004(parse(name))) == []


# -- NCCL005 -----------------------------------------------------------------------------------

USING = ("nodea:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]mlx5_2:1/RoCE "
         "[3]mlx5_3:1/RoCE [4]mlx5_4:1/RoCE [5]mlx5_5:1/RoCE [6]mlx5_6:1/RoCE [7]mlx5_7:1/RoCE ; OOB eth0:10.0.0.1<0>\n")
PARAMS = {"far_classes": ["NODE", "SYS"]}


def _far(lines: str):
    log = parse("", USING + lines)
    return hits(nccl.nccl005(log, topology(nvidia_smi_topo_m=TOPO_A100_8NIC, nccl_debug=USING + lines), PARAMS))


def test_far_nic_named_with_path_and_the_better_nic():
    [h] = _far("nodea:1:2 [2] NCCL INFO Channel 00/0 : 2[2] -> 10[2] [send] via NET/IB/6/GDRDMA\n")
    assert h.subjects == ("gpu:2", "nic:mlx5_6")
    assert h.values["path"] == "SYS" and said("NCCL005", h).endswith("; mlx5_2 is at PXB")


def test_node_distance_is_far_too_and_pxb_is_fine():
    [h] = _far("nodea:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/2\n")
    assert h.values["path"] == "NODE"
    assert _far("nodea:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/1\n") == []


def test_without_net_device_names_nothing_is_paired():
    log = parse("nccl-ofi-plugin-on-roce-fallback-ib-2.27-channels-01.log")  # no "NET/IB : Using" line
    topo = topology(nvidia_smi_topo_m=TOPO_A100_8NIC)
    assert hits(nccl.nccl005(log, topo, PARAMS)) == []


# -- NCCL001: loopback and IB ports up ----------------------------------------------------------

def test_nccl001_socket_on_loopback():
    """nccl #1053 (corpus): NCCL_IB_DISABLE=1 and NET/Socket on lo:127.0.0.1 (one host in the log)."""
    [h] = hits(nccl.nccl001(parse("nccl-socket-loopback-topo-dump-01.log")))
    assert "loopback interface lo (127.0.0.1)" in said("NCCL001", h) and "NCCL_SOCKET_IFNAME" in said("NCCL001", h)
    assert h.severity == Severity.WARNING  # one host: multi-node is not shown to fail


def test_nccl001_says_the_ib_ports_were_up():
    """nccl-tests #188 (corpus, same user): ibstat shows mlx5_0 and mlx5_2 Active at HDR, and the job
    ran with NCCL_IB_DISABLE=1 over sockets."""
    topo = topology(ibstat="fixtures/ibstat/ibstat-cx6-hdr-one-port-disabled-01.txt")
    [h] = hits(nccl.nccl001(parse("nccl-ib-disabled-socket-mpi-interleaved-01.log"), topology=topo))
    assert "2 InfiniBand port(s) are Active on this host (mlx5_0 port 1, mlx5_2 port 1)" in said("NCCL001", h)
    assert h.severity == Severity.WARNING  # switched off on purpose, still reported


def test_nccl001_no_ib_line_in_the_log():
    [h] = hits(nccl.nccl001(parse("nccl-socket-forced-netsocket-2.11-01.log")))
    assert "; reason: no NET/IB line in this log" in said("NCCL001", h) and h.severity is None


# -- NCCL006 -----------------------------------------------------------------------------------

def test_nccl006_four_nics_for_the_gpus_of_an_h100_node():
    """nccl #1357 (corpus): NET/IB lists mlx5_0, mlx5_1, mlx5_4, mlx5_5; qh100-gpu19's lines carry
    CUDA devices [1] [2] [3] [6], so the node has at least 7 GPUs."""
    [h] = hits(nccl.nccl006(parse("nccl-ibext-sharp-plugin-load-h100-01.log"), {}))
    assert h.severity == Severity.INFO
    assert said("NCCL006", h).startswith("at least 7 GPUs per node (the log shows CUDA device [6] on qh100-gpu19) "
                                          "share 4 NIC(s) (mlx5_0, mlx5_1, mlx5_4, mlx5_5)")
    assert set(h.subjects) >= {"nic:mlx5_0", "nic:mlx5_1", "nic:mlx5_4", "nic:mlx5_5"}


def test_nccl006_with_the_rate_from_ibstat_and_hcas_left_out():
    """The single-HCA A100 log (NCCL_IB_HCA=mlx5_0) on a host whose ibstat shows mlx5_0 and mlx5_2
    Active at 200 Gb/s (HDR): mlx5_2 is left out (warning); 1 x 200 Gb/s = 25 GB/s for the node."""
    topo = topology(ibstat="fixtures/ibstat/ibstat-cx6-hdr-one-port-disabled-01.txt")
    [h] = hits(nccl.nccl006(parse("nccl-ib-single-hca-a100pcie-2.19-01.log"), {}, topology=topo))
    assert h.severity == Severity.WARNING
    assert "Active HCA port(s) NCCL does not use: mlx5_2 (NCCL_IB_HCA=mlx5_0 leaves them out)" in said("NCCL006", h)


def test_nccl006_gpu_count_from_the_topology():
    """The model counts the GPUs when it describes a host of the log (here: named testgpu1); a model
    of an unnamed host beside a two-host log does not (the log's device numbers count then)."""
    items = []
    for source, rel in (("nvidia_smi_topo_m", TOPO_A100_8NIC), ("ibstat", "fixtures/ibstat/ibstat-cx6-hdr-one-port-disabled-01.txt")):
        text = (REPO / rel).read_text(encoding="utf-8")
        items.append(ParsedInput(source, rel, parsers.get(source).parse(parsers.blank_provenance_header(text))))
    topo = build(items, host="testgpu1")
    [h] = hits(nccl.nccl006(parse("nccl-ib-single-hca-a100pcie-2.19-01.log"), {}, topology=topo))
    assert said("NCCL006", h).startswith("8 GPUs per node (GPUs in the topology) share 1 NIC(s) (mlx5_0): a node "
                                          "sends at most 1 x 200 Gb/s = 25 GB/s across the fabric, 3.1 GB/s per GPU")
    [h] = hits(nccl.nccl006(parse("nccl-ib-single-hca-a100pcie-2.19-01.log"), {}, topology=build(items)))
    assert said("NCCL006", h).startswith("at least 2 GPUs per node (the log shows CUDA device [1] on testgpu2)")


def test_nccl006_nothing_when_each_gpu_has_a_nic():
    assert hits(nccl.nccl006(parse("nccl-ofi-plugin-on-roce-fallback-ib-2.27-channels-01.log"), {})) == []


def test_nccl002_from_the_topology_dump_alone():
    """nccl #2397 (corpus): both nets of the ConnectX-6 Dx carry gdr="0"."""
    topo = topology(nccl_topo_xml="fixtures/nccl_topo_xml/nccl-topo-dump-a100pcie-2gpu-roce-nccl2.30-01.xml")
    [h] = hits(nccl.nccl002(topology=topo))
    assert h.subjects == ("nic:mlx5_0", "nic:mlx5_1") and "marks mlx5_0, mlx5_1 gdr=0" in said("NCCL002", h)
    topo = topology(nccl_topo_xml="fixtures/nccl_topo_xml/nccl-topo-xml-azure-ndv4-static-01.xml")
    assert hits(nccl.nccl002(topology=topo)) == []  # a static file says nothing of GDR


def test_a_failed_plugin_in_a_single_node_communicator_is_info():
    """SPCX and internal IB fail, sockets are used, but the communicator is one rank on one node
    (nNodes 1): the network carried nothing, so NCCL001 and NCCL007 are information."""
    from topodiag.checks import nccl_job

    text = ("b:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin SPCX (v12)\n"
            "b:1:1 [0] NCCL INFO NET/IB : No device found.\n"
            "b:1:1 [0] NCCL INFO Failed to initialize NET plugin SPCX\n"
            "b:1:1 [0] NCCL INFO Failed to initialize NET plugin IB\n"
            "b:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.56.0.6<0>\n"
            "b:1:1 [0] NCCL INFO Initialized NET plugin Socket\n"
            "b:1:1 [0] NCCL INFO Assigned NET plugin Socket to comm\n"
            "b:1:1 [0] NCCL INFO Using network Socket\n"
            "b:1:1 [0] NCCL INFO comm 0x59 rank 0 nRanks 1 nNodes 1 localRanks 1 localRank 0 MNNVL 0\n")
    r = parse("", text)
    assert r.net_plugins_failed == ("SPCX", "IB") and r.net_plugin == "SPCX"
    [h1] = hits(nccl.nccl001(r))
    [h7] = hits(nccl_job.nccl007(r))
    assert h1.severity is Severity.INFO and h7.severity is Severity.INFO
    assert "single_node" in h7.notes and "on_socket" in h7.notes and h7.values["plugin"] == "SPCX"


def test_ipoib_named_from_the_bootstrap_interface_when_no_socket_device_is_listed():
    # NVIDIA/nccl #952: connections via NET/Socket/0, the only interface named is the bootstrap's
    log = ("h:919:919 [0] NCCL INFO Bootstrap : Using ibp12s0:10.149.0.32<0>\n"
           "h:919:1150 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [receive] via NET/Socket/0\n")
    [h] = hits(nccl.nccl001(parse("", log)))
    assert "ipoib_bootstrap" in h.notes
    assert "bootstrapped on ibp12s0 (10.149.0.32), an IPoIB interface" in said("NCCL001", h)
    # an Ethernet bootstrap interface says nothing of IPoIB; a listed socket device wins over it
    [h] = hits(nccl.nccl001(parse("", log.replace("ibp12s0", "enp3s0"))))
    assert "IPoIB" not in said("NCCL001", h)
    listed = log + "h:919:1150 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
    [h] = hits(nccl.nccl001(parse("", listed)))
    assert "IPoIB" not in said("NCCL001", h)


@pytest.mark.parametrize("suffix,note,words", [
    ("(no module)", "no_module", "no peer-memory module is loaded"),          # NVIDIA/nccl #899
    ("(distance 7 > 4)", "too_far", "'distance 7 > 4'"),                      # NVIDIA/nccl #1151
])
def test_nccl002_says_the_cause_nccl_printed(suffix, note, words):
    log = (f"a:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' {suffix}\n"
           "a:1:2 [0] NCCL INFO Channel 00 : 0[1a000] -> 1[1a000] [receive] via NET/IB/0\n")
    [h] = hits(nccl.nccl002(parse("", log)))
    assert note in h.notes and words in said("NCCL002", h)
