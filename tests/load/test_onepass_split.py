"""A big file that both chunk parsers read (nccl_debug and nccl_tests) is read in two processes, one
parser whole in each (topodiag/scan/onepass.py `_split`): the results equal the one-process read's,
a ParseError keeps its line number across the pipe, and a worker that dies costs time only (this
process reads its parsers itself)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from topodiag.scan import onepass, parallel
from topodiag.parsers import ParseError, blank_provenance_header, nccl_debug, nccl_tests
from topodiag.parsers.base import to_jsonable

ROOT = Path(__file__).resolve().parent.parent.parent
LOGS = sorted(p for folder in ("nccl_tests", "nccl_debug") for p in (ROOT / "fixtures" / folder).iterdir()
              if p.is_file() and not p.name.endswith(".json"))


def _plain(results: list) -> list:
    return [("ParseError", r.message, r.line_no) if isinstance(r, ParseError) else to_jsonable(r) for r in results]


def _one_process(path: Path, parsers) -> list:
    with open(path, "rb") as f:
        return onepass._read(parsers, ((c, None) for c in parsers[0].iter_chunks(f)))


@pytest.fixture
def split_on(monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    # idle threads left by earlier tests would keep the loader in one process; this is about two
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    used = []
    real = onepass._split

    def spying(parsers, handle):
        out = real(parsers, handle)
        used.append(out is not onepass._NOT_SPLIT)
        return out

    monkeypatch.setattr(onepass, "_split", spying)
    return used


def _split_read(path: Path, parsers, used: list) -> list:
    with open(path, "rb") as f:
        if not parallel.worth_it(list(parsers), f):
            pytest.skip("no fork or one CPU: the loader reads in one process")
        got = onepass.parse_together(parsers, f)
    assert used == [True]
    return got


def test_both_parsers_in_two_processes_equal_one(tmp_path, split_on) -> None:
    path = tmp_path / "cluster.log"
    path.write_text("".join(blank_provenance_header(p.read_text(encoding="utf-8", errors="replace")) for p in LOGS * 2),
                    encoding="utf-8")
    parsers = [nccl_tests, nccl_debug]
    want = _plain(_one_process(path, parsers))
    assert isinstance(want[0], dict) and want[0]["runs"] > 20 and isinstance(want[1], dict)
    assert _plain(_split_read(path, parsers, split_on)) == want


def test_a_parse_error_keeps_its_line_across_the_pipe(tmp_path, split_on) -> None:
    """A log with no nccl-tests output: nccl_tests (read in the worker) refuses it with the line of
    its first text, exactly as in one process."""
    path = tmp_path / "nccl.log"
    path.write_text("\n\nnode1:1:2 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\n"
                    "node1:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 1000 - Init COMPLETE\n",
                    encoding="utf-8")
    parsers = [nccl_debug, nccl_tests]
    want = _plain(_one_process(path, parsers))
    assert want[1][0] == "ParseError" and want[1][2] == 3
    assert _plain(_split_read(path, parsers, split_on)) == want


def test_a_worker_that_dies_costs_time_not_the_result(tmp_path, split_on, monkeypatch) -> None:
    path = tmp_path / "cluster.log"
    path.write_text("".join(blank_provenance_header(p.read_text(encoding="utf-8", errors="replace")) for p in LOGS),
                    encoding="utf-8")
    parsers = [nccl_tests, nccl_debug]
    want = _plain(_one_process(path, parsers))

    def dies(*args):
        os._exit(3)

    monkeypatch.setattr(onepass, "_read_file", dies)
    assert _plain(_split_read(path, parsers, split_on)) == want


def test_the_next_big_file_is_split_too(tmp_path, monkeypatch) -> None:
    """After a split the pool's thread has ended, so a second big file of the same run (a bundle with
    two logs) is read in two processes as well: the real thread count, not a patched one."""
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    path = tmp_path / "cluster.log"
    path.write_text("".join(blank_provenance_header(p.read_text(encoding="utf-8", errors="replace")) for p in LOGS),
                    encoding="utf-8")
    used = []
    real = onepass._split
    monkeypatch.setattr(onepass, "_split", lambda ps, h: used.append(real(ps, h)) or used[-1])
    parsers = [nccl_tests, nccl_debug]
    with open(path, "rb") as f:
        if not parallel.worth_it(parsers, f):
            pytest.skip("no fork, one CPU, or threads left running by earlier tests: one process")
    for _ in range(2):
        with open(path, "rb") as f:
            onepass.parse_together(parsers, f)
    assert [u is not onepass._NOT_SPLIT for u in used] == [True, True]


@pytest.mark.parametrize("workers", ["3", "5"])
def test_more_cores_digest_for_both_sides(tmp_path, split_on, monkeypatch, workers) -> None:
    """With more cores than the two readers (TOPODIAG_WORKERS=3, 5), each side's chunks are digested by
    workers of its own (this side's in the split pool, the other side's forked by its reader), and the
    results are still the one-process read's."""
    monkeypatch.setenv("TOPODIAG_WORKERS", workers)
    path = tmp_path / "cluster.log"
    path.write_text("".join(blank_provenance_header(p.read_text(encoding="utf-8", errors="replace")) for p in LOGS * 2),
                    encoding="utf-8")
    parsers = [nccl_tests, nccl_debug]
    want = _plain(_one_process(path, parsers))
    asked = []
    real = parallel.digested_with

    def spying(iter_chunks, digests, handle, n, pool=None, **kw):
        asked.append(n)
        return real(iter_chunks, digests, handle, n, pool, **kw)

    monkeypatch.setattr(parallel, "digested_with", spying)
    fed = []  # this side's reader (nccl_debug, the heavier: READ_WEIGHT): whether each chunk came with its digest
    real_feed = nccl_debug.ChunkReader.feed
    monkeypatch.setattr(nccl_debug.ChunkReader, "feed", lambda self, raw, dg=None: fed.append(dg is not None)
                        or real_feed(self, raw, dg))
    assert _plain(_split_read(path, parsers, split_on)) == want
    assert asked == [(int(workers) - 2 + 1) // 2]  # this side's share of the cores beyond two
    assert fed and all(fed)


def test_the_side_done_first_digests_for_the_other(tmp_path, split_on, monkeypatch) -> None:
    """On two cores neither side has a digest worker; once the other side's process has read its
    parser (nccl_tests, in the worker), it digests this side's chunks (nccl_debug, here made slow by
    a pause in its merge): some chunks come with their digest, and the results are the one-process
    read's."""
    import time

    from topodiag.parsers.nccl_debug import reader

    monkeypatch.setenv("TOPODIAG_WORKERS", "2")
    monkeypatch.setattr(reader, "CHUNK", 1 << 13)  # many chunks from a small file
    path = tmp_path / "cluster.log"
    path.write_text("".join(blank_provenance_header(p.read_text(encoding="utf-8", errors="replace")) for p in LOGS),
                    encoding="utf-8")
    # (nccl_debug first: the one-process read cuts the file as it does; the split reads nccl_debug
    # here, its sampled digest made the cheaper)
    parsers = [nccl_debug, nccl_tests]
    want = _plain(_one_process(path, parsers))
    monkeypatch.setattr(onepass, "_sampled_costs", lambda ps, h: [0.0, 1.0])  # nccl_debug here, as said
    fed = []  # this side's reader (nccl_debug): whether each chunk came with its digest
    real_feed = nccl_debug.ChunkReader.feed

    def slow_feed(self, raw, dg=None):
        fed.append(dg is not None)
        time.sleep(0.02)  # this side is the slower one, whatever the machine
        return real_feed(self, raw, dg)

    monkeypatch.setattr(nccl_debug.ChunkReader, "feed", slow_feed)
    assert _plain(_split_read(path, parsers, split_on)) == want
    assert len(fed) > 10 and any(fed)


@pytest.mark.parametrize("store", ["kept", "restarted", "failing"])
def test_this_side_done_first_digests_for_the_worker(tmp_path, split_on, monkeypatch, store) -> None:
    """The other way round: the worker's side (nccl_tests, made slow by a pause in its merge) ends
    last, and this process, done with its own, digests the worker's chunks ahead of it and sends them
    down a pipe (topodiag/scan/lend.py): some are given, and the results are the one-process read's --
    also when the digests' file starts again after each (STORE_MAX 1 byte), and when it cannot be
    written (a full /dev/shm: none given, the worker digests them all)."""
    import time

    from topodiag.parsers.nccl_debug import reader
    from topodiag.parsers.nccl_tests import stream
    from topodiag.scan import lend

    monkeypatch.setenv("TOPODIAG_WORKERS", "2")
    for module in (reader, nccl_debug, nccl_tests):  # both cut the file the same way: 8 KiB chunks
        monkeypatch.setattr(module, "CHUNK", 1 << 13)
    monkeypatch.setattr(nccl_tests, "iter_chunks", small_chunks)  # (module-level: sent to the worker)
    path = tmp_path / "cluster.log"
    path.write_text("".join(blank_provenance_header(p.read_text(encoding="utf-8", errors="replace")) for p in LOGS),
                    encoding="utf-8")
    parsers = [nccl_debug, nccl_tests]
    want = _plain(_one_process(path, parsers))
    monkeypatch.setattr(onepass, "_sampled_costs", lambda ps, h: [0.0, 1.0])  # nccl_tests in the worker
    real_feed = stream.ChunkReader.feed

    def slow_feed(self, raw, dg=None):  # (in the worker: the fork keeps the patch)
        time.sleep(0.02)
        return real_feed(self, raw, dg)

    monkeypatch.setattr(stream.ChunkReader, "feed", slow_feed)
    given = []
    real_give = lend.Lend.give

    def counting(self, cuts, digests, p, busy):
        real_give(self, cuts, digests, p, busy)
        given.append(self.given)

    monkeypatch.setattr(lend.Lend, "give", counting)
    if store == "restarted":
        monkeypatch.setattr(lend, "STORE_MAX", 1)
    if store == "failing":
        def full(*args):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(lend.os, "pwrite", full)
    assert _plain(_split_read(path, parsers, split_on)) == want
    assert len(given) == 1 and (given[0] == 0 if store == "failing" else given[0] > 5)


def small_chunks(handle):
    from topodiag.scan import chunks

    return chunks.iter_chunks(handle, 1 << 13)


@pytest.mark.parametrize("here", ["nccl_tests", "nccl_debug"])
def test_either_reader_here_gives_the_same_results(tmp_path, split_on, monkeypatch, here) -> None:
    """On two cores the reader whose digest of a sample costs less stays in this process (`_sides`);
    with either one here (the sample's costs set), the results are the one-process read's, in the
    parsers' order."""
    monkeypatch.setenv("TOPODIAG_WORKERS", "2")
    path = tmp_path / "cluster.log"
    path.write_text("".join(blank_provenance_header(p.read_text(encoding="utf-8", errors="replace")) for p in LOGS),
                    encoding="utf-8")
    parsers = [nccl_tests, nccl_debug]
    want = _plain(_one_process(path, parsers))
    costs = [0.0, 1.0] if here == "nccl_tests" else [1.0, 0.0]
    monkeypatch.setattr(onepass, "_sampled_costs", lambda ps, h: list(costs))
    sides = []
    real = onepass._sides
    monkeypatch.setattr(onepass, "_sides", lambda ps, c=None: sides.append(real(ps, c)) or sides[-1])
    assert _plain(_split_read(path, parsers, split_on)) == want
    assert [p.__name__.rsplit(".", 1)[1] for p in sides[0][1]] == [here]


def test_the_sides_follow_the_sampled_costs_then_the_weights() -> None:
    """The cheaper sampled digest here; without costs (more cores), the heavier by READ_WEIGHT
    (nccl_debug's 1.3 against nccl_tests' 1 unsaid)."""
    parsers = [nccl_tests, nccl_debug]
    assert onepass._sides(parsers, [0.002, 0.005]) == ([0, 1], [nccl_tests], [nccl_debug])
    assert onepass._sides(parsers, [0.009, 0.005]) == ([1, 0], [nccl_debug], [nccl_tests])
    assert onepass._sides(parsers) == ([1, 0], [nccl_debug], [nccl_tests])
    assert onepass._sides(parsers, [0.001]) == ([1, 0], [nccl_debug], [nccl_tests])  # not one a parser


def test_the_sample_is_whole_lines_from_the_middle(tmp_path, monkeypatch) -> None:
    """`_sampled_costs` digests the same whole lines with each parser (read by offset: the handle
    stays where it was), and gives None where SAMPLE bytes hold no whole line or a digest raises."""
    monkeypatch.setattr(onepass, "SAMPLE", 64)
    seen = []

    class Reader:
        def __init__(self, fail=None):
            self.fail = fail

        def digest(self, chunk):
            seen.append(chunk)
            if self.fail:
                raise self.fail

    path = tmp_path / "log"
    path.write_bytes(b"".join(b"line %03d\n" % i for i in range(100)))  # 9 bytes a line, 900 in all
    with open(path, "rb") as f:
        f.seek(9)
        got = onepass._sampled_costs([Reader(), Reader()], f)
        assert f.tell() == 9
    assert len(got) == 2 and all(isinstance(c, float) and c >= 0 for c in got)
    # bytes 422-485 ((900 - 9 - 64) // 2 + 9 = 422): the newline of line 46, lines 47-53 whole
    assert seen[0] == seen[1] == b"".join(b"line %03d\n" % i for i in range(47, 54))
    for error in (ParseError("no", 1), IndexError("a digest's own bug")):
        with open(path, "rb") as f:
            assert onepass._sampled_costs([Reader(), Reader(error)], f) is None
    path.write_bytes(b"x" * 900)  # one giant line: no whole line in the sample
    with open(path, "rb") as f:
        assert onepass._sampled_costs([Reader(), Reader()], f) is None
    path.write_bytes(b"")  # an empty file: nothing to sample
    with open(path, "rb") as f:
        assert onepass._sampled_costs([Reader(), Reader()], f) is None
    path.write_bytes(b"line 000\nline 0")  # one newline, a truncated line after it: no line both starts
    with open(path, "rb") as f:          # and ends in the sample (its first bytes may be a line's tail)
        assert onepass._sampled_costs([Reader()], f) is None
