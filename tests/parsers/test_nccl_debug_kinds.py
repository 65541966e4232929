"""The NCCL message starts are one table (parsers/nccl_debug/kinds.py): the scanner's SCAN_RE and the
fact accumulator's dispatch (facts.STARTS) are both built from it and cannot drift apart."""

from __future__ import annotations

import re

from topodiag.parsers.nccl_debug import facts, kinds, reader
from topodiag.parsers.nccl_debug.facts import Facts

# one message of each reader's kind, as NCCL prints it (the start with a plausible rest; the tails are
# the table's narrowing of the scan)
EXAMPLES = {
    "nvls": "Connected NVLS 16 channels",
    "env_line": "NCCL_IB_GID_INDEX set by environment to 3.",
    "banner_line": "NCCL version 2.18.5+cuda12.2",
    "ib_using": "NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.0.1<0>",
    "socket_using": "NET/Socket : Using [0]eth0:10.0.0.1<0>",
    "ib_none": "NET/IB : No device found.",
    "ofi": "NET/OFI Selected Provider is efa",
    "net_plugin": "NET/Plugin: Failed to find ncclNetPlugin_v6 symbol.",
    "using_network": "Using network IB",
    "internal_network": "Using internal Network Socket",
    "plugin_initialized": "Initialized NET plugin IB",
    "plugin_failed": "Failed to initialize NET plugin IBext",
    "plugin_assigned_line": "Assigned NET plugin IB to comm",
    "comm": "comm 0x55d0c4a0 rank 0 nranks 16 cudaDev 0 busId 7000 - Init COMPLETE",
    "driver": "cudaDriverVersion 12020",
    "init_rank": "ncclCommInitRank comm 0x55d0c4a0 rank 0 nranks 16 cudaDev 0 busId 7000 commId 0x1 - Init START",
    "p2p_plugin": "P2P plugin IBext",
    "plugin_dir": "Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
    "rank_line": "rank 0 nranks 16 - cuda dev 0",
    "bootstrap_line": "Bootstrap : Using ib0:10.0.0.1<0>",
    "refusal": "net.cc:626 -> 3",
}


def _dispatched(msg: str):
    """The reader Facts.info hands `msg` to (by STARTS), or None."""
    for start, read in facts.STARTS:
        if msg.startswith(start):
            return read
    return None


def test_dispatch_is_the_tables_readers_in_order():
    want = tuple((start, getattr(Facts, name)) for start, _, name in kinds.KINDS if name is not None)
    assert facts.STARTS == want
    assert {name for _, _, name in kinds.KINDS if name} == set(EXAMPLES)


def test_every_reader_reachable_and_scanned():
    """Each reader's example is a fact line to the scan (group 1 is the whole message, also past a
    "[Rank N] ") and Facts dispatches it to that reader: no earlier start shadows it."""
    for name, msg in EXAMPLES.items():
        for tag in (b"NCCL INFO ", b"NCCL TRACE ", b"NCCL INFO [Rank 3] "):
            m = reader.SCAN_RE.match(tag + msg.encode())
            assert m is not None and m.group(1) == msg.encode(), (name, tag)
        assert _dispatched(msg) is getattr(Facts, name), name


def test_every_start_of_the_table_is_scanned():
    """Every row's start (with its tail satisfied where the row has one) is a fact line to the scan;
    the rows a tail narrows are not scanned without it."""
    for start, tail, name in kinds.KINDS:
        if not start:
            continue
        if not tail:
            assert reader.SCAN_RE.match(b"NCCL INFO " + start.encode() + b"x") is not None, start
        else:
            assert reader.SCAN_RE.match(b"NCCL INFO " + start.encode() + b"zz") is None, start
    assert reader.SCAN_RE.match(b"NCCL INFO 12 coll channels, 16 nvls channels").group(1).startswith(b"12 coll")
    # "comm 0x.. rank N nRanks N" is read only with nNodes after it (the comm row's tail)
    m = reader.SCAN_RE.match(b"NCCL INFO comm 0xabc rank 0 nRanks 16 localRanks 8")
    assert m is None or m.group(1) is None
    assert reader.SCAN_RE.match(b"NCCL INFO comm 0xabc rank 0 nRanks 16 nNodes 2").group(1) is not None


def test_chatter_is_not_scanned():
    for msg in (b"Channel 00/0 : 0[0] -> 1[1] via P2P/IPC", b"threadThresholds 8/8/64", b"24 x 4 x 2 ...",
                b"Setting affinity for GPU 0 to ffff"):
        m = reader.SCAN_RE.match(b"NCCL INFO " + msg)
        assert m is None or m.group(1) is None, msg


def test_scan_starts_derivation():
    """A tail-less start covers the longer starts under it; rows group by first byte."""
    rows = (("NET/IB : Using", b"", "ib_using"), ("NET/", b"", None), ("Trees", b"", None),
            ("Tx", rb"[0-9]", None), ("", rb"[0-9]+ coll", None))
    pat = re.compile(kinds.scan_starts(rows))
    assert pat.pattern == rb"NET/|T(?:rees|x[0-9])|[0-9]+ coll"
    assert kinds.dispatch(rows) == (("NET/IB : Using", "ib_using"),)
