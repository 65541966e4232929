"""The compiled line scanner (topodiag/scan/_cscan.c: two generic primitives, `lines_without` and
`distinct_after`) against its pure-Python twins (topodiag/scan/lines.py `lines_without_py`,
`distinct_after_py`), and the NCCL scans built on it (parsers/nccl_debug/lines.py `tagged_c`,
scan/lines.py `untagged`) against theirs (`tagged_py`, `untagged_py`): the same values on every chunk
of the NCCL fixtures, on cut and edited chunks, and on generated text made of the tags' pieces. Where
the build had no C compiler the comparisons of the compiled module are skipped and the readers' own
tests cover the pure-Python twins, which then run."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topodiag.parsers.nccl_debug import lines as nccl_lines
from topodiag.parsers.nccl_debug.reader import iter_chunks, normalise
from topodiag.scan import lines as scan_lines


class _linescan:  # noqa: N801  (the two twins and the compiled module, by the names the tests use)
    _compiled = scan_lines._compiled if scan_lines.COMPILED or scan_lines._compiled is None else None
    tagged_py = staticmethod(nccl_lines.tagged_py)
    untagged_py = staticmethod(scan_lines.untagged_py)
    prefix_key = staticmethod(nccl_lines.prefix_key)
    TAGS_PER_LINE, LATER_TEXT_MAX = scan_lines.TAGS_PER_LINE, scan_lines.LATER_TEXT_MAX


ROOT = Path(__file__).resolve().parents[2]
compiled = pytest.mark.skipif(_linescan._compiled is None, reason="the line scanner was not compiled")
FILES = sorted(p for d in ("nccl_debug", "nccl_tests", "nccl_diag") for p in (ROOT / "fixtures" / d).glob("*") if p.is_file())


def same(c: bytes) -> None:
    a, b = nccl_lines.tagged_c(c), _linescan.tagged_py(c)
    assert a[:4] == b[:4]
    assert list(a[4]) == list(b[4])  # the same prefixes, in the same order
    assert list(a[5].items()) == list(b[5].items())  # the same tag texts, counts and first places, in order
    assert a[6:8] == b[6:8]
    assert list(a[8][0]) == list(b[8][0]) and list(a[8][1].items()) == list(b[8][1].items())  # WARN lines, in order
    assert _linescan._compiled.lines_without(c, scan_lines.TAGS) == _linescan.untagged_py(c) \
        == scan_lines.lines_without_py(c, scan_lines.TAGS)
    for needles in ((b"NCCL INFO ",), (b"NCCL INFO ", b"NCCL TRACE "), (b"NCCL",), (b" ",), (b"x", b"xx")):
        for per_line, later in ((4, 4096), (1, 3), (0, 0)):
            x = _linescan._compiled.distinct_after(c, needles, per_line, later)
            y = scan_lines.distinct_after_py(c, needles, per_line, later)
            assert x[:2] == y[:2] and list(x[2]) == list(y[2]) and list(x[3].items()) == list(y[3].items())


@compiled
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_chunks(path: Path) -> None:
    with open(path, "rb") as f:
        for chunk in itertools.islice(iter_chunks(f), 8):
            c = normalise(chunk)
            for variant in (c, c[: len(c) // 2], c.rstrip(b"\n"), c.replace(b"NCCL INFO ", b"NCCL TRACE "), c + c):
                same(variant)


PIECES = [b"NCCL INFO ", b" NCCL INFO ", b"NCCL INFO", b" NCCL TRACE ", b"NCCL TRACE", b"NCCL WARN", b"NCCL ",
          b"NCCL", b"\n", b"\n\n", b" ", b"\t", b"\x00", b"\xff", b"\x80", b"x", b"host:1:2 [0] ", b"INFO ",
          b"~", b"!", b"\x7f", b"\x1f", b"NCCL INFO NCCL INFO ", b":", b"7", b"[3]", b"h", b"\xc3\xa9",
          b"[Rank 3] ", b"[Rank ", b"NET/IB: ", b"NCCL failure", b"NCCL error", b"NCCL version", b"error",
          b"Channel 00 : 0[0] -> 1[1] via P2P", b"CCL WARN", b"WARN", b"ProcessGroup", b"ProcessGroupNCCL",
          b"[E ProcessGroupNCCL.cpp:1] "]


@compiled
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=16))
def test_generated(parts: list[bytes]) -> None:
    same(b"".join(parts))


PREFIXES = [b"h1:12:34 [0] ", b"h2:5:6 [1] ", b"x:1:2:3 [4] ", b"a:12b:3:4 [5] ", b"", b"[1,0]<stdout>:", b"h:1:2\x1c[7] ",
            b"h:1:2\t[3] ", b"\xc3\xa9h:5:6 [2] ", b"h:1:2 [1234567890] ", b"1:2 ", b"q:7:8  [9]"]
TAGS = [b"NCCL INFO ", b"NCCL TRACE ", b"NCCL WARN ", b"NCCL version 2.1", b"NCCL error x", b"", b"NCCL INFO [Rank 2] ",
        b"NCCL INFO", b"[E ProcessGroupNCCL.cpp:1] Watchdog ", b"ProcessGroupNCCL INFO "]
TEXTS = [b"NET/IB: Dev 0 Port 1 qpn 5 mtu 5 LID 3", b"Channel 00 : 0[0] -> 1[1] via P2P", b"Bootstrap", b"x", b"",
         b"NCCL WARN y", b"comm 0x1 rank 0 nranks 2", b"NCCL error z", b"NCCL INFO again"]


@compiled
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PREFIXES), st.sampled_from(TAGS), st.sampled_from(TEXTS)), max_size=12),
       st.booleans())
def test_generated_lines(lines: list, final_newline: bool) -> None:
    """Whole lines of prefix, tag and text: the twin's C-level paths (one tag per line, pid/tid prefixes
    read as the few they stand for) and its loop (lines of two tags) against the compiled scanner."""
    same(b"\n".join(p + t + x for p, t, x in lines) + (b"\n" if final_newline else b""))


def test_untagged_reads_a_line_of_hundreds_of_tags() -> None:
    """Hand-checked: a line of 300 INFO tags (a count that does not fit a byte: the map of `not`
    instead of the byte mask) is left out, one whose last tag has nothing after it but blanks is kept,
    and the plain lines around them are kept, at their places."""
    many = b"h:1:2 [0]" + b" NCCL INFO x" * 300
    bare = b"h:1:2 [0]" + b" NCCL INFO x" * 300 + b" NCCL INFO  "
    c = b"a\n" + many + b"\nb\n" + bare + b"\nc\n"
    assert scan_lines.untagged_py(c) == (5, [0, 2, 3, 4], [b"a", b"b", bare, b"c"])
    if _linescan._compiled is not None:
        assert _linescan._compiled.lines_without(c, scan_lines.TAGS) == scan_lines.untagged_py(c)


@compiled
def test_compiled_primitives_refuse_bad_needles() -> None:
    """The primitives check what they are given: a ValueError (never a crash) for needles that are not
    a tuple of 1 to 8 non-empty bytes sharing a first byte, or a negative limit; the twins alike."""
    for bad in ((), (b"",), [b"a"], (b"a", b"b"), ("a",), (b"a",) * 9, (b"a\n",)):
        with pytest.raises(ValueError):
            _linescan._compiled.lines_without(b"a\n", bad)
        with pytest.raises(ValueError):
            _linescan._compiled.distinct_after(b"a\n", bad, 1, 1)
    for bad in ((), (b"",), (b"a", b"b"), (b"a\n",)):
        with pytest.raises(ValueError):
            scan_lines.distinct_after_py(b"a\n", bad, 1, 1)
        with pytest.raises(ValueError):
            scan_lines.lines_without_py(b"a\n", bad)
    with pytest.raises(ValueError):
        _linescan._compiled.distinct_after(b"a\n", (b"a",), -1, 1)
    with pytest.raises(TypeError):
        _linescan._compiled.lines_without("text, not bytes", (b"a",))


def test_known_generic_values() -> None:
    """Hand-checked: what the generic primitives (and the compiled module, where built) say of a small
    chunk: the needles left to right, at one place the first of the tuple; a line's later needles'
    texts cut at later_max; the text before each line's first needle; lines that end in a needle."""
    c = b"ab:x1 x2\nx3 xx4\n\nplain\nends x \x01\nxx"
    impls = [(scan_lines.lines_without_py, scan_lines.distinct_after_py)]
    if _linescan._compiled is not None:
        impls.append((_linescan._compiled.lines_without, _linescan._compiled.distinct_after))
    for lines_without, distinct_after in impls:
        lines, found, before, after = distinct_after(c, (b"x", b"xx"), 2, 2)
        # "x" (the tuple's first) at 3, 6 (line 1); 9, 12, 13 (line 2: "xx4" is two); 28 (line 5); 32, 33
        # (line 6); line 2's second text cut at 2 bytes ("xx"), its third not read; line 6's first text
        # "xx" again (count 2), its second "x"
        assert (lines, found) == (5, 8)
        assert list(before) == [b"ab:", b"", b"ends "]
        assert list(after.items()) == [(b"x1 x2", [1, 3]), (b"x2", [1, 6]), (b"x3 xx4", [1, 9]), (b"xx", [2, 12]),
                                       (b"x \x01", [1, 28]), (b"x", [1, 33])]
        # line 0 holds neither needle; line 1 holds "xx" but ends in "4"; "ends x \x01" ends in the needle
        # "x " (a blank and \x01 are not printable); "xx" ends in "xx"
        n, keep, picked = lines_without(c, (b"x ", b"xx"))
        assert n == 6 and keep == [0, 3, 4, 5] and picked == [b"ab:x1 x2", b"plain", b"ends x \x01", b"xx"]


