"""PERF001/PERF002 over the corpus nccl-tests outputs: hand-checked expectations, numbers and verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from topodiag import parsers
from topodiag.checks import perf
from topodiag.engine import Severity
from topodiag.model import build
from topodiag.profiles import load_profiles
from topodiag.records import ParsedInput

from .wording import worded

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "fixtures" / "nccl_tests"
PARAMS = {"min_fraction": 0.8, "min_size_bytes": 268435456}


def parse(name: str):
    raw = (TESTS / name).read_text(encoding="utf-8", errors="replace")
    return parsers.get("nccl_tests").parse(parsers.blank_provenance_header(raw))


def p1(name: str, **kw) -> list:
    """PERF001 on one run, with the profile the pipeline would choose (unless one is given)."""
    from topodiag.model import Topology
    from topodiag.pipeline import choose_profile

    parsed = parse(name)
    if "profile" not in kw:
        kw["profile"] = choose_profile(None, Topology(), [parsed])[0]
    return list(perf.perf001(parsed, kw.pop("params", PARAMS), **kw))


def p2(name: str) -> list:
    return list(perf.perf002(parse(name)))


def problem(h) -> str:
    """A PERF002 hit's problem, as its message says it: "wrong results", "test failure", ..."""
    return worded("PERF002", h).split(":", 1)[0].removeprefix("nccl-tests ")


# -- PERF001 -----------------------------------------------------------------------------------

def test_2x8_h100_ndr_155_fails_against_8_nics_x_50():
    [h] = p1("nccltests-allreduce-2x8h100-ndr-degraded-155-srun-prefix-01.txt")
    assert h.severity is None  # rule default (error)
    assert (h.values["busbw"], h.values["size"], h.values["expected"]) == ("155.57", "8 GiB", "400")
    assert "busbw 155.57 GB/s at 8 GiB is 39% of the expected 400 GB/s (below 0.8 x)" in worded("PERF001", h)
    assert "dgx-h100" in h.values["how"] and "8 x 50 GB/s" in h.values["how"]
    assert h.expectation == h.values["how"]
    assert set(h.subjects) == {"host:node005", "host:node007"}


def test_ring_90_is_22_percent():
    [h] = p1("nccltests-allreduce-2x8h100-ndr-ring-degraded-90-srun-prefix-01.txt")
    assert " is 22% of the expected" in worded("PERF001", h)


@pytest.mark.parametrize("name", [
    "nccltests-allreduce-h100-a3mega-2node-tcpxo-01.txt",                 # 338.8 >= 0.8 x 400
    "nccltests-allreduce-h200-4gpu-v2.19.7-two-runs-cuda-failure-md-01.txt",  # 354.9 >= 0.8 x 346
])
def test_healthy_runs_pass(name):
    assert p1(name) == []


def test_two_runs_all_reduce_passes_and_all_gather_is_not_judged_as_all_reduce():
    [h] = p1("nccltests-invented-two-tests-sequential-wrong-oob-failed-01.txt")
    assert h.severity == Severity.INFO and h.values["run"] == 2 and " not judged; " in worded("PERF001", h)


def test_a100_234_passes_with_the_gpu_model_from_nvlink_s():
    items = []
    for source, path in (("nccl_tests", "fixtures/nccl_tests/nccltests-allreduce-dgxa100-4gpu-nvswitch-234-01.txt"),
                         ("nvidia_smi_nvlink_s", "fixtures/nvidia_smi_nvlink_s/nvlink-s-a100-sxm4-12links-25gbs-elided-01.txt")):
        text = (REPO / path).read_text(encoding="utf-8")
        items.append(ParsedInput(source, path, parsers.get(source).parse(parsers.blank_provenance_header(text))))
    topo = build(items)
    result = items[0].result
    assert list(perf.perf001(result, PARAMS, topology=topo)) == []
    # The derived number is 300 GB/s one-way NVLink3 x 0.77 = 231 GB/s: at 1.02 x it would fail.
    [h] = perf.perf001(result, {**PARAMS, "min_fraction": 1.02}, topology=topo)
    assert h.values["expected"] == "231" and "A100" in h.values["how"] and "0.77" in h.values["how"]
    assert "names no hosts" in h.values["how"]


def test_a100_234_alone_cannot_be_judged_and_says_why():
    [h] = p1("nccltests-allreduce-dgxa100-4gpu-nvswitch-234-01.txt")
    assert h.severity == Severity.INFO and "no '# Rank' lines" in worded("PERF001", h)


