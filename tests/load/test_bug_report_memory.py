"""What the loader keeps of an nvidia-bug-report does not grow with its count of kernel-log sections:
past the first KEEP_WHOLE, each section's lists keep their first KEEP_LATER entries (totals whole) and
its input status says so (topodiag/load/bug_report.py, kernel_log.cut_lists); tracemalloc at 1x and
8x the sections, the results kept as `gather` keeps them. A regular file is read past MAX_BYTES; a
gzip one, or one read from stdin, is not."""

from __future__ import annotations

import gzip
import sys
import tracemalloc

import pytest

from topodiag.load import bug_report
from topodiag.load.gather import gather

SEP = "_" * 44
PROLOGUE = "Start of NVIDIA bug report log file.  Please include this file, along\nuname: Linux gpu-7 6.5.0 #1 SMP x86_64\n"


def _section(k: int) -> str:
    rows = []
    for i in range(120):
        t = f"[{k * 1000 + i:>8}.{i:06d}]"
        rows.append(f"{t} NVRM: Xid (PCI:0000:{i % 8 + 16:02x}:00): 13, pid={i}, name=python, Graphics Exception {i}")
        rows.append(f"{t} mlx5_core 0000:{i % 4 + 1:02x}:00.0: Port module event: module 0, Cable plugged {i}")
        rows.append(f"{t} mlx5_core 0000:{i % 4 + 1:02x}:00.0 ib{i % 4}: Link {'down' if i % 2 else 'up'}")
    return f"\n{SEP}\n\ndmesg:\n\n" + "\n".join(rows) + "\n"


def _write(path, sections: int) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write(PROLOGUE)
        for k in range(sections):
            out.write(_section(k))


def _kept(path) -> tuple[int, list]:
    tracemalloc.start()
    try:
        got = gather([str(path)])
        return tracemalloc.get_traced_memory()[0], got
    finally:
        tracemalloc.stop()


def test_what_is_kept_of_many_kernel_logs_does_not_grow_with_them(tmp_path, monkeypatch):
    monkeypatch.setattr(bug_report, "KEEP_WHOLE", 4)
    monkeypatch.setattr(bug_report, "KEEP_LATER", 8)
    _write(tmp_path / "small.log", 16)
    _write(tmp_path / "big.log", 128)
    gather([str(tmp_path / "small.log")])  # the modules and their caches loaded before measuring
    (small, a), (big, b) = _kept(tmp_path / "small.log"), _kept(tmp_path / "big.log")
    logs = [p.result for p in b.parsed if p.source == "kernel_log"]
    assert len(logs) == 128 and all(x.xids_total == 120 and x.link_events_total == 120 for x in logs)
    assert [len(x.xids) for x in logs[:5]] == [120, 120, 120, 120, 8] and len(logs[-1].link_events) == 8
    lines = (tmp_path / "big.log").read_text().split("\n")
    first = next(n for n, line in enumerate(lines, 1) if line.startswith("[  127000.000000] NVRM: Xid"))
    assert logs[-1].xids[0].line_no == first  # the file's line numbers, as for the whole sections
    notes = [s.reason for s in b.statuses if s.source == "kernel_log"]
    assert notes[:4] == [""] * 4 and all("keeps at most its first 8 entries" in n for n in notes[4:])
    assert notes[4].startswith("kernel log 5 of this input (past the first 4)")
    # 8x the sections: what is kept grows by the bounded results only (~2 KB each, not ~100 KB)
    assert big < 1.5 * small + 112 * 8 * 1024, (small, big)


def test_a_regular_file_is_read_past_max_bytes_a_gzip_is_not(tmp_path, monkeypatch):
    _write(tmp_path / "r.log", 8)
    monkeypatch.setattr(bug_report, "MAX_BYTES", 1000)
    got = gather([str(tmp_path / "r.log")])
    assert not got.problems and len(got.parsed) == 8
    (tmp_path / "r.log.gz").write_bytes(gzip.compress((tmp_path / "r.log").read_bytes()))
    got = gather([str(tmp_path / "r.log.gz")])
    assert not got.parsed and "larger than" in got.problems[0].reason
    with open(tmp_path / "r.log", encoding="utf-8") as stdin:  # `-`: spooled to an unnamed file, capped
        monkeypatch.setattr(sys, "stdin", stdin)
        got = gather(["-"])
    assert not got.parsed and "larger than" in got.problems[0].reason


@pytest.mark.parametrize("workers", ["1", "3"])
def test_workers_cut_the_later_sections_as_this_process_does(tmp_path, monkeypatch, workers):
    from topodiag.load import _bug_report_par as P
    from topodiag.parsers import to_jsonable
    from topodiag.scan import workers as W

    monkeypatch.setattr(bug_report, "KEEP_WHOLE", 3)
    monkeypatch.setattr(P, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv(W.ENV, workers)
    _write(tmp_path / "r.log", 9)
    got = gather([str(tmp_path / "r.log")])
    monkeypatch.setattr(P, "PARALLEL_MIN_BYTES", None)
    one = gather([str(tmp_path / "r.log")])
    assert [to_jsonable(p.result) for p in got.parsed] == [to_jsonable(p.result) for p in one.parsed]
    assert [s.reason for s in got.statuses] == [s.reason for s in one.statuses]
    assert [len(p.result.xids) for p in got.parsed] == [120] * 3 + [bug_report.KEEP_LATER] * 6


@pytest.mark.parametrize("small_blocks", [False, True])
@pytest.mark.parametrize("cap", [1, 5, 16, 150])
def test_a_log_read_with_a_cap_is_the_whole_log_cut(cap, small_blocks, monkeypatch):
    """kernel_log._Log(cap): the lists of repeated events fill at `cap` (so fewer lines are read in
    order): the result is cut_lists of the log read whole, on every kernel-log fixture."""
    from tests.fixtures_index import parser_fixtures
    from topodiag.parsers import _kernel_log_block as B
    from topodiag.parsers import blank_provenance_header, kernel_log as K, to_jsonable

    texts = [blank_provenance_header(fx.text()) for fx in parser_fixtures()
             if fx.source == "kernel_log" and "parse_error" not in fx.expected()]
    texts.append("\n".join(_section(k)[len(SEP) + 11:] for k in range(3)))
    if small_blocks:  # lists that fill inside a block, or at its edge
        monkeypatch.setattr(B, "FIRST_BLOCK_LINES", 2)
        monkeypatch.setattr(B, "BLOCK_LINES", 16)
    cut = 0
    for text in texts:
        if text.lstrip()[:1] == "{":
            continue  # the probe's JSON: read whole by parse_lines, never capped
        st = K._Log(cap)
        for block in B.blocks(text.splitlines()):
            B.feed(st, block, K._line)
        whole = K.parse(text)
        assert to_jsonable(K._finish(st)) == to_jsonable(K.cut_lists(whole, cap))
        cut += K.cut_lists(whole, cap) is not whole
    assert cut >= (5 if cap == 1 else 1)  # the generated log (120 of each) at least
