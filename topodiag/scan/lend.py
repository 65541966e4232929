"""The process that ends first digests for the other: the two halves of a file read twice.

A big file that both NCCL readers read is read in two processes, each reader whole in one of them
(topodiag/scan/onepass.py `_split`). On a machine with no core to spare (two), neither side has a
digest worker, and the side that ends first would sit idle while the other still reads. Each side
lends itself to the other instead, whichever ends first:

- the worker's process, once its readers are done, is free in the pool the loading process made:
  that process then asks it for its digests (topodiag/scan/parallel.py `_paired`'s `lent`);
- the loading process, once its readers are done, digests the worker's chunks ahead of where the
  worker is (`Lend.give`, below): each digest is written to a temporary file both processes hold and
  its place sent down a pipe (a few bytes: the loading process never waits on a worker that is busy
  merging); the worker takes the digest of a chunk claimed that way (`Lend.taking`) and digests the
  others itself. The file starts again once it holds STORE_MAX bytes and the worker has read them all
  (a container's /dev/shm is often 64 MB); one that cannot be written ends the giving.

A chunk is claimed under a lock, only past the worker's next chunk (LEAD on), at most MAX_OUT past
it (the digests waiting in the worker stay few); the worker publishes its place as it goes. Both
sides cut the file the same way (topodiag/scan/chunks.py), and a digest comes with its chunk's length
and last bytes: one that does not match is not used. Nothing is claimed before the worker has begun
taking (a worker that never starts is never waited for); a loading process that stops helping says so
(`giver_done`), and a worker whose parent is gone stops waiting: each costs time, never the result.
The shared state is made before the pool forks its worker (`start`) and reached by it through this
module (`current`), with a token that names the split it belongs to.
"""

from __future__ import annotations

import os
import pickle
import tempfile
import time
from typing import Callable, Iterator, Optional

LEAD = 1  # the loading process claims chunks from this many past the worker's next one
MAX_OUT = 6  # up to this many past it (each such digest may wait in the worker)
POLL = 0.05  # seconds between looks while the worker waits for a claimed digest
STORE_MAX = 32 << 20  # bytes of digests written before the file starts again (once the worker read them all)

_current: Optional["Lend"] = None


