"""chunks.newlines: CRLF and lone CR made newlines, the same bytes as one `\\r\\n?` substitution
(the rule normalise states), by whichever way it takes (one replace where no CRLF is in the chunk)."""

import itertools
import re

from topodiag.scan.chunks import newlines

_REF = re.compile(rb"\r\n?")


def test_every_short_mix_of_cr_lf_and_text_is_the_reference():
    for n in range(1, 7):
        for parts in itertools.product((b"\r", b"\n", b"a", b"\r\n"), repeat=n):
            raw = b"".join(parts)
            assert newlines(raw) == _REF.sub(b"\n", raw), raw


def test_progress_bar_carriage_returns():
    raw = b"Epoch 0: 1%|\xe2\x96\x88 | 7/1000\rEpoch 1: 2%|\xe2\x96\x88 | 8/1000\nnext\n"
    assert newlines(raw) == b"Epoch 0: 1%|\xe2\x96\x88 | 7/1000\nEpoch 1: 2%|\xe2\x96\x88 | 8/1000\nnext\n"


def test_crlf_file_and_no_cr_is_the_same_object():
    assert newlines(b"a\r\nb\r\n") == b"a\nb\n"
    raw = b"plain\nlines\n"
    assert newlines(raw) is raw
