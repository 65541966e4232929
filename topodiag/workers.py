"""One forked worker process beside this one, for work split in two (a big log's chunks digested
ahead, topodiag/load/parallel.py; one of two parsers of a big log read whole, topodiag/load/onepass.py;
a big member's second half scanned, topodiag/bundle/redact_stream.py; the second half of a big
directory of fleet reports tallied, topodiag/fleet/split.py).

`fork_ok()` says whether a worker is worth starting: fork exists, two CPUs are usable, and no other
thread runs (a fork beside running threads can deadlock the child). `one_worker_pool()` is the
worker, or None when it cannot start; callers then do the work in this process, with the same result.
`release(pool, idle)` shuts it down, waiting for an idle worker so that the next split can fork.
"""

from __future__ import annotations

import os


def fork_ok() -> bool:
    """Whether a forked worker can run beside this process: fork, two usable CPUs, one thread."""
    import threading

    if not hasattr(os, "fork"):
        return False
    try:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    except OSError:
        return False
    return cpus >= 2 and threading.active_count() == 1


def one_worker_pool():
    """A process pool of one forked worker, or None when it cannot be made."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    try:
        return ProcessPoolExecutor(max_workers=1, mp_context=get_context("fork"))
    except (OSError, ValueError):
        return None


def release(pool, idle: bool) -> None:
    """Shut the pool down. An idle worker (its last result taken) is waited for, a few ms: the pool's
    management thread then ends, so a later split in this process (the next big file of a bundle)
    still sees one thread and can fork (`fork_ok`); a busy one is left to finish on its own."""
    pool.shutdown(wait=idle, cancel_futures=True)
