"""Hand-written checks of the facts each NCCL_DEBUG corpus file's `#@ expected:` line states,
plus edge cases (CRLF, tabs, ANSI, truncation, caps, other tools' output)."""

from __future__ import annotations

from pathlib import Path

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect
from topodiag.scan import chunks as _chunks
from topodiag.parsers import nccl_debug
from topodiag.parsers.nccl_debug import MAX_LIST, parse, parse_lines, sniff

ROOT = Path(__file__).resolve().parents[2]
FX = ROOT / "fixtures" / "nccl_debug"
# two corpus files are nccl-tests output with NCCL INFO lines: their fixture copies live under
# fixtures/nccl_tests (detection gives them to nccl_tests), the NCCL facts are checked here
FX_TESTS = ROOT / "fixtures" / "nccl_tests"


def load(name: str, folder: Path = FX):
    path = folder / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    return parse(blank_provenance_header(path.read_text(errors="replace")))


def test_ib_disabled_socket_mpi_interleaved() -> None:
    r = load("nccl-ib-disabled-socket-mpi-interleaved-01.log")
    assert r.env["NCCL_IB_DISABLE"] == "1"
    assert r.network == "Socket"
    assert [(d.name, d.kind, d.address) for d in r.net_devices] == [
        ("ibs85f0", "socket", "192.168.1.14"), ("ib0", "socket", "192.168.1.15")]
    assert r.net_plugin is None
    assert r.socket_fallback_reasons == ("NCCL_IB_DISABLE=1",)
    assert r.cuda_version == "12.2"  # cudaDriverVersion 12020, no banner
    assert r.nccl_lines == 12 and r.lines == 21  # the 3 OpenMPI help lines are not NCCL


def test_ib_gdrdma_p2p_direct_2node() -> None:
    r = load("nccl-ib-gdrdma-p2p-direct-2node-01.log")
    assert r.transports == {"NET/IB/GDRDMA": 2, "P2P/direct pointer": 10}
    assert r.gdr is True
    assert r.hosts == ("nodea", "nodeb")
    rank14 = next(x for x in r.ranks if x.rank == 14)
    assert (rank14.host, rank14.cuda_dev, rank14.bus_id) == ("nodeb", 6, "c9000")
    assert r.nranks == 16 and r.nranks_from == "max_rank"


def test_ib_mixed_roce_ring_25() -> None:
    r = load("nccl-ib-mixed-roce-ring-p2pipc-2.5-rankprefix-01.log")
    assert [(d.index, d.name, d.port, d.link_layer) for d in r.net_devices] == [
        (0, "mlx5_1", 1, "IB"), (1, "mlx5_3", 1, "IB"), (2, "mlx5_0", 1, "IB"),
        (3, "mlx5_2", 1, "RoCE"), (4, "mlx5_4", 1, "IB")]
    assert r.transports == {"P2P/IPC": 3}
    assert r.hosts == ("crow-ib-new-nccl-256-info-19",)  # the "[155] " MPI tag is not a host
    r155 = next(x for x in r.ranks if x.rank == 155)
    assert (r155.cuda_dev, r155.bus_id) == (3, "3d000")


def test_ib_single_hca_219() -> None:
    r = load("nccl-ib-single-hca-a100pcie-2.19-01.log")
    assert r.nccl_version == "2.19.3" and r.cuda_version == "12.3" and r.cuda_driver_version == "12.3"
    assert r.network == "IB"
    assert [(d.name, d.port, d.link_layer) for d in r.net_devices] == [("mlx5_0", 1, "IB")]
    assert r.env == {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "mlx5_0", "NCCL_IB_MERGE_VFS": "0"}
    assert r.gdr is None  # no GDR lines in this fragment


def test_ibext_sharp_plugin() -> None:
    r = load("nccl-ibext-sharp-plugin-load-h100-01.log")
    assert r.network == "IBext"
    assert r.net_plugin == "NCCL RDMA Plugin v6"
    assert r.collnet_plugin == "SHARP"
    assert r.net_plugin_path == "/opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so"
    assert [d.name for d in r.net_devices] == ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5"]
    assert all(d.sharp and d.link_layer == "IB" for d in r.net_devices)


def test_nvls_init_complete() -> None:
    r = load("nccl-nvls-multinode-init-complete-01.log")
    assert r.channels == {"coll": 16, "collnet": 0, "nvls": 16, "p2p": 16, "p2p_per_peer": 1}
    assert r.transports == {"NVLS": 2}
    assert r.init_complete is True
    assert r.nranks == 64 and r.nranks_from == "comm"
    assert [x.rank for x in r.ranks] == [32, 34, 35, 36]
    assert next(x for x in r.ranks if x.rank == 36).bus_id == "9b000"


def test_ofi_p4d_topo_file() -> None:
    r = load("nccl-ofi-p4d-topo-file-2.7-01.log")
    assert r.net_plugin == "aws-ofi-nccl"
    assert r.env["NCCL_TOPO_FILE"] == "/usr/local/share/aws-ofi-nccl/xml/p4d-24xl-topo.xml"
    assert r.network is None


def test_ofi_on_roce_fallback_ib_channels() -> None:
    r = load("nccl-ofi-plugin-on-roce-fallback-ib-2.27-channels-01.log")
    assert r.transports == {"NET/IB/GDRDMA": 30, "P2P/IPC": 25}
    assert r.gdr is True
    assert len(r.connections_sample) == 20
    r14 = next(x for x in r.ranks if x.rank == 14)
    assert (r14.host, r14.cuda_dev) == ("tpgds-aihub0008", 6)