def test_known_values() -> None:
    """Hand-checked: what each twin says of a small chunk."""
    c = (b"h1:1:2 [0] NCCL INFO Bootstrap\n"
         b"h1:1:3 [0] NCCL INFO NCCL INFO twice\n"
         b"plain row 1 2 3\n"
         b"\n"
         b"h2:3:4 [1] NCCL TRACE x\n"
         b"h2:3:4 [1] NCCL WARN y\n"
         b"h1:1:2 [0] NCCL INFO \xff \n"
         b"[1,0]<stdout>:x:12:34:56 [3] NCCL INFO host after a launcher tag\n"
         b"no host here NCCL INFO q\n"
         b"\xc3\xa9h:5:6 [2] NCCL INFO not ASCII\n"
         b"end")
    scans = [(_linescan.tagged_py, _linescan.untagged_py)]
    if _linescan._compiled is not None:
        scans.append((nccl_lines.tagged_c, lambda c: _linescan._compiled.lines_without(c, scan_lines.TAGS)))
    for tagged, untagged in scans:
        lines, info, warn, trace, prefixes, messages, per_line, marks, warns = tagged(c)
        assert (lines, info, warn, trace) == (10, 7, 1, 1)
        # (host, device) as PREFIX_RE reads the ASCII prefixes ("x:12:34:56 [3]": the host is "12", the
        # first place where host:pid:tid [dev] fits), nothing for the one without, the other as it is
        assert list(prefixes) == [(b"h1", 0), (b"h2", 1), (b"12", 3), b"\xc3\xa9h:5:6 [2] "]
        # each INFO/TRACE tag's text to the end of its line (the second tag of line 2 too), with its
        # count and the place of its first tag
        assert list(messages.items()) == [
            (b"NCCL INFO Bootstrap", [1, 11]),
            (b"NCCL INFO NCCL INFO twice", [1, 42]),
            (b"NCCL INFO twice", [1, 52]),
            (b"NCCL TRACE x", [1, 96]),
            (b"NCCL INFO \xff ", [1, 143]),
            (b"NCCL INFO host after a launcher tag", [1, 185]),
            (b"NCCL INFO q", [1, 234]),
            (b"NCCL INFO not ASCII", [1, 258]),
        ]
        assert per_line == [] and marks == []
        # the WARN line: the key of its prefix, its text from the tag with its count and first place
        assert list(warns[0]) == [(b"h2", 1)] and list(warns[1].items()) == [(b"NCCL WARN y", [1, 120])]
        n, keep, picked = untagged(c)
        assert n == 11
        # the row, the WARN line, the INFO line with nothing printable after its tag, the last line
        assert keep == [2, 5, 6, 10]
        assert picked == [b"plain row 1 2 3", b"h2:3:4 [1] NCCL WARN y", b"h1:1:2 [0] NCCL INFO \xff ", b"end"]
    # per-QP lines by place; the untagged marks by place; a line's fifth tag and on are not read
    d = (b"h:1:2 [0] NCCL INFO [Rank 1] NET/IB: Dev 0 Port 1 qpn 5 mtu 5 LID 3\n"
         b"NCCL version 2.18.1+cuda12.2\n"
         + b"NCCL INFO a " * 6 + b"\n")
    for tagged, _ in scans:
        _, info, _, _, _, messages, per_line, marks, _ = tagged(d)
        assert info == 7 and per_line == [10] and marks == [68]
        assert [k.count(b"NCCL INFO") for k in messages] == [6, 5, 4, 3]
    # a mark after a tag on its line is none (the line is a tagged one); a mark before a tag is one;
    # "NCCL WARNCCL WARN" counts once, as bytes.count does
    e = b"h NCCL INFO NCCL version 2.1\nNCCL error then NCCL WARNCCL WARN x\n"
    for tagged, _ in scans:
        _, info, warn, _, _, _, _, marks, warns = tagged(e)
        assert (info, warn, marks) == (1, 1, [29])
        assert list(warns[0]) == [] and list(warns[1].items()) == [(b"NCCL WARNCCL WARN x", [1, 45])]  # no host there


