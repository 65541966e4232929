"""nccl_tests parser: the facts each corpus file's `#@ expected:` line states, written by hand (independent
of the .expected.json files), plus edge cases of the format."""

from __future__ import annotations

from pathlib import Path

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect
from topodiag.parsers import nccl_tests
from topodiag.parsers.base import to_jsonable

FX = Path(__file__).resolve().parent.parent.parent / "fixtures" / "nccl_tests"


def load(name: str):
    return nccl_tests.parse(blank_provenance_header((FX / name).read_text(encoding="utf-8")))


def busbw(row) -> list[float]:
    return [v for v in (row.oop_busbw_gbps, row.ip_busbw_gbps) if v is not None]


def large(report, min_bytes: int):
    return [r for r in report.rows if r.size_bytes >= min_bytes]


# --- the corpus files ----------------------------------------------------------------------------

def test_2x8h100_ndr_degraded_155_srun_prefix() -> None:
    r = load("nccltests-allreduce-2x8h100-ndr-degraded-155-srun-prefix-01.txt")
    assert r.nranks == 16 and {d.host for d in r.devices} == {"node005", "node007"}
    assert r.parameters["min_bytes"] == 8388608 and r.parameters["iters"] == 200
    assert r.parameters["validation"] == 0
    assert all(row.oop_wrong is None and row.ip_wrong is None for row in r.rows)  # validation 0 -> N/A
    big = large(r, 134217728)
    assert all(143 <= v <= 168 for row in big for v in busbw(row))  # plateau ~144-167 GB/s
    assert all(76 <= row.oop_algbw_gbps <= 90 for row in big)
    assert r.peak_busbw_gbps == 167.87
    assert r.avg_busbw_gbps == 142.735
    assert r.out_of_bounds == 0 and r.out_of_bounds_ok is True
    assert len(r.rows) == 11 and r.rows[0].line_no == 30


def test_2x8h100_ring_degraded_90() -> None:
    r = load("nccltests-allreduce-2x8h100-ndr-ring-degraded-90-srun-prefix-01.txt")
    assert r.parameters == {}  # the parameter line was not pasted
    assert r.nranks == 16
    big = large(r, 33554432)
    assert all(87 <= v <= 103 for row in big for v in busbw(row))
    assert all(46 <= row.oop_algbw_gbps <= 55 for row in big)  # about one NDR NIC worth
    assert r.peak_busbw_gbps == 102.27 and r.avg_busbw_gbps == 85.5294


def test_collapse_with_glued_rank_tags() -> None:
    r = load("nccltests-allreduce-degraded-collapse-tagged-output-01.txt")
    assert len(r.rows) == 10  # the first line is the tail of a row: skipped, and said so
    assert any("line 7" in n and "partial" in n for n in r.notes)
    by_size = {row.size_bytes: row for row in r.rows}
    assert by_size[33554432].oop_busbw_gbps == 29.5 and by_size[33554432].oop_time_us == 2180.1
    assert by_size[67108864].oop_time_us == 24410.0
    assert all(max(busbw(row)) < 5.5 for row in large(r, 67108864))  # the cliff
    assert r.peak_busbw_gbps == 29.5
    assert by_size[1048576].root == -1 and by_size[1048576].oop_wrong == 0


def test_dgxa100_nvswitch_234() -> None:
    r = load("nccltests-allreduce-dgxa100-4gpu-nvswitch-234-01.txt")
    assert r.devices == () and r.nranks is None and r.collective is None
    assert [row.size_bytes for row in r.rows] == [1073741824, 2147483648, 4294967296, 8589934592]
    assert all(224 <= row.oop_busbw_gbps <= 235 for row in r.rows)
    assert r.rows[2].ip_busbw_gbps == 164.13  # the in-place outlier at 4 GiB
    assert r.avg_busbw_gbps == 222.066 and r.peak_busbw_gbps == 234.74


