"""nccl-tests output with a training job's lines beside it: tqdm bars (redrawn with carriage
returns) and giant lines are found and skipped unread, counted in one note; the runs read are those
of the output alone; a one-line log of bars is read in bounded memory (tracemalloc at 1x and 8x)."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

from topodiag.parsers import _foreign, blank_provenance_header, nccl_tests
from topodiag.parsers.base import to_jsonable

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURE = sorted((ROOT / "fixtures" / "nccl_tests").glob("*.txt"))[0]

# invented for a test: the bar tqdm prints (its default format) and a config dump on one line
BAR = "Epoch 3:  45%|####5     | 450/1000 [00:12<00:15, 36.10it/s, loss=0.234]"
DUMP = '{"config": ' + ", ".join(f'"layer_{k}": {k}' for k in range(2000)) + "}"


def _report(text: str) -> dict:
    return to_jsonable(nccl_tests.parse_binary(io.BytesIO(text.encode())))


def test_bars_and_giant_lines_are_skipped_and_counted() -> None:
    plain = blank_provenance_header(FIXTURE.read_text(encoding="utf-8"))
    lines = plain.splitlines(True)
    mixed = []
    for i, line in enumerate(lines):
        mixed.append(line)
        if i % 5 == 0:
            mixed.append("\r".join([BAR] * 3) + "\n")
        if i % 17 == 0:
            mixed.append(DUMP + "\n")
    want, got = _report(plain), _report("".join(mixed))
    skipped = 3 * len(range(0, len(lines), 5)) + len(range(0, len(lines), 17))  # a carriage return ends a line
    assert len(DUMP) > _foreign.LONG_LINE
    note = f"{skipped} lines of other programs skipped unread (progress bars, lines of more than 8192 characters)"
    assert note in got["notes"] and not any("other programs" in n for n in want["notes"])
    assert got["rows"] and [r["size_bytes"] for r in got["rows"]] == [r["size_bytes"] for r in want["rows"]]
    assert [r["oop_busbw_gbps"] for r in got["rows"]] == [r["oop_busbw_gbps"] for r in want["rows"]]


def test_a_bar_with_a_failure_mark_is_still_read() -> None:
    text = blank_provenance_header(FIXTURE.read_text(encoding="utf-8"))
    text += "rank0:  12%|#2  | 12/100 [00:01<00:09] Test NCCL failure common.cu:1005 'unhandled system error'\n"
    assert any("unhandled system error" in f["text"] for f in _report(text)["failures"])


def _peak(n: int) -> int:
    data = ("\r".join([BAR] * n) + "\r").encode()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        try:
            nccl_tests.parse_binary(io.BytesIO(data))
        except Exception as exc:  # noqa: BLE001 -- no nccl-tests output: refused, as it must be
            assert type(exc).__name__ == "ParseError"
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_one_line_log_of_bars_is_read_in_bounded_memory(monkeypatch) -> None:
    monkeypatch.setattr(nccl_tests, "CHUNK", 64 << 10)  # both sizes many chunks long: the steady state
    small, big = _peak(20_000), _peak(160_000)  # ~1.5 MB and ~12 MB on one line
    assert big <= 1.25 * small + (256 << 10), (small, big)


def test_the_memo_of_lines_past_the_cut_stays_bounded(monkeypatch) -> None:
    """Past the cut (runs no longer kept), lines of no effect are remembered to be skipped when they
    come again; lines that never repeat (a job's own output, numbered) must not fill that memo without
    end: it is emptied at MEMO_CAP."""
    from tests.parsers.test_nccl_tests_chunks import _run  # runs of 24 rows, invented for a test

    monkeypatch.setattr(nccl_tests, "MEMO_CAP", 64)
    text = "".join(_run(k, f"node{k % 5}") + "".join(f"step {k * 50 + j} | train loss 0.{k}{j} | lr 3e-4\n"
                                                      for j in range(50)) for k in range(600))
    reader = nccl_tests.ChunkReader()
    sizes = []
    for chunk in nccl_tests._chunks.text_chunks(text, 4096):
        reader.feed(chunk, None)
        sizes.append(len(reader.memo))
    assert max(sizes) <= 64 and reader.p.cut_run is not None
    assert to_jsonable(reader.result()) == to_jsonable(nccl_tests.parse(text))
