"""The lines nccl-tests' reader can never act on, settled in bulk by the chunk path (quiet.py): tqdm
bars counted by one pass over a chunk's lines, never fed; NCCL WARN lines past the WARN list's cap
counted without being decoded; the failure words found by a few grouped passes. Each gives exactly
what the line path (`parse(text)`, every line through `Parser.feed`) gives: on the fixtures with a
training job's output between their lines, on generated text, with the compiled line scan and without
it; and the bars are never fed (counted by the calls to `feed`, not by time)."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst

from topodiag.parsers import _foreign, nccl_tests
from topodiag.parsers.nccl_tests import assemble, quiet, stream
from topodiag.parsers.nccl_tests.quiet import dropped_warn
from topodiag.parsers.nccl_tests_failures import FAIL_WORDS, recognise
from topodiag.scan import chunks as _chunks
from topodiag.scan import lines as _linescan
from tests.parsers.test_nccl_tests_chunks import FILES, WORDS, _by_chunks, _outcome, _text
from tests.parsers.test_nccl_tests_failures import ENTRIES
from tests.parsers.test_possessive import _row_lines, _row_patterns

# invented for a test: tqdm's default bar (12 redraws joined by carriage returns, as a terminal log
# holds them), a training loop's line, a launcher's timestamp before the NCCL prefix
BAR = "Epoch 3:  45%|####5     | 450/1000 [00:12<00:15, 36.10it/s, loss=0.234]"
BARS = "\r".join(BAR.replace("450/", f"{450 + k}/") for k in range(12))
STEP = "step 12 | train loss 0.50000 | lr 3.0e-04 | grad norm 0.02 | tokens/s 40002"
STAMP = "[2025-01-07 10:00:03] "
OUTPUT = next(p for p in FILES if p.parent.name == "nccl_tests" and p.suffix == ".txt")  # an all_reduce_perf run


@pytest.fixture(params=["compiled", "pure"])
def scan(request, monkeypatch):
    """Each test twice: with the compiled line scan (where the build has it) and with the C-level maps
    that stand in for it."""
    if request.param == "compiled" and _linescan.compiled is None:
        pytest.skip("no compiled line scan in this build")
    if request.param == "pure":
        monkeypatch.setattr(_linescan, "compiled", None)
    return request.param


def _with_a_job(text: str, every: int = 3) -> str:
    """The text with a training job's output between its lines, a timestamp before a third of them."""
    out = []
    for i, line in enumerate(text.splitlines(True)):
        out.append(STAMP + line if i % 3 == 2 and ":" in line[:40] else line)
        if i % every == 0:
            out.append(BARS + "\n" + STEP.replace("12", str(i)) + "\n")
    return "".join(out)


def test_the_fixtures_with_a_job_between_their_lines(scan) -> None:
    text = _with_a_job("".join(_text(p) for p in FILES))
    want = _outcome(nccl_tests.parse, text)
    assert isinstance(want, dict) and any("other programs skipped" in n for n in want["notes"])
    for size in (_chunks.CHUNK, 65536, 333):
        assert _outcome(_by_chunks, text.encode("utf-8"), size) == want, size


@pytest.mark.parametrize("path", FILES[::4], ids=lambda p: p.name)
def test_each_fixture_with_a_job_past_the_cut(scan, monkeypatch, path) -> None:
    """The caps at one row, one rank line and two WARN lines: runs are cut at once and WARN lines are
    only counted, which the chunk path settles in bytes."""
    for name in ("RUN_ROWS_CAP", "DEVICE_CAP"):
        monkeypatch.setattr(nccl_tests, name, 1)
    monkeypatch.setattr(nccl_tests, "LIST_CAP", 2)
    text = BARS + "\n" + _with_a_job(_text(path), every=2)  # a bar first: it is the first text
    want = _outcome(nccl_tests.parse, text)
    for size in (_chunks.CHUNK, 4096, 97):
        assert _outcome(_by_chunks, text.encode("utf-8"), size) == want, size


