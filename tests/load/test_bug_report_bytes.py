"""An nvidia-bug-report read in bytes (topodiag/load/_bug_report_bytes.py) gives the sections and
results of the line path (tests/load/bug_report_lines.py: sections_of_blocks over report_blocks, which decodes and splits
every line) to the bit: every kernel-log fixture as a dmesg section (LF, CRLF, CR, blank lines at its
end, a `#@` header, a NUL byte, the probe's JSON, no kernel line), text sections, a section over the
section cap, lines cut at MAX_LINE, separators with blanks or a CR after them, underscores inside a
line, a title at the end of the file, no final newline, a `#@` provenance header at the top, with
chunks of every size (separators and titles across chunk edges) and kernel blocks of any size."""

from __future__ import annotations

import io

import pytest

from tests.fixtures_index import parser_fixtures
from tests.load import bug_report_lines as L
from topodiag.errors import InputError
from topodiag.load import _bug_report_bytes as BB
from topodiag.load import bug_report
from topodiag.parsers import ParseError, _kernel_log_block, blank_provenance_header, to_jsonable

SEP = "_" * 44
PROLOGUE = "Start of NVIDIA bug report log file.  Please include this file, along\nuname: Linux gpu-7 6.5.0 #1 SMP x86_64\n"
XID = "[ 1843.308145] NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus."
TOPO = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV12\t0-63\t0\nGPU1\tNV12\t X \t0-63\t0\n\n"
        "Legend:\n\n  X    = Self\n")
VARIANTS = [
    lambda t: t,
    lambda t: t.replace("\n", "\r\n"),
    lambda t: t.replace("\n", "\r"),
    lambda t: t + "\n\n\n",
    lambda t: "#@ source: invented for a test\n#@ ---\n" + t,
    lambda t: t[:100] + "\x00" + t[100:],
    lambda t: '{"probe": "kernel_log", "ok": true, "records": ["6,1,5000000,-;' + XID[15:] + '"]}\n',
    lambda t: "hello\nworld\n",
    lambda t: "h\u00e9llo \u2603 " + t + "\n\r\n",
    lambda t: XID + "\r\n" + t,
]


def _kernel_texts() -> list[str]:
    return [blank_provenance_header(fx.text()) for fx in parser_fixtures()
            if fx.source == "kernel_log" and "parse_error" not in fx.expected()]


def _report() -> str:
    parts = ["#@ source: invented for a test (sections of the kernel-log fixtures)\n#@ ---\n", PROLOGUE]
    parts.append(f"\n{SEP}\n\n*** /var/log/Xorg.0.log\n\n" + "[  5.1] (II) a ____________________ line\n" * 300)
    for k, text in enumerate(_kernel_texts()):
        sep = [SEP, SEP + "  ", SEP + "\r", "_" * 20][k % 4]
        parts.append(f"\n{sep}\n\n/usr/bin/nvidia-smi topo -m\n\n{TOPO}")
        parts.append(f"\n{sep}\n\n \u00a0\n\ndmesg:\n*** ls: x\n\n\n" + VARIANTS[k % len(VARIANTS)](XID + "\n" + text))
        parts.append(f"\n{SEP}\n\n*** /proc/cmdline\n*** ls: -r--r--r-- 1 root root 0 /proc/cmdline\n"
                     f"BOOT_IMAGE=/vmlinuz root=UUID=x {'y' * (200 * (k % 4))}\n")
        parts.append(f"\n{SEP}\n\nbase64 \"dump-{k}\":\n\n" + "0123abcd" * 9 + "\n")
    parts.append(f"{SEP}\n\ndmesg:\n\n{XID}")  # the last section: no final newline
    return "".join(parts)


def _jsonable(parsed):
    if isinstance(parsed, ParseError):
        return ("error", parsed.message, parsed.line_no)
    return to_jsonable(parsed) if parsed is not None else None


def _by_lines(data: bytes) -> list:
    report = bug_report.Report("r", io.BytesIO(data), None)
    return [(s.title, s.source, s.start_line, s.text, s.problem, _jsonable(bug_report.shift_lines(s.parsed, s.offset)))
            for s in L.sections_of_blocks(L.report_blocks(report), "r", bug_report.STREAMED)]


def _by_bytes(data: bytes) -> list:
    # the file's line numbers: the line path's moved by the section's offset, the byte path's already
    return [(s.title, s.source, s.start_line, s.text, s.problem, _jsonable(bug_report.shift_lines(s.parsed, s.offset)))
            for s in BB.read(bug_report, io.BytesIO(data), "r", None, bug_report.STREAMED)]


@pytest.mark.parametrize("chunk", [61, 97, 1500, 65536, 1 << 20])
def test_the_sections_in_bytes_are_those_of_the_lines(monkeypatch, chunk):
    monkeypatch.setattr(bug_report, "CHUNK", chunk)  # separators and titles across chunk edges
    monkeypatch.setattr(bug_report, "MAX_LINE", max(3 * chunk, 500))  # the long cmdline lines cut
    monkeypatch.setattr(bug_report, "MAX_SECTION_BYTES", 5000)  # some dmesg-sized topo sections: not read
    monkeypatch.setattr(_kernel_log_block, "FIRST_BLOCK_CHARS", 256)  # many kernel blocks a section
    monkeypatch.setattr(_kernel_log_block, "BLOCK_CHARS", 4096)
    data = _report().encode("utf-8")
    want = _by_lines(data)
    got = _by_bytes(data)
    assert len(want) > 3 * len(_kernel_texts())
    assert [g[:3] for g in got] == [w[:3] for w in want]
    for g, w in zip(got, want):
        assert g == w, g[:3]
    kinds = {type(w[5]).__name__ for w in want}
    assert {"dict", "tuple", "NoneType"} <= kinds  # results, ParseErrors (NUL, no kernel line), text sections