def test_later_tags_text_is_cut() -> None:
    """A line's first tag text runs to the end of the line; a later tag's is cut at LATER_TEXT_MAX, so a
    giant line of tags costs its length once (hand-counted: prefix 10 bytes, tag 10, 5,000 y, a blank)."""
    c = b"h:1:2 [0] " + b"NCCL INFO " + b"y" * 5000 + b" NCCL INFO " + b"z" * 6000 + b"\n"
    scans = [_linescan.tagged_py] + ([nccl_lines.tagged_c] if _linescan._compiled is not None else [])
    for tagged in scans:
        messages = tagged(c)[5]
        assert [(len(k), v) for k, v in messages.items()] == [(11021, [1, 10]), (4096, [1, 5021])]


def test_prefix_key_is_prefix_re() -> None:
    """prefix_key reads an ASCII prefix as nccl_debug/facts.py PREFIX_RE reads its text."""
    from topodiag.parsers.nccl_debug.facts import PREFIX_RE

    for pre in (b"h1:1:2 [0] ", b"a:12b:3:4 [5] ", b"x:1:2\x1c[7] ", b"x:1:2\x0b [7]", b"`q`:1:2 [3] ", b"nothing ",
                b"h:1:2 [1234567890] ", b"h:1:2[0] ", b"h::1:2 [0] ", b"a b:1:2  [9] x"):
        m = PREFIX_RE.search(pre.decode())
        want = None if m is None else (m.group(1).encode(), int(m.group(2)))
        got = _linescan.prefix_key(pre)
        if isinstance(got, bytes):  # handed back as it is: a device number of over 9 digits
            assert got == pre and len(m.group(2)) > 9
        else:
            assert got == want, pre
        if _linescan._compiled is not None:
            assert list(nccl_lines.tagged_c(pre + b"NCCL INFO x\n")[4]) == ([] if got is None else [got])