# Lines that `feed` acts on although they look like a job's chatter: catalogued failure lines with no
# failure mark (the formats of nccl-tests' src, as the catalogue holds them, filled in), the tail of a row
# whose start was cut (its first cell "nan", "inf", "N/A", "-nan"), a command line naming the test.
ACTED_ON = [
    "Invalid number of GPUs: 8 requested but only 4 were found.",
    "Unable to open alltoallv traffic matrix file m.txt.",
    "Please check the number of processes and GPUs per process.",
    "Device implementation 3 is not supported by this test",
    "blocking mode (-z 3) is incompatible with CUDA graph mode (-G). Disabling.",
    "Option -m not supported before NCCL 2.2. Ignoring",
    " rank=3 elt[7]: want=0x1 got=0x2",
    "host1:1:1 [0] misc/socket.cc:1 NCCL WARN socket error", "z" * (_foreign.LONG_LINE + 1),
    "Epoch 1:  1%|#  | 1/9 [00:01<00:09] " + "z" * _foreign.LONG_LINE, "Epoch 1:  1%|#  | xFAILEDx",
    "nan 1.0 2.0 3.0", "inf 1.0 2.0 3.0", "N/A 1.0 2.0 3.0", "Inf 0 0 0", "-nan 1 2 3", "+1 2 3 4", ".5 1 2 3",
]
OTHERS = ["incompatible x", "mpirun -np 8 ./build/sendrecv_perf -b 8 -e 1G", "srun all_gather_perf -g 1"]


@pytest.mark.parametrize("line", ACTED_ON + OTHERS)
def test_a_line_feed_acts_on_is_fed(scan, line: str) -> None:
    plain = _text(OUTPUT)
    text = plain + BARS + "\n" + STEP + "\n" + line + "\n" + BARS + "\n"
    want = _outcome(nccl_tests.parse, text)
    assert _outcome(_by_chunks, text.encode("utf-8"), _chunks.CHUNK) == want
    if line in ACTED_ON:  # and it did something: a failure, a note
        assert want != _outcome(nccl_tests.parse, plain + BARS + "\n" + STEP + "\n" + BARS + "\n"), line


