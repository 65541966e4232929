"""A progress bar's redraws settled as runs (parsers/nccl_tests/redraws.py): the digest of a chunk read
that way is the digest of the ordinary way (every carriage return made a newline, the lines scanned,
then the failure lines, the bars and the lines of no effect), on generated chunks of bars, runs with
tags, failure words, empty redraws, redraws without a bar, NULs, CRLFs and escape codes among
nccl-tests and NCCL lines; on the fixtures with a job's bars between their lines; and on a chunk of the
progress-bar benchmark's log. Where the runs are all bars the one-blob look counts them all (`_settled`
sends none line by line: the quick way is the one tested, not only the line-by-line one), a run with
tqdm.write's cleared line and message sends only those two lines and a run with a tag or a failure
word every redraw line by line, and hand-checked chunks give their counts."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

from topodiag.parsers.nccl_tests import redraws, stream
from topodiag.scan import lines as _linescan
from tests.parsers.test_nccl_tests_chunks import FILES, _text
from tests.parsers.test_nccl_tests_quiet import BAR, BARS, STEP, _with_a_job


@pytest.fixture
def scan(monkeypatch):
    """The pure-Python line scan, whose path the runs are (with the compiled one `untagged` hands every
    chunk back)."""
    monkeypatch.setattr(_linescan, "compiled", None)
    monkeypatch.setattr(_linescan, "untagged", _linescan.untagged_py)
    # (every chunk read by runs, however many of its runs go line by line: the tests below hold the way
    # that mixes them; test_most_runs_looked_at_again_go_the_ordinary_way holds the limits)
    monkeypatch.setattr(redraws, "WHOLE_MAX", 1)  # (more than every run: never)
    monkeypatch.setattr(redraws, "ODD_MAX", 1)


def _both(monkeypatch, raw: bytes):
    """(the digest by runs, the ordinary digest), the runs tried whatever `worth_it` says."""
    monkeypatch.setattr(redraws, "worth_it", lambda raw: True)
    by_runs = stream.digest(raw)
    monkeypatch.setattr(redraws, "worth_it", lambda raw: False)
    return by_runs, stream.digest(raw)


def _bar(k: int, pct: int = 45) -> str:
    return BAR.replace("450/", f"{k}/").replace(" 45%", f"{pct:3d}%")


PIECES = hst.sampled_from([
    _bar(1), _bar(2, 100), BAR + "   ", "", "step 3 | loss 0.5", "node1:1:1 [0] NCCL INFO Ring 00 : 0 1",
    "node1:1:1 [0] NCCL INFO ", "node1:1:1 [0] NCCL TRACE x", "node1:1:1 [0] NCCL WARN Cuda failure x",
    "Epoch 1: 50%|##| FAILED", "Aborted (core dumped)", " failure", "50% | not a bar", "%|", "%|%|", "\x00",
    "\x1b[A" + BAR, "node1:1:1 [0] NCCL INFO " + BAR, BAR + " NCCL INFO ", BAR + " NCCL TRACE x", BAR + " FAILED",
    "     8388608       2097152     float     sum      -1   100.1   83.80  157.12      0",
    "# Out of bounds values : 0 OK", "NCCL version 2.18.1+cuda12.1", "\t%|", "\xe2\x96\x88", "\x85",
])
# a chunk: lines of runs (redraws joined by a carriage return), a CRLF or a lone CR now and then
RUN = hst.lists(PIECES, min_size=1, max_size=8).map("\r".join)
CHUNK = hst.tuples(hst.lists(RUN, min_size=1, max_size=25), hst.sampled_from(["\n", "\r\n"]),
                   hst.booleans()).map(lambda t: (t[1].join(t[0]) + "\n") if t[2] else "\n".join(t[0]))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=CHUNK)
def test_the_digest_by_runs_is_the_ordinary_digest(scan, monkeypatch, text: str) -> None:
    raw = text.encode("utf-8", "surrogateescape")
    by_runs, ordinary = _both(monkeypatch, raw)
    assert by_runs == ordinary


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=hst.lists(hst.tuples(hst.lists(hst.integers(min_value=0, max_value=1000), min_size=1, max_size=14),
                                 hst.booleans(), hst.integers(min_value=0, max_value=3)), min_size=1, max_size=12),
       between=hst.lists(hst.sampled_from([STEP, "", "node1:1:1 [0] NCCL INFO Ring 00 : 0 1", "# nThread 1 nGpus 1"]),
                         max_size=12))
def test_runs_of_bars_are_settled_in_one_blob(scan, monkeypatch, runs, between) -> None:
    """Runs of bars only, between other lines, each redraw after a carriage return or not (tqdm writes
    one before each: a run's first line is then empty), padded with blanks as tqdm pads a redraw shorter
    than the one before: the one-blob look counts them (not the fallback), and the digest is the
    ordinary one."""
    lines = []
    for k, (steps, lead, pad) in enumerate(runs):
        lines.append(("\r" if lead else "") + "\r".join(_bar(step, step * 100 // 1000) + " " * pad for step in steps))
        lines += between[k:k + 1]
    raw = ("\n".join(lines) + "\n").encode()
    texts = [line for line in raw.split(b"\n")[:-1] if b"\r" in line]
    if texts:
        assert redraws._settled(texts) == (sum(len(steps) for steps, lead, _ in runs if lead or len(steps) > 1), set(),
                                           set())
    by_runs, ordinary = _both(monkeypatch, raw)
    assert by_runs == ordinary
    assert by_runs[4] >= sum(len(steps) for steps, lead, _ in runs if lead or len(steps) > 1)


def test_the_fixtures_with_a_job_between_their_lines(scan, monkeypatch) -> None:
    raw = _with_a_job("".join(_text(p) for p in FILES)).encode("utf-8")
    chunks = raw.splitlines(True)
    for size in (len(chunks), 500, 37):
        for k in range(0, len(chunks), size):
            chunk = b"".join(chunks[k:k + size])
            by_runs, ordinary = _both(monkeypatch, chunk)
            assert by_runs == ordinary
    assert redraws.untagged(raw) is not None  # (the runs are read, not handed back)


def test_a_chunk_of_the_benchmark_log(scan, monkeypatch, tmp_path) -> None:
    from benchmarks import inputs

    path = tmp_path / "progress.log"
    inputs.nccl_progress(path, 1 << 20)
    raw = path.read_bytes()
    raw = raw[:raw.rfind(b"\n", 0, 600_000) + 1]
    by_runs, ordinary = _both(monkeypatch, raw)
    assert by_runs == ordinary and by_runs[4] > 1000
    texts = [line for line in raw.split(b"\n") if b"\r" in line]
    assert all(line.startswith(b"\r") for line in texts)  # (tqdm's: a carriage return before each redraw)
    # the runs that end with tqdm.write's cleared bar and message go line by line, the others' bars count
    written = {k for k, line in enumerate(texts) if b"{'loss': " in line}
    assert 0 < len(written) < len(texts) // 10
    assert redraws._settled(texts) == (sum(line.count(b"\r") for k, line in enumerate(texts) if k not in written),
                                       set(), written)


def test_hand_checked(scan, monkeypatch) -> None:
    """Lines 0-2: a run of three bars (counted); 3: a training step; 4-5: a run of an empty redraw (the
    carriage return that starts it) and one bar; 6: an INFO line (not picked); 7-9: a run whose
    second redraw is a failure line, so all three are picked; 10: a results row."""
    lines = [
        "\r".join([_bar(1), _bar(2), _bar(3)]),
        STEP,
        "\r" + _bar(4),
        "node1:1:1 [0] NCCL INFO Ring 00 : 0 1",
        "\r".join([_bar(5), "Aborted (core dumped)", _bar(6)]),
        "     8388608       2097152     float     sum      -1   100.1   83.80  157.12      0",
    ]
    raw = ("\n".join(lines) + "\n").encode()
    got = redraws.untagged(raw)
    assert got is not None
    n, keep, picked, bars = got
    assert n == 11 and bars == 4
    assert keep == [3, 7, 8, 9, 10]
    assert picked[1:4] == [_bar(5).encode(), b"Aborted (core dumped)", _bar(6).encode()]
    by_runs, ordinary = _both(monkeypatch, raw)
    assert by_runs == ordinary
    assert by_runs[0] == 11 and by_runs[4] == 6  # the four redraws and the two bars beside the failure
    assert 8 in by_runs[3]  # the failure line


@pytest.mark.parametrize("lines, n, bars, keep", [
    (["\r" + _bar(1), STEP], 3, 1, [2]),  # the chunk's first line: an empty redraw, then a bar
    ([_bar(1) + "\r", STEP], None, None, None),  # a CR before the newline: a CRLF's half, the ordinary way
    ([_bar(1) + "\r\r" + _bar(2), STEP], 4, 2, [3]),  # an empty redraw between two bars
    ([_bar(1) + "\rnode1:1:1 [0] NCCL INFO " + _bar(2)], 2, 0, [0]),  # a tagged redraw: its run goes line by line
    ([_bar(1) + "\r" + _bar(2) + " NCCL INFO ", STEP], 3, 0, [0, 1, 2]),  # a bare tag: the line scan picks it
    ([_bar(1) + "\r" + _bar(2) + " NCCL TRACE x"], 2, 0, [0]),
    ([_bar(1) + "\rstep 1\r" + _bar(2)], 3, 2, [1]),  # a redraw without a bar is a line
    ([_bar(1) + "\r\x00\r" + _bar(2)], 3, 0, [0, 1, 2]),  # a NUL (the one-blob look's mark) in a redraw
    ([_bar(1) + "\r" + _bar(2), "\r" + _bar(3)], 4, 3, []),  # a later run starts with an empty redraw
    ([_bar(1) + "\rstep 1", _bar(2) + "\r" + _bar(3)], 4, 3, [1]),  # a run ends with a redraw without a bar
    (["\r" + _bar(1) + "\r" + _bar(2), "step 1\r" + _bar(3)], 5, 3, [3]),  # a bar-less first redraw, not empty
    (["\r" + _bar(1) + "\r    \rsaved checkpoint", "\r" + _bar(2)], 6, 2, [2, 3]),  # tqdm.write: cleared, a message
])
def test_runs_hand_checked(scan, monkeypatch, lines, n, bars, keep) -> None:
    """Runs at the edges of the one-blob look (all but the plain ones go line by line): the counts and
    the lines picked, then the digest against the ordinary one."""
    raw = ("\n".join(lines) + "\n").encode()
    got = redraws.untagged(raw)
    if n is None:
        assert got is None
    else:
        assert got is not None and (got[0], got[3], got[1]) == (n, bars, keep)
    by_runs, ordinary = _both(monkeypatch, raw)
    assert by_runs == ordinary


def test_only_the_runs_that_must_go_line_by_line_do(scan, monkeypatch) -> None:
    """tqdm.write clears the bar (a carriage return, blanks, a carriage return) and writes its message
    after it on the same line: that run's bar is counted, its cleared line and message go line by line;
    a later run holds a failure word, another an INFO tag: every redraw of those two goes line by line;
    the bars of the others are counted at once."""
    plain = "\r" + "\r".join(_bar(k) for k in range(4))
    write = "\r" + _bar(5) + "\r" + " " * 70 + "\r{'loss': 0.25, 'epoch': 1.0}"
    failed = "\r" + _bar(6) + "\rEpoch 1: 50%|##| 7/9 FAILED"
    tagged = "\r" + _bar(8) + "\rnode1:1:1 [0] NCCL INFO Ring 00 : 0 1"
    lines = [plain, STEP, write, plain, failed, tagged, plain]
    texts = [line.encode() for line in lines if "\r" in line]
    bars, whole, odd = redraws._settled(texts)
    assert whole == {3, 4} and odd == {1} and bars == 3 * 4
    n, keep, picked, counted = redraws.untagged(("\n".join(lines) + "\n").encode())
    assert counted == 3 * 4 + 1  # and the bar before the message
    assert b"{'loss': 0.25, 'epoch': 1.0}" in picked and b"Epoch 1: 50%|##| 7/9 FAILED" in picked
    raw = ("\n".join(lines) + "\n").encode()
    by_runs, ordinary = _both(monkeypatch, raw)
    assert by_runs == ordinary
    # the plain runs' 12 bars here, the bar before the message, the failure and the tag by split_bars
    # (a bar line with a failure word is fed, not counted)
    assert by_runs[4] == 12 + 1 + 1 + 1


def test_most_runs_looked_at_again_go_the_ordinary_way(scan, monkeypatch) -> None:
    """Where more than one run in WHOLE_MAX goes line by line whole (here a failure word), or more than
    one in ODD_MAX holds a redraw without a bar (here tqdm.write's), the chunk goes the ordinary way."""
    monkeypatch.setattr(redraws, "WHOLE_MAX", 5)
    monkeypatch.setattr(redraws, "ODD_MAX", 1.5)
    plain = "\r" + "\r".join(_bar(k) for k in range(4))
    failed = "\r" + _bar(5) + "\rEpoch 1: 50%|##| 7/9 FAILED"
    write = "\r" + _bar(5) + "\r" + " " * 70 + "\r{'loss': 0.25}"
    chunks = {
        "one in five whole": ([failed] + [plain] * 4, True),
        "three in eleven whole": ([failed] * 3 + [plain] * 8, False),
        "two in three odd": ([write] * 2 + [plain], True),
        "three in four odd": ([write] * 3 + [plain], False),
    }
    for name, (lines, read) in chunks.items():
        raw = ("\n".join(lines) + "\n").encode()
        assert (redraws.untagged(raw) is not None) == read, name
        by_runs, ordinary = _both(monkeypatch, raw)
        assert by_runs == ordinary, name


def test_escape_codes_are_taken_out_first(scan, monkeypatch) -> None:
    """tqdm's coloured bar (its colour set and reset around the bar) and a nested bar's cursor move
    up: read by runs, as their lines read without the codes; a code between a CR and a LF (out, they
    would make a CRLF, one newline, of what the ordinary way reads as two): the ordinary way."""
    colour = "\r".join("\x1b[32m" + _bar(k) + "\x1b[39m" for k in range(5))
    nested = "\r".join(_bar(k) + "\x1b[A" for k in range(5))
    raw = ("\r" + colour + "\n" + STEP + "\n\r" + nested + "\n").encode()
    got = redraws.untagged(raw)
    assert got is not None and got[3] == 10 and got[0] == 13 and got[1] == [6]
    by_runs, ordinary = _both(monkeypatch, raw)
    assert by_runs == ordinary
    edge = (_bar(1) + "\r\x1b[0m\n" + STEP + "\n").encode()
    assert redraws.untagged(edge) is None
    by_runs, ordinary = _both(monkeypatch, edge)
    assert by_runs == ordinary and ordinary[0] == 3


def test_what_goes_the_ordinary_way(scan, monkeypatch) -> None:
    """A chunk cut inside a line, a CRLF, no carriage return: not read by runs; nor any chunk with the
    compiled line scan."""
    assert redraws.untagged(BARS.encode()) is None
    assert redraws.untagged((BARS + "\r\n").encode()) is None
    assert redraws.untagged((STEP + "\n").encode()) is None
    assert redraws.untagged((BARS + "\n").encode()) is not None
    monkeypatch.setattr(_linescan, "compiled", object())
    assert redraws.untagged((BARS + "\n").encode()) is None