@compiled
@pytest.mark.parametrize("source", ["nccl_debug", "nccl_tests"])
def test_readers_same_with_either(source: str, monkeypatch) -> None:
    """Both readers give the same result on every NCCL fixture with the compiled scanner and with the
    pure-Python twins (the path of a build without a compiler)."""
    from topodiag.parsers import get
    from topodiag.parsers.base import ParseError, to_jsonable

    parser = get(source)

    def results() -> list:
        out = []
        for path in FILES:
            try:
                with open(path, "rb") as f:
                    out.append(to_jsonable(parser.parse_binary(f)))
            except ParseError as exc:
                out.append(("ParseError", str(exc), exc.line_no))
        return out

    fast = results()
    monkeypatch.setattr(nccl_lines, "tagged", nccl_lines.tagged_py)
    monkeypatch.setattr(scan_lines, "untagged", scan_lines.untagged_py)
    assert results() == fast


# ---- the split scan (`_tagged_split`, what `tagged_py` runs first) against the old passes (`tagged_loop`)

def _values(r) -> tuple:
    """A scan's values with every dict as its list of items (order counts)."""
    return r[:4], list(r[4]), list(r[5].items()), r[6], r[7], list(r[8][0]), list(r[8][1].items())


def split_same(c: bytes) -> bool:
    """`_tagged_split` gives `tagged_loop`'s values where it reads the chunk, with the texts between
    the elements made distinct first and each read where it lies (LONG_TEXTS); whether it did."""
    saved = nccl_lines.LONG_TEXTS
    try:
        for long_texts in (1 << 62, 0):
            nccl_lines.LONG_TEXTS = long_texts
            got = nccl_lines._tagged_split(c)
            if got is None:
                return False
            assert _values(got) == _values(nccl_lines.tagged_loop(c)), (long_texts, c[:300])
    finally:
        nccl_lines.LONG_TEXTS = saved
    return True


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_split_scan_fixture_chunks(path: Path) -> None:
    with open(path, "rb") as f:
        for chunk in itertools.islice(iter_chunks(f), 8):
            c = normalise(chunk)
            for variant in (c, c[: len(c) // 3], c.rstrip(b"\n"), c + c, c.replace(b"\n", b"\n\n"),
                            c.replace(b"NCCL INFO ", b"NCCL INFO \xff"), c.replace(b" [", b" \xc3\xa9[")):
                split_same(variant)


def test_split_scan_reads_real_logs() -> None:
    """The split scan is the one that runs on real logs: it reads every chunk of most NCCL fixtures."""
    read = declined = 0
    for path in FILES:
        if path.parent.name != "nccl_debug" or path.suffix != ".log":
            continue
        with open(path, "rb") as f:
            for chunk in iter_chunks(f):
                c = normalise(chunk)
                if b"NCCL INFO " in c and b"NCCL TRACE" not in c:
                    if split_same(c):
                        read += 1
                    else:
                        declined += 1
    assert read > 40 and declined * 4 < read, (read, declined)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=16))