def test_a100_234_with_the_dgx_a100_profile_passes_and_a_higher_bar_fails():
    profile = load_profiles()["dgx-a100"]
    # No "# Rank" lines: the profile alone does not make it an in-node run (hosts unknown).
    assert p1("nccltests-allreduce-dgxa100-4gpu-nvswitch-234-01.txt", profile=profile)[0].severity == Severity.INFO
    [h] = p1("nccltests-allreduce-h200-4gpu-v2.19.7-two-runs-cuda-failure-md-01.txt",
             profile=profile, params={**PARAMS, "min_fraction": 1.6})
    assert h.values["expected"] == "230" and "profile dgx-a100" in h.values["how"]


def test_small_sizes_only_give_an_info_that_the_run_cannot_be_judged():
    [h] = p1("nccltests-allreduce-gb10-spark-v2.20-banner-01.txt")
    assert h.severity == Severity.INFO and h.values["size"] == "64 KiB"
    assert "at 64 KiB cannot be judged: the largest size is below 256 MiB" in worded("PERF001", h)


def test_pcie_v100_levelled_short_run_is_judged_against_pcie_p2p_and_passes():
    # 4x V100 PCIe (Gen3, no NVLink) levels off at ~11.2 GB/s from 32 MiB to 128 MiB: the PCIe P2P
    # expectation is 16 GB/s x 0.70 = 11.2 GB/s (knowledge/busbw.toml), 11.2 >= 0.7 x 11.2: healthy.
    assert p1("nccltests-allreduce-v100-pcie-4gpu-nccl2.4-oldformat-01.txt") == []


def test_pcie_v100_far_below_pcie_p2p_is_a_warning():
    # The same run judged with min_fraction 2.0: 11.2 GB/s is below 2.0 x 11.2 -> the finding states
    # the PCIe expectation and how it was derived (hand-computed: Gen3 x16 16 GB/s x 0.7 = 11.2).
    [h] = p1("nccltests-allreduce-v100-pcie-4gpu-nccl2.4-oldformat-01.txt", params={**PARAMS, "min_fraction": 2.0})
    assert h.severity is None and h.values["expected"] == "11"  # the rule's own severity (warning)
    assert "PCIe P2P" in h.values["how"] and "Gen3 x16 16 GB/s" in h.values["how"]


def test_geforce_pcie_run_is_judged_against_host_staged_copies():
    # 4x RTX 4090 (GeForce: no GPU P2P by design) at ~25.9 GB/s: above the staged 32 x 0.35 = 11.2 GB/s.
    assert p1("nccltests-allreduce-4x-rtx4090-pcie-256m-2g-26-01.txt") == []
    [h] = p1("nccltests-allreduce-4x-rtx4090-pcie-256m-2g-26-01.txt", params={**PARAMS, "min_fraction": 3.0})
    assert h.values["expected"] == "11" and "host-staged" in h.values["how"]


@pytest.mark.parametrize("name, why", [
    ("nccltests-allreduce-h100-2node-2gpu-147busbw-01.txt", "no profile or IB port list"),
    ("nccltests-sendrecv-a100-8gpu-nvlink-01.txt", "no busbw baseline for sendrecv"),
    ("nccltests-invented-v2.20-bitwise-timestamp-columns-01.txt", "no busbw baseline for reduce_scatter"),
])
def test_runs_without_a_baseline_are_info_only(name, why):
    [h] = p1(name)
    assert h.severity == Severity.INFO and why in worded("PERF001", h)


def test_one_rank_runs_are_left_to_perf002():
    assert p1("nccltests-allreduce-h100-nompi-build-busbw-zero-01.txt") == []


def test_unnamed_collective_is_recognised_from_the_rows():
    rows = [{"size_bytes": 1 << 30, "count": 1 << 28, "type": "float", "redop": "sum", "root": -1}]
    assert perf._looks_like_all_reduce(rows)
    assert not perf._looks_like_all_reduce([{**rows[0], "count": 1 << 25}])  # all_gather-like count
    assert not perf._looks_like_all_reduce([{**rows[0], "redop": "none"}])


# -- PERF002 -----------------------------------------------------------------------------------

def test_busbw_zero_nranks_1_is_a_build_without_mpi():
    [h] = p2("nccltests-allreduce-h100-nompi-build-busbw-zero-01.txt")
    assert problem(h) == "every rank ran alone" and "MPI=1" in worded("PERF002", h)


def test_duplicated_rank_0_runs_on_two_hosts():
    [h] = p2("nccltests-allreduce-v100-2node-10gbe-dup-banner-01.txt")
    assert "2 processes on different hosts" in worded("PERF002", h)


