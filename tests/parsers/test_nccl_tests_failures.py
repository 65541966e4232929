"""nccl-tests' failure lines through the nccl-tests catalogue (topodiag/catalogues/data/nccl-tests.json):
every catalogued message, as nccl-tests prints it (its host prefix, an srun "0: " prefix, an OpenMPI
tag), is read by the nccl_tests parser as a failure of that entry; the generator's --check finds every
failure format of the newest tag it recorded in the catalogue; the real failure fixtures, by hand."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from topodiag import catalogues
from topodiag.catalogues import fmt
from topodiag.parsers import blank_provenance_header, nccl_tests
from topodiag.parsers import nccl_tests_failures as failures

REPO = Path(__file__).resolve().parents[2]
FX = REPO / "fixtures" / "nccl_tests"
DATA = json.loads((REPO / "topodiag" / "catalogues" / "data" / "nccl-tests.json").read_text())
BANNER = ("# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 "
          "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
          "#  Rank  0 Group  0 Pid  21488 on     node-a device  0 [0x07] NVIDIA A100-SXM4-80GB\n")
PREFIXES = ["", "0: ", "[1,0]<stdout>:"]


def rendered(raw: dict) -> str:
    """One line nccl-tests prints for this entry: its format with the host name nccl-tests puts first
    ("%s: Test CUDA failure %s:%d '%s'" -> "node-a: Test CUDA failure common.cu:3 '...'"), else the
    curated example of a pattern entry."""
    if raw.get("format") is None:
        return raw["example"]
    text = raw["format"].strip()
    if text.startswith("%s"):
        text = "node-a" + text[2:]
    if text.startswith(".. %s"):
        text = ".. node-a" + text[5:]
    return fmt.example(text)


ENTRIES = [(e["id"], rendered(e)) for e in DATA["entries"]]


@pytest.mark.parametrize("prefix", PREFIXES, ids=["bare", "srun", "mpi-tag"])
def test_every_catalogued_message_is_read_as_its_entry(prefix):
    text = BANNER + "".join(prefix + line + "\n" for _, line in ENTRIES)
    r = nccl_tests.parse(text)
    by_line = {f.line_no: f for f in r.failures}
    missed = []
    for i, (eid, line) in enumerate(ENTRIES):
        f = by_line.get(5 + i)
        got = f["entry"] if f is not None else None
        if got != eid and not (got and _as_specific(got, eid, line)):
            missed.append((eid, line, got))
    assert not missed, f"{len(missed)} of {len(ENTRIES)}: {missed[:5]}"
    assert r.unrecognised == ()
    assert nccl_tests.parse_binary(io.BytesIO(text.encode())).failures == r.failures  # the chunk engine too


def _as_specific(got: str, eid: str, line: str) -> bool:
    """Another entry whose format renders the same line with as much fixed text (two releases' formats
    of one message) is as good an answer."""
    by_id = {e.id: e for cat in catalogues.for_reader("nccl_tests") for e in cat.entries}
    a, b = by_id.get(got), by_id[eid]
    return a is not None and a.specificity >= b.specificity and re.match(a.pattern, line.strip()) is not None


def test_ncclgeterrorstring_texts_decide_the_class():
    cases = {
        "fastmoe: Test NCCL failure common.cu:777 'unhandled system error'": "system-failure",
        "HCA-1: Test NCCL failure common.cu:1204 'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / '":
            "cuda-failure",
        "dell03: Test NCCL failure common.cu:1012 'internal error - please report this issue to the NCCL developers / '":
            "internal-bug",
        "nid6: Test NCCL failure common.cu:958 'invalid usage (run with NCCL_DEBUG=WARN for details) / '": "api-misuse",
        "node1: Test NCCL failure common.cu:1065 'remote process exited or there was a network error / x'":
            "remote-failure",
        "node1: Test NCCL failure common.cu:1065 'some text of a newer NCCL / '": "benchmark-failure",
    }
    for line, cls in cases.items():
        assert catalogues.classify_for("nccl_tests", line).entry.cls == cls, line


def test_a_marked_line_no_entry_explains_is_unrecognised():
    r = nccl_tests.parse(BANNER + "Segmentation fault (core dumped)\n")
    assert [(f.line_no, f["class"]) for f in r.failures] == [(5, None)]
    assert [f.line_no for f in r.unrecognised] == [5]


def test_text_lines_the_catalogue_does_not_know_are_not_failures():
    text = BANNER + "Please see this FAQ entry for more details\nmust be root to run this\n"
    r = nccl_tests.parse(text)
    assert r.failures == () and r.unrecognised == ()


def test_usage_errors_and_ignored_options_are_read():
    text = (BANNER.replace("#  Rank", "Option -R (register) is not supported before NCCL 2.19. Ignoring\n#  Rank")
            + "Invalid number of GPUs: 8 requested but only 2 were found.\n"
            + "Please check the number of processes and GPUs per process.\n")
    r = nccl_tests.parse(text)
    assert [(f["entry"], f["severity"]) for f in r.failures] == [
        ("nccl_tests.option_r_register_is_not_supported_before", "warning"),
        ("nccl_tests.invalid_number_of_gpus_requested_but_only", "error"),
        ("nccl_tests.please_check_the_number_of_processes_and", "error"),
    ]


def test_generator_check_finds_every_recorded_format_offline(monkeypatch, capsys):
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import catalogue_nccl_tests as gen
    finally:
        sys.path.remove(str(REPO / "tools"))
    assert gen.main(["--check"]) == 0
    src = DATA["sources"][0]
    assert src["formats_tag"] == src["tags"][-1] and len(src["formats"]) >= 50
    for needed in ("%s: Test CUDA failure %s:%d '%s'\n", "%s: Test NCCL failure %s:%d '%s / %s'\n",
                   " .. %s pid %d: Test failure %s:%d\n", "%s: Test timeout (%ds) %s:%d\n"):
        assert needed in src["formats"]
    # a format of the newest tag with no entry is reported
    broken = json.loads(json.dumps(DATA))
    broken["sources"][0]["formats"].append("%s: Test FOO failure %d\n")
    assert any("not catalogued" in p for p in gen.check(broken))


def test_provenance_points_at_the_producers_sources():
    for e in DATA["entries"]:
        (w,) = e["where"]
        assert w["repo"] in ("NVIDIA/nccl-tests", "NVIDIA/nccl") and w["line"] > 0
        if w["repo"] == "NVIDIA/nccl":
            assert w["file"] == "src/init.cc"
        else:
            assert re.match(r"^(src|verifiable)/", w["file"])


# --- the real failure fixtures, by hand -------------------------------------------------------------

def load(name: str):
    return nccl_tests.parse(blank_provenance_header((FX / name).read_text(encoding="utf-8")))


def test_322_rows_then_unhandled_cuda_error_on_every_rank():
    r = load("nccltests-allreduce-1024rank-h100-unhandled-cuda-error-322-01.txt")
    assert [row.size_bytes for row in r.rows] == [1 << 30, 1 << 31, 1 << 32, 1 << 33, 1 << 34]
    causes = [f for f in r.failures if f["entry"] == "nccl_tests.nccl_error.unhandled_cuda_error"]
    traces = [f for f in r.failures if f["entry"] == "nccl_tests.pid_test_failure"]
    assert len(causes) == 7 and len(traces) == 6 and causes[0].text.startswith("HCA-128: Test NCCL failure")
    assert r.unrecognised == ()


def test_473_unhandled_system_error_before_any_row():
    r = load("nccltests-allreduce-4x2080ti-docker-unhandled-system-error-nccl473-01.txt")
    assert r.rows == () and len(r.devices) == 4
    [f] = r.failures
    assert f["class"] == "system-failure" and f.text.startswith("fastmoe: Test NCCL failure common.cu:777")


def test_289_invalid_device_ordinal_before_the_rank_lines():
    r = load("nccltests-hypercube-5090-g8-invalid-device-ordinal-289-01.txt")
    assert r.rows == () and r.devices == () and r.collective == "hypercube"
    assert [f["class"] for f in r.failures] == ["cuda-failure", "benchmark-failure"]
    assert "'invalid device ordinal'" in r.failures[0].text


def test_1027_banner_and_rank_lines_then_nothing():
    r = load("nccltests-allreduce-8xa800-pcie-stuck-no-rows-nccl1027-01.txt")
    assert r.rows == () and r.failures == () and len(r.devices) == 8 and r.parameters["ngpus"] == 8


# --- the row path pays nothing; the chunk engine past the cut still reads them ----------------------

HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
          "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n")


def _rows(n: int) -> str:
    return "".join(f"  {8 << (i % 20):>10}  {2 << (i % 20):>12}     float     sum      -1    10.00    0.00    0.00      0"
                   "    10.00    0.00    0.00      0\n" for i in range(n))


def test_results_rows_never_reach_the_catalogue(monkeypatch):
    calls = []
    real = failures.recognise
    monkeypatch.setattr(failures, "recognise", lambda s: calls.append(s) or real(s))
    r = nccl_tests.parse(BANNER + HEADER + _rows(2000) + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.5\n")
    assert len(r.rows) == 2000 and r.failures == ()
    assert calls == []  # no row, rank line, banner or summary line is looked up


def test_catalogued_lines_past_the_cut_are_read_by_both_engines(monkeypatch):
    """Past the cut (runs only counted, not kept) the chunk engine settles most lines in bytes; a
    catalogued line must still reach the catalogue, line by line and in a bulk-sieved chunk."""
    monkeypatch.setattr(nccl_tests, "RUN_ROWS_CAP", 400)
    bad = "Invalid number of GPUs: 8 requested but only 2 were found.\n"
    runs = [BANNER + HEADER + _rows(200) for _ in range(4)]
    runs[2] = BANNER + bad + HEADER + _rows(200)  # a run not kept, read one line at a time
    runs[3] = BANNER + HEADER + _rows(100) + bad + _rows(100)  # its own chunk: sieved in bulk
    text = "".join(runs)
    whole = nccl_tests.parse(text)
    assert any("runs (from run" in n for n in whole.notes)  # the cut was reached
    assert [(f.line_no, f["entry"]) for f in whole.failures] == [
        (2 * 206 + 5, "nccl_tests.invalid_number_of_gpus_requested_but_only"),
        (2 * 206 + 207 + 107, "nccl_tests.invalid_number_of_gpus_requested_but_only")]
    assert nccl_tests.parse_binary(io.BytesIO(text.encode())).failures == whole.failures
    chunked = nccl_tests.parse_chunks(run.encode() for run in runs)
    assert chunked.failures == whole.failures


def test_recognise_keeps_its_answer_per_text_until_the_catalogues_are_loaded_again():
    """A log repeats its launcher lines: `recognise` answers a text it was asked before from `_seen`
    (the same frozen Match or None), and starts over when the catalogues are loaded again."""
    line = ENTRIES[0][1]  # a catalogued message as nccl-tests prints it
    other = "Unable to do nothing in particular"  # a hint word, no entry (invented for this test)
    first = failures.recognise(line)
    assert first is not None and first.entry.cls
    assert first == failures._recognise(line) and failures.recognise(line) is first
    assert failures.recognise(other) is None and failures._seen[other] is None
    catalogues.for_reader.cache_clear()
    assert failures.recognise(line) == first and list(failures._seen) == [line]
