"""The dmesg sections of a big regular nvidia-bug-report read by forked workers
(topodiag/load/_bug_report_par.py: each worker reads a section's byte range): the sections, their
order and their results are those of the report read in one process, with every kernel-log fixture as a dmesg section (LF, CRLF, CR, a NUL
byte, non-ASCII text), lines cut at MAX_LINE before them, sections starting at any block boundary;
a worker that fails or a pool that cannot take work costs time, not the result."""

from __future__ import annotations

import pytest

from tests.fixtures_index import parser_fixtures
from topodiag.load import _bug_report_par as P
from topodiag.load import bug_report
from topodiag.load.files import open_text
from topodiag.parsers import ParseError, blank_provenance_header, to_jsonable
from topodiag.scan import workers

SEP = "_" * 44
XID = "[ 1843.308145] NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus."
PROLOGUE = "Start of NVIDIA bug report log file.  Please include this file, along\nuname: Linux gpu-7 6.5.0 #1 SMP x86_64\n"


def _write_report(path) -> None:
    texts = [blank_provenance_header(fx.text()) for fx in parser_fixtures()
             if fx.source == "kernel_log" and "parse_error" not in fx.expected()][:12]
    variants = [lambda t: t, lambda t: t.replace("\n", "\r\n"), lambda t: t.replace("\n", "\r"),
                lambda t: t[:50] + "\x00" + t[50:], lambda t: "h\u00e9llo \u2603 " + t]
    # a section no source reads first: the NUL byte of a dmesg below is past the loader's binary probe
    parts = [PROLOGUE, f"\n{SEP}\n\n*** /var/log/Xorg.0.log\n\n" + "[  5.1] (II) a line of X\n" * 2000]
    for k, text in enumerate(texts):
        parts.append(f"\n{SEP}\n\n*** /proc/cmdline\n*** ls: -r--r--r-- 1 root root 0 /proc/cmdline\n"
                     f"BOOT_IMAGE=/vmlinuz root=UUID=x iommu=pt {'x' * (300 * (k % 3))}\n")
        parts.append(f"\n{SEP}\n\ndmesg:\n\n" + variants[k % len(variants)](XID + "\n" + text))
        parts.append(f"\n{SEP}\n\nbase64 \"dump-{k}\":\n\n" + "0123abcd" * 9 + "\n")
    path.write_bytes("".join(parts).encode("utf-8"))


def _read(path) -> list:
    opened = open_text(str(path))
    try:
        report = bug_report.from_opened(opened)
        out = []
        for sec in bug_report.read_sections(report, "r"):
            parsed = bug_report.shift_lines(sec.parsed, sec.offset)  # the file's line numbers (a worker's: moved)
            if isinstance(parsed, ParseError):
                parsed = ("error", parsed.message, parsed.line_no)
            elif parsed is not None:
                parsed = to_jsonable(parsed)
            out.append((sec.title, sec.source, sec.start_line, sec.text, sec.problem, parsed))
        return out
    finally:
        opened.close()


@pytest.fixture(params=[97, 1500, 65536])
def report(tmp_path, monkeypatch, request):
    monkeypatch.setattr(bug_report, "CHUNK", request.param)  # sections start first in a block, or further
    # the long /proc/cmdline lines cut at the small chunk (the reader's MAX_LINE is more than a CHUNK)
    monkeypatch.setattr(bug_report, "MAX_LINE", 3 * request.param)
    monkeypatch.setenv(workers.ENV, "3")
    path = tmp_path / "nvidia-bug-report.log"
    _write_report(path)
    monkeypatch.setattr(P, "PARALLEL_MIN_BYTES", None)
    serial = _read(path)
    monkeypatch.setattr(P, "PARALLEL_MIN_BYTES", 0)
    return path, serial


@pytest.mark.parametrize("held", [P.HELD_CHARS, 0])
def test_workers_read_the_dmesg_sections_as_one_process_does(report, monkeypatch, held):
    path, serial = report
    monkeypatch.setattr(P, "HELD_CHARS", held)  # 0: each section waits for the worker's before it
    sent = []
    start = P.Remote.start

    def spy(self, offset, no, source, keep=None):
        far = start(self, offset, no, source, keep)
        sent.append(far is not None)
        return far

    monkeypatch.setattr(P.Remote, "start", spy)
    assert _read(path) == serial
    dmesg = [s for s in serial if s[1] == "kernel_log"]
    assert len(dmesg) == 12 and len(sent) == 12
    assert 4 <= sent.count(True) <= 12  # at least AHEAD for each of the 2 workers; the rest as they keep up
    errors = [s for s in dmesg if isinstance(s[5], tuple)]
    assert len(errors) == 2 and all("NUL" in s[5][1] for s in errors)  # the NUL byte's sections (k = 3, 8)
    assert all(isinstance(s[5], dict) and s[5]["lines"] > 0 for s in dmesg if s not in errors)


class _Failed:
    def result(self):
        raise RuntimeError("worker died")

    def done(self):
        return True


class _BrokenPool:
    def __init__(self, refuse: bool):
        self.refuse, self.submitted = refuse, 0

    def submit(self, *args):
        self.submitted += 1
        if self.refuse:
            raise RuntimeError("pool broken")
        return _Failed()

    def shutdown(self, wait=True, cancel_futures=False):
        pass


@pytest.mark.parametrize("refuse", [False, True])
def test_a_failed_worker_or_pool_costs_time_not_the_result(report, monkeypatch, refuse):
    path, serial = report
    pool = _BrokenPool(refuse)
    monkeypatch.setattr(workers, "worker_pool", lambda n: pool)
    monkeypatch.setattr(workers, "fork_ok", lambda: True)
    assert _read(path) == serial
    # a worker done at once is never behind: every section is sent; a pool that refuses is not asked again
    assert pool.submitted == (1 if refuse else 12)


class _Slow:
    def __init__(self):
        self.finished = False

    def result(self):
        raise RuntimeError("never came back")  # read here then: the result is the same

    def done(self):
        return self.finished


class _SlowPool(_BrokenPool):
    def __init__(self):
        super().__init__(False)
        self.futures = []

    def submit(self, *args):
        self.submitted += 1
        self.futures.append(_Slow())
        return self.futures[-1]


def test_sections_are_read_here_while_the_workers_are_behind(report, monkeypatch):
    path, serial = report  # 3 processes: 2 workers
    pool = _SlowPool()
    monkeypatch.setattr(workers, "worker_pool", lambda n: pool)
    monkeypatch.setattr(workers, "fork_ok", lambda: True)
    assert _read(path) == serial
    assert pool.submitted == P.AHEAD * 2  # none of them done: every later section read here


def test_small_gzip_or_held_reports_get_no_workers(tmp_path, monkeypatch):
    monkeypatch.setenv(workers.ENV, "2")
    path = tmp_path / "r.log"
    _write_report(path)
    monkeypatch.setattr(P, "PARALLEL_MIN_BYTES", path.stat().st_size + 1)
    opened = open_text(str(path))
    try:
        assert P.pool_for(bug_report.from_opened(opened)) is None
    finally:
        opened.close()
    monkeypatch.setattr(P, "PARALLEL_MIN_BYTES", 0)
    assert P.pool_for(bug_report.Report("-", None, None)) is None  # no path: stdin, gzip