def test_split_scan_generated(parts: list[bytes]) -> None:
    split_same(b"".join(parts))


MARKS = [b"NCCL version 2.19.3+cuda12.2", b"NCCL error in: x.cc:12", b"NCCL failure", b"NCCL WARNCCL error",
         b"NCCL error NCCL failure", b"NCCL INFOx NCCL error", b"NCCL error then NCCL INFO x",
         b"[E ProcessGroupNCCL.cpp:1] Watchdog caught", b"ProcessGroupNCCL NCCL error", b"ProcessGroupNCCL error x",
         b"ProcessGroupNCCL INFOx", b"ProcessGroupNCCL WARN x", b"ProcessGroupNCCL TRACE x", b"NCCL error ProcessGroupNCCL",
         b"ProcessGroupNCCL then NCCL INFO x", b"ProcessGroupProcessGroupNCCLNCCL"]


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PREFIXES), st.sampled_from(TAGS + MARKS), st.sampled_from(TEXTS)),
                max_size=12), st.booleans())
def test_split_scan_generated_lines(lines: list, final_newline: bool) -> None:
    """Whole lines of prefix, tag or mark and text (blank and untagged lines among them): the split
    scan where it reads them, against the old passes."""
    split_same(b"\n".join(p + t + x for p, t, x in lines) + (b"\n" if final_newline else b""))


