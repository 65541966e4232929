"""An nvidia-bug-report's kernel log is streamed to the kernel-log reader as the report is read
(topodiag/load/bug_report.py `sections(..., stream=STREAMED)`): the same result as parsing the
section's text held whole, for every kernel-log fixture as a dmesg section (with CRLF and CR line
ends, blank lines at its end, a `#@` header, NUL bytes, the probe's JSON, no kernel line at all), and
its memory does not grow with the section (tracemalloc peak at 1x and 8x)."""

from __future__ import annotations

import tracemalloc

import pytest

from tests.fixtures_index import parser_fixtures
from topodiag.errors import InputError
from tests.load.bug_report_lines import sections
from topodiag.load import _bug_report_bytes as BB
from topodiag.load import bug_report
from topodiag.load.files import open_str, parse_opened
from topodiag.parsers import ParseError, _kernel_log_block, blank_provenance_header, get, to_jsonable

SEP = "_" * 44
PROLOGUE = "Start of NVIDIA bug report log file.  Please include this file, along\nuname: Linux gpu-7 6.5.0 #1 SMP x86_64\n"
XID = "[ 1843.308145] NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus."


def _kernel_texts() -> list[str]:
    return [blank_provenance_header(fx.text()) for fx in parser_fixtures()
            if fx.source == "kernel_log" and "parse_error" not in fx.expected()]


VARIANTS = {
    "as is": lambda t: t,
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "cr": lambda t: t.replace("\n", "\r"),
    "blank lines at its end": lambda t: t + "\n\n\n",
    "a #@ header": lambda t: "#@ source: invented for a test\n#@ ---\n" + t,
    "a NUL byte": lambda t: t[:100] + "\x00" + t[100:],
    "the probe's JSON": lambda t: '{"probe": "kernel_log", "ok": true, "records": ["6,1,5000000,-;' + XID[15:] + '"]}\n',
    "no kernel line": lambda t: "hello\nworld\n",
}


def _held(sec) -> object:
    """What the loader makes of a section's text held whole (topodiag/load/gather.py before streaming),
    with the file's line numbers."""
    try:
        return to_jsonable(bug_report.shift_lines(parse_opened(get(sec.source), open_str("x", sec.text)), sec.offset))
    except (ParseError, RecursionError) as exc:
        return ("error", str(exc).split(": ", 1)[-1], exc.line_no + sec.offset if exc.line_no else exc.line_no)
    except InputError as exc:
        return ("error", exc.message, 0)


def _streamed(sec) -> object:
    """The streamed section's result, with the file's line numbers."""
    r = bug_report.shift_lines(sec.parsed, sec.offset)
    if isinstance(r, ParseError):
        return ("error", str(r).split(": ", 1)[-1], r.line_no)
    return to_jsonable(r)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_streamed_dmesg_section_reads_as_its_text(variant, monkeypatch):
    monkeypatch.setattr(_kernel_log_block, "FIRST_BLOCK_LINES", 2)  # many small blocks
    monkeypatch.setattr(_kernel_log_block, "BLOCK_LINES", 16)
    monkeypatch.setattr(_kernel_log_block, "FIRST_BLOCK_CHARS", 256)  # and so in bytes (the loader's path)
    monkeypatch.setattr(_kernel_log_block, "BLOCK_CHARS", 2048)
    text = PROLOGUE + "".join(f"\n{SEP}\n\ndmesg:\n\n" + VARIANTS[variant](t) for t in _kernel_texts())
    lines = text.split("\n")
    held = [s for s in sections(lines) if s.source == "kernel_log"]
    streamed = [s for s in sections(lines, stream=bug_report.STREAMED) if s.source == "kernel_log"]
    assert len(held) == len(streamed) >= 20
    for a, b in zip(held, streamed):
        assert b.text is None and b.start_line == a.start_line
        assert _streamed(b) == _held(a), (variant, a.start_line)