def test_gb10_newest_banner() -> None:
    r = load("nccltests-allreduce-gb10-spark-v2.20-banner-01.txt")
    assert r.nccl_tests_version == "2.20.0"
    assert r.nccl_version == "2.31.2" and r.nccl_headers_version == "2.31.2"
    assert r.collective == "all_reduce"
    assert r.parameters["unalign"] == 0 and r.parameters["step_factor"] == 2
    assert r.nranks == 2 and [d.bus_id for d in r.devices] == ["000f:01:00", "000f:01:00"]
    assert all(row.oop_algbw_gbps == row.oop_busbw_gbps for row in r.rows)  # 2 ranks: algbw == busbw
    assert r.rows[-1].size_bytes == 65536 and r.rows[-1].ip_busbw_gbps == 1.01
    assert r.avg_busbw_gbps is None  # the fragment stops before the summary


def test_h100_2node_2gpu_147() -> None:
    r = load("nccltests-allreduce-h100-2node-2gpu-147busbw-01.txt")
    assert r.nranks == 4 and r.parameters["ngpus"] == 2
    assert {d.pid for d in r.devices} == {1462688, 2485837}  # one process per node
    big = large(r, 1 << 30)
    assert all(146 <= v <= 148 for row in big for v in busbw(row))
    assert all(97 <= row.oop_algbw_gbps <= 99 for row in big)
    assert {row.size_bytes: row for row in r.rows}[16384].oop_time_us == 291.4  # the slow outlier
    assert r.avg_busbw_gbps == 48.0299
    assert r.collective == "all_reduce"  # from the echoed mpirun command line


def test_a3mega_tcpxo() -> None:
    r = load("nccltests-allreduce-h100-a3mega-2node-tcpxo-01.txt")
    assert r.nranks == 16 and len({d.host for d in r.devices}) == 2
    assert r.rows[-1].size_bytes == 8589934592
    assert r.rows[-1].oop_busbw_gbps == 338.82 and r.rows[-1].oop_algbw_gbps == 180.71
    assert r.peak_busbw_gbps == 338.82 and r.avg_busbw_gbps == 70.742
    assert all(120 <= row.ip_time_us <= 125 for row in r.rows[:8])  # ~123 us small-message latency


def test_nompi_build_busbw_zero() -> None:
    r = load("nccltests-allreduce-h100-nompi-build-busbw-zero-01.txt")
    assert len(r.rows) == 24
    assert all(v == 0.0 for row in r.rows for v in busbw(row))
    assert all(row.ip_time_us < 0.6 for row in r.rows)
    assert any(row.ip_algbw_gbps == 1747057.96 for row in r.rows)
    assert r.avg_busbw_gbps == 0.0
    assert r.nranks == 1  # NCCL's "rank 0 nranks 1 ... Destroy COMPLETE"
    assert any("MPI=1" in n and "busbw is 0" in n for n in r.notes)
    assert any("interleaved" in n for n in r.notes)  # sizes repeat out of order


def test_v100_dup_banner_two_one_rank_runs() -> None:
    r = load("nccltests-allreduce-v100-2node-10gbe-dup-banner-01.txt")
    assert r.runs == 2
    assert [d.rank for d in r.devices] == [0, 0]
    assert {d.host for d in r.devices} == {"ip-172-31-20-228", "ip-172-31-22-230"}
    assert all(d.group is None for d in r.devices)  # old device lines have no Group
    assert r.nranks == 1
    assert any(n.startswith("2 independent 1-rank runs: nccl-tests not built with MPI=1") for n in r.notes)
    assert r.rows == ()
    assert r.parameters["step_bytes"] == 1048576 and "agg_iters" not in r.parameters


