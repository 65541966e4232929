"""Spreading a big log over two processes: a map over its chunks plus an in-order merge.

A reader that can (a module or object with `iter_chunks`, `digest`, `parse_chunks`: the nccl_debug
and nccl_tests parsers) splits its work in two: a state-free `digest` of each chunk and an in-order
merge that needs the state of the chunks before. `digested` gives each chunk with its digests for a
list of such readers (topodiag/scan/onepass.py uses it for a big file that one of them reads; a file that several read is split by parser there).
For a regular file of PARALLEL_MIN_BYTES or more, with a worker count of two or more
(topodiag/scan/workers.py `worker_count`: the usable CPUs, or TOPODIAG_WORKERS), the digests are computed
in worker processes (the count less one: this process merges) while this process merges, in order:
the digests of the next chunks are computed while chunk k is merged. The worker reads its chunk from the file itself (by offset), so only the small
digests cross the pipe; it sends back the chunk's length and last bytes with each, and any digest
that does not match its chunk, a worker that dies, or a pool that cannot start, costs time and not
correctness: this process computes the digest itself from then on.

Not used when other threads run (a fork beside running threads can deadlock the child), nor on
stdin or an in-memory input; the parser is then read in one process, with the same result.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from typing import BinaryIO, Iterator, Optional

from .workers import fork_ok, release, worker_count, worker_pool

PARALLEL_MIN_BYTES: Optional[int] = 64 << 20  # files from this size get a worker (None: never)
AHEAD = 2  # digests requested ahead of the merge, per worker
LENT_AHEAD = 3  # asked ahead of a process lent by the other side of a split file, once it is free
MAX_AHEAD = 16  # and in all (each holds its chunk here: 16 x 4 MiB whatever the CPU count)
_TAIL = 16

_fds: dict[str, int] = {}  # the worker's open files


def _digest_range(digest, path: str, off: int, n: int) -> tuple[int, bytes, object]:
    """In the worker: read bytes [off, off+n) of `path` and digest them with `digest` (a module-level
    function, sent by reference; a tuple of them: a tuple of digests, one per reader, for a file read
    once by several)."""
    fd = _fds.get(path)
    if fd is None:
        fd = _fds[path] = os.open(path, os.O_RDONLY)
    parts, got = [], 0
    while got < n:
        b = os.pread(fd, n - got, off + got)
        if not b:
            break
        parts.append(b)
        got += len(b)
    data = b"".join(parts)
    if isinstance(digest, tuple):
        return len(data), data[-_TAIL:], tuple(d(data) for d in digest)
    return len(data), data[-_TAIL:], digest(data)


def worth_it(parser, handle: BinaryIO) -> bool:
    """True when `handle` is a big regular file, `parser` (or every parser of a list) can be split,
    and a worker can be forked."""
    parsers = parser if isinstance(parser, (list, tuple)) else [parser]
    if PARALLEL_MIN_BYTES is None or not parsers or not all(
            hasattr(p, a) for p in parsers for a in ("iter_chunks", "digest", "parse_chunks")):
        return False
    if not hasattr(os, "pread"):
        return False
    try:
        info = os.fstat(handle.fileno())
        start = handle.tell()
    except (OSError, ValueError, AttributeError):
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_size - start < PARALLEL_MIN_BYTES:
        return False
    return fork_ok()


def file_path(handle: BinaryIO) -> str:
    """The path of an open regular file (the worker opens it by itself)."""
    path = os.path.realpath(f"/proc/self/fd/{handle.fileno()}") if os.path.isdir("/proc/self/fd") else None
    return str(path or getattr(handle, "name", None))


def parse_in_two(parser, handle: BinaryIO):
    """`parser.parse_chunks` over the file's chunks, each with its digest from the worker when it came
    back right (None otherwise: the parser computes it)."""
    workers = digest_workers()
    pool = worker_pool(workers)
    if pool is None:
        return parser.parse_chunks(parser.iter_chunks(handle))
    done = False
    try:
        out = parser.parse_chunks(_paired(parser.iter_chunks, handle, pool, file_path(handle), parser.digest,
                                          min(MAX_AHEAD, AHEAD * workers)))
        done = True
        return out
    finally:
        release(pool, done)


def digested(parsers, handle: BinaryIO, share: bool = False) -> Iterator[tuple[bytes, Optional[tuple]]]:
    """The file's chunks (cut by the first parser's `iter_chunks`), each with a tuple of the parsers'
    digests computed in a worker process when they came back right (None otherwise). The caller
    exhausts or closes the generator (the worker is shut down then). `share`: a chunk is not sent to
    the workers while they are behind (as many of their digests as are asked ahead not done yet):
    it comes with None and this process digests it, so a merge quicker than the digests takes its
    share of them (the caller must then digest a chunk that comes with None, as it does when a digest
    does not come back right)."""
    return digested_with(parsers[0].iter_chunks, tuple(p.digest for p in parsers), handle, digest_workers(),
                         share=share)


def digested_with(iter_chunks, digests: tuple, handle: BinaryIO, workers: int, pool=None, share: bool = False,
                  lent=None) -> Iterator[tuple[bytes, Optional[tuple]]]:
    """The chunks `iter_chunks` cuts from `handle`, each with the tuple of `digests` (module-level
    functions) computed by `workers` worker processes when they came back right (None otherwise;
    `share` as in `digested`). `pool`: the caller's pool, which has those workers free (it shuts it
    down itself: one side of a file read by several parsers in two processes, topodiag/scan/onepass.py
    `_split`, each side with its own share of the machine's cores); else a pool of `workers` is made
    here (forked now: call it with no other thread running). No worker (`workers` < 1, or a pool
    that cannot start): the chunks alone. `lent`: the future of the other work the caller's pool
    runs (the other side of a split file): its process, once that is done, digests for this one
    (`_paired`'s `lent`), though `workers` is 0."""
    if lent is not None and pool is not None and workers < 1:
        yield from _paired(iter_chunks, handle, pool, file_path(handle), tuple(digests), LENT_AHEAD, lent=lent)
        return
    own = pool is None and workers >= 1
    if own:
        pool = worker_pool(workers)
    if workers < 1 or pool is None:
        yield from ((chunk, None) for chunk in iter_chunks(handle))
        return
    done = False
    try:
        yield from _paired(iter_chunks, handle, pool, file_path(handle), tuple(digests),
                           min(MAX_AHEAD, AHEAD * workers), share)
        done = True
    finally:
        if own:
            release(pool, done)


def digest_workers() -> int:
    """Worker processes for the digests: the worker count less this process (which merges), at least 1."""
    return max(1, worker_count() - 1)


def _paired(iter_chunks, handle: BinaryIO, pool, path: str, digest, ahead: int = AHEAD, share: bool = False,
            lent=None) -> Iterator[tuple[bytes, Optional[tuple]]]:
    """The chunks with their digests from the pool (see `digested_with`). `lent`: a future the pool
    runs first (the pool's one process is busy with it): no digest is asked before it is done, and
    a digest asked that is not done when its chunk is merged is taken back (cancelled: digested
    here) unless the process is already at it, so whichever of the two processes is free digests."""
    off = handle.tell()
    pending: deque = deque()
    broken = False
    for chunk in iter_chunks(handle):
        fut = None
        if (share and _behind(pending, ahead)) or (lent is not None and not lent.done()):
            pass  # digested here, when merged
        elif not broken:
            try:
                fut = pool.submit(_digest_range, digest, path, off, len(chunk))
            except Exception:  # a broken pool: no more requests
                broken = True
        off += len(chunk)
        pending.append((chunk, fut))
        if len(pending) > ahead:
            item, broken = _settle(pending.popleft(), broken, lent is not None)
            yield item
    while pending:
        item, broken = _settle(pending.popleft(), broken, lent is not None)
        yield item


def _behind(pending: deque, ahead: int) -> bool:
    """Whether `ahead` digests asked of the workers are not done yet."""
    return sum(1 for _, fut in pending if fut is not None and not fut.done()) >= ahead


def _settle(entry, broken: bool, take_back: bool = False) -> tuple[tuple[bytes, Optional[tuple]], bool]:
    chunk, fut = entry
    if fut is None or (take_back and not fut.done() and fut.cancel()):
        return (chunk, None), broken
    try:
        n, tail, dg = fut.result()
    except Exception:
        return (chunk, None), True
    if n != len(chunk) or tail != chunk[-_TAIL:]:
        return (chunk, None), True
    return (chunk, dg), broken
