"""NCCL's per-QP NET/IB lines ("... qpn 576 mtu 3 GID 3 ...") into nccl_debug `qp_mtus`, in the format
of each NCCL era (src/transport/net_ib.cc, net_ib/connect.cc), and the scanner staying linear on them."""

from __future__ import annotations

import time

import pytest

from topodiag.parsers import ParseError
from topodiag.parsers.nccl_debug import parse, parse_binary
from topodiag.parsers.base import to_jsonable

PRE = "node1:101:102 [0] NCCL INFO "

ERAS = {
    # 2.3 .. 2.18, InfiniBand and RoCE
    "2.3-ib": ("NET/IB: Dev 1 Port 1 qpn 3038 mtu 5 LID 37", (1, None, 1, "IB", 5)),
    "2.3-roce": ("NET/IB: Dev 0 Port 1 qpn 123 mtu 3 GID 3 (0/1064A8C0FFFF0000)", (0, None, 1, "RoCE", 3)),
    # 2.19: query_ece between mtu and GID
    "2.19-roce": ("NET/IB: Dev 2 Port 1 qpn 364 mtu 4 query_ece={supported=1, vendor_id=0x15b3, options=0x30000002, "
                  "comp_mask=0x0} GID 3 (0/B9D4E80AFFFF0000)", (2, None, 1, "RoCE", 4)),
    # 2.20 .. 2.26: "NCCL Dev d IbDev i", query_ece before GID on RoCE; IB with LID (and FLID from 2.22)
    "2.20-roce": ("NET/IB: NCCL Dev 0 IbDev 4 Port 1 qpn 77 mtu 5 query_ece={supported=1, vendor_id=0x15b3, "
                  "options=0x30000002, comp_mask=0x0} GID 3 (0/1) fifoRkey=0x1 fifoLkey=0x1", (0, 4, 1, "RoCE", 5)),
    "2.22-ib": ("NET/IB: NCCL MergedDev 1 IbDev 3 Port 1 qpn 88 mtu 4 LID 12 subnet-prefix 18338657682652659712  FLID 0 "
                "fifoRkey=0x2 fifoLkey=0x2", (1, 3, 1, "IB", 4)),
    # 2.27 .. 2.29
    "2.28-roce": ("NET/IB: NCCL Dev 1 IbDev 1 Port 1 qpn 704 mtu 3 GID 0 (80FE/46442FFEFF47BB4E) fifoRkey=0x1ddcd6 "
                  "fifoLkey=0x1ddcd6", (1, 1, 1, "RoCE", 3)),
    # 2.30: the function's name first, "qp_num"
    "2.30-roce": ("NET/IB: ncclIbConnect: NCCL Dev 0 IbDev 2 Port 1 qp_num 576 mtu 5 GID 3 (0/1) ctsFifoRkey=0x1 "
                  "ctsFifoLkey=0x1", (0, 2, 1, "RoCE", 5)),
    # as the benchmark log and people quoting it write it: no NCCL device
    "bare-ibdev": ("NET/IB: IbDev 3 Port 1 qpn 4242 mtu 5 GID 3 (0/D4010A0AFFFF0000)", (None, 3, 1, "RoCE", 5)),
}


@pytest.mark.parametrize("era", sorted(ERAS))
def test_each_era_of_the_qp_line(era: str) -> None:
    line, (net_dev, ib_dev, port, ll, mtu) = ERAS[era]
    r = parse(PRE + line + "\n" + PRE + line.replace("qpn ", "qpn 9").replace("qp_num ", "qp_num 9") + "\n")
    [q] = r.qp_mtus
    assert (q.host, q.net_dev, q.ib_dev, q.port, q.link_layer, q.mtu, q.qps, q.line_no) == \
        ("node1", net_dev, ib_dev, port, ll, mtu, 2, 1)
    assert q.mtu_bytes == {3: 1024, 4: 2048, 5: 4096}[mtu]