def test_wrong_and_out_of_bounds():
    found = {problem(h): h for h in p2("nccltests-invented-two-tests-sequential-wrong-oob-failed-01.txt")}
    assert set(found) == {"wrong results", "validation failed"}
    assert "in-place 1024" in worded("PERF002", found["wrong results"])
    assert found["wrong results"].evidence[0].line_no == 49
    assert found["validation failed"].evidence[0].line_no == 50


def test_cuda_failure_lines():
    [h] = p2("nccltests-alltoall-h800-v2.17.6-cuda-failure-01.txt")
    assert problem(h) == "test failure" and "first at line 33" in worded("PERF002", h)
    assert "illegal memory access" in worded("PERF002", h)


def test_failure_count_is_every_line_not_the_kept_list(monkeypatch):
    """The fixture's 7 failure lines (33-39: the CUDA failure, then 6 "Test failure" lines) with the
    list capped at 3: 3 kept, a lists-not-kept note, and PERF002 counts all 7, on the line path and on
    the chunk path alike."""
    import io

    from topodiag.parsers import nccl_tests

    name = "nccltests-alltoall-h800-v2.17.6-cuda-failure-01.txt"
    monkeypatch.setattr(nccl_tests, "LIST_CAP", 3)
    raw = parsers.blank_provenance_header((TESTS / name).read_text(encoding="utf-8"))
    for r in (nccl_tests.parse(raw), nccl_tests.parse_binary(io.BytesIO(raw.encode()))):
        assert [f.line_no for f in r.failures] == [33, 34, 35] and r.failures_total == 7
        assert any("not kept" in n for n in r.notes)
        [h] = list(perf.perf002(r))
        assert "test failure: 7 failure line(s) and no result rows" in worded("PERF002", h)
        assert h.values["line_no"] == 33
    monkeypatch.setattr(nccl_tests, "LIST_CAP", 1000)
    assert parse(name).failures_total == 7 and len(parse(name).failures) == 7


def test_two_separate_multi_rank_runs_are_not_every_rank_alone():
    problems = [problem(h) for h in p2("nccltests-allreduce-h200-4gpu-v2.19.7-two-runs-cuda-failure-md-01.txt")]
    assert problems == ["test failure"]


@pytest.mark.parametrize("name", [
    "nccltests-allreduce-2x8h100-ndr-degraded-155-srun-prefix-01.txt",
    "nccltests-allreduce-dgxa100-4gpu-nvswitch-234-01.txt",
    "nccltests-allreduce-h100-a3mega-2node-tcpxo-01.txt",
    "nccltests-sendrecv-a100-8gpu-nvlink-01.txt",
])
def test_clean_runs_give_nothing(name):
    assert p2(name) == []


def _with_ibstat(tests_name: str, ibstat: str):
    items = []
    for source, path in (("nccl_tests", f"fixtures/nccl_tests/{tests_name}"), ("ibstat", f"fixtures/ibstat/{ibstat}")):
        text = (REPO / path).read_text(encoding="utf-8")
        items.append(ParsedInput(source, path, parsers.get(source).parse(parsers.blank_provenance_header(text))))
    return items[0].result, build(items)


def test_across_nodes_from_the_topology_ib_ports():
    # 3 Active NDR 400 Gb/s ports; 2 GPUs per node use at most 2 of them: 2 x 50 = 100 GB/s; 147.98 passes.
    result, topo = _with_ibstat("nccltests-allreduce-h100-2node-2gpu-147busbw-01.txt", "ibstat-cx7-ndr-400-ib-active-h20-01.txt")
    assert list(perf.perf001(result, PARAMS, topology=topo)) == []
    [h] = perf.perf001(result, {**PARAMS, "min_fraction": 1.5}, topology=topo)
    assert h.values["expected"] == "100" and "2 active IB port(s) per node (topology) x 400 Gb/s" in h.values["how"]


# -- PERF003 -----------------------------------------------------------------------------------
# Values read off the raw rows by hand (busbw = the better of out-of-place / in-place per row).
P3 = {"max_drop_fraction": 0.6, "min_size_bytes": 67108864}


def p3(name: str) -> list:
    return list(perf.perf003(parse(name), P3))


def test_collapse_after_32_mib_is_reported_with_both_rows():
    [h] = p3("nccltests-allreduce-degraded-collapse-tagged-output-01.txt")
    v = h.values
    # line 13: 33554432 ... 29.50 (oop) / 28.14 (ip); line 14: 67108864 ... 5.27 / 5.27;
    # last row 536870912 ... 5.31 / 5.33
    assert (v["peak"], v["peak_size"], v["from_size"]) == ("29.5", "32 MiB", "64 MiB")
    assert (v["last"], v["last_size"], v["ratio"]) == ("5.33", "512 MiB", "18%")
    assert [e.line_no for e in h.evidence] == [13, 14]


