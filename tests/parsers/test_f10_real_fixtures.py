"""Issue 10, wt-f10: the real fixtures for "every node ran alone" (NCCL008) and the flat busbw plateau
with no "# Rank" lines (PERF001), and the two parser gaps they exposed. The conclusions themselves are
pinned by their .conclusion.json files (tests/test_conclusions.py); these tests pin the facts."""

from __future__ import annotations

from pathlib import Path

from topodiag.parsers import blank_provenance_header, detect, detect_all
from topodiag.parsers import nccl_debug, nccl_tests

ROOT = Path(__file__).resolve().parents[2]
OMPI = ROOT / "fixtures" / "nccl_debug" / "nccl-two-containers-each-rank0-nranks1-ompi-13317-01.log"
TRACE = ROOT / "fixtures" / "nccl_debug" / "nccl-two-containers-each-rank0-nranks1-trace-nccltests-329-01.log"
PLATEAU = (ROOT / "fixtures" / "nccl_tests"
           / "nccltests-allreduce-rows-only-p40-roce-vf-25g-plateau-2.8-koordinator-01.txt")


def _text(path: Path) -> str:
    return blank_provenance_header(path.read_text())


def test_tail_of_a_debug_log_with_summary_lines_is_detected_as_nccl_debug() -> None:
    """open-mpi/ompi #13317: each process's last NCCL line and its nccl-tests summary lines, no banner,
    header or rows (nccl_tests refuses that): the file is an NCCL_DEBUG log."""
    text = _text(OMPI)
    assert detect(text) == "nccl_debug"
    scores = dict(detect_all(text))
    assert scores["nccl_debug"] > scores["nccl_tests"]


def test_summary_lines_alone_still_sniff_as_nccl_tests() -> None:
    text = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0\n"
    assert nccl_tests.sniff(text) == 0.9
    rows = ("     4194304       1048576     float     sum      -1    84.15   49.85    0.00      0"
            "     0.28  15033.35    0.00      0\n")
    tagged = "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId d8000 - Destroy COMPLETE\n"
    assert nccl_tests.sniff(tagged + rows * 2 + text) == 0.9  # rows present: still nccl-tests first


def test_each_container_holds_a_one_rank_communicator() -> None:
    for path in (OMPI, TRACE):
        r = nccl_debug.parse(_text(path))
        assert r.hosts == ("6a9ab017bb44", "a4df80236412")
        assert r.nranks == 1 and r.nranks_from == "comm"
        assert dict(r.transports) == {}  # nothing crossed the network


def test_coll_plugin_line_of_nccl_2_19_names_the_collnet_plugin() -> None:
    """NCCL 2.19 prints "NET/Plugin: Loaded coll plugin SHARP (v6)" (later: "collnet plugin")."""
    r = nccl_debug.parse(_text(TRACE))
    assert r.net_plugin == "NCCL RDMA Plugin v6"
    assert r.collnet_plugin == "SHARP"
    newer = nccl_debug.parse("h:1:1 [0] NCCL INFO NET/Plugin: Loaded collnet plugin SHARP (v8)\n")
    assert newer.collnet_plugin == "SHARP"


def test_plateau_table_has_no_device_lines_and_levels_off_below_10() -> None:
    r = nccl_tests.parse(_text(PLATEAU))
    assert r.devices == ()
    big = [max(x.oop_busbw_gbps, x.ip_busbw_gbps) for x in r.rows if x.size_bytes >= 256 << 20]
    assert big == [2.78, 2.82, 2.83, 2.84]