def test_a_dmesg_section_past_the_section_cap_is_read(monkeypatch):
    """A section is held whole up to MAX_SECTION_BYTES (a larger one is not read); the kernel log,
    streamed, is read whatever its size."""
    monkeypatch.setattr(bug_report, "MAX_SECTION_BYTES", 1000)
    body = "\n".join(f"[{k:>5}.000000] systemd[1]: Started session {k}." for k in range(100)) + "\n" + XID
    lines = (PROLOGUE + f"{SEP}\n\ndmesg:\n\n{body}\n{SEP}\n\n/usr/bin/nvidia-smi topo -m\n\n{body}\n").split("\n")
    secs = list(sections(lines, stream=bug_report.STREAMED))
    assert secs[0].source == "kernel_log" and secs[0].parsed.xids_total == 1
    assert secs[0].parsed.xids[0].line_no == lines.index(XID) + 1 - secs[0].offset
    assert secs[1].text is None and "not read" in secs[1].problem


def _report(path, rounds: int) -> None:
    with open(path, "w", encoding="utf-8") as out:
        out.write(PROLOGUE + f"{SEP}\n\ndmesg:\n\n")
        for k in range(rounds):
            out.write(f"[{k:>6}.000000] NVRM: Xid (PCI:0000:18:00): 13, pid=42, Graphics Exception\n"
                      f"[{k:>6}.100000] pcieport 0000:00:01.1: AER: Corrected error received: 0000:00:01.1\n"
                      f"[{k:>6}.200000] systemd[1]: Started session 4 of user root.\n")
        out.write(f"{SEP}\n")


def _peak(path) -> tuple[int, object]:
    with open(path, "rb") as fh:
        tracemalloc.start()
        try:  # (the loader's read: the report in bytes)
            secs = list(BB.read(bug_report, fh, str(path), None, bug_report.STREAMED))
            return tracemalloc.get_traced_memory()[1], secs[0].parsed
        finally:
            tracemalloc.stop()


def test_the_streamed_section_memory_does_not_grow_with_it(tmp_path, monkeypatch):
    monkeypatch.setattr(_kernel_log_block, "BLOCK_LINES", 1024)
    monkeypatch.setattr(_kernel_log_block, "BLOCK_CHARS", 1 << 16)  # the byte path's blocks: as small
    _report(tmp_path / "small.log", 2000)
    _report(tmp_path / "big.log", 16000)
    (small, a), (big, b) = _peak(tmp_path / "small.log"), _peak(tmp_path / "big.log")
    assert a.xids_total == 2000 and b.xids_total == 16000 and b.lines == 48000
    assert big < 1.5 * small + 256 * 1024, (small, big)


@pytest.mark.parametrize("tail", [b"\n", b"\n\n", b"\r\n", b"[ 2.0] x\n", b"[ 2.0] x"])
def test_a_last_block_of_the_tail_alone_reads_as_one_block(tail):
    """The section's last block holding nothing but its tail (the sink cuts its blocks where its reads
    came): one line end, two, a line with or without its end; read as the same bytes in one block (a
    blank last line is the one before the report's separator: none, whatever the cut)."""
    body = ("\n".join(t for t in _kernel_texts() if t.isascii()) + "\n").encode() * 5
    # the first read makes a block of its own (KernelSink.add): the tail is the last one
    assert len(body) >= max(4 * BB._PROBE, _kernel_log_block.FIRST_BLOCK_CHARS)

    def sink(*reads):
        out = BB.KernelSink(bug_report)
        for data in reads:
            out.add(data)
        out.end()
        return to_jsonable(out.result()), out.newlines

    cut, whole = sink(body, tail), sink(body + tail)
    assert cut == whole and whole[1] == (body + tail).count(b"\n")
    if tail.strip():  # no blank last line: as the text held whole
        assert whole[0] == to_jsonable(parse_opened(get("kernel_log"), open_str("x", (body + tail).decode())))