@pytest.mark.parametrize("name,kinds", [
    ("nccl-pytorch-watchdog-timeout-allgather-teardown-01.log",
     ["watchdog_timeout", "watchdog_timeout", "watchdog_exception", "watchdog_timeout", "watchdog_abort"]),
    ("nccl-pytorch-watchdog-timeout-allreduce-01.log",
     ["watchdog_timeout", "watchdog_timeout", "watchdog_exception", "watchdog_exception"]),
])
def test_watchdog_timeouts_are_errors(name, kinds) -> None:
    r = load(name)
    assert [e.kind for e in r.errors] == kinds
    assert r.errors[0].line_no == 7 and "Watchdog caught collective operation timeout" in r.errors[0].text
    assert r.nccl_version is None and r.network is None and r.hosts == () and r.ranks == ()
    assert r.transports == {} and r.nranks is None


def test_roce_macvlan_213() -> None:
    r = load("nccl-roce-macvlan-gid-2.13-01.log")
    assert r.nccl_version == "2.13.4" and r.cuda_version == "11.3" and r.cuda_driver_version == "11.7"
    assert [(d.name, d.port, d.link_layer) for d in r.net_devices] == [("mlx5_4", 1, "RoCE")]
    assert r.network == "IB"


def test_shm_plus_socket() -> None:
    r = load("nccl-shm-plus-socket-2node-01.log")
    assert r.transports == {"NET/Socket": 8, "SHM": 7}
    assert r.hosts == ("ubuntu",)


def test_single_node_shm() -> None:
    r = load("nccl-single-node-shm-no-p2p-01.log")
    assert r.transports == {"SHM": 11}
    assert r.network is None and r.net_devices == ()
    assert [x.rank for x in r.ranks] == list(range(8))


def test_socket_azure() -> None:
    r = load("nccl-socket-azure-vm-2.17-01.log")
    assert r.network == "Socket"
    assert [(d.name, d.address) for d in r.net_devices] == [("eth0", "10.0.0.5")]


def test_socket_aws_rings_24() -> None:
    r = load("nccl-socket-fallback-aws-noib-02-rings.log")
    assert r.transports == {"NET/Socket": 10}
    assert r.nranks == 64 and r.init_complete is True
    assert len(r.hosts) == 15


def test_socket_ib_no_device_channels() -> None:
    r = load("nccl-socket-fallback-ib-no-device-channels-01.log")
    assert r.transports == {"NET/Socket": 2, "P2P/IPC": 14}  # "P2P/IPC/read" normalised
    assert r.hosts == ("<cluster_name>",)


def test_socket_forced_211() -> None:
    r = load("nccl-socket-forced-netsocket-2.11-01.log")
    assert r.nccl_version == "2.11.4" and r.cuda_version == "11.4"  # bare banner line
    assert r.network == "Socket"
    assert [(d.name, d.address) for d in r.net_devices] == [("enp225s0f1", "10.10.10.2")]
    assert not any(d.kind == "ib" for d in r.net_devices)


def test_socket_loopback() -> None:
    r = load("nccl-socket-loopback-topo-dump-01.log")
    assert r.env["NCCL_IB_DISABLE"] == "1" and r.env["NCCL_IBEXT_DISABLE"] == "1"
    assert [(d.name, d.address) for d in r.net_devices] == [("lo", "127.0.0.1")]
    assert r.gdr is False and r.gdr_lines[0].line_no == 15
    # "NCCL_IBEXT_DISABLE set by environment to 1." then "net.cc:79 -> 3": the IBext plugin refused
    assert r.net_plugin_refusals == ("net.cc:79 -> 3",) and r.net_plugins_failed == ("IBext",)
    assert r.socket_fallback_reasons == ("net plugin IBext refused (net.cc:79 -> 3)", "NCCL_IB_DISABLE=1")


def test_socket_ring_25() -> None:
    r = load("nccl-socket-ring-2.5-01.log")
    assert r.transports == {"NET/Socket": 4}
    assert r.hosts == ("sh-01", "sh-03")
    assert [d.name for d in r.net_devices] == ["enP1p1s0f0", "enP1p1s0f1"]


@pytest.mark.parametrize("name,vendor", [
    ("nccl-warn-ib-completion-error-ipv6gid-01.log", "vendor err 129"),
    ("nccl-warn-ib-completion-error4-h100-01.log", "vendor err 81"),
])
def test_ib_completion_errors(name, vendor) -> None:
    r = load(name)
    assert [e.line_no for e in r.errors] == [7, 12, 17]
    assert all(e.kind == "ib_completion" and vendor in e.text for e in r.errors)
    assert r.warnings_total == 3 and r.errors_total == 3


def test_nccltests_collnet_log_nccl_facts() -> None:
    r = load("nccl-collnet-sharp-fallback-ib-gdrdma-01.log", FX_TESTS)
    assert r.nccl_version == "2.23.4" and r.nranks == 8 and len(r.hosts) == 4
    assert r.network == "IBext_v8" and r.net_plugin == "IBext_v8"
    assert all(d.sharp for d in r.net_devices)
    assert r.transports == {"CollNet": 4, "NET/IBext_v8/GDRDMA": 58, "P2P/CUMEM": 24}
    assert r.channels["coll"] == 3
    assert any("Cannot initialize CollNet" in w.text for w in r.warnings)


def test_nccltests_gather_log_nccl_facts() -> None:
    r = load("nccl-ib-roce-mixed-gdr-2.16-gather-01.log", FX_TESTS)
    assert r.nccl_version == "2.16.5" and r.cuda_version == "11.8" and r.cuda_driver_version == "12.8"
    assert [(d.name, d.link_layer) for d in r.net_devices] == [("mlx5_0", "RoCE"), ("mlx5_2", "IB")]
    assert r.gdr is True and r.env["NCCL_NET_GDR_LEVEL"] == "SYS"
    assert r.transports == {"NET/IB/GDRDMA": 6}  # NET/1 only; "/Shared" suffix dropped


