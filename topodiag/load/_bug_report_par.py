"""The dmesg sections of a big nvidia-bug-report read over the machine's cores.

Each dmesg section of a report is a kernel log of its own: its parse needs nothing of the sections
before it. For a regular, uncompressed report of PARALLEL_MIN_BYTES or more (and a worker count of
two or more: topodiag/scan/workers.py), the splitter (bug_report.sections_of_blocks) hands the
sections it streams to a forked worker by the file offset of their first line: the worker reads the
file from there, a block of lines at a time as the report's reader cuts them (`_byte_blocks`), up to
the next separator line, and pushes them to the same kernel-log reader (bug_report.parse_range, _Streamed); only
its result crosses the pipe. One streamed section in `every` (the worker count) stays in this
process, read as it streams by, so that this process works too while the workers do. The sections
are given on in the report's order (`resolved`); a worker that fails or a pool that breaks costs
time, not correctness: that section is then read here, from its offset. A gzip report, stdin, a
small report: read in this process alone, as before.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections import deque
from typing import Iterator, Optional

PARALLEL_MIN_BYTES: Optional[int] = 32 << 20  # reports from this size get workers (None: never)
MAX_HELD = 64  # sections held to keep the order while a worker reads one before them
HELD_CHARS = 32 << 20  # and the text they hold (memory stays that of a section or so)


def pool_for(report) -> Optional[tuple]:
    """(pool, worker count with this process) for a report worth reading with workers, or None."""
    from ..scan.workers import fork_ok, worker_count, worker_pool

    path = getattr(report, "path", None)
    if PARALLEL_MIN_BYTES is None or path is None or not fork_ok():
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size < PARALLEL_MIN_BYTES:
        return None
    n = worker_count()
    pool = worker_pool(n - 1)
    return (pool, n) if pool is not None else None


class Far:
    """A section read by a worker: what the splitter's reader is while its lines go by (nothing is
    done with them), and the section's `parsed` until `resolved` settles it."""

    def __init__(self, fut, parse, path: str, off: int, source: str, offset: int = 0):
        self.fut, self.parse, self.path, self.off, self.source = fut, parse, path, off, source
        self.offset = offset  # the section's line offset: its result comes with the file's line numbers

    def add(self, line: str) -> None:
        pass

    def add_lines(self, lines: list) -> None:
        pass

    def result(self):
        return self

    def settle(self):
        try:
            return self.fut.result()
        except Exception:  # a dead worker, a broken pool, a result that does not cross the pipe
            return self.parse(self.path, self.off, self.source, self.offset)


class Remote:
    """Sends the streamed sections of a report to the pool (`start`), one in `every` left to this
    process. `at` is the report's record of its current block (Report.at: where its first line
    starts, and its bytes), `base` the file line number before that block's first line; `parse`
    reads a section from its offset (bug_report.parse_range: in the worker, or here when it failed)."""

    def __init__(self, path: str, at: list, pool, every: int, parse):
        self.path, self.at, self.pool, self.every, self.parse = path, at, pool, max(1, every), parse
        self.base, self.count, self.broken = 0, 0, False

    def start(self, no: int, source: str) -> Optional[Far]:
        """A Far for the section whose first line given to its parser is file line `no`, or None
        when this process reads it."""
        self.count += 1
        if self.broken or self.count % self.every == 0:
            return None
        off = self.offset(no - self.base - 1)
        if off is None:
            return None
        try:
            fut = self.pool.submit(self.parse, self.path, off, source, no - 1)
        except Exception:  # a broken pool: the rest is read here
            self.broken = True
            return None
        return Far(fut, self.parse, self.path, off, source, no - 1)

    def offset(self, j: int) -> Optional[int]:
        """The file offset of line `j` (0-based) of the current block."""
        if len(self.at) != 4:
            return None
        first, data_at, data, _ = self.at
        if j == 0:
            return first
        p = -1
        for _ in range(j):
            p = data.find(b"\n", p + 1)
            if p < 0:
                return None
        return data_at + p + 1


def resolved(sections: Iterator, pool) -> Iterator:
    """The sections in order, each Far settled into its result; the pool shut down at the end."""
    from ..scan.workers import release

    pending: deque = deque()
    done, held = False, 0
    try:
        for sec in sections:
            pending.append(sec)
            held += len(sec.text or "")
            while pending and (_ready(pending[0]) or len(pending) > MAX_HELD or held > HELD_CHARS):
                held -= len(pending[0].text or "")
                yield _settled(pending.popleft())
        while pending:
            yield _settled(pending.popleft())
        done = True
    finally:
        release(pool, done)


def _ready(sec) -> bool:
    return not isinstance(sec.parsed, Far) or sec.parsed.fut.done()


def _settled(sec):
    if isinstance(sec.parsed, Far):
        return dataclasses.replace(sec, parsed=sec.parsed.settle(), moved=True)
    return sec