def _every_scan(c: bytes) -> list:
    """Each scan's values for a chunk the split scan reads (that it does is asserted): the split one,
    the loop, and the compiled one where the build made it."""
    assert nccl_lines._tagged_split(c) is not None
    scans = [nccl_lines.tagged_py, nccl_lines.tagged_loop] + (
        [nccl_lines.tagged_c] if _linescan._compiled is not None else [])
    return [tagged(c) for tagged in scans]


def test_split_scan_known_values() -> None:
    """Hand-checked: a chunk the split scan reads (a banner of h3 before its INFO lines, an untagged
    row and a blank line, a WARN line, a per-QP line, an untagged error line, a last line with no host
    and no newline), the places found in the text by hand."""
    c = (b"h3:1:2 [2] NCCL version 2.19.3\n"
         b"h1:1:2 [0] NCCL INFO Bootstrap\n"
         b"plain row\n"
         b"\n"
         b"h3:1:2 [2] NCCL INFO Init\n"
         b"h2:3:4 [1] misc.cc:9 NCCL WARN y\n"
         b"h1:1:2 [0] NCCL INFO [Rank 1] NET/IB: Dev 0 Port 1 qpn 5 mtu 5 LID 3\n"
         b"h1:5:6 [0] NCCL INFO Bootstrap\n"
         b"NCCL error in: x.cc:1\n"
         b"no host NCCL INFO q")
    for lines, info, warn, trace, prefixes, messages, per_line, marks, warns in _every_scan(c):
        assert (lines, info, warn, trace) == (9, 5, 1, 0)
        # h1 before h3: the banner's line is no INFO line; "no host " names none
        assert list(prefixes) == [(b"h1", 0), (b"h3", 2)]
        assert list(messages.items()) == [(b"NCCL INFO Bootstrap", [2, c.index(b"NCCL INFO Bootstrap")]),
                                          (b"NCCL INFO Init", [1, c.index(b"NCCL INFO Init")]),
                                          (b"NCCL INFO q", [1, c.index(b"NCCL INFO q")])]
        assert per_line == [c.index(b"NCCL INFO [Rank 1]")]
        assert marks == [c.index(b"NCCL version"), c.index(b"NCCL error")]
        assert list(warns[0]) == [(b"h2", 1)]
        assert list(warns[1].items()) == [(b"NCCL WARN y", [1, c.index(b"NCCL WARN")])]


def test_watchdog_marks() -> None:
    """Hand-checked: the "NCCL" of a "ProcessGroupNCCL" is an untagged mark where it starts no tag and
    no tag stands before it on its line (a c10d watchdog line; one with an error mark after it: both);
    inside an INFO or WARN text it is none. Each scan gives the same places, counted here by hand."""
    c = (b"h:1:2 [0] NCCL INFO a\n"
         b"[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout\n"
         b"h:1:2 [0] NCCL INFO ProcessGroupNCCL in a text\n"
         b"[E ProcessGroupNCCL.cpp:1] NCCL error in: x\n"
         b"h:1:2 [1] x.cc:1 NCCL WARN ProcessGroupNCCL y\n")
    for lines, info, warn, trace, prefixes, messages, per_line, marks, warns in _every_scan(c):
        assert (lines, info, warn, trace) == (5, 2, 1, 0)
        assert marks == [c.index(b"NCCL.cpp:607"), c.index(b"NCCL.cpp:1]"), c.index(b"NCCL error")]
        assert list(prefixes) == [(b"h", 0)]
        assert list(messages) == [b"NCCL INFO a", b"NCCL INFO ProcessGroupNCCL in a text"]
        assert list(warns[0]) == [(b"h", 1)]