def test_device_named_from_the_using_list_and_hosts_kept_apart() -> None:
    text = (
        "a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n"
        "a:1:2 [0] NCCL INFO NET/IB: NCCL Dev 1 IbDev 1 Port 1 qpn 10 mtu 5 GID 3 (0/1) fifoRkey=0x1 fifoLkey=0x1\n"
        "b:2:2 [0] NCCL INFO NET/IB: NCCL Dev 1 IbDev 1 Port 1 qpn 11 mtu 3 GID 3 (0/2) fifoRkey=0x1 fifoLkey=0x1\n"
        "b:2:2 [0] NCCL INFO NET/IB: NCCL Dev 7 IbDev 7 Port 1 qpn 12 mtu 3 GID 3 (0/2) fifoRkey=0x1 fifoLkey=0x1\n"
    )
    r = parse(text)
    got = [(q.host, q.device, q.mtu, q.line_no) for q in r.qp_mtus]
    assert got == [("a", "mlx5_1", 5, 2), ("b", "mlx5_1", 3, 3), ("b", None, 3, 4)]  # index 7 names no device
    assert r.gid_index == 3


def test_gid_index_as_before_old_format_lines_do_not_set_it() -> None:
    """The GID of a 2.3-2.19 "Dev N Port" line never set gid_index (the scan skipped those lines);
    that of a "NCCL Dev" line did, and still does."""
    old = parse(PRE + "NET/IB: Dev 0 Port 1 qpn 1 mtu 5 GID 3 (0/1)\n")
    assert old.gid_index is None and old.qp_mtus[0].mtu == 5
    new = parse(PRE + "NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1 mtu 5 GID 5 (0/1) fifoRkey=0x1 fifoLkey=0x1\n")
    assert new.gid_index == 5


def test_ece_lines_and_unknown_mtus() -> None:
    text = (PRE + "NET/IB: IbDev 0 Port 1 qpn 576 set_ece={supported=1, vendor_id=0x15b3, options=0x30000002, comp_mask=0x0}\n"
            + PRE + "NET/IB: IbDev 0 Port 1 qpn 576 query_ece={supported=1, vendor_id=0x15b3, options=0x30000002, comp_mask=0x0}\n"
            + PRE + "NET/IB: Dev 0 Port 1 qpn 1 mtu 9 LID 2\n")
    r = parse(text)
    [q] = r.qp_mtus  # the ECE lines carry no MTU
    assert q.mtu == 9 and q.mtu_bytes is None
    assert to_jsonable(r)["qp_mtus"][0]["mtu_bytes"] is None


def test_qp_lines_only_are_an_nccl_log_and_garbage_is_not() -> None:
    assert parse(PRE + "NET/IB: Dev 0 Port 1 qpn 1 mtu 5 LID 2\n").nccl_lines == 1
    with pytest.raises(ParseError):
        parse("NET/IB: Dev 0 Port 1 qpn 1 mtu 5 LID 2\nqpn mtu GID\n")


def test_streaming_and_bytes_agree() -> None:
    import io

    line = ERAS["2.28-roce"][0]
    text = "".join(f"h{i % 3}:1:2 [0] NCCL INFO {line.replace('704', str(i))}\n" for i in range(5000))
    assert to_jsonable(parse_binary(io.BytesIO(text.encode()))) == to_jsonable(parse(text))
    assert sum(q.qps for q in parse(text).qp_mtus) == 5000


def test_table_is_bounded() -> None:
    text = "".join(f"h{i}:1:2 [0] NCCL INFO NET/IB: Dev {i % 7} Port 1 qpn {i} mtu 5 LID 1\n" for i in range(3000))
    r = parse(text)
    assert len(r.qp_mtus) == 256 and r.nccl_lines == 3000


@pytest.mark.parametrize("line", [
    "NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1 mtu 5 query_ece={" + "x" * 60000,
    "NET/IB: " + "f: " * 20000 + "NCCL Dev 0 IbDev 0 Port 1 qpn 1 mtu 5 GID 3 (",
    "NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1 mtu 5 GID 3 ( " * 1500,
    "NET/IB: Dev 0 Port 1 qpn " + "9" * 60000 + " mtu 5 LID 1",
])
def test_qp_scan_stays_linear(line: str) -> None:
    text = "".join(f"h:1:2 [0] NCCL INFO {line}\n" for _ in range(4))
    start = time.process_time()  # this process's CPU time: other work on the machine does not count
    parse(text)
    assert time.process_time() - start < 2.0  # linear: a few ms; the quadratic scan took minutes
