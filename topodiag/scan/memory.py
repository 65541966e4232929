"""Big inputs: freed large blocks kept for the next chunk instead of handed back to the system.

Reading a big input allocates a few blocks of megabytes per chunk (the chunk, its decoded text, its
lines joined) and frees them a moment later. glibc's malloc serves each such block with its own
mmap and returns it with munmap, so every chunk pays its pages' faults again: at 1 GB, ~1.4 s of
system time of a kernel log's `check` (1.1 s of its wall). `big_input(size)`, called when an input
of BIG_INPUT bytes or more is opened, raises malloc's mmap threshold to 32 MiB (the most it takes on
64-bit) and its trim threshold to 128 MiB, so those blocks come from the heap and are reused; the
forked workers inherit it. Once per process, on glibc only (elsewhere nothing happens), and not where
the environment already sets either threshold (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_).
benchmarks/README.md has the figures.

The same call makes the cyclic garbage collector's young generation run every YOUNG container
allocations instead of Python's 700 (`fewer_collections`, on every platform; not where the program
set a threshold of its own): a chunk's digest makes tens of thousands of tuples, lists and dict
entries, and each young collection walks what is young, the chunk's list of a hundred thousand pieces
among it -- about 5% of the CPU of reading the issue's 1 GB NCCL log (10.0 -> 9.7 s, pure). Cycles
are still collected, a few hundred times less often; the process's memory stayed the same (88 MB).
"""

from __future__ import annotations

import gc
import os
import sys

BIG_INPUT = 32 << 20  # bytes: the size from which big inputs are read in parallel too
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc malloc.h
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 128 << 20

YOUNG = 10_000  # container allocations between two collections of the young generation, a big input read
_DEFAULT_YOUNG = 2000 if sys.version_info >= (3, 13) else 700  # Python's own (3.13 raised it)

_state = {"done": False}


def big_input(size: int) -> bool:
    """Called with the size of an input about to be read: True when malloc's thresholds were raised
    now (the collector's is raised with them, on any platform: `fewer_collections`)."""
    if _state["done"] or size < BIG_INPUT:
        return False
    _state["done"] = True
    fewer_collections()
    if not sys.platform.startswith("linux"):
        return False
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError, ImportError):  # not glibc (musl, macOS): nothing to do
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def fewer_collections() -> bool:
    """The young generation's threshold raised to YOUNG where it is Python's own (700; 2000 from 3.13):
    True when it was."""
    young, *older = gc.get_threshold()
    if young != _DEFAULT_YOUNG:
        return False
    gc.set_threshold(YOUNG, *older)
    return True
