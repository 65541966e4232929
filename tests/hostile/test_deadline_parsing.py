"""N8 and D10 of the attack pass: `--deadline` bounds what follows the collection too.

N8: ten tools flooding their output to the 64 MB cap took 7 minutes of parsing under `check
--deadline 120`. Parsing now runs under the run's deadline (parsers.base.parse_deadline): a parse
still going when it passes stops, and its input is reported as failed ("not read to its end"), never
waited for. These tests count what was read (lines, sources), not seconds.
"""

from __future__ import annotations

import time

import pytest

from topodiag.live.collection import Record
from topodiag.load.gather import gather_records
from topodiag.parsers import get
from topodiag.parsers.base import DEADLINE_EVERY, DeadlinePassed, clean_lines, iter_clean_lines, parse_deadline

FLOOD = "        State: Active\n"
SOURCES = ("ibstat", "nvidia_smi_nvlink_e", "nvidia_smi_nvlink_s", "ibv_devinfo", "fabricmanager", "lspci_vvv",
           "nvidia_smi_topo_p2p", "show_gids", "lspci_tree", "nvidia_smi_topo_m")


def _flooded(lines: int) -> list[Record]:
    """The ten sources of N8 as a live collection gives them back when each tool was cut at the cap."""
    text = FLOOD * lines
    return [Record(s, "failed", f"{s}.txt", text, argv=(s,), rc=-9, reason="its output passed 64 MiB: killed and cut there")
            for s in SOURCES]


def test_ten_flooded_tools_are_failed_and_not_parsed(monkeypatch) -> None:
    """The N8 reproducer (ten tools' outputs cut at the cap, 1/64 of it here): every source is
    failed, and its partial output is not parsed (no parser is called at all)."""
    import topodiag.load.gather as gather

    called = []
    monkeypatch.setattr(gather, "parse_opened", lambda parser, opened: called.append(parser))
    gathered = gather_records(_flooded(64 * 1024 * 1024 // len(FLOOD) // 64), host="n1")
    assert called == [] and gathered.parsed == []
    for source in SOURCES:  # the cut is the failure; the row beside it says the partial output was not read
        mine = sorted((s.status, s.reason) for s in gathered.statuses if s.source == source)
        assert [m[0] for m in mine] == ["failed", "ignored"], mine
        assert "killed and cut" in mine[0][1] and "not read" in mine[1][1]
    assert {p.source for p in gathered.problems} == set(SOURCES)


def test_the_cut_mark_is_what_the_command_runner_says() -> None:
    import topodiag.live.commands as commands
    from topodiag.load.gather import CUT_MARK

    source = open(commands.__file__, encoding="utf-8").read()
    assert f': {CUT_MARK}")' in source


def test_a_failed_tool_output_after_the_deadline_is_not_parsed() -> None:
    """A failed tool's partial output (not cut: an exit status) gathered after the deadline: the failure
    stays, and a row beside it says its output was not read."""
    records = [Record(s, "failed", f"{s}.txt", "CA 'mlx5_0'\n" + FLOOD * 100, argv=(s,), rc=1, reason="exit status 1")
               for s in SOURCES]
    with parse_deadline(time.monotonic() - 1):
        gathered = gather_records(records, host="n1")
    assert gathered.parsed == []
    for source in SOURCES:
        mine = sorted((s.status, s.reason) for s in gathered.statuses if s.source == source)
        assert [m[0] for m in mine] == ["failed", "ignored"], mine
        assert "deadline passed" in mine[1][1]


def test_an_answer_not_read_to_its_end_is_a_failed_input() -> None:
    """An answer (status ok) the deadline stops is a failed input (SYS001), not a parsed one."""
    records = [Record("ibstat", "ok", "ibstat.txt", "CA 'mlx5_0'\n" + FLOOD * 10, argv=("ibstat",), rc=0)]
    with parse_deadline(time.monotonic() - 1):
        gathered = gather_records(records, host="n1")
    assert gathered.parsed == []
    assert [(s.status, "deadline passed" in s.reason) for s in gathered.statuses] == [("failed", True)]
    assert [(p.source, p.kind) for p in gathered.problems] == [("ibstat", "failed")]
    gathered = gather_records(records, host="n1")  # no deadline: read
    assert [s.status for s in gathered.statuses] == ["parsed"]


class _Clock:
    """time.monotonic for parsers.base: one second later at each look, so the deadline passes after
    a known number of looks (every DEADLINE_EVERY lines)."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("source", ["ibstat", "lspci_vvv", "nvidia_smi_topo_m", "fabricmanager", "ibv_devinfo",
                                    "nvidia_smi_nvlink_e", "show_gids"])
def test_a_parse_under_way_stops_at_the_deadline(source: str, monkeypatch) -> None:
    """A flooded output (a real first line, then the flood) stops at the deadline in parse() and in
    parse_lines(), where it has them: DeadlinePassed, not a result and not a wait for the end."""
    import topodiag.parsers.base as base

    clock = _Clock()
    monkeypatch.setattr(base, "time", clock)
    text = "CA 'mlx5_0'\n" + FLOOD * (DEADLINE_EVERY * 40)
    parser = get(source)
    calls = [parser.parse] + ([lambda t: parser.parse_lines(iter(t.splitlines(True)))] if hasattr(parser, "parse_lines") else [])
    for call in calls:
        clock.now = 0.0
        with parse_deadline(10.0):  # ten looks: about 10 * DEADLINE_EVERY lines
            with pytest.raises(DeadlinePassed):
                call(text)
        assert clock.now <= 12.0  # it stopped at the first look past the deadline


def test_clean_lines_stop_at_the_deadline() -> None:
    text = FLOOD * (DEADLINE_EVERY * 10)
    got = clean_lines(text)
    assert list(got)[:1] == ["        State: Active"]  # no deadline: a plain list's iteration
    with parse_deadline(time.monotonic() - 1):
        with pytest.raises(DeadlinePassed):
            clean_lines(text)
        with pytest.raises(DeadlinePassed):
            list(iter_clean_lines(iter(text.splitlines(True))))
    with parse_deadline(time.monotonic() + 3600):
        assert len(list(clean_lines(text))) == DEADLINE_EVERY * 10 + 1


def test_a_line_over_the_cap_is_counted_in_the_inputs() -> None:
    """base.py's line cap: the rest of an over-long line is skipped, and the input's row says how many."""
    from topodiag.parsers.base import MAX_LINE_CHARS

    text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active" + " " * MAX_LINE_CHARS + "x\n"
    gathered = gather_records([Record("ibstat", "ok", "ibstat.txt", text, argv=("ibstat",), rc=0)], host="n1")
    assert [(s.status, s.reason) for s in gathered.statuses] == [
        ("parsed", "1 line(s) longer than 64 KiB: read to there, the rest of each skipped")]


def test_parsing_after_a_live_collection_ends_at_the_deadline_or_a_fifth_of_it_after() -> None:
    """A collection that ended early parses until --deadline; one that used all of it (a hung tool)
    still gets a fifth of --deadline (at least 2 s) to read the sources that answered, and no more."""
    from topodiag.pipeline import parse_deadline_after

    now = time.monotonic()
    assert abs(parse_deadline_after(now - 1.0, 10.0) - (now + 9.0)) < 0.5  # 1 s of 10 used: 9 s left
    assert abs(parse_deadline_after(now - 120.0, 120.0) - (now + 24.0)) < 0.5  # all used: a fifth more
    assert abs(parse_deadline_after(now - 3.0, 3.0) - (now + 2.0)) < 0.5  # at least 2 s