def test_v100_pcie_old_format_error_column() -> None:
    r = load("nccltests-allreduce-v100-pcie-4gpu-nccl2.4-oldformat-01.txt")
    assert r.nranks == 4 and len({d.pid for d in r.devices}) == 1  # one process, 4 GPUs
    assert all(row.root is None for row in r.rows)  # no root column
    assert all(row.oop_wrong is None and row.oop_error is not None for row in r.rows)
    assert r.rows[0].oop_error == 1e-07 and r.rows[0].ip_error == 0.0
    assert r.rows[-1].ip_error == 2e-07
    assert all(11.0 <= max(busbw(row)) <= 11.2 for row in large(r, 8388608))  # PCIe Gen3 plateau
    assert r.avg_busbw_gbps == 4.42606


def test_alltoall_cuda_failure() -> None:
    r = load("nccltests-alltoall-h800-v2.17.6-cuda-failure-01.txt")
    assert r.nccl_tests_version == "2.17.6" and r.nccl_version == "2.28.7"
    assert r.collective == "alltoall" and r.nranks == 16
    assert r.rows == () and r.avg_busbw_gbps is None and r.peak_busbw_gbps is None
    first = r.failures[0]
    assert first.size_bytes == 2097152
    assert first.text == "node0: Test CUDA failure common.cu:389 'an illegal memory access was encountered'"
    assert len(r.failures) == 7 and r.failures[-1].text.endswith("common.cu:1368")


def test_sendrecv_a100() -> None:
    r = load("nccltests-sendrecv-a100-8gpu-nvlink-01.txt")
    assert r.collective == "sendrecv"
    assert all(row.oop_algbw_gbps == row.oop_busbw_gbps for row in r.rows)
    assert r.rows[-1].size_bytes == 1073741824 and r.rows[-1].ip_busbw_gbps == 195.56
    assert all(row.ip_wrong is None and row.oop_wrong == 0 for row in r.rows)  # in-place #wrong N/A


def test_collnet_log_table_among_nccl_info() -> None:
    text = blank_provenance_header((FX / "nccl-collnet-sharp-fallback-ib-gdrdma-01.log").read_text())
    assert detect(text) == "nccl_tests"
    r = nccl_tests.parse(text)
    assert r.nccl_version == "2.23.4" and r.nranks == 8 and len({d.host for d in r.devices}) == 4
    assert any("Cannot initialize CollNet" in w.text for w in r.warnings)
    assert len(r.rows) == 15
    assert all(21 <= row.oop_busbw_gbps <= 22 for row in large(r, 67108864))  # ~21.7 GB/s
    assert r.avg_busbw_gbps == 8.69534


def test_gather_log_with_reduced_maxbytes() -> None:
    r = load("nccl-ib-roce-mixed-gdr-2.16-gather-01.log")
    assert r.collective == "gather" and r.nccl_version == "2.16.5" and r.nranks == 2
    assert all(row.root == 0 and row.redop == "none" for row in r.rows)
    assert r.parameters["max_bytes_reduced_to"] == 12703978837
    assert all(16.9 <= row.oop_busbw_gbps <= 21 for row in r.rows if row.size_bytes < 6442450944)
    assert all(row.oop_busbw_gbps < 12.5 for row in r.rows if row.size_bytes >= 6442450944)


def test_h200_two_runs_first_aborts() -> None:
    r = load("nccltests-allreduce-h200-4gpu-v2.19.7-two-runs-cuda-failure-md-01.txt")
    assert r.runs == 2 and r.nranks == 4
    assert r.nccl_version == "2.18.3" and any("2.18.3, 2.31.2" in n for n in r.notes)
    assert r.failures[0].run == 0 and "Test CUDA failure common.cu:502" in r.failures[0].text
    assert [row.run for row in r.rows] == [1, 1]
    assert all(353 <= row.oop_busbw_gbps <= 357 for row in r.rows)