class Lend:
    """The shared state of one split file: which chunks the loading process claimed, the worker's
    place, whether each side is done, the pipe the digests go down."""

    def __init__(self, size: int, chunk: int) -> None:
        from multiprocessing import get_context

        ctx = get_context("fork")
        self.n = size // max(1, chunk) + 2  # chunks are at least `chunk` bytes, the last excepted
        self.claimed = ctx.RawArray("b", self.n)
        self.place = ctx.RawValue("q", 0)  # the worker's next chunk (it digests chunks before it itself)
        self.giver_done = ctx.RawValue("b", 0)
        self.taker_started = ctx.RawValue("b", 0)
        self.taker_done = ctx.RawValue("b", 0)
        self.lock = ctx.Lock()
        self.rx, self.tx = ctx.Pipe(duplex=False)
        # the digests given: in memory where /dev/shm is, else the temporary directory (unlinked)
        self.store = tempfile.TemporaryFile(dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None)
        self.stored = 0  # bytes written to it (by the loading process)
        self.consumed = ctx.RawValue("q", 0)  # and read from it by the worker
        self.token = os.urandom(8).hex()
        self.parent = os.getpid()
        self.given = 0  # chunks the loading process digested for the worker (its count, in that process)

    # -- in the worker ---------------------------------------------------------------------------
    def taking(self, chunks) -> Iterator[tuple[bytes, Optional[tuple]]]:
        """The worker's chunks, each with the digests the loading process sent for it when it claimed
        it (None otherwise: the worker's reader digests it)."""
        from .parallel import _TAIL

        got: dict = {}
        self.taker_started.value = 1
        try:
            for k, chunk in enumerate(chunks):
                self._drain(got)
                with self.lock:
                    theirs = k < self.n and self.claimed[k]
                    self.place.value = k + 1
                dg = None
                if theirs:
                    item = self._wait(k, got)
                    if item is not None:
                        n, tail, got_dg = self._read(item[1], item[2])
                        if n == len(chunk) and tail == chunk[-_TAIL:]:
                            dg = got_dg
                yield chunk, dg
        finally:
            with self.lock:
                self.taker_done.value = 1
                self.place.value = self.n

    def _read(self, at: int, size: int) -> tuple:
        """A digest the loading process wrote (its chunk's length, tail, digests); (-1, b"", None) when
        it cannot be read back."""
        try:
            return pickle.loads(os.pread(self.store.fileno(), size, at))
        except Exception:  # (a file that failed under it: the chunk is digested here)
            return -1, b"", None
        finally:
            with self.lock:
                self.consumed.value += size

    def _drain(self, got: dict) -> None:
        while self.rx.poll(0):
            item = self.rx.recv()
            got[item[0]] = item

    def _wait(self, k: int, got: dict):
        while k not in got:
            if self.rx.poll(POLL):
                item = self.rx.recv()
                got[item[0]] = item
            elif self.giver_done.value and not self.rx.poll(0) or os.getppid() != self.parent:
                return None  # it stopped before sending this one, or it is gone: digested here
        return got.pop(k)

    # -- in the loading process ------------------------------------------------------------------
    def give(self, cuts: list, digests: tuple, path: str, busy: Callable[[], bool]) -> None:
        """Digest the worker's chunks (`cuts`: (offset, length) of each, as the file is cut) ahead of
        its place, with `digests` (the worker's readers'), until it is done or none is left. `busy`:
        whether the worker still works on the split (not yet begun taking, it may never)."""
        from .parallel import _digest_range

        last = 0  # (the first chunk, whose header the worker may blank, is never claimed)
        try:
            while True:
                if not self.taker_started.value or not self._room():
                    if not self.taker_started.value and not busy():
                        return
                    time.sleep(0.002)
                    continue
                with self.lock:
                    if self.taker_done.value:
                        return
                    place = self.place.value
                    j = max(place + LEAD, last + 1)
                    if j >= min(len(cuts), self.n):
                        return
                    ok = j <= place + MAX_OUT
                    if ok:
                        self.claimed[j] = 1
                if not ok:
                    time.sleep(0.002)  # far enough ahead: wait for the worker to come closer
                    continue
                last = j
                off, length = cuts[j]
                data = pickle.dumps(_digest_range(digests, path, off, length), pickle.HIGHEST_PROTOCOL)
                os.pwrite(self.store.fileno(), data, self.stored)
                self.tx.send((j, self.stored, len(data)))  # (a few bytes: never more than MAX_OUT wait)
                self.stored += len(data)
                self.given += 1
        except OSError:  # a full /dev/shm, a file that failed: the worker digests the rest itself
            return
        finally:
            self.giver_done.value = 1

    def _room(self) -> bool:
        """Whether the file may take another digest: under STORE_MAX, or read whole by the worker (it
        then starts again, emptied)."""
        if self.stored < STORE_MAX:
            return True
        with self.lock:
            if self.consumed.value < self.stored:
                return False
            os.ftruncate(self.store.fileno(), 0)
            self.stored = self.consumed.value = 0
        return True

    def close(self) -> None:
        for end in (self.rx, self.tx, self.store):
            try:
                end.close()
            except OSError:
                pass


def start(size: int, chunk: int) -> Optional[Lend]:
    """The shared state for a split about to fork its worker (made current), or None when it cannot
    be made."""
    global _current
    try:
        _current = Lend(size, chunk)
    except (OSError, ValueError, ImportError):  # no shared memory, no temporary file
        _current = None
    return _current


def current(token: Optional[str]) -> Optional[Lend]:
    """In the worker: the split's shared state, when it is the one `token` names."""
    return _current if _current is not None and token is not None and _current.token == token else None


def end(lend: Optional[Lend]) -> None:
    """After the split: the state let go."""
    global _current
    if lend is not None:
        lend.close()
    if _current is lend:
        _current = None


def cuts_of(chunks, start: int, cuts: list) -> Iterator:
    """`chunks` (of a file from byte `start`) as they are, their (offset, length) appended to `cuts`."""
    off = start
    for chunk in chunks:
        cuts.append((off, len(chunk)))
        off += len(chunk)
        yield chunk