QUIET_WORDS = hst.sampled_from(ACTED_ON + OTHERS + [
    BAR, BARS, STEP, STAMP, "%|", "| 3/10 [00:01<00:02]", "\r", BAR + " NCCL INFO ", BAR + " NCCL TRACE \x01",
    BAR + " Test NCCL failure common.cu:1 'x'", BAR + " FAILED", "x" * (_foreign.LONG_LINE + 1) + "%|",
    "node1:1:1 [0] NCCL WARN Cuda failure 'out of memory'", STAMP + "node1:1:1 [0] NCCL WARN NET/IB : Got async",
    "NCCL WARN", " NCCL WARN ", "NCCL WARNING", "node1:1:1 [0] NCCL WARN x NCCL INFO y", "\xe9%|", "0: ",
    "[1,0]<stdout>:", "core dumped", "terminate called", "Segmentation fault", "exited on signal", "Aborted",
    "MPI_ABORT", "Test timeout", "mped", "xited", "AILED", "Unable to open", "invalid", "Invalid value", "z", "|",
    "| 2025-05-16T16:39:55.216-07:00 | ip-10-0-0-1:", "> quoted", "```", "Error at line", "want=0x1", "#wrong=3",
    "requires", "x_perf", "info", "Inf", "I", "N/A", "nan", "KERNEL_LAUNCH_ERROR", "=== run ===", "\x7f", "\x1c",
])
TEXT = hst.lists(hst.lists(hst.one_of(WORDS, QUIET_WORDS), max_size=6).map(" ".join), max_size=30).map("\n".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(text=TEXT, size=hst.integers(min_value=1, max_value=400), caps=hst.sampled_from([None, 1]),
       warn_cap=hst.sampled_from([1000, 1, 0]))
def test_generated_text_reads_as_its_lines(scan, monkeypatch, text: str, size: int, caps, warn_cap: int) -> None:
    if caps is not None:
        monkeypatch.setattr(nccl_tests, "RUN_ROWS_CAP", caps)
        monkeypatch.setattr(nccl_tests, "DEVICE_CAP", caps)
        monkeypatch.setattr(nccl_tests, "_BULK_MIN", 3)
    monkeypatch.setattr(nccl_tests, "LIST_CAP", warn_cap)
    data = text.encode("utf-8")
    assert _outcome(_by_chunks, data, size) == _outcome(nccl_tests.parse, data.decode("utf-8", "replace"))


BLOB_WORDS = hst.sampled_from([w.decode() for w in FAIL_WORDS] + ["fault", "mped", "ABORT", "AILED", "called",
                                                                     "xited on signal", "Test", "a", " ", "\n",
                                                                     "Abo-rted", "core 5dumped", "FAI|LED",
                                                                     "Segmentation", "terminate", "dumped", "exited",
                                                                     "timeout", "failure", "MPI", "_", "Segment ation",
                                                                     "core\tdumped", "0.00", "|"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=hst.lists(BLOB_WORDS, max_size=12))
def test_the_failure_words_found_are_those_the_lines_hold(scan, parts) -> None:
    blob = "".join(parts).encode()
    assert sorted(quiet.fail_words(blob)) == sorted(w for w in FAIL_WORDS if w in blob)


def _feeds(monkeypatch, text: str, **caps) -> tuple[int, object, object]:
    """(calls to Parser.feed, the report) of the chunk path over `text`, and the line path's report."""
    for name, value in caps.items():
        monkeypatch.setattr(nccl_tests, name, value)
    want = _outcome(nccl_tests.parse, text)
    calls = []
    real = assemble.Parser.feed

    def counted(self, *args, **kwargs):
        calls.append(args[0])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(assemble.Parser, "feed", counted)
    got = _outcome(nccl_tests.parse_binary, io.BytesIO(text.encode("utf-8")))
    return len(calls), got, want


def test_the_bars_and_a_training_loop_are_never_fed(scan, monkeypatch) -> None:
    plain = _text(OUTPUT)
    text = "".join(line + BARS + "\n" + STEP + "\n" for line in plain.splitlines(True))
    n_bars = 12 * len(plain.splitlines())
    fed, got, want = _feeds(monkeypatch, text)
    assert got == want and f"{n_bars} lines of other programs skipped unread" in " ".join(got["notes"])
    assert fed <= len(plain.splitlines()) + 1  # the lines of the output, and at most the first bar


def test_warn_lines_past_the_cap_are_counted_not_fed(scan, monkeypatch) -> None:
    """Past LIST_CAP WARN lines, with the NCCL version and nranks known, a WARN line is only counted in
    `lists_dropped` (the note of lines not listed)."""
    head = "node1:1:1 [0] NCCL INFO NCCL version 2.19.3+cuda12.3\nnode1:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 8\n"
    warns = "".join(f"node1:1:{k} [0] misc/socket.cc:1 NCCL WARN socket error {k}\n" for k in range(500))
    # WARN lines `feed` reads otherwise: an INFO/TRACE tag it keeps (nothing printable after it: the line
    # is picked; read as an INFO line), a bar (with a failure word in it, so not counted as a bar in bulk,
    # though no failure mark either: another program's line), a giant line
    warns += ("node1:1:1 [0] NCCL WARN x NCCL INFO \x01\nnode1:1:1 [0] NCCL WARN x NCCL TRACE \x01\n"
              "node1:1:1 [0] NCCL WARN  1%|#  | xFAILEDx\n"
              "node1:1:1 [0] NCCL WARN " + "x" * _foreign.LONG_LINE + "\n") * 3
    text = head + _text(OUTPUT) + warns
    fed, got, want = _feeds(monkeypatch, text, LIST_CAP=5)
    assert got == want and len(got["warnings"]) == 5
    assert fed < 500


def test_text_lines_past_the_cut_are_replayed_not_fed(scan, monkeypatch) -> None:
    """Past the cut, a line that no state can make a row and that `feed` does nothing with (an elision,
    a framework's line, a launcher's echo once the test's name is known) or only counts in
    `lists_dropped` (a catalogued failure line, a row's numbers-only tail, their lists full) is fed once
    and replayed after (`Parser.op`, "dropped" and "nothing"): what `parse` gives, fed a bounded number
    of times (without the replay each of these lines of each run is fed)."""
    failure = next(line for _, line in ENTRIES if recognise(line) is not None and line[:1].isalpha()
                   and "NCCL" not in line and not any(w.decode() in line for w in FAIL_WORDS))
    others = ["[...]", "9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA", "[rank4]:[E1016 03:31:38.928] x.cpp:607 y",
              "root@h:/t# mpirun -np 8 ./build/all_reduce_perf -b 8 -e 1G", "1.5 2.5 3.5 4.5", failure]
    run = next(_text(p) for p in FILES if p.parent.name == "nccl_tests" and p.suffix == ".txt"
               and "# nThread" in _text(p) and "#  Rank" in _text(p) and "redop" in _text(p))  # a banner, a header
    text = (run + "".join(line + "\n" for line in others)) * 60
    for name, value in dict(RUN_ROWS_CAP=1, DEVICE_CAP=1, LIST_CAP=2, _BULK_MIN=3).items():
        monkeypatch.setattr(nccl_tests, name, value)
    want = _outcome(nccl_tests.parse, text)
    fed = dict.fromkeys(others, 0)
    real = assemble.Parser.feed

    def counted(self, line_no, line, *args):
        if line in fed:
            fed[line] += 1
        return real(self, line_no, line, *args)

    monkeypatch.setattr(assemble.Parser, "feed", counted)
    got = _outcome(nccl_tests.parse_binary, io.BytesIO(text.encode("utf-8")))
    assert got == want and len(got["failures"]) == 2 and got["failures_total"] >= 60  # the catalogued line of each run
    assert any("further per-line notes" in n for n in got["notes"]), got["notes"]
    assert all(n <= 4 for n in fed.values()), fed  # the run cut after the first; the lists full after the second


WARN_PARTS = hst.sampled_from(["node1:1:1 [0] ", "NCCL WARN ", " NCCL WARN ", "NCCL INFO", " NCCL INFO ", "NCCL TRACE",
                               "%|", "%", "|", "x", " ", "\xe9", "socket error", "NCCL WARN"])


@settings(max_examples=300, deadline=None)
@given(lines=hst.lists(hst.tuples(hst.lists(WARN_PARTS, min_size=1, max_size=6).map("".join), hst.booleans()),
                       max_size=20))
def test_warn_lines_split_at_once_are_those_dropped_warn_takes(lines) -> None:
    """`split_dropped_warns` (maps over the lines) against `dropped_warn` line by line, giant lines too."""
    picked = [(text + ("y" * _foreign.LONG_LINE if giant else "")).encode() for text, giant in lines]
    keep = [3 * k + 1 for k in range(len(picked))]
    taken = [dropped_warn(line) for line in picked]
    want = ([i for i, t in zip(keep, taken) if not t], [b for b, t in zip(picked, taken) if not t], sum(taken))
    assert quiet.split_dropped_warns(keep, picked) == want


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=hst.lists(hst.lists(BLOB_WORDS.filter(lambda w: "\n" not in w), min_size=1, max_size=5).map("".join),
                       max_size=12))
def test_failure_lines_found_are_those_holding_a_word(scan, lines) -> None:
    """stream.py `_fail_lines` (quiet.py `fail_positions`: compiled, each place's line by the newlines
    counted from the one before; pure, each word's run of letters in the blob with the other bytes
    deleted, then the word in the run's line) against the lines' own look."""
    picked = [line.encode() for line in lines]
    keep = [2 * k + 5 for k in range(len(picked))]
    want = {i for i, line in zip(keep, picked) if any(w in line for w in FAIL_WORDS)}
    assert stream._fail_lines(keep, picked, b"\n".join(picked)) == want


def test_failure_lines_hand_checked(scan) -> None:
    """Hand-checked: a word in lines 1 and 3 (positions), a run of its letters that the deletion of the
    blanks and digits makes ("Seg mentation faul t" has "Segmentation"'s run, not the word), a word cut
    by a newline (no line holds it), and a word twice on one line."""
    picked = [b"ok 1 2", b"[0] Segmentation fault (core dumped)", b"Seg mentation faul t", b"x FAILED y FAILED",
              b"core", b"dumped"]
    keep = [10, 11, 12, 13, 14, 15]
    assert stream._fail_lines(keep, picked, b"\n".join(picked)) == {11, 13}


MARK_PIECES = hst.sampled_from([m.decode() for m in quiet._MARKS] + [
    "Unable", " to", "is need", "ed", "want=", "0x", "want=1x", "#wrong", "=", "NCC", "L", "_per", "f", "%", "|",
    "step 12 | train loss 0.5", " ", "1", "Error", " at", "CuRAND", "power of", "x", "\t", "KERNEL_LAUNCH_", "ERROR"])


@settings(max_examples=1500, deadline=None)
@given(lines=hst.lists(hst.tuples(hst.lists(MARK_PIECES, min_size=1, max_size=6).map("".join), hst.booleans()),
                       min_size=1, max_size=12))
def test_loud_lines_are_those_holding_a_mark(lines) -> None:
    """quiet.py `_loud` (each mark's run in the candidates' blob with the other bytes deleted, then
    the mark in the run's line) against each line's own look: too long, or a mark in it."""
    cands = [(text + ("y" * _foreign.LONG_LINE if giant else "")).encode() for text, giant in lines]
    at = list(range(len(cands)))
    want = {k for k, line in enumerate(cands)
            if len(line) > _foreign.LONG_LINE or any(m in line for m in quiet._MARKS)}
    assert quiet._loud(at, set(), at, cands) == want


def test_row_patterns_are_shape_blind() -> None:
    """stream.py `shape_blind`: the plain-row pattern of every layout of the nccl-tests fixtures is, and
    a pattern with a digit of 1-9 in a class or outside one is not; every fixture line and drawn rows
    (digits changed, cells 0 and 5 in each place) match as their shape does (digits 1-9 made "1")."""
    import random

    patterns = _row_patterns()
    assert patterns and all(stream.shape_blind(p) for p in patterns)
    assert not stream.shape_blind(rb"[1-5]+") and not stream.shape_blind(rb"x7") and not stream.shape_blind(rb"[0-9a]")
    assert stream.shape_blind(rb"\x0b(?:0|N/A)[0-9]")
    rng = random.Random(29)
    lines = _row_lines()
    drawn = []
    for line in [x for x in lines if x.strip()[:1].isdigit()][:300]:
        for _ in range(4):
            drawn.append(bytes(rng.choice(b"0123456789") if 48 <= b <= 57 else b for b in line))
        drawn += [line.replace(b" 0 ", b" 5 ", 1), line.replace(b" 0\n", b" 7\n"), line.replace(b" 0", b" 0 0", 1)]
    for pattern in patterns:
        regex = re.compile(pattern)
        for line in lines + drawn:
            assert bool(regex.fullmatch(line)) == bool(regex.fullmatch(line.translate(stream._SHAPE))), line


def test_rows_sieve_is_sieve() -> None:
    """`_rows_sieve` (shapes matched once, then looked up, the cache full past SHAPES_CAP) gives
    `_sieve`'s lines and count, on the rows and other lines of every nccl-tests fixture."""
    lines = _row_lines()
    at = list(range(len(lines)))
    for pattern in _row_patterns():
        regex = re.compile(pattern)
        want = stream._sieve(regex, at, lines)
        for shapes in ({}, {b"x": True}, dict.fromkeys(range(stream.SHAPES_CAP), False)):
            got = stream._rows_sieve(regex, at, lines, shapes)
            assert got[:2] == want[:2] and len(got[2]) == len(want[2])
            got = stream._rows_sieve(regex, at, lines, shapes)  # the second time from the shapes kept
            assert got[:2] == want[:2] and len(got[2]) == len(want[2])