# ---- edge cases -----------------------------------------------------------------------------

SAMPLE = (
    "node017:12345:12400 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/RoCE ; OOB eth0:10.0.0.1<0>\n"
    "node017:12345:12400 [3] NCCL INFO Using network IB\n"
    "node017:12345:12400 [3] NCCL INFO NCCL_IB_GID_INDEX set by environment to 3.\n"
    "node017:12345:12400 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[0] [send] via NET/IB/0/GDRDMA\n"
    "node017:12345:12400 [3] NCCL INFO comm 0x1 rank 3 nranks 16 cudaDev 3 busId 45000 commId 0x2 - Init COMPLETE\n"
)


def test_basic_sample() -> None:
    r = parse(SAMPLE)
    assert r.gid_index == 3 and r.gdr is True and r.init_complete
    assert r.ranks[0].rank == 3 and r.ranks[0].bus_id == "45000" and r.ranks[0].nranks == 16
    assert r.net_devices[1].link_layer == "RoCE" and r.net_devices[0].kind == "ib"


def test_crlf_tabs_ansi_same_result() -> None:
    base = parse(SAMPLE)
    assert parse(SAMPLE.replace("\n", "\r\n")) == base
    ansi = "\x1b[32m" + SAMPLE.replace("\n", "\x1b[0m\n", 1)
    assert parse(ansi).network == "IB"
    tabbed = SAMPLE.replace("[3] NCCL INFO", "[3]\tNCCL INFO")
    assert parse(tabbed).transports == base.transports


def test_truncated_last_line_and_slurm_prefix() -> None:
    text = "0: " + SAMPLE.replace("\n", "\n0: ")[:-3] + "node017:12345:12400 [3] NCCL INFO Bootstrap : Us"
    r = parse(text)
    assert r.hosts == ("node017",) and r.network == "IB"


def test_empty_and_other_tool_output_refused() -> None:
    with pytest.raises(ParseError) as e:
        parse("")
    assert e.value.line_no == 0
    with pytest.raises(ParseError) as e:
        parse("\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n")
    assert e.value.line_no == 3 and "no NCCL log lines" in e.value.message
    with pytest.raises(ParseError):
        parse("CA 'mlx5_0'\n\tCA type: MT4129\n")


def test_error_kinds() -> None:
    text = (
        "h1: Test NCCL failure common.cu:958 'internal error - please report this issue to the NCCL developers / '\n"
        "h1:1:2 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer h2<3>\n"
        "h1:1:2 [0] proxy.cc:1 NCCL WARN [Proxy] remote process exited or there was a network error\n"
        "torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled system error, NCCL version 2.19.3\n"
    )
    r = parse(text)
    assert [e.kind for e in r.errors] == ["internal_error", "connection_closed", "remote_process_exited",
                                          "unhandled_system_error"]
    assert r.nccl_version is None  # a version inside an error message is not a banner


def test_caps_keep_totals() -> None:
    lines = (f"h:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion from peer p with error 4 n={i}\n"
             for i in range(MAX_LIST + 50))
    r = parse_lines(lines)
    assert len(r.warnings) == MAX_LIST and r.warnings_total == MAX_LIST + 50
    assert len(r.errors) == MAX_LIST and r.errors_total == MAX_LIST + 50


def test_socket_fallback_reasons() -> None:
    text = ("h:1:1 [0] NCCL INFO NET/IB : No device found.\n"
            "h:1:1 [0] NCCL INFO NCCL_NET set by environment to Socket\n"
            "h:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
            "h:1:1 [0] NCCL INFO Using network Socket\n")
    assert parse(text).socket_fallback_reasons == ("NET/IB : No device found", "NCCL_NET=Socket")


def test_transport_normalisation() -> None:
    n = nccl_debug.normalise_transport
    assert n("P2P/IPC/read") == "P2P/IPC" and n("P2P/CUMEM/read") == "P2P/CUMEM"
    assert n("P2P/direct pointer/read") == "P2P/direct pointer"
    assert n("SHM/direct/direct") == "SHM"
    assert n("NET/IB/1/GDRDMA/Shared") == "NET/IB/GDRDMA" and n("NET/Socket/3") == "NET/Socket"
    assert n("NET/IBext_v8/2(0)/GDRDMA") == "NET/IBext_v8/GDRDMA"
    assert n("NET/AWS Libfabric/0/GDRDMA") == "NET/AWS Libfabric/GDRDMA"
    assert n("COLLNET/SHARP/0/GDRDMA") == "CollNet"


def test_sniff() -> None:
    assert sniff(SAMPLE) == 0.8
    assert sniff("[rank0]:[E1 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout") == 0.8
    assert sniff("CA 'mlx5_0'\n") == 0.0
    assert detect(SAMPLE) == "nccl_debug"


