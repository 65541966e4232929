"""The dmesg sections of a big nvidia-bug-report read over the machine's cores.

Each dmesg section of a report is a kernel log of its own: its parse needs nothing of the sections
before it. For a regular, uncompressed report of PARALLEL_MIN_BYTES or more (and a worker count of
two or more: topodiag/scan/workers.py), the splitter (_bug_report_bytes.Splitter) finds each
streamed section's byte range in the file (the offset of its body's first line, that of the next
separator line) without decoding it, and hands the range to a forked worker, which reads those bytes
from the file itself and gives them to the kernel log's block pass (_bug_report_bytes.parse_range);
only its result crosses the pipe, with the file's line numbers. A streamed section is read in this
process, as it streams by, when the workers are behind (AHEAD sections each not done yet), so that
this process works too while the workers do and the work follows each side's pace. The sections are given on in the report's order (`resolved`); a worker that fails or
a pool that breaks costs time, not correctness: that section is then read here, from its range. A
gzip report, stdin, a small report: read in this process alone, as before.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections import deque
from typing import Iterator, Optional

PARALLEL_MIN_BYTES: Optional[int] = 32 << 20  # reports from this size get workers (None: never)
AHEAD = 3  # sections sent to each worker and not done yet, past which this process reads the next
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
    if n < 2:
        return None
    from ..parsers import kernel_log

    kernel_log.warm()  # loaded once here, not again in each worker (forked at the first section sent)
    pool = worker_pool(n - 1)
    return (pool, n) if pool is not None else None


class Far:
    """A section read by a worker: the sink of its body here (nothing is done with its bytes; at its
    end the worker is asked for the byte range), and the section's `parsed` until `resolved` settles
    it."""

    streamed = True
    big = False
    counts = False  # the line ends of its body: counted by the splitter

    def __init__(self, remote: "Remote", start: int, source: str, offset: int = 0, keep: Optional[int] = None):
        self.remote, self.start, self.source, self.keep = remote, start, source, keep
        self.offset = offset  # the section's line offset: its result comes with the file's line numbers
        self.end_at = start
        self.fut = None

    def add(self, data: bytes) -> None:
        pass

    def end(self, offset: int) -> None:
        self.end_at = offset
        self.fut = self.remote.submit(self)

    def result(self):
        return self

    def done(self) -> bool:
        return self.fut is None or self.fut.done()

    def settle(self):
        r = self.remote
        if self.fut is not None:
            try:
                return self.fut.result()
            except Exception:  # a dead worker, a broken pool, a result that does not cross the pipe
                pass
        return r.parse(r.path, self.start, self.end_at, self.source, self.offset, self.keep)


class Remote:
    """Sends the streamed sections of a report to the pool of `every` - 1 workers (`start`), those
    that come while the workers are behind left to this process; `parse` reads a section's byte range (_bug_report_bytes.parse_range: in the worker, or
    here when it failed)."""

    def __init__(self, path: str, pool, every: int, parse):
        self.path, self.pool, self.every, self.parse = path, pool, max(1, every), parse
        self.count, self.broken = 0, False
        self.sent: deque = deque()  # the Fars sent, up to the first not done

    def start(self, offset: int, no: int, source: str, keep: Optional[int] = None) -> Optional[Far]:
        """A Far for the section whose body starts at file offset `offset`, line `no` (its lists cut
        to `keep` entries: _bug_report_bytes.KernelSink), or None when this process reads it: when
        the workers are behind (AHEAD sections each not done yet), so that the work follows how fast
        each side goes (this process also finds the sections and gathers the results)."""
        self.count += 1
        if self.broken or self._behind():
            return None
        far = Far(self, offset, source, no - 1, keep)
        self.sent.append(far)
        return far

    def _behind(self) -> bool:
        while self.sent and self.sent[0].fut is not None and self.sent[0].done():
            self.sent.popleft()
        return sum(1 for far in self.sent if far.fut is None or not far.fut.done()) >= AHEAD * (self.every - 1)

    def submit(self, far: Far):
        if self.broken:
            return None
        try:
            return self.pool.submit(self.parse, self.path, far.start, far.end_at, far.source, far.offset, far.keep)
        except Exception:  # a broken pool: the rest is read here
            self.broken = True
            return None


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
    return not isinstance(sec.parsed, Far) or sec.parsed.done()


def _settled(sec):
    if isinstance(sec.parsed, Far):
        return dataclasses.replace(sec, parsed=sec.parsed.settle(), moved=True)
    return sec