def test_big_sections_cut_lines_and_a_title_at_the_end(monkeypatch):
    monkeypatch.setattr(bug_report, "MAX_LINE", 100)
    monkeypatch.setattr(bug_report, "CHUNK", 64)
    monkeypatch.setattr(bug_report, "MAX_SECTION_BYTES", 300)
    data = (PROLOGUE + f"{SEP}\n\n/usr/bin/nvidia-smi topo -m\n\n" + ("x" * 90 + "\n") * 4 + "\n" * 2
            + f"{SEP}\n\n/usr/bin/nvidia-smi topo -m\n\n" + "a" + "\u00e9" * 120 + "\n"
            + f"{'_' * 150}\n\ndmesg:\n\n{XID}{'z' * 300}\n{XID}\n{SEP}\n\ndmesg:").encode("utf-8")
    want, got = _by_lines(data), _by_bytes(data)
    assert got == want
    assert [w[1] for w in want] == ["nvidia_smi_topo_m", "nvidia_smi_topo_m", "kernel_log"]
    assert want[0][4] and "not read" in want[0][4] and want[1][3] == "a" + "\u00e9" * 49 + "\ufffd"  # cut mid-character


def test_the_caps_are_checked_in_bytes(monkeypatch):
    data = (PROLOGUE + f"{SEP}\n\ndmesg:\n\n{XID}\n" * 20).encode()
    monkeypatch.setattr(bug_report, "MAX_SECTIONS", 10)
    with pytest.raises(InputError, match="more than 10 sections"):
        _by_bytes(data)
    monkeypatch.setattr(bug_report, "MAX_SECTIONS", 4096)
    monkeypatch.setattr(bug_report, "MAX_BYTES", 1000)
    with pytest.raises(InputError, match="larger than"):
        _by_bytes(data)


def test_parse_range_reads_a_sections_bytes_as_the_stream_does(tmp_path):
    data = _report().encode("utf-8")
    path = tmp_path / "r.log"
    path.write_bytes(data)
    seen = []

    class Spy:
        def start(self, offset, no, source, keep=None):
            seen.append((offset, no))

    for s in BB.read(bug_report, io.BytesIO(data), "r", None, bug_report.STREAMED, Spy()):
        pass
    streamed = [s for s in BB.read(bug_report, io.BytesIO(data), "r", None, bug_report.STREAMED) if s.source == "kernel_log"]
    assert len(seen) == len(streamed)
    ends = [data.find(b"\n____", off) + 1 or len(data) for off, _ in seen]
    for (off, no), end, sec in zip(seen, ends, streamed):
        assert data[off:].startswith(data.split(b"\n")[no - 1])
        got = bug_report.parse_bytes(str(path), off, end, "kernel_log", no - 1)
        assert _jsonable(got) == _jsonable(bug_report.shift_lines(sec.parsed, sec.offset))


@pytest.mark.parametrize("chunk,max_line", [(64, 100), (64, 150), (64, 65), (7, 20), (256, 1024)])
def test_chunks_are_the_reference_lines(monkeypatch, chunk, max_line):
    """`chunks` (whole lines, one copy of a block at most, a line past MAX_LINE cut there): the lines
    the reference reader gives (tests/load/bug_report_lines.py `_byte_blocks`), every offset that of
    its data in the stream (but inside a cut line), on lines of every length around CHUNK and
    MAX_LINE (a CHUNK less than MAX_LINE, as the loader has them), with and without a last line end."""
    import random

    from tests.load.bug_report_lines import _byte_blocks

    monkeypatch.setattr(bug_report, "CHUNK", chunk)
    monkeypatch.setattr(bug_report, "MAX_LINE", max_line)
    rnd = random.Random(chunk * 1000 + max_line)
    for trial in range(60):
        sizes = [0, 1, 5, chunk - 1, chunk, chunk + 1, max_line - 1, max_line, max_line + 1, 3 * max_line]
        lines = [bytes(rnd.choice(b"ab\xc3\xa9 ") for _ in range(rnd.choice(sizes))) for _ in range(rnd.randint(1, 12))]
        data = b"\n".join(lines) + (b"\n" if trial % 2 else b"")
        want = [x for block in _byte_blocks(io.BytesIO(data), "x", None) for x in block]
        got, cut = [], any(len(x) > max_line for x in lines)
        for piece, at in BB.chunks(bug_report, io.BytesIO(data), "x", None, capped=False):
            assert isinstance(piece, bytes) and (piece.endswith(b"\n") or at + len(piece) == len(data) or cut)
            if not cut:
                assert data[at:at + len(piece)] == piece
            text = piece.decode("utf-8", "replace")
            got += (text[:-1] if text.endswith("\n") else text).split("\n")
        assert got == want, (chunk, max_line, trial)
