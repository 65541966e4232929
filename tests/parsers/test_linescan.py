"""The compiled line scanner (topodiag/scan/_cscan.c) against its pure-Python twins
(topodiag/scan/lines.py `untagged_py`, topodiag/parsers/nccl_debug/lines.py `tagged_py`): the same values on every chunk of the NCCL fixtures, on cut and
edited chunks, and on generated text made of the tags' pieces. Where the build had no C compiler the
comparisons are skipped and the readers' own tests cover the pure-Python twins, which then run."""

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
    _compiled = scan_lines._compiled
    tagged_py = staticmethod(nccl_lines.tagged_py)
    untagged_py = staticmethod(scan_lines.untagged_py)
    prefix_key = staticmethod(nccl_lines.prefix_key)
    TAGS_PER_LINE, LATER_TEXT_MAX = scan_lines.TAGS_PER_LINE, scan_lines.LATER_TEXT_MAX


ROOT = Path(__file__).resolve().parents[2]
compiled = pytest.mark.skipif(_linescan._compiled is None, reason="the line scanner was not compiled")
FILES = sorted(p for d in ("nccl_debug", "nccl_tests", "nccl_diag") for p in (ROOT / "fixtures" / d).glob("*") if p.is_file())


def same(c: bytes) -> None:
    a, b = _linescan._compiled.tagged(c), _linescan.tagged_py(c)
    assert a[:4] == b[:4]
    assert list(a[4]) == list(b[4])  # the same prefixes, in the same order
    assert list(a[5].items()) == list(b[5].items())  # the same tag texts, counts and first places, in order
    assert a[6:] == b[6:]
    assert _linescan._compiled.untagged(c) == _linescan.untagged_py(c)


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
          b"Channel 00 : 0[0] -> 1[1] via P2P", b"CCL WARN", b"WARN"]


@compiled
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=16))
def test_generated(parts: list[bytes]) -> None:
    same(b"".join(parts))


PREFIXES = [b"h1:12:34 [0] ", b"h2:5:6 [1] ", b"x:1:2:3 [4] ", b"a:12b:3:4 [5] ", b"", b"[1,0]<stdout>:", b"h:1:2\x1c[7] ",
            b"h:1:2\t[3] ", b"\xc3\xa9h:5:6 [2] ", b"h:1:2 [1234567890] ", b"1:2 ", b"q:7:8  [9]"]
TAGS = [b"NCCL INFO ", b"NCCL TRACE ", b"NCCL WARN ", b"NCCL version 2.1", b"NCCL error x", b"", b"NCCL INFO [Rank 2] ",
        b"NCCL INFO"]
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


@compiled
def test_compiled_limits_are_the_twins() -> None:
    """The compiled module says its limits; one that differs from the twins' (built from an older
    source) is not used."""
    assert (_linescan._compiled.TAGS_PER_LINE, _linescan._compiled.LATER_TEXT_MAX) == (4, 4096)
    assert (_linescan.TAGS_PER_LINE, _linescan.LATER_TEXT_MAX) == (4, 4096)


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
        scans.append((_linescan._compiled.tagged, _linescan._compiled.untagged))
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
        assert warns == [(120, 109, 131, 5)]  # the WARN line: its tag, start, end and index
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
        assert (info, warn, marks) == (1, 1, [29]) and warns == [(45, 29, 64, 1)]


def test_later_tags_text_is_cut() -> None:
    """A line's first tag text runs to the end of the line; a later tag's is cut at LATER_TEXT_MAX, so a
    giant line of tags costs its length once (hand-counted: prefix 10 bytes, tag 10, 5,000 y, a blank)."""
    c = b"h:1:2 [0] " + b"NCCL INFO " + b"y" * 5000 + b" NCCL INFO " + b"z" * 6000 + b"\n"
    scans = [_linescan.tagged_py] + ([_linescan._compiled.tagged] if _linescan._compiled is not None else [])
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
            assert list(_linescan._compiled.tagged(pre + b"NCCL INFO x\n")[4]) == ([] if got is None else [got])


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
