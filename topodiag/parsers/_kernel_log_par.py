"""The kernel log of a big regular file read over the machine's cores: the state-free half of a block
(the key of each line, the Counter of the distinct keys: _kernel_log_keys.digest) is computed in
forked workers (topodiag/scan/parallel.py and workers.py; the count follows the usable CPUs or TOPODIAG_WORKERS, this
process included) while this process reads the blocks in order with the digests (`feed`): what
depends on a line's place (a driver load, a list being filled, an AER window) stays in line order.

The file is cut into chunks of whole lines (each ends at a "\\n"; the first chunks small, then each
twice the last, up to BLOCK_CHARS, as the text path's blocks), each chunk one block. A worker reads its
chunk from the file by offset, so only the digest crosses the pipe; it sends back the chunk's length
and last bytes, and a digest that does not match, a worker that dies or a pool that cannot start
costs time, not correctness: the block's keys are then found here. The result is the text path's
(`read_file`) to the bit. A helper module, no parser.
"""

from __future__ import annotations

import os
import stat
from typing import Iterator, Optional

from . import _kernel_log_block as B
from ._kernel_log_keys import Lines

PARALLEL_MIN_BYTES: Optional[int] = 32 << 20  # files from this size are read with workers (None: never)


def worth_it(handle, start: int) -> bool:
    """A big regular file (PARALLEL_MIN_BYTES from `start`), pread, and a worker can be forked."""
    from ..scan.workers import fork_ok

    if PARALLEL_MIN_BYTES is None or not hasattr(os, "pread"):
        return False
    try:
        info = os.fstat(handle.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size - start >= PARALLEL_MIN_BYTES and fork_ok()


def read(handle, new_state, finish, line):
    """`read_file`'s result for the file from its current offset, or None at a line longer than
    LINE_LIMIT (the caller reads the file by the line path, which cuts it). The chunks and their
    digests come from topodiag/scan/parallel.py (`digested`: the worker pool, the read by offset in the
    worker, the check that a digest matches its chunk)."""
    from ..scan import parallel

    st = new_state()
    chunks = parallel.digested([_Reader], handle, share=True)
    try:
        for data, dg in chunks:
            for block, digest in _blocks_of(data, dg[0] if dg else None):
                B.feed(st, block, line, digest)
        return finish(st)
    except B.LongLine:
        return None
    finally:
        chunks.close()


def digest_bytes(data: bytes) -> Optional[tuple]:
    """In the worker: the block digest (_kernel_log_keys.digest) of a chunk of whole lines; None for the
    file's last line without its end (read here, as the text path cuts it)."""
    text = data.decode("utf-8", "replace")
    if not text.endswith("\n"):
        return None
    if "\r" in text:
        return B.digest("\n".join(_lines(text)))
    return B.digest(text[:-1], ends=True)  # the lines' ends too: the merge cuts only the lines it reads


def _blocks_of(data: bytes, dg: Optional[tuple]) -> Iterator[tuple[object, Optional[tuple]]]:
    """The blocks of lines of one chunk (a list of them, or `Lines` where the digest gave each line's
    end), with the worker's digest (None: found here)."""
    text = data.decode("utf-8", "replace")
    if not text.endswith("\n"):  # the file's last line, without its end: as the text path cuts it
        pending = [text]
        yield from ((b, None) for b in B.text_blocks(lambda n: pending.pop() if pending else ""))
        return
    if dg is None and "\r" not in text:  # digested here (not sent to the worker, or not right)
        dg = B.digest(text[:-1], ends=True)
    if len(dg or ()) == 5:  # each line's end too (the C pass over a text without "\r")
        if dg[4] > B.LINE_LIMIT:
            raise B.LongLine()
        yield Lines(text, dg[3]), dg[:3]
        return
    lines = B._checked(_lines(text), B.LINE_LIMIT)
    if dg is None:  # a text with "\r" digested here: its lines joined as the worker joins them
        dg = B.digest("\n".join(lines))
    yield lines, dg


def _lines(text: str) -> list:
    """The lines of a text that ends at "\\n", as text_blocks cuts them."""
    lines = B._LINE_END.split(text) if "\r" in text else text.split("\n")
    lines.pop()
    return lines


def byte_chunks(handle) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) chunks of whole lines, each ending at b"\\n" but the file's last: the first of
    FIRST_BLOCK_CHARS bytes or so, then each twice the last up to BLOCK_CHARS. Raises LongLine where
    no "\\n" comes within 4 x LINE_LIMIT bytes."""
    off = handle.tell()
    step, carry = B.FIRST_BLOCK_CHARS, b""
    while True:
        piece = handle.read(step)
        step = min(step * 2, B.BLOCK_CHARS)
        if not piece:
            if carry:
                yield off, carry
            return
        data = carry + piece if carry else piece
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            if len(data) > 4 * B.LINE_LIMIT:
                raise B.LongLine()
            carry = data
            continue
        yield off, data[:cut]
        off += cut
        carry = data[cut:]


class _Reader:
    """What topodiag/scan/parallel.py `digested` asks of a reader: its chunks of whole lines and the
    state-free digest of one (sent to the workers by reference)."""

    digest = staticmethod(digest_bytes)

    @staticmethod
    def iter_chunks(handle) -> Iterator[bytes]:
        return (data for _, data in byte_chunks(handle))
