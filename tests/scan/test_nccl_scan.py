"""The NCCL_DEBUG reader over topodiag/scan: memory that does not grow with the log (tracemalloc
peak at 1x and 8x the input), and the same result whatever the worker count (TOPODIAG_WORKERS=1: one
process; =3: two digest workers beside the merging process)."""

from __future__ import annotations

import os
import threading
import tracemalloc
from pathlib import Path

import pytest

from topodiag.parsers import blank_provenance_header, nccl_debug
from topodiag.parsers.base import to_jsonable
from topodiag.parsers.nccl_debug import reader
from topodiag.scan import parallel, workers

ROOT = Path(__file__).resolve().parents[2]
LOGS = sorted((ROOT / "fixtures" / "nccl_debug").glob("*.log"))


def _log(tmp_path: Path, copies: int) -> Path:
    text = "".join(blank_provenance_header(p.read_text(encoding="utf-8", errors="replace")) for p in LOGS)
    path = tmp_path / f"nccl-{copies}.log"
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(copies):
            f.write(text)
    return path


def _peak(path: Path) -> int:
    tracemalloc.start()
    try:
        with open(path, "rb") as f:
            nccl_debug.parse_binary(f)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_is_flat_from_1x_to_8x(tmp_path, monkeypatch) -> None:
    """The log is read a chunk at a time and every table is bounded: 8x the input (each size many
    chunks) peaks within a quarter of 1x's peak plus one chunk."""
    monkeypatch.setattr(reader, "CHUNK", 32 << 10)
    small, big = _log(tmp_path, 4), _log(tmp_path, 32)
    assert big.stat().st_size > 40 * reader.CHUNK  # (the fixtures hold about 140 KB)
    _peak(small)  # (the catalogues and the classifier's memos loaded first)
    one, eight = _peak(small), _peak(big)
    assert eight <= one * 1.25 + reader.CHUNK, (one, eight)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_the_worker_count_does_not_change_the_result(tmp_path, monkeypatch) -> None:
    path = _log(tmp_path, 3)
    monkeypatch.setattr(reader, "CHUNK", 32 << 10)  # many chunks from a small file
    with open(path, "rb") as f:
        want = to_jsonable(nccl_debug.parse_binary(f))
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setenv("TOPODIAG_WORKERS", "1")
    with open(path, "rb") as f:
        assert not parallel.worth_it(nccl_debug, f)  # one process: no pool at all
    monkeypatch.setenv("TOPODIAG_WORKERS", "3")
    sizes = []
    real_pool = workers.worker_pool
    monkeypatch.setattr(parallel, "worker_pool", lambda n: sizes.append(n) or real_pool(n))
    with open(path, "rb") as f:
        assert parallel.worth_it(nccl_debug, f)
        items = list(parallel.digested([nccl_debug], f))
    assert sizes == [2] and len(items) > 8
    assert all(dg is not None for _, dg in items)  # every digest came back from a worker, matched
    assert to_jsonable(nccl_debug.parse_chunks((c, dg[0]) for c, dg in items)) == want
    with open(path, "rb") as f:
        assert to_jsonable(parallel.parse_in_two(nccl_debug, f)) == want