def test_invented_sequential_tests_and_failed_validation() -> None:
    r = load("nccltests-invented-two-tests-sequential-wrong-oob-failed-01.txt")
    assert r.runs == 2 and r.collective == "all_reduce"
    assert [row.run for row in r.rows] == [0, 0, 0, 1, 1, 1]
    assert r.rows[-1].ip_wrong == 1024
    assert r.out_of_bounds == 1 and r.out_of_bounds_ok is False  # summed over runs
    assert any("FAILED" in f.text and f.run == 1 for f in r.failures)
    assert any("all_reduce, all_gather" in n for n in r.notes)


def test_invented_bitwise_and_timestamp_columns() -> None:
    r = load("nccltests-invented-v2.20-bitwise-timestamp-columns-01.txt")
    last = r.rows[-1]
    assert (last.oop_time_us, last.oop_busbw_gbps, last.ip_time_us, last.ip_busbw_gbps) == (5876.3, 22.84, 5880.1, 22.83)
    assert last.ip_wrong == 0  # the #bitdiff column (96) is not #wrong
    assert any("Bitwise mismatches" in f.text for f in r.failures)


# --- healthy anchors (real published runs) -------------------------------------------------------

def test_8xh100_single_node_nvls_476() -> None:
    r = load("nccltests-allreduce-8xh100-nvls-476-single-node-01.txt")
    assert r.nranks == 8 and {d.model for d in r.devices} == {"NVIDIA H100 80GB HBM3"}
    assert {d.host for d in r.devices} == {"node005"} and len({d.pid for d in r.devices}) == 1  # -g 8
    assert r.parameters["ngpus"] == 8 and r.parameters["iters"] == 2
    assert r.collective is None  # no command line, no "Collective test starting"
    assert [row.size_bytes for row in r.rows] == [134217728 << i for i in range(6)]
    last = r.rows[-1]
    assert last.size_bytes == 4294967296
    assert (last.oop_busbw_gbps, last.ip_busbw_gbps) == (473.60, 476.53)  # NVLS, ~480 GB/s anchor
    assert last.oop_algbw_gbps == 270.63
    assert all(464 <= v <= 477 for row in large(r, 1 << 30) for v in busbw(row))
    assert r.peak_busbw_gbps == 476.53 and r.avg_busbw_gbps == 439.369


def test_2x8h100_ndr_nvlstree_469_with_mpi_noise() -> None:
    r = load("nccltests-allreduce-2x8h100-ndr-nvlstree-469-xpmem-warning-01.txt")
    assert r.nranks == 16 and {d.host for d in r.devices} == {"bm-h100-01", "bm-h100-02"}
    assert [d.rank for d in r.devices] == list(range(16))  # the MPI help lines inside the list are skipped
    assert r.devices[0].bus_id == "0000:19:00" and r.devices[-1].bus_id == "0000:db:00"
    assert r.nccl_version == "2.26.2" and r.collective == "all_reduce"
    assert r.parameters["max_bytes"] == 17179869184
    assert len(r.rows) == 32 and r.rows[0].size_bytes == 8 and r.rows[0].line_no == 53
    last = r.rows[-1]
    assert last.size_bytes == 17179869184
    assert (last.oop_busbw_gbps, last.ip_busbw_gbps) == (469.21, 469.10)
    assert all(249 <= row.oop_algbw_gbps <= 251 for row in large(r, 8589934592))
    assert {row.size_bytes: row for row in r.rows}[256].oop_time_us == 94.40  # small-size outlier
    assert r.peak_busbw_gbps == 469.21 and r.avg_busbw_gbps == 139.56
    assert r.failures == () and r.out_of_bounds_ok is True


def test_2x8h100_ib400_ring_392_wrapped_command() -> None:
    r = load("nccltests-allreduce-2x8h100-ib400-ring-392-wrapped-cmd-01.txt")
    assert r.nranks == 16 and {d.host for d in r.devices} == {"0666a154", "b749a9b0"}
    assert r.collective == "all_reduce"  # from the echoed command, wrapped before "-f 2 -g 1"
    assert r.parameters["min_bytes"] == 1048576 and r.parameters["max_bytes"] == 8589934592
    assert len(r.rows) == 14
    last = r.rows[-1]
    assert last.size_bytes == 8589934592
    assert (last.oop_busbw_gbps, last.ip_busbw_gbps) == (392.69, 392.30)  # ring: the 8x400G network limit
    assert last.oop_algbw_gbps == 209.43
    assert all(384 <= v <= 393 for row in large(r, 1 << 30) for v in busbw(row))
    assert r.avg_busbw_gbps == 248.186


