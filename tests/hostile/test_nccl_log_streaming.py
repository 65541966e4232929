"""N9 and D10 of the attack pass: `collect --nccl-log` held the whole log in memory (a 600 MB log:
1.88 GB, and a member the bundle reader then refused), and redaction scanned a whole large log
before its first deadline check.

The log is now copied into the bundle a chunk at a time and cut under the reader's member cap; the
redaction's first pass looks at the deadline per block. Memory is measured with tracemalloc (peak
Python allocations, not seconds), reading by counting blocks.
"""

from __future__ import annotations

import json
import os
import time
import tracemalloc
from pathlib import Path

import pytest

from topodiag.bundle import redact_stream
from topodiag.bundle.writer import COPY_CHUNK, copy_text, write_bundle_dir
from topodiag.live.collection import Options, _user_files
from topodiag.load.gather import gather_records

ROOT = Path(__file__).resolve().parents[2]
LOG = sorted((ROOT / "fixtures" / "nccl_debug").glob("*.log"))[0]


def _body() -> str:
    from topodiag.parsers import blank_provenance_header

    return blank_provenance_header(LOG.read_text(encoding="utf-8", errors="replace")).lstrip("\n")


def _big_log(tmp_path: Path, mib: int) -> Path:
    body = _body().encode("utf-8")
    path = tmp_path / "big.log"
    with open(path, "wb") as fh:
        for _ in range(mib * (1 << 20) // len(body) + 1):
            fh.write(body)
    return path


def test_a_given_log_is_not_read_into_memory_by_the_collection(tmp_path: Path) -> None:
    path = _big_log(tmp_path, 2)
    records = _user_files(Options(nccl_logs=(str(path),)))
    assert records and all(r.text is None and r.source_path == str(path) for r in records)
    assert records[0].source == "nccl_debug" and records[0].status == "ok"


def test_the_log_is_copied_in_chunks_with_flat_memory(tmp_path: Path) -> None:
    """A 48 MiB log copied into a member: peak Python memory stays a few chunks, not the log."""
    path = _big_log(tmp_path, 48)
    dst = tmp_path / "member.log"
    tracemalloc.start()
    try:
        why = copy_text(str(path), str(dst))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert why == ""
    assert dst.read_bytes() == path.read_bytes()
    assert peak < 12 * COPY_CHUNK, f"peak {peak} bytes for a {path.stat().st_size}-byte log"


def test_a_log_over_the_member_cap_is_cut_after_a_whole_line(tmp_path: Path) -> None:
    path = _big_log(tmp_path, 3)
    dst = tmp_path / "member.log"
    cap = 2 * COPY_CHUNK + 12345
    why = copy_text(str(path), str(dst), cap=cap)
    got = dst.read_bytes()
    assert len(got) <= cap and got.endswith(b"\n") and len(got) > cap - 4096
    assert path.read_bytes().startswith(got)
    assert f"at most {cap} bytes" in why and str(len(got)) in why


def test_a_bundle_holds_the_log_and_a_live_check_reads_it_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    path.write_text(_body(), encoding="utf-8")
    records = _user_files(Options(nccl_logs=(str(path),)))
    manifest = write_bundle_dir(str(tmp_path / "b"), records, "h1", {})
    entry = manifest["sources"][0]
    assert (tmp_path / "b" / entry["member"]).read_text(encoding="utf-8") == _body()
    assert entry["sha256"] and entry["reason"] == f"given: {path}"
    gathered = gather_records(records, host="h1")
    assert [(s.source, s.status) for s in gathered.statuses][:1] == [("nccl_debug", "parsed")]
    assert json.loads(json.dumps(manifest))["sources"][0]["member"].startswith("logs/01-")


def test_a_cut_log_says_so_in_the_manifest(tmp_path: Path, monkeypatch) -> None:
    import topodiag.bundle.writer as writer

    path = _big_log(tmp_path, 1)
    records = _user_files(Options(nccl_logs=(str(path),)))
    monkeypatch.setattr(writer.copy_text, "__defaults__", (COPY_CHUNK // 2,))
    manifest = write_bundle_dir(str(tmp_path / "b"), records, "h1", {})
    entry = manifest["sources"][0]
    assert entry["status"] == "ok" and "cut after" in entry["reason"]
    assert os.path.getsize(tmp_path / "b" / entry["member"]) <= COPY_CHUNK // 2


def test_redaction_scan_looks_at_the_deadline_per_block(tmp_path: Path, monkeypatch) -> None:
    """D10: the first pass over a large member stops at the first block past the deadline."""
    path = _big_log(tmp_path, 8)
    seen = []
    blocks = redact_stream._blocks

    def counted(*args, **kwargs):
        for block in blocks(*args, **kwargs):
            seen.append(len(block))
            yield block

    monkeypatch.setattr(redact_stream, "_blocks", counted)
    monkeypatch.setattr(redact_stream, "PARALLEL_SCAN_BYTES", None)  # one process: the blocks are counted here
    with pytest.raises(redact_stream.DeadlinePassed):
        redact_stream.scan(str(path), lambda text: [], deadline=time.monotonic() - 1)
    assert len(seen) == 1
    seen.clear()
    assert isinstance(redact_stream.scan(str(path), lambda text: [], deadline=time.monotonic() + 3600), set)
    assert len(seen) > 1
