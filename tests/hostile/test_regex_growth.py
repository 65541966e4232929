"""N4a-N4f of the attack pass: regexes on input that backtracked over a long run (quadratic or cubic).

Each reproducer is "a prefix of a real line, then a long run, then `x`", built at two sizes, a quarter
and the whole, and timed in this process's CPU time (time.process_time) as in
tests/parsers/test_adversarial_time.py: the whole may cost at most GROWTH times the quarter (linear
work grows ~4x, quadratic ~16x, cubic ~64x). The attack pass measured minutes for each at these sizes.
No bound on wall-clock seconds.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topodiag import parsers

KB = 1024
# the growth measure of tests/parsers/test_adversarial_time.py, shared (a quarter and the whole, CPU time)
from tests.parsers.test_adversarial_time import _timed  # noqa: E402


def _run(c: str, n: float) -> str:
    return c * int(n)


# name -> (what is called: a source's parse, or detection; make(scale) -> text)
CASES = {
    # N4a: `^\[INFO\]\s+p2p:\s+(.*?)\s+srcRank=`, three runs over the same blanks (cubic: 4 K blanks 243 s)
    "N4a nccl_diag failure line": ("detect", lambda k: "NCCL DIAG [INFO] p2p: " + _run(" ", 16 * KB * k) + "x\n"),
    "N4a nccl_diag failure line, parse": ("nccl_diag", lambda k: "NCCL DIAG [INFO] p2p: " + _run(" ", 16 * KB * k) + "x\n"),
    "N4a nccl_diag blanks before srcRank": ("nccl_diag", lambda k: "NCCL DIAG [INFO] p2p: a" + _run(" ", 16 * KB * k) + "srcRankx\n"),
    # N4b: the ibv_devinfo sniffer (every file given to `check --from` goes through it)
    "N4b ibv_devinfo sniffer, phys_state": ("sniff:ibv_devinfo", lambda k: "phys_state:" + _run(" ", 64 * KB * k) + "x"),
    "N4b detection, phys_state": ("detect", lambda k: "phys_state:" + _run(" ", 64 * KB * k) + "x"),
    # N4c: `(?:^|[\s'"])(?:\S*?/)?infiniband/...` searched per line: a quote starts a try and is \S
    "N4c ib_counters quotes": ("ib_counters", lambda k: "/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data:1\n"
                                                         + _run('"', 32 * KB * k) + "\n"),
    "N4c ib_counters quotes, detection": ("detect", lambda k: "/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data:1\n"
                                                                + _run('"', 32 * KB * k) + "\n"),
    "N4c ib_counters quotes then slash": ("ib_counters", lambda k: "/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data:1\n"
                                                                     + _run("'", 32 * KB * k) + "/x\n"),
    "N4c ib_counters net quotes": ("ib_counters", lambda k: "/sys/class/net/eth0/mtu:1500\n" + _run("'", 32 * KB * k) + "\n"),
    # N4d: `[0-9]+\.?[0-9]*` then `$`: two runs over the same digits
    "N4d nccl_tests digit token": ("nccl_tests", lambda k: "# nThread 1 nGpus 1 minBytes 8 maxBytes 128 step: 2(factor)\n"
                                                           "#  Rank  0 Group  0 Pid  1 on h device  0 [0x1b] NVIDIA H100\n"
                                                           "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
                                                           "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
                                                           "           8             2     float     sum      -1    " + _run("0", 64 * KB * k) + "x\n"),
    # N4e: the nvlink -c line pattern (`\s*,\s*.*supported`), used by nvlink_s to refuse other modes
    "N4e nvlink -c line, tabs": ("nvidia_smi_nvlink_s", lambda k: "GPU 0: NVIDIA A100 (UUID: GPU-x)\nLink 0," + _run("\t", 64 * KB * k) + "x\n"),
    "N4e nvlink -c line, tabs (-c parser)": ("nvidia_smi_nvlink_c", lambda k: "GPU 0: NVIDIA A100 (UUID: GPU-x)\nLink 0," + _run("\t", 64 * KB * k) + "x\n"),
    "N4e nvlink -p line, blanks": ("nvidia_smi_nvlink_s", lambda k: "GPU 0: NVIDIA A100 (UUID: GPU-x)\nLink 0: Remote PCI Bus ID"
                                                                    + _run(" ", 64 * KB * k) + "x\n"),
    # found beside N4: peermem's `\bls\b.*?/sys/kernel/mm/memory_peers` scanned to the line's end from every 'ls'
    "peermem ls words": ("peermem", lambda k: "$ " + _run("ls ", 8 * KB * k) + "\n"),
    # N4f: `dscp:[ \t]*(...)(?=[ \t]+prio:|[ \t\r]*$)`: the lookahead rescans the blanks at every step
    "N4f mlnx_qos dscp tabs": ("mlnx_qos", lambda k: "prio:0 dscp:" + _run("\t", 64 * KB * k) + "x\n"),
    "N4f mlnx_qos dscp blanks after a list": ("mlnx_qos", lambda k: "prio:0 dscp:1,2" + _run(" ", 64 * KB * k) + "x\n"),
}


def _callee(what: str):
    if what == "detect":
        return parsers.detect_all
    if what.startswith("sniff:"):
        return parsers.get(what.split(":", 1)[1]).sniff
    return parsers.get(what).parse


@pytest.mark.parametrize("name", sorted(CASES))
def test_regex_reproducer_grows_linearly(name: str) -> None:
    what, make = CASES[name]
    _timed(name, _callee(what), make)


# The rewrites read what the old patterns read: on short lines (where backtracking costs nothing) the
# old pattern is the reference.
_OLD_FAILURE_RE = re.compile(r"^\[INFO\]\s+p2p:\s+(.*?)\s+srcRank=")
_OLD_PRIO_DSCP_RE = re.compile(r"prio:[ \t]*(?P<prio>[0-7])[ \t]+dscp:[ \t]*(?P<list>[0-9,.]*(?:[ \t]+[0-9,.]+)*)"
                               r"(?=[ \t]+prio:|[ \t\r]*$)")
_OLD_NUM_RE = re.compile(r"^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([" ", "\t", "a", "srcRank=", "srcRank=1", "x y", "\u00a0"]), max_size=8))
def test_nccl_diag_failure_kind_matches_the_old_pattern(parts) -> None:
    from topodiag.parsers.nccl_diag import _failure_kind

    body = "[INFO] p2p:" + "".join(parts)
    old = _OLD_FAILURE_RE.match(body)
    assert _failure_kind(body) == (old.group(1) if old else None)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["prio:0", "prio:7", " ", "\t", "\r", "dscp:", "1", ",", "2.", "x", "prio:"]), max_size=12))
def test_mlnx_qos_pairs_match_the_old_pattern(parts) -> None:
    from topodiag.parsers.mlnx_qos import prio_dscp_lists

    line = "".join(parts)
    old = [(int(m.group("prio")), m.group("list")) for m in _OLD_PRIO_DSCP_RE.finditer(line)]
    assert prio_dscp_lists(line) == old


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["'", '"', " ", "/", "a", "infiniband/", "mlx5_0/ports/1/", "x/", "counters/port_rcv_data: 1"]), max_size=10))
def test_ib_counters_path_start_matches_the_old_pattern(parts) -> None:
    from topodiag.parsers.ib_counters import PORT_LINE_RE

    tail = PORT_LINE_RE.pattern[PORT_LINE_RE.pattern.index("infiniband/"):]
    old_re = re.compile(r"(?:^|[\s'\"])(?:\S*?/)?" + tail)
    line = "".join(parts)
    old, new = old_re.search(line), PORT_LINE_RE.search(line)
    assert (old.groupdict() if old else None) == (new.groupdict() if new else None)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789.eE+-x", max_size=10))
def test_nccl_tests_number_pattern_matches_the_old_one(tok) -> None:
    from topodiag.parsers.nccl_tests import _NUM_RE

    assert bool(_NUM_RE.match(tok)) == bool(_OLD_NUM_RE.match(tok))


def test_lines_are_cut_at_the_cap_before_any_regex() -> None:
    """base.py's rule: no line longer than MAX_LINE_CHARS reaches a parser's regexes; the rest is
    skipped and counted."""
    from topodiag.parsers.base import MAX_LINE_CHARS, clean_lines, iter_clean_lines, lines_cut

    lines_cut(reset=True)
    long = "a" * (MAX_LINE_CHARS + 100) + "TAIL"
    assert clean_lines("x\n" + long + "\ny") == ["x", "a" * MAX_LINE_CHARS, "y"]
    assert list(iter_clean_lines(iter(["x\n", long + "\n"]))) == ["x", "a" * MAX_LINE_CHARS]
    assert lines_cut(reset=True) == 2
    assert clean_lines("short\n") == ["short", ""] and lines_cut() == 0



@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["ls", " ", "als", "ls/", "/sys/kernel/mm/memory_peers", "/", "\t", "x"]), max_size=8))
def test_peermem_ls_command_matches_the_old_pattern(parts) -> None:
    from topodiag.parsers.peermem import _LS_RE, _MEMPEERS_PATH_RE

    cmd = "".join(parts)
    old = re.search(r"\bls\b.*?/sys/kernel/mm/memory_peers/?\s*$", cmd)
    path = _MEMPEERS_PATH_RE.search(cmd)
    assert bool(old) == (path is not None and _LS_RE.search(cmd, 0, path.start()) is not None)