def test_gather_drop_after_1_5_gib():
    [h] = p3("nccl-ib-roce-mixed-gdr-2.16-gather-01.log")
    v = h.values
    # line 104: 1610612736 ... in-place 23.61; line 140: 6442450944 ... 10.51 / 11.76 (< 0.6 x 23.61)
    assert (v["peak"], v["peak_size"], v["from_size"], v["last"]) == ("23.61", "1.5 GiB", "6 GiB", "10.91")
    assert v["collective"] == "gather"


@pytest.mark.parametrize("name", [
    "nccltests-allreduce-dgxa100-4gpu-nvswitch-234-01.txt",  # in-place outlier at 4 GiB, oop 230+
    "nccltests-allreduce-2x8h100-ndr-ring-degraded-90-srun-prefix-01.txt",  # 89.9 of 102.27: 88%
    "nccltests-allreduce-2x8h100-ndr-degraded-155-srun-prefix-01.txt",  # 155.57 of 167.87: 93%
    "nccltests-allreduce-h100-a3mega-2node-tcpxo-01.txt",
    "nccltests-allreduce-v100-pcie-4gpu-nccl2.4-oldformat-01.txt",  # largest 128 MiB, flat at 11.2
    "nccltests-allreduce-gb10-spark-v2.20-banner-01.txt",  # only small sizes: not judged
])
def test_flat_or_rising_curves_pass(name):
    assert p3(name) == []


def test_banners_back_to_back_are_separate_jobs_but_sequential_runs_are_not():
    from topodiag.checks import perf
    from topodiag.parsers import nccl_tests

    banner = "# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
    dev = "#  Rank  0 Group  0 Pid    798 on       hw14 device  0 [0x0f] NVIDIA H800\n"
    header = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
              "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n")
    row = "  1073741824     268435456     float     sum      -1   4800.0  223.69  391.46      0   4800.0  223.69  391.46      0\n"
    separate = nccl_tests.parse(banner + banner + dev)
    [h] = [h for h in perf.perf002(separate) if h.variant == "alone_banners"]
    assert h.values["processes"] == 2
    sequential = nccl_tests.parse(banner + dev + header + row + banner + dev + header + row)
    assert [h for h in perf.perf002(sequential) if h.variant.startswith("alone")] == []


# -- short runs and plateaus (issue 10) ----------------------------------------------------------

_BANNER = "# nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
_HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
           "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n")


def _row(size: int, busbw: float) -> str:
    count = size // 4
    algbw = busbw / 1.75
    t = size / (algbw * 1e3)
    return f"{size:12d} {count:13d}     float     sum      -1 {t:8.1f} {algbw:7.2f} {busbw:7.2f}      0 {t:8.1f} {algbw:7.2f} {busbw:7.2f}      0\n"


def _run(points, devices: bool = True) -> dict:
    from topodiag.parsers import nccl_tests

    devs = "".join(f"#  Rank  {i} Group  0 Pid   1234 on       node1 device  {i} [0x{i:02x}] NVIDIA H100 80GB HBM3\n"
                   for i in range(8)) if devices else ""
    return nccl_tests.parse(_BANNER + devs + "#\n" + _HEADER + "".join(_row(s, b) for s, b in points))


_MIB = 1 << 20
_PARAMS = {"min_fraction": 0.8, "min_size_bytes": 256 * _MIB, "short_min_bytes": 64 * _MIB, "short_margin": 0.1,
           "level_spread": 0.1, "plateau_gbps": 10.0}


def _perf001(points, devices: bool = True):
    from topodiag.checks import perf

    return list(perf.perf001(_run(points, devices), _PARAMS))


def test_a_short_run_that_levelled_off_is_judged_with_a_wider_tolerance():
    # -e 128M on 8x H100 (expected ~370 GB/s from NVLink x 0.77): levelled near 120 GB/s from 32 MiB
    [h] = _perf001([(16 * _MIB, 110.0), (32 * _MIB, 118.0), (64 * _MIB, 121.0), (128 * _MIB, 123.0)])
    assert h.variant == "default" and "short" in h.notes and h.values["min_fraction"] == 0.7
    assert h.values["level_from"] == "32 MiB" or h.values["level_from"] == "64 MiB"


