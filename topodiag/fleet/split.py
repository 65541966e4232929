"""A big directory of report files read in two processes: one forked worker (topodiag/scan/workers.py)
reads, parses and tallies the second half of the files while this process does the first half,
then the worker's partial Tally is merged in (`Tally.merge`, tally.py). The result is the one the
one-process reader gives: the same nodes in the same order (so the same outliers, splits and
duplicates), the same failures in the same order, under the same names.

Used only where it pays: a directory (not a bundle) of at least MIN_FILES entries, fork
available, two CPUs usable and no other thread running (`fork_ok`). Bundles are judged by the check
pipeline in this process: the worker's half starts after the directory's last bundle. When the
worker cannot start or dies, or when a source of its half was already counted (the same files given
twice: which copy counts is `Tally.add`'s to judge), its half is read here, one report at a time.

What crosses the pipe: the worker's file paths (strings) one way, its partial Tally (per node its
name, source, host, codes and worst severity; per key, value -> array of node indices) and its
failures the other, never the NodeReports themselves.
"""

from __future__ import annotations

import os
import stat
from typing import Any, Iterator, Mapping, Optional

from .reports import BUNDLE, Failure, Item, NodeReport, dir_entries, read_entries
from .tally import Tally

# Below this many entries a directory is read in one process. Measured on the 2-CPU build VM
# (run_fleet, median of 15, ~4.5 KB reports): 250 files 18 ms in two processes vs 14 ms in one,
# 500 33 vs 30 ms, 1,000 45-60 vs 59-78 ms, 2,000 112 vs 142 ms (114 vs 110 ms while another job
# held the second CPU: a worker wins nothing without a free CPU). 2,000 leaves that margin.
MIN_FILES = 2000


def halves(path: str) -> Optional[tuple[tuple[list[str], bytes], tuple[list[str], bytes]]]:
    """((paths, kinds) for this process, (paths, kinds) for the worker) for a directory worth
    splitting, else None (read it as `read_reports` does)."""
    from ..scan.workers import fork_ok

    if path == "-" or not fork_ok():  # `-` is standard input, whatever the directory holds
        return None
    try:
        if not stat.S_ISDIR(os.stat(path).st_mode) or os.path.isfile(os.path.join(path, "manifest.json")):
            return None
    except OSError:
        return None
    entries = dir_entries(path)
    if isinstance(entries, Failure) or len(entries[0]) < MIN_FILES:
        return None
    paths, kinds = entries
    cut = len(paths) // 2
    last = kinds.rfind(BUNDLE)  # the worker's half holds report files only
    cut = max(cut, last + 1)
    if len(paths) - cut < MIN_FILES // 2:
        return None
    return (paths[:cut], bytes(kinds[:cut])), (paths[cut:], bytes(kinds[cut:]))


def read_halves(head: tuple[list[str], bytes], tail: tuple[list[str], bytes], tally: Tally,
                check_options: Optional[Mapping[str, Any]] = None) -> Iterator[Item]:
    """The reports of `head`, read here (the caller adds each to `tally` before asking for the next),
    then the worker's `tail` merged into `tally`, its failures yielded after. Falls back to reading
    `tail` here when the worker cannot run or its half cannot be merged."""
    from ..scan.workers import one_worker_pool, release

    pool = one_worker_pool()
    if pool is None:
        yield from read_entries(*head, check_options)
        yield from read_entries(*tail, check_options)
        return
    settled = False
    try:
        try:
            future = pool.submit(_tally_part, *tail)
        except Exception:  # noqa: BLE001 -- a pool that cannot start: one process
            future = None
        yield from read_entries(*head, check_options)
        part = None
        if future is not None:
            try:
                part = future.result()
            except Exception:  # noqa: BLE001 -- a worker that died: its half here
                part = None
        settled = True
    finally:
        release(pool, settled)
    if part is not None and tally.merge(part[0]):
        yield from part[1]
        return
    yield from read_entries(*tail, check_options)


def _tally_part(paths: list[str], kinds: bytes) -> tuple[Tally, list[Failure]]:
    """In the worker: the reports of the files, tallied, and the failures, in order."""
    tally = Tally()
    failures: list[Failure] = []
    for item in read_entries(paths, kinds):
        if isinstance(item, NodeReport):
            tally.add(item)
        else:
            failures.append(item)
    return tally, failures
