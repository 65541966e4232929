"""parsers/_possessive.py: the patterns written with possessive runs compile on Python 3.10 (greedy
there) and match, greedy, exactly what they match possessive -- the claim their comments make (what
follows each run cannot start inside it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topodiag.parsers import _kernel_log_block as block
from topodiag.parsers._possessive import SUPPORTED, greedy, possessive

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("written, want", [
    (r"[0-9]++", r"[0-9]+"),
    (r"(.*+)$", r"(.*)$"),
    (r"\S{1,64}+ kernel", r"\S{1,64} kernel"),
    (r"[ \t]*+x?+", r"[ \t]*x?"),
    (r"(?:ab)++c{2}+d{,3}+e{4,}+", r"(?:ab)+c{2}d{,3}e{4,}"),
    (r"\++", r"\++"),  # an escaped "+", then a quantifier: nothing possessive
    (r"[+*]+[]+]+[^]+]+", r"[+*]+[]+]+[^]+]+"),  # "+" in classes, a "]" first in a class
    (r"a+?b*?c??", r"a+?b*?c??"),  # lazy quantifiers
    (r"(?=x)+", r"(?=x)+"),  # "(?" opens a group, its "?" quantifies nothing
    (r"x{}+", r"x{}+"),  # "{}" is no quantifier: the "+" after it is one
    (r"[\]+]++", r"[\]+]+"),  # an escaped "]" in a class
])
def test_greedy_drops_only_the_possessive_marks(written: str, want: str) -> None:
    assert greedy(written) == want
    assert greedy(written.encode()) == want.encode()
    re.compile(want)  # valid on every supported Python


def test_possessive_is_the_pattern_where_re_reads_it() -> None:
    assert possessive(r"a++") == (r"a++" if SUPPORTED else r"a+")


def _kernel_lines() -> list[str]:
    lines = []
    for path in sorted((ROOT / "fixtures" / "kernel_log").iterdir()):
        if path.is_file():
            lines += path.read_text("utf-8", "replace").splitlines()
    return lines


KEY_PATTERNS = [block._KEY_RE.pattern, block._DMESG_KEY_RE.pattern]
KEY_PIECES = st.sampled_from(["Jan", "Feb 12 ", " 3 ", "10:11:12 ", "host kernel: ", "kernel:", "[", "]", " ",
                              "\t", "12345.678901", "1", ".", ",", ";", "4,567,890,-;", "6,1,2,", "x" * 70, "a",
                              "NVRM: Xid", "\u00e9", ":"])


@pytest.mark.skipif(not SUPPORTED, reason="the possessive form compiles only on Python 3.11 and later")
@pytest.mark.parametrize("pattern", KEY_PATTERNS, ids=["key", "dmesg_key"])
def test_kernel_log_keys_match_the_same_greedy_on_every_fixture_line(pattern: str) -> None:
    """Every line of every kernel-log fixture: the same groups, possessive and greedy."""
    fast, slow = re.compile(pattern), re.compile(greedy(pattern))
    assert fast.pattern != slow.pattern
    text = "\n".join(_kernel_lines())
    assert [m.groups() for m in fast.finditer(text)] == [m.groups() for m in slow.finditer(text)]


@pytest.mark.skipif(not SUPPORTED, reason="the possessive form compiles only on Python 3.11 and later")
@settings(max_examples=1500, deadline=None)
@given(st.lists(st.lists(KEY_PIECES, max_size=12).map("".join), max_size=5).map("\n".join))
def test_kernel_log_keys_match_the_same_greedy_on_drawn_lines(text: str) -> None:
    for pattern in KEY_PATTERNS:
        fast, slow = re.compile(pattern), re.compile(greedy(pattern))
        assert [m.groups() for m in fast.finditer(text)] == [m.groups() for m in slow.finditer(text)]


def _row_patterns() -> list[bytes]:
    """The plain-row patterns (nccl_tests/read.py `_right_row_b`) of every layout the nccl-tests fixtures
    have, collected from the parser's cache of them."""
    from topodiag.parsers import get
    from topodiag.parsers.nccl_tests import read

    parser = get("nccl_tests")
    found = {}
    for path in sorted((ROOT / "fixtures" / "nccl_tests").glob("*.log")) + \
            sorted((ROOT / "fixtures" / "nccl_tests").glob("*.txt")):
        try:
            parser.parse(path.read_text("utf-8", "replace"))
        except Exception:  # (a fixture of a failure: its layouts, if any, are in the cache all the same)
            pass
        shapes = list(read._PLAIN.values()) + ([read._PLAIN_LAST[1]] if read._PLAIN_LAST else [])
        for shape in shapes:
            if shape is not None and shape[6] is not None:
                found[shape[6].pattern] = None
    return list(found)


def _row_lines() -> list[bytes]:
    lines = []
    for path in sorted((ROOT / "fixtures" / "nccl_tests").iterdir()):
        if path.suffix in (".log", ".txt"):
            lines += path.read_bytes().splitlines()
    return lines


@pytest.mark.skipif(not SUPPORTED, reason="the possessive form compiles only on Python 3.11 and later")
def test_nccl_tests_plain_rows_match_the_same_greedy() -> None:
    """Every line of every nccl-tests fixture against every layout's row pattern, possessive and greedy,
    and drawn variants of the rows (cells cut, doubled, blanks and signs added)."""
    patterns = _row_patterns()
    assert patterns, "no layout found in the fixtures"
    lines = _row_lines()
    rows = [line for line in lines if line.strip()[:1].isdigit()]
    assert len(rows) > 100
    variants = []
    for line in rows[:400]:
        variants += [line + b" ", b"  " + line, line.replace(b" ", b"\t", 3), line.replace(b".", b"..", 1),
                     line[:-3], line + b"e+", line.replace(b"  ", b" -", 1), line + b" N/A", line.replace(b"0", b"", 2)]
    for pattern in patterns:
        fast, slow = re.compile(pattern), re.compile(greedy(pattern))
        assert fast.pattern != slow.pattern
        for line in lines + variants:
            assert bool(fast.fullmatch(line)) == bool(slow.fullmatch(line)), (pattern, line)
