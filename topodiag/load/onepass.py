"""One pass over a file for every parser that reads it.

An nccl-tests run with NCCL_DEBUG=INFO is both an nccl-tests output and an NCCL log, and detection
names both sources; a log of a cluster's jobs appended together is the same, at gigabytes. The
parsers that read bytes a chunk at a time (`ChunkReader`, `digest`, `iter_chunks`: nccl_debug and
nccl_tests) get the same chunks from one read of the file: each chunk is handed to every reader in
turn, with the digests a worker process computed for all of them when the file is big
(topodiag/load/parallel.py `digested`). Memory is a few chunks and each parser's bounded state,
whatever the size of the file.

A `#@` provenance header (a fixture's) is blanked in the first chunk, line numbers kept, as the line
path does (parsers/base.py `blank_provenance_header_lines`); a header this cannot blank in bytes
(carriage returns in it) sends the file back to one parser at a time. A parser that raises
ParseError (or RecursionError) on a chunk or at the end is out; the others read on; a file that
cannot be read fails them all with the same error.
"""

from __future__ import annotations

from typing import BinaryIO, Iterator, Optional

from ..parsers.base import ParseError

HEADER = b"#@"
HEADER_END = b"#@ ---"


def can_share(parsers) -> bool:
    """Whether every parser reads chunks (so one pass can feed them all)."""
    return bool(parsers) and all(hasattr(p, a) for p in parsers for a in ("ChunkReader", "digest", "iter_chunks"))


def blank_header(chunk: bytes) -> Optional[bytes]:
    """The first chunk with its leading `#@` lines emptied (up to and including `#@ ---`); None when
    the header holds a carriage return (the line path splits it differently)."""
    out = []
    pos = 0
    while chunk.startswith(HEADER, pos):
        nl = chunk.find(b"\n", pos)
        end = len(chunk) if nl < 0 else nl
        line = chunk[pos:end]
        if b"\r" in line:
            return None
        out.append(b"")
        pos = end + 1
        if line.strip() == HEADER_END or nl < 0:
            break
    return b"\n" * len(out) + chunk[pos:]


def _chunks(parsers, handle: BinaryIO) -> Iterator[tuple[bytes, Optional[tuple]]]:
    from . import parallel

    if len(parsers) and parallel.worth_it(list(parsers), handle):
        return parallel.digested(list(parsers), handle)
    return ((chunk, None) for chunk in parsers[0].iter_chunks(handle))


def parse_together(parsers, handle: BinaryIO) -> Optional[list]:
    """Each parser's result, or the exception it raised (ParseError, RecursionError), in the order of
    `parsers`, from one read of `handle` (a file opened "rb", at its start). None when its header
    cannot be blanked in bytes (read it one parser at a time)."""
    readers = [p.ChunkReader() for p in parsers]
    out: list = [None] * len(readers)
    chunks = _chunks(parsers, handle)
    try:
        first = True
        for chunk, dgs in chunks:
            if first:
                first = False
                if chunk.startswith(HEADER):
                    chunk, dgs = blank_header(chunk), None
                    if chunk is None:
                        return None
            for k, reader in enumerate(readers):
                if out[k] is None:
                    try:
                        reader.feed(chunk, dgs[k] if dgs is not None else None)
                    except (ParseError, RecursionError) as exc:
                        out[k] = exc
    except ParseError as exc:  # the file could not be read: no parser has a result
        return [exc] * len(readers)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    for k, reader in enumerate(readers):
        if out[k] is None:
            try:
                out[k] = reader.result()
            except (ParseError, RecursionError) as exc:
                out[k] = exc
    return out
