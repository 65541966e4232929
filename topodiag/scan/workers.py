"""Forked worker processes beside this one, for work split over the machine's CPUs (a big log's
chunks digested ahead, topodiag/scan/parallel.py; one of two parsers of a big log read whole,
topodiag/scan/onepass.py; a big member's second half scanned, topodiag/bundle/redact_stream.py; the
second half of a big directory of fleet reports tallied, topodiag/fleet/split.py).

How many processes work at once follows the machine: `worker_count()` is the number of CPUs this
process may run on (`os.sched_getaffinity`: a Slurm job's or a container's CPU set, not the
machine's), or `TOPODIAG_WORKERS` from the environment when it is set to a whole number >= 1
(`TOPODIAG_WORKERS=1`: everything in this process; a number above the CPUs is taken as given).
The count includes this process: with 2, one worker runs beside it.

`fork_ok()` says whether a worker is worth starting: fork exists, the count is two or more, and no
other thread runs (a fork beside running threads can deadlock the child). `worker_pool(n)` is a
pool of n forked workers (`one_worker_pool()` one), or None when it cannot start; callers then do
the work in this process, with the same result. `release(pool, idle)` shuts it down, waiting for
idle workers so that the next split can fork.
"""

from __future__ import annotations

import os

ENV = "TOPODIAG_WORKERS"


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask), at least 1."""
    try:
        if hasattr(os, "sched_getaffinity"):
            return max(1, len(os.sched_getaffinity(0)))
    except OSError:
        pass
    return max(1, os.cpu_count() or 1)


def worker_count(environ=None) -> int:
    """Processes to work at once, this one included: `TOPODIAG_WORKERS` when it is a whole number
    >= 1, else the usable CPUs."""
    raw = (environ if environ is not None else os.environ).get(ENV, "").strip()
    if raw.isascii() and raw.isdigit() and int(raw) >= 1:
        return int(raw)
    return usable_cpus()


def fork_ok() -> bool:
    """Whether a forked worker can run beside this process: fork, a worker count of 2 or more, one
    thread."""
    import threading

    if not hasattr(os, "fork"):
        return False
    return worker_count() >= 2 and threading.active_count() == 1


def worker_pool(n: int):
    """A process pool of `n` forked workers, or None when it cannot be made."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    try:
        return ProcessPoolExecutor(max_workers=max(1, n), mp_context=get_context("fork"))
    except (OSError, ValueError):
        return None


def one_worker_pool():
    """A process pool of one forked worker, or None when it cannot be made."""
    return worker_pool(1)


def release(pool, idle: bool) -> None:
    """Shut the pool down. Idle workers (their last results taken) are waited for, a few ms: the
    pool's management thread then ends, so a later split in this process (the next big file of a
    bundle) still sees one thread and can fork (`fork_ok`); busy ones are left to finish on their own."""
    pool.shutdown(wait=idle, cancel_futures=True)