def test_a_short_run_still_climbing_is_not_judged():
    [h] = _perf001([(32 * _MIB, 60.0), (64 * _MIB, 110.0), (128 * _MIB, 190.0)])
    assert h.variant == "too_small" and h.severity == Severity.INFO


def test_a_short_run_near_the_expectation_passes():
    assert _perf001([(64 * _MIB, 300.0), (128 * _MIB, 310.0)]) == []  # 84% of 370: above 0.7


def test_a_flat_plateau_of_a_few_gbs_with_no_device_lines_is_a_warning():
    [h] = _perf001([(256 * _MIB, 3.1), (512 * _MIB, 3.2), (1024 * _MIB, 3.2)], devices=False)
    assert h.variant == "plateau" and h.severity == Severity.WARNING
    assert h.values["slowest"] and float(h.values["slowest_busbw"]) > 100
    # ... but a climbing curve, or a figure above the ceiling, stays the info that says why not judged
    [h] = _perf001([(256 * _MIB, 1.0), (512 * _MIB, 2.0), (1024 * _MIB, 4.0)], devices=False)
    assert h.variant == "no_hosts" and h.severity == Severity.INFO
    [h] = _perf001([(256 * _MIB, 40.0), (512 * _MIB, 41.0), (1024 * _MIB, 41.0)], devices=False)
    assert h.variant == "no_hosts"


def test_perf004_names_the_node_of_every_slow_pair_and_clears_partners():
    from topodiag.checks import perf_pairs
    from topodiag.parsers import busbw_pairs

    table = busbw_pairs.parse("na,nb 90\nna,nc 88\nnc,nd 47\nnb,nd 46\nne,nf 40\n")
    found = list(perf_pairs.perf004(table, {"min_fraction": 0.8}))
    named = [h for h in found if h.variant == "default"]
    assert [tuple(h.subjects) for h in named] == [("host:nd",)] and "cleared" in named[0].notes
    [pair] = [h for h in found if h.variant == "pair_only"]
    assert tuple(pair.subjects) == ("host:ne", "host:nf")
    # all within 20% of the best: nothing
    assert list(perf_pairs.perf004(busbw_pairs.parse("na,nb 90\nna,nc 80\nnb,nc 75\n"), {"min_fraction": 0.8})) == []


# -- PERF002: failed runs by their catalogue class, runs that measured nothing (issue 26) ---------------

def test_failed_run_names_its_cause_class_meaning_and_fix():
    [h] = p2("nccltests-allreduce-1024rank-h100-unhandled-cuda-error-322-01.txt")
    text = worded("PERF002", h)
    assert problem(h) == "test failure" and h.severity == Severity.ERROR
    assert "first at line 38: HCA-128: Test NCCL failure common.cu:1204 'unhandled cuda error" in text
    assert "(cuda-failure: An NCCL call of the test failed with ncclUnhandledCudaError" in text and "Fix: " in text
    assert "no result rows" not in text  # five rows were measured first


def test_failure_before_any_row_says_so():
    [h] = p2("nccltests-allreduce-4x2080ti-docker-unhandled-system-error-nccl473-01.txt")
    text = worded("PERF002", h)
    assert problem(h) == "test failure" and "no result rows" in text and "system-failure" in text
    [h] = p2("nccltests-hypercube-5090-g8-invalid-device-ordinal-289-01.txt")
    assert "'invalid device ordinal'" in worded("PERF002", h) and h.values["line_no"] == 11  # not the trace line (line 12)


def test_banner_then_nothing_is_an_error_never_ok():
    [h] = p2("nccltests-allreduce-8xa800-pcie-stuck-no-rows-nccl1027-01.txt")
    assert problem(h) == "no result rows" and h.severity is None  # the rule's own: error
    assert "the benchmark stopped before measuring anything" in worded("PERF002", h)
    assert "8 rank line(s)" in worded("PERF002", h)


def test_a_fragment_after_the_banner_is_not_judged_empty():
    from topodiag.parsers import nccl_tests

    fragment = nccl_tests.parse("#  Rank  1 Group  0 Pid   2832 on   testgpu1 device  1 [0x03] NVIDIA A100-PCIE-40GB\n"
                                "NCCL version 2.19.3+cuda12.3\n")
    assert list(perf.perf002(fragment)) == []


def test_only_ignored_options_are_a_warning():
    from topodiag.parsers import nccl_tests

    text = (_BANNER + "Option -R (register) is not supported before NCCL 2.19. Ignoring\n" + _HEADER
            + _row(1 << 27, 100.0))
    [h] = list(perf.perf002(nccl_tests.parse(text)))
    assert h.severity == Severity.WARNING and "benchmark-option-ignored" in worded("PERF002", h)