def test_split_scan_reads_trace_tags() -> None:
    """Hand-checked: TRACE tags are read as the INFO ones (the loop's TRACE mode): counted apart, their
    texts among the messages, their prefixes among the prefixes (a TRACE at 10, the INFO at 33)."""
    c = b"h:1:2 [0] NCCL TRACE x\nh:1:2 [0] NCCL INFO a\ng:1:2 [3] NCCL TRACE [Rank 0] NET/IB: y\n"
    assert nccl_lines._tagged_split(c) is not None
    for tagged in (nccl_lines.tagged_py, nccl_lines.tagged_loop):
        lines, info, warn, trace, prefixes, messages, per_line, marks, warns = tagged(c)
        assert (lines, info, warn, trace) == (3, 1, 0, 2)
        assert list(prefixes) == [(b"h", 0), (b"g", 3)]
        assert list(messages.items()) == [(b"NCCL TRACE x", [1, 10]), (b"NCCL INFO a", [1, 33])]
        assert per_line == [c.index(b"NCCL TRACE [Rank")] and marks == [] and warns == ({}, {})


@pytest.mark.parametrize("c", [
    b"h:1:2 [0] NCCL INFO a NCCL INFO b\n",  # two tags on a line
    b"h:1:2 [0] NCCL TRACEx\nh:1:2 [0] NCCL INFO a\n",  # a TRACE that is no tag (no blank after it)
    b"h:1:2 [0] NCCL TRACE a NCCL INFO b\n",  # an INFO tag after a TRACE tag
    b"h:1:2 [0] NCCL INFO a NCCL TRACEx\n",  # a TRACE in an INFO text
    b"h:1:2 [0] NCCL INFO a NCCL WARN b\n",  # a WARN after an INFO tag
    b"h:1:2 [0] x.cc:1 NCCL WARN a NCCL INFO b\n",  # an INFO tag after a WARN
    b"h:1:2 [0] NCCL error x NCCL INFO b\n",  # an INFO tag after a mark on its line
    b"h:1:2 [0] NCCL error x NCCL WARN b\n",  # a WARN after a mark on its line
    b"NCCL INFOx NCCL error\nh:1:2 [0] NCCL INFO a\n",  # "NCCL INFO" (no blank) before a mark
    b"[E ProcessGroupNCCL.cpp:1] x NCCL INFO b\n",  # an INFO tag after a watchdog's mark on its line
])
def test_split_scan_declines(c: bytes) -> None:
    """Chunks the split scan leaves to the old passes (`_tagged_split`'s conditions), each read the
    same by `tagged_py` as by them."""
    assert nccl_lines._tagged_split(c) is None
    assert _values(nccl_lines.tagged_py(c)) == _values(nccl_lines.tagged_loop(c))


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(PREFIXES + [b"x[1] ", b"h:1:2 [12] y", b"a:b:1:2 [3]", b"\xff:1:2 [0] "]), max_size=10))
def test_keys_is_prefix_key_of_each(texts: list) -> None:
    """`_keys` (one findall over the texts, the others in their place) is its definition: `prefix_key`
    of each text, distinct, in order, the None ones left out."""
    raw = dict.fromkeys(texts)
    want = [k for k in dict.fromkeys(map(_linescan.prefix_key, raw)) if k is not None]
    assert list(nccl_lines._keys(raw)) == want


@settings(max_examples=4000, deadline=None)
@given(st.lists(st.lists(st.sampled_from([b"h", b"ab", b":", b"1", b"23", b" ", b"\t", b"\x1c", b"[", b"]", b"`", b"-",
                                          b"[2025-01-07 10:17:39] ", b"1234567890", b"\xc3\xa9"]), max_size=14)
                .map(b"".join), max_size=6))
def test_keys_is_prefix_key_of_each_drawn(texts: list) -> None:
    """The same over texts drawn from the pieces of a prefix: host characters, colons, digits, blanks
    (\\x1c among them), brackets, a timestamp before the prefix, a device number of 10 digits, a
    non-ASCII character -- the first `host:pid:tid [dev]` anywhere in a line, whatever stands before it."""
    raw = dict.fromkeys(texts)
    want = [k for k in dict.fromkeys(map(_linescan.prefix_key, raw)) if k is not None]
    assert list(nccl_lines._keys(raw)) == want