def test_2x8h100_oci_roce_465() -> None:
    r = load("nccltests-allreduce-2x8h100-oci-roce-465-01.txt")
    assert r.nranks == 16 and len({d.host for d in r.devices}) == 2
    assert {d.model for d in r.devices} == {"NVIDIA H100 80GB HBM3"}
    assert r.collective == "all_reduce"
    assert [row.size_bytes for row in r.rows] == [1073741824 << i for i in range(5)]
    last = r.rows[-1]
    assert (last.oop_busbw_gbps, last.ip_busbw_gbps) == (464.57, 464.79)
    assert all(445 <= v <= 465 for row in r.rows for v in busbw(row))
    assert r.peak_busbw_gbps == 464.79 and r.avg_busbw_gbps == 458.452


def test_8xa100_sxm4_80gb_232() -> None:
    r = load("nccltests-allreduce-8xa100-sxm4-80gb-232-01.txt")
    assert r.nranks == 8 and {d.model for d in r.devices} == {"NVIDIA A100-SXM4-80GB"}
    assert {d.host for d in r.devices} == {"thanos"} and r.parameters["ngpus"] == 8
    assert r.collective == "all_reduce"
    assert len(r.rows) == 30 and r.rows[0].size_bytes == 8
    by_size = {row.size_bytes: row for row in r.rows}
    assert [by_size[s].oop_busbw_gbps for s in (1 << 30, 1 << 31, 1 << 32)] == [227.83, 230.13, 232.44]
    assert by_size[1 << 32].ip_busbw_gbps == 231.59 and by_size[1 << 32].oop_algbw_gbps == 132.82
    assert by_size[536870912].ip_busbw_gbps == 221.02  # in-place faster than out-of-place (203.03) at 512 MiB
    assert r.peak_busbw_gbps == 232.44 and r.avg_busbw_gbps == 66.2058


def test_8xa100_mpirun_help_lines_between_rows() -> None:
    r = load("nccltests-allreduce-8xa100-sxm4-80gb-mpirun-help-lines-01.txt")
    assert r.nranks == 8 and len({d.pid for d in r.devices}) == 8  # one process per GPU
    assert {d.model for d in r.devices} == {"NVIDIA A100-SXM4-80GB"}
    assert len(r.rows) == 30  # the two "help message" lines are not rows and do not cut the table
    assert r.rows[0].line_no == 25 and r.rows[-1].line_no == 55
    last = r.rows[-1]
    assert last.size_bytes == 4294967296
    assert (last.oop_busbw_gbps, last.ip_busbw_gbps) == (232.81, 232.93)
    assert r.rows[0].ip_time_us == 17.74
    assert r.peak_busbw_gbps == 232.93 and r.avg_busbw_gbps == 72.7724
    assert r.failures == ()


def test_8xa100_sxm4_40gb_oci_single_size() -> None:
    r = load("nccltests-allreduce-8xa100-sxm4-40gb-oci-bm-gpu4-232-01.txt")
    assert r.nranks == 8 and {d.model for d in r.devices} == {"NVIDIA A100-SXM4-40GB"}
    assert len(r.rows) == 1
    row = r.rows[0]
    assert row.size_bytes == 10737418240 and row.count == 2684354560
    assert (row.oop_busbw_gbps, row.ip_busbw_gbps) == (232.04, 231.54)
    assert row.oop_algbw_gbps == 132.60
    assert r.avg_busbw_gbps == 231.793


