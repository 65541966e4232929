"""The kernel-log parser streams (issue 29): `parse_lines` reads a log in one pass with bounded state,
so its memory does not grow with the log, and it reads what `parse` reads."""

from __future__ import annotations

import tracemalloc

from tests.fixtures_index import parser_fixtures
from topodiag.parsers import blank_provenance_header, get, to_jsonable

KERNEL = get("kernel_log")
BLOCK = [
    "[  100.000001] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023",
    "[  101.500000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.",
    "[  102.000000] pcieport 0000:00:01.1: AER: Corrected error received: 0000:00:01.1",
    "[  102.000010] mlx5_core 0000:b3:00.0: mlx5_port_module_event:1153:(pid 0): Port module event: module 0, Cable plugged",
    "[  103.250000] systemd[1]: Started something unrelated to any GPU or NIC at all, padding the line out.",
]


def _log(blocks: int):
    for i in range(blocks):
        for line in BLOCK:
            yield line.replace("[  10", f"[{i:>6}") + "\n"


def _peak(blocks: int) -> int:
    tracemalloc.start()
    try:
        KERNEL.parse_lines(_log(blocks))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_log(monkeypatch):
    from topodiag.parsers import _kernel_log_block

    # lines are read a block at a time (up to 65,536 lines, 4 MiB): blocks of 1,024 lines here, so
    # that both logs span many blocks
    monkeypatch.setattr(_kernel_log_block, "BLOCK_LINES", 1024)
    small, big = _peak(2000), _peak(16000)  # 10,000 and 80,000 lines
    assert big < 1.5 * small + 256 * 1024, (small, big)


def test_parse_lines_reads_what_parse_reads():
    for fx in parser_fixtures():
        if fx.source != "kernel_log" or "parse_error" in fx.expected():
            continue
        text = blank_provenance_header(fx.text())
        assert to_jsonable(KERNEL.parse_lines(iter(text.splitlines(keepends=True)))) == to_jsonable(KERNEL.parse(text)), fx.id


def test_the_last_driver_load_window_is_found_from_the_stamps_kept():
    """The window of the last driver load starts at the first line stamped within PROBE_S (30 s) before
    it, never before the load before it: 5 lines of block 1 at t=1.., then block 2's load at t=2..."""
    text = "".join(_log(3))
    got = KERNEL.parse_lines(iter(text.splitlines(keepends=True)))
    assert got.driver_loads == 3 and got.driver_window_line == to_jsonable(KERNEL.parse(text))["driver_window_line"]