def test_keys_reads_a_prefix_behind_a_timestamp() -> None:
    """Hand-checked: the prefix after a bracketed timestamp (its "10:17:39]" is no tail: a "]" follows
    the digits) and after launcher text; in "x:1:2:3 [4]" the tail is ":2:3 [4]" (":1:2" has a colon, not
    a blank, after it) and its host the run before it, "1"; none in a line of neither."""
    raw = dict.fromkeys([b"[2025-01-07 10:17:39] node8493:246899:246899 [4] ", b"[1,0]<stdout>:gpu-07:12:13 [3] ",
                         b"x:1:2:3 [4] ", b"step 7 | loss 0.1 ", b"[2025-01-07 10:17:40] node8493:9:9 [4] "])
    assert list(nccl_lines._keys(raw)) == [(b"node8493", 4), (b"gpu-07", 3), (b"1", 4)]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"\n", b"\xc3\xa9", b"\xc3", b"\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80",
                                 b"\xff", b"\xed\xa0\x80", b"abcdefg"]), max_size=24), st.sampled_from([1, 2, 3, 4, 7]))
def test_valid_utf8_is_decode(parts: list, block: int) -> None:
    """reader.valid_utf8 (only the blocks that are not ASCII decoded) says what bytes.decode says, with
    blocks small enough that characters straddle them."""
    from topodiag.parsers.nccl_debug import reader

    raw = b"".join(parts)
    try:
        raw.decode("utf-8")
        want = True
    except UnicodeDecodeError:
        want = False
    assert reader.valid_utf8(raw, block) is want and reader.valid_utf8(raw) is want


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from([b"h:1:2 [0] NCCL INFO x", b"\n", b"\r\n", b"\r", b"\x1b[31m", b"\x1b[0m", b"\t",
                                 b"\xff", b"\xc3\xa9", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98\x80", b"NCCL WARN y", b" "]),
                max_size=20))
def test_normalise_is_that_of_the_decoded_text(parts: list) -> None:
    """`normalise` (UTF-8 checked only where a block is not ASCII) gives the bytes of the decoded text
    with CR, ANSI codes and tabs edited, as its docstring says: checked against that, written out."""
    from topodiag.parsers.base import ANSI_RE
    from topodiag.parsers.nccl_debug import reader

    raw = b"".join(parts)
    text = raw.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    want = ANSI_RE.sub("", text).replace("\t", " ").encode("utf-8")
    assert reader.normalise(raw) == want


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from([b"h:1:2 [0] NCCL INFO x", b"\n", b"\r\n", b"\r", b"\x1b[31m", b"\t", b"\xff",
                                 b"\xc3\xa9", b"\xe2\x96\x88", b"h:1:2 [0] NCCL WARN y", b" "]), max_size=20))
def test_digest_bits_say_how_the_merge_normalises(parts: list) -> None:
    """The digest's bit 16 (the chunk already normal) and 32 (ASCII or valid UTF-8, edited) let the merge
    skip `normalise` or its UTF-8 check: each gives `normalise`'s bytes, and a chunk that is neither
    has neither bit; the merge given the digest reads what it reads without it."""
    from topodiag.parsers.nccl_debug import reader
    from topodiag.parsers.nccl_debug.facts import Facts

    raw = b"".join(parts) + b"\n"
    marks = reader.digest(raw)[6]
    want = reader.normalise(raw)
    try:
        raw.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    assert bool(marks & 16) == (want == raw and valid) and bool(marks & 32) == (valid and want != raw)
    if marks & 32:
        assert reader._normalise_ascii(raw) == want
    a, b = Facts(), Facts()
    dg = reader.digest(raw)
    reader.feed(a, raw, dg)
    reader.feed(b, raw, dg[:6] + (dg[6] & ~48,) + dg[7:])  # (the merge normalising it whole)
    assert vars(a) == vars(b)