def test_8xh200_single_node_nvls_477() -> None:
    r = load("nccltests-allreduce-8xh200-nvls-477-8gib-01.txt")
    assert r.nranks == 8 and {d.model for d in r.devices} == {"NVIDIA H200"}
    assert {d.bus_id for d in r.devices} == {"0x00"}  # the VM reports bus id 0x00 for every GPU
    assert r.nccl_version == "2.19.3" and r.collective == "all_reduce"
    assert len(r.rows) == 1
    row = r.rows[0]
    assert row.size_bytes == 8589934592
    assert (row.oop_busbw_gbps, row.ip_busbw_gbps) == (476.96, 476.98)
    assert row.oop_algbw_gbps == 272.55
    assert r.avg_busbw_gbps == 476.967


# --- edge cases ----------------------------------------------------------------------------------

MODERN = """# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   4242 on     node01 device  0 [0x1b] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   4242 on     node01 device  1 [0x43] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    16.03    0.00    0.00      0    15.73    0.00    0.00      0
          16             4     float     sum      -1    15.67    0.00    0.00      0    15.84    0.00    0.00      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.001
#
"""


def test_crlf_ansi_tabs_and_indentation_read_the_same() -> None:
    plain = to_jsonable(nccl_tests.parse(MODERN))
    crlf = MODERN.replace("\n", "\r\n")
    assert to_jsonable(nccl_tests.parse(crlf)) == plain
    ansi = MODERN.replace("#       size", "\x1b[4m#       size\x1b[0m")
    assert to_jsonable(nccl_tests.parse(ansi)) == plain
    tabs = MODERN.replace("     float     sum      -1", "\tfloat\tsum\t-1")
    assert to_jsonable(nccl_tests.parse(tabs)) == plain
    indented = "".join("    " + line + "\n" for line in MODERN.splitlines())
    assert to_jsonable(nccl_tests.parse(indented)) == plain


def test_streaming_matches() -> None:
    assert nccl_tests.parse_lines(iter(MODERN.splitlines(keepends=True))) == nccl_tests.parse(MODERN)


def test_openmpi_tag_output_prefix() -> None:
    tagged = "".join(f"[1,0]<stdout>:{line}\n" for line in MODERN.splitlines())
    r = nccl_tests.parse(tagged)
    assert len(r.rows) == 2 and r.nranks == 2 and r.avg_busbw_gbps == 0.001


def test_truncated_mid_row() -> None:
    cut = MODERN.split("          16             4")[0] + "          16             4     float     sum      -1    15.67"
    r = nccl_tests.parse(cut)
    assert len(r.rows) == 1 and r.avg_busbw_gbps is None
    cut2 = MODERN.split("    15.84")[0]  # the last row's in-place half cut off
    r2 = nccl_tests.parse(cut2)
    assert len(r2.rows) == 2 and r2.rows[1].ip_time_us is None and r2.rows[1].oop_time_us == 15.67
    assert any("cut after the out-of-place" in n for n in r2.notes)


def test_rows_without_header_infer_layout() -> None:
    old = "        8388608       2097152   float     sum   1141.4    7.35   11.02  2e-07   1133.3    7.40   11.10  2e-07\n"
    row = nccl_tests.parse(old * 2).rows[0]
    assert (row.root, row.oop_error, row.ip_busbw_gbps, row.oop_wrong) == (None, 2e-07, 11.10, None)
    new = "   134217728      33554432     float     sum      -1   1211.2  110.81  110.81      0   1211.8  110.76  110.76    N/A\n"
    row = nccl_tests.parse(new).rows[0]
    assert (row.root, row.oop_wrong, row.ip_wrong, row.oop_error) == (-1, 0, None, None)


def test_cputime_header_and_nan_cells() -> None:
    text = MODERN.replace("root     time", "root  cputime").replace("busbw #wrong     time", "busbw #wrong  cputime")
    text = text.replace("15.73    0.00    0.00      0\n", "15.73     nan    0.00      0\n", 1)
    r = nccl_tests.parse(text)
    assert r.rows[0].oop_time_us == 16.03 and r.rows[0].ip_algbw_gbps is None


