"""scan/chunks.py `iter_chunks`: chunks of whole lines (a giant line cut at twice the size), and a
read that fails mid-file is one ParseError that says how far the reading got."""

from __future__ import annotations

import io

import pytest

from topodiag.errors import ParseError
from topodiag.scan.chunks import iter_chunks


def test_whole_lines_and_giant_lines_cut() -> None:
    data = b"a" * 10 + b"\n" + b"b" * 3 + b"\n" + b"c" * 40 + b"\nend"
    chunks = list(iter_chunks(io.BytesIO(data), 8))
    assert b"".join(chunks) == data
    # 8 bytes, then the rest of their line; the giant line of 40: 8 + at most 8 more, cut
    assert chunks[0] == b"a" * 10 + b"\n"
    assert all(c.endswith(b"\n") or len(c) == 16 or c is chunks[-1] for c in chunks)
    assert max(map(len, chunks)) <= 16


class _Failing(io.BytesIO):
    def __init__(self, data: bytes, ok_reads: int) -> None:
        super().__init__(data)
        self.left = ok_reads

    def read(self, n=-1):
        if self.left == 0:
            raise OSError(5, "Input/output error")
        self.left -= 1
        return super().read(n)


def test_a_read_error_says_where() -> None:
    data = b"x" * 7 + b"\n" + b"y" * 7 + b"\n" + b"z" * 7 + b"\n"
    chunks = iter_chunks(_Failing(data, 2), 8)
    assert next(chunks) == b"x" * 7 + b"\n" and next(chunks) == b"y" * 7 + b"\n"
    with pytest.raises(ParseError) as err:
        next(chunks)
    assert "after its first 16 bytes" in err.value.message and "Input/output error" in err.value.message
