"""A section of an nvidia-bug-report goes to its parser as the text itself (load/files.py
`open_str`): no copy is made, and its lines are those a file of the same text gives (terminators
kept, a line cut at LINE_LIMIT, the rest of it skipped)."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from topodiag.errors import InputError
from topodiag.load import files


def test_the_text_is_not_copied() -> None:
    text = "[    1.0] NVRM: Xid (PCI:0000:b3:00): 79, pid=1, GPU has fallen off the bus.\n" * 3
    opened = files.open_str("report [dmesg:]", text)
    assert opened.read() is text and opened.binary() is None and opened.head == text


@pytest.mark.parametrize("text", ["", "a\x00b\n"])
def test_empty_or_binary_text_is_refused_as_a_file_is(text) -> None:
    with pytest.raises(InputError):
        files.open_str("section", text)


@settings(max_examples=300, deadline=None)
@given(hst.text(alphabet=hst.sampled_from("ab \r\n\u00e9"), min_size=1, max_size=60))
def test_lines_are_those_of_a_file(text) -> None:
    assert list(files._HeldText("t", text).lines()) == list(io.StringIO(text, newline=""))


@settings(max_examples=300, deadline=None)
@given(hst.text(alphabet=hst.sampled_from("ab \r\n\u00e9"), min_size=1, max_size=60),
       hst.integers(min_value=2, max_value=9))
def test_a_long_line_is_cut_at_the_limit(text, limit) -> None:
    old = files.LINE_LIMIT
    files.LINE_LIMIT = limit
    try:
        got = list(files._HeldText("t", text).lines())
    finally:
        files.LINE_LIMIT = old
    whole = list(io.StringIO(text, newline=""))
    assert all(len(piece.rstrip("\r\n")) <= limit for piece in got)
    assert [line for line in whole if len(line.rstrip("\r\n")) < limit] == \
        [piece for piece in got if len(piece.rstrip("\r\n")) < limit]  # short lines: all of them, as they are