def test_many_rank0_lines_under_one_banner() -> None:
    lines = ["# nThread 1 nGpus 1 minBytes 33554432 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20",
             "# Using devices"]
    lines += [f"#  Rank  0 Group  0 Pid {223120 + i} on cnode2-00{1 + i % 2} device  0 [0000:1b:00] NVIDIA H100 80GB HBM3"
              for i in range(12)]
    r = nccl_tests.parse("\n".join(lines))
    assert r.nranks == 1 and r.runs == 1
    assert any(n.startswith("12 independent 1-rank runs") for n in r.notes)


def test_version_codes() -> None:
    assert nccl_tests.version_from_code(23102) == "2.31.2"
    assert nccl_tests.version_from_code(22807) == "2.28.7"
    assert nccl_tests.version_from_code(2708) == "2.7.8"
    assert nccl_tests.collective_name("/opt/nccl-tests/build/all_reduce_perf_mpi") == "all_reduce"


def test_empty_text_is_refused() -> None:
    with pytest.raises(ParseError) as info:
        nccl_tests.parse("")
    assert info.value.line_no == 0
    with pytest.raises(ParseError) as info:
        nccl_tests.parse("\n\n   \n")
    assert "no text" in info.value.message


PERFTEST = """
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF          Device         : mlx5_0
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]
 65536      5000             46781.67            46779.27              0.748468
 1048576    5000             48214.02            48213.88              0.048214
"""

IBSTAT = """CA 'mlx5_0'
\tCA type: MT4129
\tNumber of ports: 1
\tPort 1:
\t\tState: Active
\t\tRate: 400
"""


@pytest.mark.parametrize("text, line_no", [(PERFTEST, 2), (IBSTAT, 1)])
def test_other_tools_output_is_refused_with_a_line_number(text: str, line_no: int) -> None:
    assert nccl_tests.sniff(text) == 0.0
    with pytest.raises(ParseError) as info:
        nccl_tests.parse(text)
    assert info.value.line_no == line_no
    assert "expected nccl-tests output" in info.value.message


def test_sniff_levels() -> None:
    assert nccl_tests.sniff(MODERN) == 0.95
    assert nccl_tests.sniff("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1\n") == 0.9
    rows = MODERN.splitlines()[9:11]
    assert nccl_tests.sniff("\n".join(rows)) == 0.7
    assert nccl_tests.sniff(MODERN.splitlines()[3]) == 0.5  # a device line alone
    assert nccl_tests.sniff("gpu34:34088:34088 [0] NCCL INFO NCCL version 2.23.4+cuda12.4\n") == 0.0


def test_a_huge_log_keeps_a_bounded_result():
    """381k interleaved rows (a 128 MB NCCL log's worth): the first ROW_CAP rows, then only sizes not kept
    yet; the rest counted in a note, so every check's pass over the result stays bounded."""
    from topodiag.parsers import nccl_tests

    head = ("# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20\n"
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
            "   busbw #wrong\n")
    rows = []
    for i in range(20000):
        size = 8 << (i % 31)
        rows.append(f"{size:>12} {size // 4:>13}     float     sum      -1    123.4    1.00    1.75      0    122.9"
                    "    1.00    1.75      0\n")
    big = 1 << 36  # a size first seen past the cap is still kept
    rows.append(f"{big:>12} {big // 4:>13}     float     sum      -1    123.4    9.00    9.75      0    122.9"
                "    9.00    9.50      0\n")
    r = nccl_tests.parse(head + "".join(rows))
    assert len(r.rows) == nccl_tests.ROW_CAP + 1
    assert r.rows[-1].size_bytes == big and r.peak_busbw_gbps == 9.75
    assert any(n.startswith("20001 results rows: 15904 that repeat a size") for n in r.notes)
