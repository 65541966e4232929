"""One pass over a file for every parser that reads it.

An nccl-tests run with NCCL_DEBUG=INFO is both an nccl-tests output and an NCCL log, and detection
names both sources; a log of a cluster's jobs appended together is the same, at gigabytes. The
parsers that read bytes a chunk at a time (`ChunkReader`, `digest`, `iter_chunks`: nccl_debug and
nccl_tests) get the same chunks from one read of the file: each chunk is handed to every reader in
turn. A big file (topodiag/scan/parallel.py `worth_it`) read by several of them is read once in each
of two processes instead, each parser whole in one of them (`_split`, below); a big file read by one
of them gets the digests of its chunks from a worker (parallel.py `digested`); on a machine with more
cores than the two, each of the two processes has digest workers of its own (parallel.py
`digested_with`), the cores shared between them; with no core to spare (two), this process is lent
the other one once that has read its parsers, so the side that ends first digests for the side
still reading (parallel.py `_paired`'s `lent`). Memory is a few chunks
and each parser's bounded state, whatever the size of the file.

A `#@` provenance header (a fixture's) is blanked in the first chunk, line numbers kept, as the line
path does (parsers/base.py `blank_provenance_header_lines`); a header this cannot blank in bytes
(carriage returns in it) sends the file back to one parser at a time. A parser that raises
ParseError (or RecursionError) on a chunk or at the end is out; the others read on; a file that
cannot be read fails them all with the same error.
"""

from __future__ import annotations

import os
from typing import BinaryIO, Iterator, Optional

from ..errors import ParseError

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
    `parsers`, from one read of `handle` (a file opened "rb", at its start) -- or, for a big file
    that several parsers read, one read in each of two processes (`_split`). None when its header
    cannot be blanked in bytes (read it one parser at a time)."""
    if len(parsers) >= 2:
        out = _split(parsers, handle)
        if out is not _NOT_SPLIT:
            return out
    return _read(parsers, _chunks(parsers, handle))


def _read(parsers, chunks) -> Optional[list]:
    return _read_with([p.ChunkReader for p in parsers], chunks)


def _read_with(makers, chunks) -> Optional[list]:
    readers = [make() for make in makers]
    out: list = [None] * len(readers)
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


# A big file that several parsers read (an nccl-tests run with NCCL_DEBUG=INFO, a cluster's logs
# appended together: nccl_debug and nccl_tests) is read in two processes at once, each parser whole in
# one of them: this process reads the first half of the list, a forked worker (topodiag/scan/workers.py)
# the rest, each from the page cache by itself, and only the worker's results (bounded: each parser
# caps what it keeps) cross the pipe at the end. Each parser keeps its state across its chunks in its
# own process, so nothing but the results is ever sent -- the per-chunk digests that `_chunks` gets
# for a single parser would cost a pickle of each chunk's lines. A worker that cannot start or dies
# costs time and not correctness: this process then reads the rest itself.
_NOT_SPLIT = object()


def _split(parsers, handle: BinaryIO):
    from .workers import release, worker_count, worker_pool
    from . import lend as lending, parallel

    if not parallel.worth_it(list(parsers), handle):
        return _NOT_SPLIT
    # the cores beyond the two merging processes digest chunks for them, shared between the sides
    # (none on a 2-core machine: each side then reads its chunks alone). This side's digest workers
    # are in the same pool as the worker that reads the other side (one pool: all its processes are
    # forked at its first submit, before its thread starts); the other side's worker forks its own.
    extra = max(0, worker_count() - 2)
    my_workers, their_workers = (extra + 1) // 2, extra // 2
    # (the sides chosen before the pool forks: sampling them digests in this process alone)
    order, mine, theirs = _sides(parsers, _sampled_costs(parsers, handle) if not extra else None)
    pool = worker_pool(1 + my_workers)
    if pool is None:
        return _NOT_SPLIT
    # with no core to spare, the side that ends first digests for the other (topodiag/scan/lend.py):
    # the state it needs is made before the pool forks the worker
    lend = lending.start(os.fstat(handle.fileno()).st_size, mine[0].CHUNK) \
        if not extra and _same_cut(mine[0], theirs[0]) else None
    settled = False
    try:
        start = handle.tell()
        path = parallel.file_path(handle)
        try:
            fut = pool.submit(_read_file, tuple(p.ChunkReader for p in theirs), theirs[0].iter_chunks,
                              tuple(p.digest for p in theirs), their_workers, path, start,
                              lend.token if lend is not None else None)
        except Exception:  # a pool that cannot start
            return _NOT_SPLIT
        cuts: list = []
        cut = mine[0].iter_chunks if lend is None else (lambda h: lending.cuts_of(mine[0].iter_chunks(h), start, cuts))
        got = _read(mine, parallel.digested_with(cut, tuple(p.digest for p in mine), handle, my_workers, pool,
                                                 lent=fut))
        if got is None:
            return None
        if lend is not None:  # this side is done: it digests the other side's chunks until that one is
            lend.give(cuts, tuple(p.digest for p in theirs), path, lambda: not fut.done())
        rest = _theirs(fut, theirs, handle, start)
        settled = True
        if rest is None:
            return None
        out: list = [None] * len(parsers)
        for k, r in zip(order, got + rest):
            out[k] = r
        return out
    finally:
        lending.end(lend)
        release(pool, settled)


def _sides(parsers, costs: Optional[list] = None) -> tuple[list, list, list]:
    """(order, this side's parsers, the worker's), the first half of `order` here; results go back in
    `parsers`' order. With `costs` (each parser's digest of a sample of the file: `_sampled_costs`,
    taken on two cores, where the sides lend themselves to each other) the lighter readers stay here:
    this side then ends first and digests ahead of the worker through topodiag/scan/lend.py, which
    keeps both processes busy to the end, where the worker's process lent to this one through the pool
    left this one waiting on its digests a quarter of the time (the issue's 1 GB log: nccl_tests here
    7.45 s compiled, 10.1 s pure, against 8.08 s and 10.5 s with nccl_debug here; the progress-bar log,
    pure, whose nccl-tests reader is the heavier: 11.7 s with nccl_debug here, 13.3 s the other way;
    benchmarks/README.md). A cheaper result to send back comes with it: the nccl-tests report of a big
    log pickles to megabytes, the NCCL log's result to a tenth of that. Without costs (more cores:
    each side has digest workers of its own, and this one the odd one), the heavier readers by
    READ_WEIGHT (1 where a parser does not say) stay here."""
    if costs is not None and len(costs) == len(parsers):
        order = sorted(range(len(parsers)), key=costs.__getitem__)
    else:
        order = sorted(range(len(parsers)), key=lambda k: -getattr(parsers[k], "READ_WEIGHT", 1.0))
    half = (len(parsers) + 1) // 2
    return order, [parsers[k] for k in order[:half]], [parsers[k] for k in order[half:]]


SAMPLE = 1 << 20  # bytes of whole lines from the middle of the file, digested by each parser


def _sampled_costs(parsers, handle: BinaryIO) -> Optional[list]:
    """The CPU seconds each parser's `digest` takes over the same SAMPLE bytes of whole lines from the
    middle of the file (read by offset: the handle stays where it is), or None where there is no such
    sample (a giant line, an unreadable file) or a digest raises (any exception: what the read does
    with the same bytes is the read's to say): the weights decide then. (What a
    reader costs a byte is the log's: the nccl-tests reader pays for the lines without an NCCL tag, a
    training job's progress bars, the NCCL log's for the tagged ones.)"""
    import time

    try:
        fd = handle.fileno()
        start = handle.tell()
        size = os.fstat(fd).st_size
        raw = os.pread(fd, SAMPLE, start + max(0, (size - start - SAMPLE) // 2))
    except (OSError, ValueError, AttributeError):
        return None
    a, b = raw.find(b"\n") + 1, raw.rfind(b"\n") + 1
    if a <= 0 or b <= a:
        return None
    sample = raw[a:b]
    costs = []
    for p in parsers:
        t0 = time.process_time()
        try:
            p.digest(sample)
        except Exception:  # (a guess for speed never fails a read: the read itself meets the error, if any)
            return None
        costs.append(time.process_time() - t0)
    return costs


def _same_cut(a, b) -> bool:
    """Whether two chunk parsers cut a file the same way (one CHUNK size): one side can then digest the
    other's chunks."""
    size = getattr(a, "CHUNK", None)
    return isinstance(size, int) and size > 0 and size == getattr(b, "CHUNK", None)


