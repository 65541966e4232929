"""The worker count follows the CPUs this process may use (topodiag/scan/workers.py), TOPODIAG_WORKERS
overrides it, and a big log's chunks digested by several workers merge in order into the result of
one process (topodiag/scan/parallel.py)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from topodiag.scan import workers
from topodiag.scan import parallel
from topodiag.parsers import blank_provenance_header, nccl_tests
from topodiag.parsers.base import to_jsonable

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_count_is_the_usable_cpus_unless_the_environment_says() -> None:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    assert workers.usable_cpus() == cpus
    assert workers.worker_count({}) == cpus
    assert workers.worker_count({"TOPODIAG_WORKERS": "1"}) == 1
    assert workers.worker_count({"TOPODIAG_WORKERS": " 6 "}) == 6
    for bad in ("0", "-2", "two", "1.5", "", "٣"):  # not a whole number >= 1: the CPUs
        assert workers.worker_count({"TOPODIAG_WORKERS": bad}) == cpus


def test_one_worker_means_one_process(monkeypatch) -> None:
    monkeypatch.setenv("TOPODIAG_WORKERS", "1")
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    assert not workers.fork_ok()
    monkeypatch.setenv("TOPODIAG_WORKERS", "2")
    assert workers.fork_ok() == hasattr(os, "fork")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("count", ["2", "4"])
def test_digests_from_several_workers_merge_in_order(tmp_path, monkeypatch, count) -> None:
    logs = sorted(p for p in (ROOT / "fixtures" / "nccl_tests").iterdir() if p.is_file() and p.suffix == ".txt")
    text = "".join(blank_provenance_header(p.read_text(encoding="utf-8", errors="replace")) for p in logs * 3)
    path = tmp_path / "runs.log"
    path.write_text(text, encoding="utf-8")
    with open(path, "rb") as f:
        want = to_jsonable(nccl_tests.parse_binary(f))
    monkeypatch.setenv("TOPODIAG_WORKERS", count)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(nccl_tests, "CHUNK", 16 << 10)  # many chunks from a small file
    sizes = []
    real_pool = workers.worker_pool
    monkeypatch.setattr(parallel, "worker_pool", lambda n: sizes.append(n) or real_pool(n))
    with open(path, "rb") as f:
        assert parallel.worth_it(nccl_tests, f)
        items = list(parallel.digested([nccl_tests], f))
    assert sizes == [int(count) - 1]
    assert len(items) > 8 and b"".join(c for c, _ in items) == path.read_bytes()
    assert all(dg is not None for _, dg in items)  # every digest came back from a worker, matched
    assert [repr(dg[0]) for _, dg in items] == [repr(nccl_tests.digest(c)) for c, _ in items]
    with open(path, "rb") as f:
        assert to_jsonable(parallel.parse_in_two(nccl_tests, f)) == want