def test_chunk_boundaries_do_not_change_the_result() -> None:
    import io

    from topodiag.parsers.nccl_debug.reader import CHUNK

    block = SAMPLE + "".join(
        f"node{h:03d}:9:9 [{g}] NCCL INFO Channel {c:02d}/0 : {h * 8 + g}[{g}] -> {h * 8 + (g + 1) % 8}[{(g + 1) % 8}]"
        f" via P2P/IPC/read\nstep {c} loss 1.0\n"
        for h in range(4) for g in range(8) for c in range(8))
    block += "h:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion from peer p with error 4\n"
    text = block * (2 * CHUNK // len(block) + 2)  # spans several chunks
    whole = parse(text)
    assert parse_lines(iter(text.splitlines(keepends=True))) == whole
    assert parse_lines(io.StringIO(text)) == whole
    assert whole.lines == text.count("\n")
    assert whole.transports["P2P/IPC"] == text.count("via P2P/IPC")
    assert [e.line_no for e in whole.errors][:2] == [
        i + 1 for i, line in enumerate(text.split("\n")) if "NCCL WARN" in line][:2]


def test_trace_lines_are_read() -> None:
    r = parse("h:1:2 [0] 1.5 init.cc:1 NCCL TRACE Using network IB\n")
    assert r.network == "IB" and r.nccl_lines == 1


# ---- parse_binary, parse, parse_lines: one engine, the result of the decoded text ----------------

import io  # noqa: E402
import os  # noqa: E402
from unittest import mock  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as hst  # noqa: E402

from tests.fixtures_index import parser_fixtures  # noqa: E402
from topodiag.parsers import to_jsonable  # noqa: E402
from topodiag.parsers.nccl_debug import parse_binary, reader  # noqa: E402

# every nccl_debug fixture, and the nccl_tests fixtures that carry NCCL INFO lines
BINARY_FIXTURES = [f for f in parser_fixtures()
                   if f.source == "nccl_debug" or (f.source == "nccl_tests" and "NCCL INFO" in f.text())]


def _outcome(fn, arg):
    try:
        return ("ok", to_jsonable(fn(arg)))
    except ParseError as e:
        return ("error", e.line_no, e.message)


def _reference_binary(data: bytes):
    """Decode each chunk as parse_binary cuts it ("replace"), then read that text: what the result of
    a binary file must be, even when a tiny chunk cuts a line or a UTF-8 sequence."""
    f = io.BytesIO(data)
    texts = []
    while True:
        chunk = f.read(reader.CHUNK)
        if not chunk:
            break
        if not chunk.endswith(b"\n"):
            chunk += f.readline(reader.CHUNK)
        texts.append(chunk.decode("utf-8", "replace").encode())
    return nccl_debug.parse_chunks(texts)


def test_there_are_binary_fixtures() -> None:
    assert len([f for f in BINARY_FIXTURES if f.source == "nccl_debug"]) >= 20


@pytest.mark.parametrize("fx", BINARY_FIXTURES, ids=lambda f: f.id)
def test_parse_binary_matches_parse_on_fixtures(fx) -> None:
    text = blank_provenance_header(fx.text())
    assert _outcome(parse_binary, io.BytesIO(text.encode())) == _outcome(parse, text)
    crlf = text.replace("\n", "\r\n")
    assert _outcome(parse_binary, io.BytesIO(crlf.encode())) == _outcome(parse, crlf)
    assert _outcome(parse_lines, io.BytesIO(text.encode())) == _outcome(parse, text)


@pytest.mark.parametrize("fx", BINARY_FIXTURES, ids=lambda f: f.id)
def test_parse_binary_small_chunks_cut_mid_line(fx, monkeypatch) -> None:
    text = blank_provenance_header(fx.text())
    data = text.encode()
    # chunks end mid-line and take the rest of the line: with every line shorter than a chunk the
    # cuts are parse()'s (for ASCII text, where chars are bytes)
    longest = max(len(line) for line in data.split(b"\n"))
    monkeypatch.setattr(reader, "CHUNK", longest + 1)
    if data.isascii():
        assert _outcome(parse_binary, io.BytesIO(data)) == _outcome(parse, text)
        crlf = text.replace("\n", "\r\n")
        monkeypatch.setattr(reader, "CHUNK", longest + 2)
        assert _outcome(parse_binary, io.BytesIO(crlf.encode())) == _outcome(parse, crlf)
    # tiny chunks cut long lines too: still exactly the decode-each-chunk result
    for size in (61, 256):
        monkeypatch.setattr(reader, "CHUNK", size)
        assert _outcome(parse_binary, io.BytesIO(data)) == _outcome(_reference_binary, data)


def test_parse_binary_multichunk_and_text_handle(monkeypatch) -> None:
    monkeypatch.setattr(reader, "CHUNK", 1000)
    block = SAMPLE + "".join(
        f"node{h:03d}:9:9 [{g}] NCCL INFO Channel {c:02d}/0 : {h * 8 + g}[{g}] -> {h * 8 + (g + 1) % 8}[{(g + 1) % 8}]"
        f" via P2P/IPC/read\nstep {c} loss 1.0\n" for h in range(2) for g in range(8) for c in range(3))
    block += ("h:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion from peer p with error 4\n"
              "NCCL version 2.19.3+cuda12.3\n[rank0]:[E ProcessGroupNCCL.cpp:1] [Rank 0] Watchdog caught "
              "collective operation timeout\nh:1:3 [1] NCCL INFO NET/IB: IbDev 1 Port 1 qpn 7 mtu 5 GID 2 (0/0)\n")
    text = block * 20
    whole = parse(text)
    assert parse_binary(io.BytesIO(text.encode())) == whole
    assert parse_binary(io.BytesIO(text.replace("\n", "\r\n").encode())) == whole
    assert parse_binary(io.StringIO(text)) == whole
    assert whole.warnings_total == 20 and whole.lines == text.count("\n")


def _big_log(tmp_path, copies: int):
    text = "".join(blank_provenance_header(f.text()) for f in BINARY_FIXTURES if f.text().isascii()) * copies
    path = tmp_path / "nccl.log"
    path.write_bytes(text.encode())
    return text, path


def _in_two(path, monkeypatch) -> tuple:
    """The loader's two-process read of `path`; returns (outcome, how many chunks came with a digest)."""
    import threading

    from topodiag.scan import parallel

    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    # idle threads left by earlier tests (live collection's abandoned probes) would make the loader
    # stay in one process; this test is about the two-process path
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    used = []
    real = nccl_debug.parse_chunks

    def counting(items):
        items = list(items)
        used.extend(dg is not None for _, dg in items)
        return real(items)

    monkeypatch.setattr(nccl_debug, "parse_chunks", counting)
    with open(path, "rb") as f:
        if not parallel.worth_it(nccl_debug, f):
            pytest.skip("no fork or one CPU: the loader reads in one process")
        return _outcome(lambda h: parallel.parse_in_two(nccl_debug, h), f), sum(used), len(used)


def test_loader_digests_in_a_worker(tmp_path, monkeypatch) -> None:
    """A big regular file: the loader computes the digests in a worker process; the same result."""
    monkeypatch.setattr(reader, "CHUNK", 4096)
    text, path = _big_log(tmp_path, 3)
    got, with_digest, chunks = _in_two(path, monkeypatch)
    assert chunks > 10 and with_digest == chunks
    assert got == _outcome(parse, text)


def _nonsense_digest(source, path, off, n):
    return n, b"not the chunk's tail", (0, False, 0, 0, 0, [], 0)


def _dying_digest(source, path, off, n):
    os._exit(3)


@pytest.mark.parametrize("broken", [_nonsense_digest, _dying_digest])
def test_loader_survives_a_broken_worker(tmp_path, monkeypatch, broken) -> None:
    """A worker that dies or sends digests of other bytes costs time, not correctness."""
    from topodiag.scan import parallel

    monkeypatch.setattr(reader, "CHUNK", 2048)
    monkeypatch.setattr(parallel, "_digest_range", broken)
    text, path = _big_log(tmp_path, 2)
    got, with_digest, chunks = _in_two(path, monkeypatch)
    assert with_digest == 0 and chunks > 10
    assert got == _outcome(parse, text)


def test_loader_reads_small_files_in_one_process(tmp_path) -> None:
    from topodiag.scan import parallel

    _, path = _big_log(tmp_path, 1)
    with open(path, "rb") as f:
        assert not parallel.worth_it(nccl_debug, f)  # far below PARALLEL_MIN_BYTES
    with open(path, "rb") as f:
        assert not parallel.worth_it(nccl_debug, io.BufferedReader(io.BytesIO(f.read())))


def test_parse_binary_refuses_a_non_file() -> None:
    with pytest.raises(ParseError):
        parse_binary(object())  # type: ignore[arg-type]
    with pytest.raises(ParseError):
        parse_binary(io.BytesIO(b""))


BYTE_WORDS = hst.sampled_from([
    b"NCCL INFO", b"NCCL WARN", b"NCCL TRACE", b"NCCL", b"WARNCCL", b"NCCL version 2.18.3+cuda12.2",
    b"ProcessGroupNCCL", b"Channel 00/0 :", b"Ring 01 :", b"CollNet", b"0[0] -> 1[1]", b"3[3000] -> 4[0]", b"via",
    b"P2P/IPC/read", b"NET/IB/0/GDRDMA", b"SHM/direct/direct", b"[send]", b"[receive]",
    b"comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 commId 0x2 - Init COMPLETE", b"ncclCommInitRank comm 0x5",
    b"rank 1 nRanks 2", b"Using network IB", b"NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE",
    b"NET/Socket : Using [0]eth0:10.0.0.1<0>", b"NCCL_IB_GID_INDEX set by environment to 3.",
    b"NET/IB: IbDev 0 Port 1 qpn 1 mtu 5 GID 3 (0/0)", b"GPU Direct RDMA Enabled", b"GPU Direct RDMA Disabled",
    b"Trees [0] 1/-1/-1->0->-1", b"16 coll channels, 0 nvls channels, 2 p2p channels per peer", b"Connected NVLS",
    b"Got completion from peer", b"NCCL failure", b"NCCL error", b"Watchdog caught collective operation timeout",
    b"cudaDriverVersion 12020", b"h1:1:2 [0]", b"node1:10:11 [3]", b":", b" ", b"\t", b"\r", b"\r\n", b"\x1b[32m",
    b"\x1c", b"\xc3\xa9", b"\xff", b"\n", b"\x85",
])
BYTE_LOGS = hst.lists(hst.lists(BYTE_WORDS, max_size=10).map(b" ".join), max_size=25).map(b"\n".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=BYTE_LOGS | hst.binary(max_size=300))
def test_parse_binary_is_parse_of_the_decoded_text(data: bytes) -> None:
    assert _outcome(parse_binary, io.BytesIO(data)) == _outcome(parse, data.decode("utf-8", "replace"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=BYTE_LOGS, size=hst.integers(min_value=8, max_value=200))
def test_parse_binary_small_chunks_are_decode_each_chunk(data: bytes, size: int) -> None:
    with mock.patch.object(reader, "CHUNK", size):
        assert _outcome(parse_binary, io.BytesIO(data)) == _outcome(_reference_binary, data)


def test_a_cluster_log_reads_the_same_however_it_is_cut() -> None:
    """The NCCL_DEBUG fixtures appended (jobs of many hosts, whose ranks and bus ids disagree): the
    result does not depend on where the chunks end. What is kept first (a rank's bus id from its first
    connection or comm line, the hosts of the capped network list) is what the lines say first: before,
    a chunk's connection texts were all read before its other texts, and 4 KiB chunks kept other bus
    ids and hosts than one chunk did."""
    text = "".join(blank_provenance_header(p.read_text(encoding="utf-8", errors="replace"))
                   for p in sorted((ROOT / "fixtures" / "nccl_debug").iterdir())
                   if p.is_file() and not p.name.endswith(".json"))
    data = text.encode("utf-8")
    got = {}
    for size in (1 << 10, 1 << 12, 1 << 16, 1 << 22):
        with mock.patch.object(reader, "CHUNK", size):
            got[size] = to_jsonable(parse_binary(io.BytesIO(data)))
    assert len(got[1 << 22]["ranks"]) > 8 and len(got[1 << 22]["net_by_host"]) > 8
    assert all(r == got[1 << 22] for r in got.values())


def test_the_error_list_is_the_first_lines_however_the_log_is_cut() -> None:
    """A chunk's error lines come from several scans (WARN lines, untagged "NCCL error in:" lines and
    their "Last error:" detail): past the list's cap (MAX_LIST) it holds the first by line, whatever
    the chunks. Before, one chunk's WARN lines filled the list first and the untagged errors before
    them were left out (4 KiB chunks listed them, one chunk did not)."""
    text = "".join(blank_provenance_header((ROOT / "fixtures" / "nccl_debug" / name).read_text(encoding="utf-8"))
                   for name in ("nccl-catalogue-last-error-cuda-invalid-argument-01.log",
                                "nccl-warn-ib-completion-error4-h100-01.log")) * 60
    data = text.encode("utf-8")
    got = []
    for size in (1 << 12, 1 << 22):
        with mock.patch.object(reader, "CHUNK", size):
            got.append(to_jsonable(parse_binary(io.BytesIO(data))))
    assert got[0]["errors_total"] > MAX_LIST and len(got[1]["errors"]) == MAX_LIST
    assert {e["kind"] for e in got[1]["errors"][:6]} > {"ib_completion"}  # the untagged ones are there
    assert got[0]["errors"] == got[1]["errors"]
    lines = [e["line_no"] for e in got[1]["errors"]]
    assert lines == sorted(lines)


# one round of a job's failure as PyTorch and NCCL print it (invented text, the lines' forms from the
# watchdog and catalogue fixtures): a c10d watchdog timeout, an "NCCL error in:" line with its "Last
# error:" detail, an uncatalogued NCCL WARN (an unrecognised line), the banner
_ROUND = (
    "[rank3]:[E1205 10:00:00.000000 42 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 "
    "milliseconds before timing out.\n"
    "[rank3]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
    "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
    "[rank3]: ncclUnhandledCudaError: Call to CUDA function failed.\n"
    "[rank3]: Last error:\n"
    "[rank3]: Cuda failure 1 'invalid argument'\n"
    "node1:42:43 [3] NCCL WARN a message no release of NCCL prints, round {r}\n"
    "NCCL version 2.20.5+cuda12.4\n")


def test_untagged_lines_past_full_lists_are_counted_however_the_log_is_cut() -> None:
    """Past the caps of the errors and unrecognised lists, a watchdog or "NCCL error in:" line is only
    counted: its line number, a count of the chunk's newlines up to it, is no longer taken (reader.py
    `_lines_kept`). The totals are the rounds' (3 errors, 4 NCCL lines, 1 unrecognised line each), the
    lists the first MAX_LIST by line, the same for chunks of 4 KiB (full lists from the first chunks
    on), 64 KiB and 4 MiB (one chunk)."""
    n = MAX_LIST + 40
    data = "".join(_ROUND.format(r=r) for r in range(n)).encode()
    per = _ROUND.count("\n")
    want_errors = [r * per + k for r in range(n) for k in (1, 2, 5)][:MAX_LIST]
    got = {}
    for size in (1 << 12, 1 << 16, 1 << 22):
        with mock.patch.object(reader, "CHUNK", size):
            got[size] = to_jsonable(parse_binary(io.BytesIO(data)))
    r = got[1 << 22]
    assert (r["errors_total"], r["nccl_lines"], r["unrecognised_total"], r["warnings_total"]) == (3 * n, 4 * n, n, n)
    assert [e["line_no"] for e in r["errors"]] == want_errors
    assert [e["kind"] for e in r["errors"][:3]] == ["watchdog_timeout", "unhandled_cuda_error", "cuda_failure"]
    assert [u["line_no"] for u in r["unrecognised"]] == [k * per + 6 for k in range(MAX_LIST)]
    assert got[1 << 12] == r and got[1 << 16] == r


def test_a_last_error_detail_past_the_chunk_is_read() -> None:
    """An "NCCL error in:" line that ends a chunk, its "Last error:" detail in the next one, which holds
    no "NCCL" at all (invented text, the lines as PyTorch prints them in the catalogue fixtures): the
    detail is read and listed as in one chunk."""
    pad = b"x" * 5000 + b"\n"
    text = (pad + b"[rank0]: torch.distributed.DistBackendError: NCCL error in: ../NCCLUtils.hpp:275, unhandled "
            b"cuda error, NCCL version 2.20.5\n[rank0]: ncclUnhandledCudaError: Call to CUDA function failed.\n"
            b"[rank0]: Last error:\n[rank0]: Cuda failure 1 'invalid argument'\n" + pad)
    got = []
    for size in (1 << 22, 5200, 5100):  # one chunk; cut after the error line; cut inside it
        with mock.patch.object(reader, "CHUNK", size):
            r = to_jsonable(parse_binary(io.BytesIO(text)))
        got.append(([(e["line_no"], e["kind"]) for e in r["errors"]], r["errors_total"]))
    assert got[0] == ([(2, "unhandled_cuda_error"), (5, "cuda_failure")], 2)
    assert got[1] == got[0] and got[2] == got[0]


def test_a_log_as_pasted_in_a_ticket() -> None:
    """Markdown fences, a shell prompt, backquotes, timestamps, srun and OpenMPI prefixes: the facts a
    person reads from these lines (hosts, nNodes, network, GDR transport)."""
    text = (
        "```\n$ torchrun --nnodes 2 train.py\n"
        "[2026-04-28 14:14:48] worker-0:2340:3744 [2] NCCL INFO comm 0x7fa rank 2 nRanks 16 nNodes 2 localRanks 8"
        " localRank 2 MNNVL 0\n"
        "0: worker-1:11:12 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.2<0>\n"
        "[1,0]<stdout>:worker-2:13:14 [1] NCCL INFO Using network IB\n"
        "`worker-3:1:2 [3] NCCL INFO Channel 00/0 : 3[3] -> 11[3] [send] via NET/IB/0/GDRDMA`\n"
        "Thu Jun 18 14:28:58 2020[1,0]<stdout>:tf2-horovod-6clzb:30:97 [0] NCCL INFO Bootstrap : Using [0]eth0:10.2.9.2<0>\n"
        "```\n")
    r = parse(text)
    assert r.hosts == ("tf2-horovod-6clzb", "worker-0", "worker-1", "worker-2", "worker-3")
    assert r.nnodes == 2 and r.network == "IB" and r.gdr is True
    assert r.transports == {"NET/IB/GDRDMA": 1} and r.net_by_host == {"worker-3": ["NET/IB/GDRDMA"]}
    assert [(d.name, d.port, d.link_layer) for d in r.net_devices] == [("mlx5_0", 1, "IB")]


# ---- communicator size and plugin refusals (issue 10), lines quoted from public threads -------------

def test_ring_order_line_gives_the_communicator_size() -> None:
    # NVIDIA/nccl-tests #133: a ring order line lists every rank of the communicator once
    r = parse("nodea:26799:27025 [0] NCCL INFO Channel 00/02 :    0   7   6   5  12  11  10   9   8  15  14  13   4   3   2   1\n"
              "nodea:26799:27025 [0] NCCL INFO Channel 01/02 :    0   7   6\n")  # the second is cut by the paste
    assert (r.nranks, r.nranks_from) == (16, "ring")


def test_a_ring_of_one_rank_is_a_one_rank_communicator() -> None:
    # NVIDIA/nccl-tests #136 ("No communication between two nodes"): every process formed its own ring
    r = parse("nlp-gpu-07:18325:18330 [0] NCCL INFO Channel 02/32 :    0\n"
              "nlp-gpu-07:18325:18330 [0] NCCL INFO Channel 03/32 :    0\n")
    assert (r.nranks, r.nranks_from) == (1, "ring")


def test_comm_lines_win_over_the_ring() -> None:
    r = parse("h:1:2 [0] NCCL INFO Channel 00/02 :    0   1\n"
              "h:1:2 [0] NCCL INFO comm 0x55 rank 0 nranks 4 cudaDev 0 busId 1000 - Init COMPLETE\n")
    assert (r.nranks, r.nranks_from) == (4, "comm")


@pytest.mark.parametrize("func", ["ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommInitRankScalable",
                                  "ncclCommSplit", "ncclCommInitAll"])
def test_comm_lines_after_any_function_name(func: str) -> None:
    """NCCL prints '%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx ...' with the function
    that made the communicator (src/init.cc: job->funcName); 2.28's ncclCommInitRankConfig lines were
    not read (real: the DGX Spark fixture). Lines built from the format strings; both readers agree."""
    text = (f"spark-a:1:1 [0] NCCL INFO {func} comm 0xc53b8f7f6ab0 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId f01000 "
            "commId 0x3470ca318760efc8 - Init START\n"
            f"spark-b:2:2 [0] NCCL INFO {func} comm 0xbca552dd2650 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId f01000 "
            "parent 0x55 splitCount 1 color 0 key 0- Init START\n")
    for r in (parse(text), nccl_debug.parse_binary(io.BytesIO(text.encode()))):
        assert (r.nranks, r.nranks_from) == (2, "comm")
        assert [(k.rank, k.host, k.bus_id, k.nranks) for k in r.ranks] == [(0, "spark-b", "f01000", 2),
                                                                          (1, "spark-a", "f01000", 2)]


@pytest.mark.parametrize("line, want", [
    # a public nccl-eBPF project's notes (yunwei37): NCCL 2.28+ puts "[Rank N] " before the message
    ("lab:1425048:1425048 [0] NCCL INFO [Rank 0] ncclCommInitRankConfig comm 0x5967f7993f30 rank 0 nranks 1 "
     "cudaDev 0 nvmlDev 0 busId 2000 commId 0x9557dc94fa58b484 - Init START", (1, [(0, "lab", "2000")])),
    # a public EFA/Libfabric write-up: ncclCommSplit's line, "parent .. splitCount .. color .. key .." after busId
    ("llama-3-8b-node-0-0:188:706 [0] NCCL INFO ncclCommSplit comm 0x556d50e02a40 rank 0 nranks 4 cudaDev 0 nvmlDev 0 "
     "busId 101d0 parent 0x556d504b7460 splitCount 1 color 2003953581 key 0- Init START",
     (4, [(0, "llama-3-8b-node-0-0", "101d0")])),
])
def test_real_comm_lines_of_newer_nccl(line: str, want) -> None:
    for r in (parse(line + "\n"), nccl_debug.parse_binary(io.BytesIO((line + "\n").encode()))):
        assert (r.nranks, [(k.rank, k.host, k.bus_id) for k in r.ranks]) == want and r.nranks_from == "comm"


def test_a_word_before_comm_that_is_not_a_function_is_not_a_comm_line() -> None:
    r = parse("h:1:2 [0] NCCL INFO ncclCommWatch: comm 0x55 rank 0 nranks 4 cudaDev 0 busId 1000\n")
    assert r.nranks_from != "comm"


def test_nccl_2_3_rank_line() -> None:
    r = parse("ml3:32632:32662 [0] NCCL INFO rank 0 nranks 4\n")
    assert (r.nranks, r.nranks_from) == (4, "comm")
    assert [(k.rank, k.host, k.cuda_dev, k.nranks) for k in r.ranks] == [(0, "ml3", 0, 4)]


def test_aws_ofi_plugin_reports_its_own_init_failure() -> None:
    # aws/aws-ofi-nccl #889 (a CloudWatch paste): the plugin's WARN lines, then NCCL's sockets
    r = parse("  | 2025-05-16T16:39:55.218-07:00 | ip-10-36-29-253:86:2554 [0] nccl_net_ofi_create_plugin:335 NCCL WARN NET/OFI aws-ofi-nccl initialization failed\n"
              "  | 2025-05-16T16:39:55.218-07:00 | ip-10-36-29-253:86:2554 [0] nccl_net_ofi_init:155 NCCL WARN NET/OFI Initializing plugin failed\n"
              "  | 2025-05-16T16:39:55.218-07:00 | ip-10-36-29-253:86:2554 [0] NCCL INFO NET/IB : No device found.\n"
              "  | 2025-05-16T16:39:55.218-07:00 | ip-10-36-29-253:86:2554 [0] NCCL INFO Using network Socket\n")
    assert r.net_plugins_failed == ("aws-ofi-nccl",)
    assert r.hosts == ("ip-10-36-29-253",)
    assert r.socket_fallback_reasons == ("NET/IB : No device found", "Failed to initialize NET plugin aws-ofi-nccl")


def test_internal_ib_warnings_are_not_a_plugin_failure() -> None:
    r = parse("h:1:1 [0] misc/ibvwrap.cc:63 NCCL WARN NET/IB : Failed to initialize ibv\n"
              "h:1:1 [0] NCCL INFO Using network Socket\n")
    assert r.net_plugins_failed == ()


def test_a_loader_trace_names_the_plugin_only_when_one_was_tried() -> None:
    base = "axa:1:2 [0] NCCL INFO net.cc:79 -> 3\naxa:1:2 [0] NCCL INFO Using network IB\n"
    assert parse(base).net_plugins_failed == ()  # no plugin named: may be the internal IB transport's
    assert parse(base).net_plugin_refusals == ("net.cc:79 -> 3",)
    loaded = "axa:1:2 [0] NCCL INFO NET/Plugin: Loaded net plugin NCCL RDMA Plugin (v6)\n" + base
    assert parse(loaded).net_plugins_failed == ("NCCL RDMA Plugin",)
    # a trace after the network was chosen is a runtime error chain, not a refusal
    late = "axa:1:2 [0] NCCL INFO Using network IB\naxa:1:2 [0] NCCL INFO net.cc:79 -> 3\n"
    assert parse(late).net_plugin_refusals == ()
    # the plugin that was refused is the one used after all? then it did not fail
    used = "axa:1:2 [0] NCCL INFO NET/Plugin: Loaded net plugin IBext (v8)\naxa:1:2 [0] NCCL INFO net.cc:79 -> 3\naxa:1:2 [0] NCCL INFO Using network IBext\n"
    assert parse(used).net_plugins_failed == ()


# -- connection lines quoted without their channel head or tag (nccl #897) ------------------------

def test_bare_connection_lines_are_read_as_connections():
    text = ("some prose before\n"
            "9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA\n"
            "  9[1a000] -> 2[6b000] [receive] via NET/IB/1\n")
    assert sniff(text) == 0.5
    r = parse(text)
    assert r.transports == {"NET/IB": 1, "NET/IB/GDRDMA": 1}
    assert r.net_by_rank == {"2": ["NET/IB"], "9": ["NET/IB/GDRDMA"]} and r.net_by_host == {}
    assert [s.line_no for s in r.connections_sample] == [2, 3]
    assert r.nccl_lines == 2


def test_tagged_connection_line_without_channel_head():
    r = parse("h1:1:2 [0] NCCL INFO 9[1a000] -> 2[6b000] [receive] via NET/IB/1\n")
    assert r.transports == {"NET/IB": 1}
    assert r.net_by_host == {"h1": ["NET/IB"]} and r.net_by_rank == {}


def test_prose_with_arrows_is_not_a_connection_line():
    with pytest.raises(ParseError):
        parse("rank 9 -> rank 2 via some path\n1 -> 2 via NET/IB\n")
    assert sniff("x[1] -> y[2] via NET/IB\n") == 0.0


# Invented lines (the shapes of real ones: NCCL's bare banner, a c10d watchdog line) for the reader's
# untagged-line path: the lines of the marks its scan found, a banner read again only counted.
_UNTAGGED = (
    "NCCL version 2.18.3+cuda12.2\n"
    "h1:1:2 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n"
    "NCCL version 2.18.3+cuda12.2\n"
    "[rank1]:[E1016 03:31:38.928019586 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=9141, OpType=ALLREDUCE) ran for 600071 milliseconds before timing out.\n"
    "NCCL version 2.19.3+cuda12.3\n"
    "h1:1:2 [0] NCCL WARN some NCCL error inside a WARN line\n"
    "NCCL version 2.18.3+cuda12.2\n"
)


@pytest.mark.parametrize("size", [reader.CHUNK, 40, 1])
def test_untagged_banners_count_each_time_and_the_first_version_wins(size: int) -> None:
    r = nccl_debug.parse_chunks(_chunks.text_chunks(_UNTAGGED * 3, size))
    assert r.nccl_version == "2.18.3" and r.cuda_version == "12.2"
    # per copy: 4 bare banners + 1 watchdog line + 1 INFO + 1 WARN line
    assert r.nccl_lines == 3 * 7
    assert [e.kind for e in r.errors].count("watchdog_timeout") == 3
    assert [e.line_no for e in r.errors if e.kind == "watchdog_timeout"] == [4, 11, 18]