def _theirs(fut, theirs: list, handle: BinaryIO, start: int) -> Optional[list]:
    """The worker's results, or, when it died or sent something else, its parsers read here."""
    try:
        rest = fut.result()
    except Exception:  # the worker died
        rest = None
    if rest is not None and len(rest) == len(theirs):
        return [_restored(r) for r in rest]
    handle.seek(start)
    return _read(theirs, ((chunk, None) for chunk in theirs[0].iter_chunks(handle)))


def _read_file(makers: tuple, iter_chunks, digests: tuple, workers: int, path: str, start: int,
               token: Optional[str] = None) -> Optional[list]:
    """In the worker: `_read` of these readers (their ChunkReader classes, sent by reference) over the
    file from `start`, cut by `iter_chunks`, the chunks' `digests` computed by `workers` processes of
    its own (none: it digests them itself, save those the loading process sends once it is done:
    `token` names the split's shared state, topodiag/scan/lend.py), each exception as a tuple (an
    exception's own pickle drops ParseError's line number)."""
    from . import lend as lending, parallel

    lend = lending.current(token) if not workers else None
    with open(path, "rb") as handle:
        handle.seek(start)
        chunks = lend.taking(iter_chunks(handle)) if lend is not None else \
            parallel.digested_with(iter_chunks, digests, handle, workers)
        out = _read_with(list(makers), chunks)
    if out is None:
        return None
    return [("ParseError", r.message, r.line_no) if isinstance(r, ParseError)
            else ("RecursionError", str(r)) if isinstance(r, RecursionError) else r for r in out]


def _restored(r):
    if isinstance(r, tuple) and r and r[0] == "ParseError":
        return ParseError(r[1], r[2])
    if isinstance(r, tuple) and r and r[0] == "RecursionError":
        return RecursionError(r[1])
    return r
