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
"""

from __future__ import annotations

import os
import sys

BIG_INPUT = 32 << 20  # bytes: the size from which big inputs are read in parallel too
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc malloc.h
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 128 << 20

_state = {"done": False}


def big_input(size: int) -> bool:
    """Called with the size of an input about to be read: True when the thresholds were raised now."""
    if _state["done"] or size < BIG_INPUT or not sys.platform.startswith("linux"):
        return False
    _state["done"] = True
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError, ImportError):  # not glibc (musl, macOS): nothing to do
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
