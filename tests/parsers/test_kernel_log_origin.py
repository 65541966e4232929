"""A kernel-log pass that starts at a line number (kernel_log._Log(origin): a log inside a larger file,
the dmesg section of an nvidia-bug-report) gives the result of the log read alone with every line
number moved by the origin (bug_report.shift_lines), `lines` still the log's own count; and one with
a cap on its lists of repeated events gives the whole result cut (kernel_log.cut_lists). Every
kernel-log fixture, in blocks of the default size and of 2-16 lines (a driver load's look-back and
probe window across blocks), with origins 0, 1 and 10,000."""

from __future__ import annotations

import pytest

from tests.fixtures_index import parser_fixtures
from topodiag.load.bug_report import shift_lines
from topodiag.parsers import ParseError, _kernel_log_block as B, blank_provenance_header, kernel_log as K, to_jsonable


# A paste without stamps whose driver banner is near its start: its probe window (PROBE_LINES before the
# banner) is floored at the log's first line, origin + 1 (invented for this test).
UNSTAMPED = ("NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x38:852)\n"
             "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n")


def _texts() -> list[str]:
    out = [blank_provenance_header(fx.text()) for fx in parser_fixtures() if fx.source == "kernel_log"]
    # the probe's JSON is read whole, by parse_lines
    return [t for t in out if t.lstrip()[:1] != "{"] + [UNSTAMPED, "\n" * 3 + UNSTAMPED * 2]


def _read(text: str, st) -> object:
    for block in B.blocks(text.splitlines()):
        B.feed(st, block, K._line)
    try:
        return to_jsonable(K._finish(st))
    except ParseError as exc:
        return ("error", exc.message, exc.line_no)


def _alone(text: str, origin: int, cap=None) -> object:
    try:
        got = K._finish(_fed(text, K._Log()))
    except ParseError as exc:
        return ("error", exc.message, exc.line_no + origin if exc.line_no else exc.line_no)
    return to_jsonable(shift_lines(K.cut_lists(got, cap) if cap else got, origin))


def _fed(text: str, st):
    for block in B.blocks(text.splitlines()):
        B.feed(st, block, K._line)
    return st


@pytest.mark.parametrize("small", [False, True])
@pytest.mark.parametrize("origin", [0, 1, 10_000])
def test_a_pass_from_an_origin_is_the_shifted_pass(origin, small, monkeypatch):
    if small:
        monkeypatch.setattr(B, "FIRST_BLOCK_LINES", 2)
        monkeypatch.setattr(B, "BLOCK_LINES", 16)
    texts = _texts()
    assert len(texts) >= 20
    loads = 0
    for text in texts:
        got = _read(text, K._Log(origin=origin))
        assert got == _alone(text, origin), text[:80]
        loads += isinstance(got, dict) and got["driver_window_line"] is not None
    assert loads >= 3  # the probe window's floor is the origin's


@pytest.mark.parametrize("cap", [1, 7])
def test_a_capped_pass_from_an_origin_is_the_whole_pass_cut_and_shifted(cap):
    for text in _texts():
        assert _read(text, K._Log(cap, 500)) == _alone(text, 500, cap), text[:80]
