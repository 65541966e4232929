"""The kernel log read a block at a time by distinct texts (topodiag/parsers/_kernel_log_block.py) gives
what the line-by-line pass gives: on every fixture, on the fixtures appended (small blocks, so that AER
windows, notices and driver loads straddle blocks and the lists fill inside a block), from a file
(`parse_binary`: CRLF lines, a line past LINE_LIMIT), and its memory does not grow with the file."""

from __future__ import annotations

import io
import tracemalloc

import pytest

from tests.fixtures_index import parser_fixtures
from topodiag.load import files
from topodiag.parsers import _kernel_log_block as block
from topodiag.parsers import blank_provenance_header, kernel_log, to_jsonable
from topodiag.parsers.base import ParseError


def _texts() -> list[tuple[str, str]]:
    out = []
    for fx in parser_fixtures():
        if fx.source == "kernel_log" and "parse_error" not in fx.expected():
            out.append((fx.id, blank_provenance_header(fx.text())))
    return out


def _result(fn, *args):
    try:
        return to_jsonable(fn(*args))
    except ParseError as e:
        return ("ParseError", str(e), e.line_no)


def _line_by_line(text: str, monkeypatch) -> object:
    with monkeypatch.context() as m:
        m.setattr(block, "_fast", lambda *a: False)  # every block read line by line: the old pass
        return _result(kernel_log.parse, text)


def test_the_fixtures_read_by_key_as_line_by_line(monkeypatch):
    texts = _texts()
    assert len(texts) >= 20
    for name, text in texts:
        assert _result(kernel_log.parse, text) == _line_by_line(text, monkeypatch), name


@pytest.mark.parametrize("first,most", [(1, 1), (3, 7), (64, 256)])
def test_the_fixtures_appended_in_small_blocks(monkeypatch, first, most):
    """Every kernel-log fixture appended 40 times (AER reports, kmsg records, driver loads, notices;
    more than MAX_EVENTS Xids, events, NIC health reports and IOMMU faults: the lists fill inside a
    block), read in blocks of `first` lines doubling to `most`."""
    text = "\n".join(t for _, t in _texts()) * 40
    want = _line_by_line(text, monkeypatch)
    assert isinstance(want, dict) and want["xids_total"] > kernel_log.MAX_EVENTS < want["events_total"]
    assert want["nic_health_total"] > kernel_log.MAX_EVENTS < want["iommu_faults_total"]
    monkeypatch.setattr(block, "FIRST_BLOCK_LINES", first)
    monkeypatch.setattr(block, "BLOCK_LINES", most)
    block._memo.clear()
    assert _result(kernel_log.parse, text) == want
    lines = iter(text.splitlines(keepends=True))
    assert _result(kernel_log.parse_lines, lines) == want


def _lines_of(data: bytes):
    return kernel_log.parse_lines(files.bounded_lines(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8",
                                                                        errors="replace", newline="")))


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_parse_binary_reads_what_the_line_path_reads(monkeypatch, newline):
    text = "\n".join(t for _, t in _texts()).replace("\n", newline)
    data = text.encode("utf-8")
    monkeypatch.setattr(block, "FIRST_BLOCK_CHARS", 4096)  # many blocks, a line end cut between them
    assert _result(kernel_log.parse_binary, io.BytesIO(data)) == _result(_lines_of, data)


def test_a_line_past_the_limit_is_cut_as_the_line_path_cuts_it(monkeypatch):
    assert block.LINE_LIMIT == files.LINE_LIMIT
    monkeypatch.setattr(block, "LINE_LIMIT", 300)
    monkeypatch.setattr(files, "LINE_LIMIT", 300)
    text = "[    1.000000] NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus. " + "x" * 5000 + "\n"
    data = (text * 3).encode()
    got = _result(kernel_log.parse_binary, io.BytesIO(data))
    assert got == _result(lambda d: kernel_log.parse_lines(files.bounded_lines(
        io.TextIOWrapper(io.BytesIO(d), encoding="utf-8", errors="replace", newline=""), 300)), data)
    assert got["xids_total"] == 3 and len(got["xids"][0]["text"]) == kernel_log.MAX_TEXT


def test_the_probe_json_from_a_file_reads_as_the_probe():
    data = b'\n  {"probe": "kernel_log", "ok": true, "via": "/dev/kmsg", "records": ["6,1,5000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, x"]}\n'
    got = kernel_log.parse_binary(io.BytesIO(data))
    assert got.via == "/dev/kmsg" and got.xids_total == 1 and got.xids[0].time_s == 5.0


def _write(path, rounds: int) -> None:
    lines = [
        "[{t:>5}.000001] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023",
        "[{t:>5}.500000] NVRM: Xid (PCI:0000:3b:00): 13, pid=1234, Graphics Exception",
        "[{t:>5}.600000] pcieport 0000:00:01.1: AER: Corrected error received: 0000:00:01.1",
        "[{t:>5}.700000] mlx5_core 0000:b3:00.0: mlx5_port_module_event:1153:(pid 0): Port module event: module 0, Cable plugged",
        "[{t:>5}.800000] systemd[1]: Started session 4 of user root, a line no driver writes.",
    ]
    with open(path, "w", encoding="utf-8") as out:
        for t in range(rounds):
            out.write("\n".join(x.format(t=t) for x in lines) + "\n")


def _peak(path) -> tuple[int, object]:
    with open(path, "rb") as fh:
        tracemalloc.start()
        try:
            got = kernel_log.parse_binary(fh)
            return tracemalloc.get_traced_memory()[1], got
        finally:
            tracemalloc.stop()


def test_parse_binary_memory_does_not_grow_with_the_file(tmp_path, monkeypatch):
    """1x and 8x the lines (blocks of at most 64 KiB here, so that both sizes span many blocks)."""
    monkeypatch.setattr(block, "BLOCK_CHARS", 1 << 16)
    _write(tmp_path / "small.log", 2000)
    _write(tmp_path / "big.log", 16000)
    (small, a), (big, b) = _peak(tmp_path / "small.log"), _peak(tmp_path / "big.log")
    assert a.lines == 10000 and b.lines == 80000 and b.xids_total == 16000 and b.driver_loads == 16000
    assert big < 1.5 * small + 256 * 1024, (small, big)


def test_the_memo_of_keys_is_bounded(monkeypatch):
    """A log whose lines never repeat (each its own key) leaves at most MEMO_CAP keys remembered."""
    monkeypatch.setattr(block, "MEMO_CAP", 100)
    block._memo.clear()
    text = "".join(f"[{k:>5}.000000] usb 1-{k}: new high-speed USB device number {k}\n" for k in range(1000))
    assert kernel_log.parse(text).kernel_lines == 1000 and 0 < len(block._memo) <= 100


_AER_REPORT = [  # fixtures/kernel_log/kernel-log-aer-correctable-syslog-dmesg-amd-01.txt, its stamps made {t}
    "Sep 19 16:18:02 bubz kernel: [{t}.615790] pcieport 0000:00:03.1: AER: Correctable error message received from 0000:00:00.0",
    "Sep 19 16:18:02 bubz kernel: [{t}.615810] pcieport 0000:00:03.1: PCIe Bus Error: severity=Correctable, type=Data Link Layer, (Transmitter ID)",
    "Sep 19 16:18:02 bubz kernel: [{t}.615818] pcieport 0000:00:03.1:   device [1022:1453] error status/mask=00001000/00006000",
    "Sep 19 16:18:02 bubz kernel: [{t}.615826] pcieport 0000:00:03.1:    [12] Timeout               ",
]


@pytest.mark.parametrize("first,most", [(1, 1), (3, 7), (64, 256)])
def test_aer_windows_read_by_key_as_line_by_line(monkeypatch, first, most):
    """AER reports whose windows of continuation lines widen, lapse and straddle blocks, among lines
    with a "]" that the catalogues read inside a window (one failure-like, counted there only; one that
    does nothing there, remembered so by key and left out of the next windows): the same result as the
    line-by-line pass. (The lines invented for this test around a fixture's report.)"""
    from topodiag.parsers._kernel_log_events import AER_TAIL

    rows = []
    for t in range(400):
        rows += [x.format(t=t + 1000) for x in _AER_REPORT[: 1 + t % 4]]
        rows += [f"[{t + 1000}.9] foo: device timed out, failed to recover",
                 f"[{t + 1000}.9] systemd[1]: Started session {t % 5} of user root."][:1 + t % 2] * (t % (AER_TAIL + 4))
    text = "\n".join(rows) + "\n"
    want = _line_by_line(text, monkeypatch)
    assert isinstance(want, dict) and want["events_total"] > 400
    assert 0 < want["unrecognised_total"] < text.count("failed to recover")  # read inside a window only
    monkeypatch.setattr(block, "FIRST_BLOCK_LINES", first)
    monkeypatch.setattr(block, "BLOCK_LINES", most)
    block._memo.clear()
    assert _result(kernel_log.parse, text) == want
    assert any(k[0] == "w" and v is block.NOTHING for k, v in block._memo.items())
    assert _result(kernel_log.parse, text) == want  # again, with the keys remembered


@pytest.mark.parametrize("cut", ["79", "79,", "79, pid=1, GPU has fallen off the bus."])
def test_an_xid_line_cut_after_its_number_still_reads(cut):
    # invented for a test: the real line (79, pid=..., GPU has fallen off the bus.) cut where a paste or
    # a ring buffer cuts it; a person reads Xid 79 on 0000:18:00 whatever follows the number
    text = f"[    1.000000] NVRM: Xid (PCI:0000:18:00): {cut}\n[    2.000000] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028\n"
    r = kernel_log.parse(text)
    assert [(x.xid, x.pci) for x in r.xids] == [(79, "0000:18:00")]
    assert r.fallen_off_bus and r.fallen_off_bus[0].line_no == 1
    assert [s.sxid for s in r.sxids] == [12028]
    assert _result(_lines_of, text.encode()) == _result(kernel_log.parse, text)


def _state_lines(t: int) -> list:
    """Lines whose effect depends on their place or on what is recorded already (invented for a test,
    from the shapes of the fixtures' lines): driver loads of two versions (one as a /dev/kmsg record
    now and then), GPU UUIDs (more than MAX_EVENTS of them in all), GPU resets, Xid 79 and the
    "fallen off the bus" reports, a notice and its "fallen" line."""
    g = t % 7
    rows = [f"[{t}.100000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {535 + t % 2}.104.05",
            f"[{t}.200000] NVRM: GPU at PCI:0000:{g:02x}:00: GPU-{g:08x}-2051-db6c-0430-ffc0a1b2c3d4",
            f"[{t}.300000] nvsentinel-gpu-reset: GPU reset executed: GPU-{g:08x}-2051-db6c-0430-ffc0a1b2c3d4, "
            f"success: {'true' if t % 3 else 'false'}",
            f"[{t}.400000] NVRM: Xid (PCI:0000:{g:02x}:00): 79, pid=1, GPU has fallen off the bus.",
            f"[{t}.500000] NVRM: GPU at PCI:0000:{g + 16:02x}:00.0: GPU has fallen off the bus.",
            f"[{t}.600000] NVRM: The NVIDIA GPU 0000:{g + 32:02x}:00.0",
            f"[{t}.600001] NVRM: (PCI ID: 10de:2330) installed in this system has",
            f"[{t}.600002] NVRM: fallen off the bus and is not responding to commands.",
            f"[{t}.700000] NVRM: loading NVIDIA UNIX Open Kernel Module"]
    if t % 11 == 0:
        rows.append(f"6,{t},{t * 1000000 + 5},-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14")
    if 300 < t < 560:  # UUIDs past the map's cap
        rows.append(f"[{t}.800000] NVRM: GPU at PCI:0000:{t % 256:02x}:00: GPU-{t:08x}-0000-0000-0000-000000000000")
    return rows


@pytest.mark.parametrize("first,most", [(1, 1), (3, 7), (64, 256), (1024, 65536)])
def test_loads_uuids_resets_and_fallen_gpus_read_by_key_as_line_by_line(monkeypatch, first, most):
    """Driver loads, UUIDs, resets and fallen GPUs are read by key (their effect at once per block)
    where it does not depend on their place: the same result as the line-by-line pass, with the lines
    of a load or a UUID several to a block."""
    text = "\n".join(row for t in range(1, 700) for row in _state_lines(t)) + "\n"
    want = _line_by_line(text, monkeypatch)
    # 699 loads with a version and 63 kmsg ones (t = 11, 22 ... 693); the last: t = 699, version 536
    assert isinstance(want, dict) and want["driver_loads"] == 699 + 63
    assert (want["driver_version"], want["driver_loaded_time_s"]) == ("536.104.05", 699.1)
    # 7 + 259 UUIDs, 466 successful resets, 699 Xid 79: each list at its cap; 3 x 7 buses off the bus
    assert len(want["gpu_uuids"]) == kernel_log.MAX_EVENTS and len(want["gpu_resets"]) == kernel_log.MAX_EVENTS
    assert (want["xids_total"], want["xid_counts"], len(want["fallen_off_bus"])) == (699, {"79": 699}, 21)
    # the last load a /dev/kmsg record: its time is the record's
    tail = text + "6,9000,700000005,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14\n"
    want_tail = _line_by_line(tail, monkeypatch)
    assert (want_tail["driver_version"], want_tail["driver_loaded_time_s"]) == ("550.54.14", 700.000005)
    monkeypatch.setattr(block, "FIRST_BLOCK_LINES", first)
    monkeypatch.setattr(block, "BLOCK_LINES", most)
    block._memo.clear()
    assert _result(kernel_log.parse, text) == want
    assert _result(_lines_of, text.encode()) == want
    assert _result(kernel_log.parse, tail) == want_tail


_SYSLOG_012 = [  # invented for a test, in the shape of the fixture kernel-log-syslog-012-nvrm-api-mismatch-01
    "Jun 30 11:07:{s:02d} gpu-0 kernel: NVRM: API mismatch: the client has the version 535.54.03, but#012NVRM: this "
    "kernel module has the version 530.30.02.  Please#012NVRM: components have the same version.",
    "Jun 30 11:07:{s:02d} gpu-0 kernel: NVRM: Xid (PCI:0000:0{g}:00): 13, pid=1, Graphics Exception#012NVRM: Xid "
    "(PCI:0000:0{g}:00): 31, pid=2, Ch 00000010#012mlx5_core 0000:01:00.1 eth1: Link up",
    "Jun 30 11:07:{s:02d} gpu-0 kernel: pcieport 0000:00:03.1: AER: Correctable error message received from "
    "0000:00:00.0#012pcieport 0000:00:03.1:    [12] Timeout",
    "Jun 30 11:07:{s:02d} gpu-0 kernel: usb 1-1: new device#012usb 1-1: [ 7] odd#012 #012",
]


@pytest.mark.parametrize("first,most", [(1, 1), (3, 7), (64, 256)])
def test_rsyslog_lines_of_lines_read_by_key_as_line_by_line(monkeypatch, first, most):
    """A "#012" line of lines is counted by key once each of its lines only counts (Xids and link
    changes past their caps, catalogue events past theirs), and read in order while one does not (an
    AER report, a line with a "]" an AER window reads): the same result as the line-by-line pass."""
    text = "\n".join(row.format(s=t % 60, g=t % 8) for t in range(700) for row in _SYSLOG_012[: 2 + t % 3]) + "\n"
    want = _line_by_line(text, monkeypatch)
    assert isinstance(want, dict) and want["xids_total"] == 2 * 700 and want["link_events_total"] == 700
    monkeypatch.setattr(block, "FIRST_BLOCK_LINES", first)
    monkeypatch.setattr(block, "BLOCK_LINES", most)
    block._memo.clear()
    assert _result(kernel_log.parse, text) == want
    multi = [v[1] for v in block._memo.values() if isinstance(v, tuple) and len(v) == 2 and v[1][0] == "multi"]
    assert len(multi) == 1 + 8 and all(len(d[1]) == 3 for d in multi)  # the first two rows (8 buses)


def _by_blocks(text: str, cap, line=kernel_log._line):
    """The block pass over `text` with lists of `cap` entries (a later section of a bug report keeps
    16), or the ParseError."""
    def run():
        st = kernel_log._Log(cap)
        for b in block.blocks(text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")):
            block.feed(st, b, line)
        return kernel_log._finish(st)
    return _result(run)


@pytest.mark.parametrize("cap", [None, 16])
@pytest.mark.parametrize("first,most", [(1024, 65536), (65536, 65536)])
def test_lists_that_fill_inside_a_big_block_count_the_rest_at_once(monkeypatch, cap, first, most):
    """The fixtures appended: in one big block every list fills part way, the lines of its keys after
    that counted at once (`_in_order`'s `left`), with lists of MAX_EVENTS and of 16 entries: what the
    line-by-line pass gives, and fewer counts one line at a time than lines counted."""
    text = "\n".join(t for _, t in _texts()) * 40 + "\n"
    with monkeypatch.context() as m:
        m.setattr(block, "_fast", lambda *a: False)
        want = _by_blocks(text, cap)
    assert isinstance(want, dict) and want["xids_total"] > 2 * kernel_log.MAX_EVENTS
    monkeypatch.setattr(block, "FIRST_BLOCK_LINES", first)
    monkeypatch.setattr(block, "BLOCK_LINES", most)
    block._memo.clear()
    calls = []
    real = block._count_now
    monkeypatch.setattr(block, "_count_now", lambda st, kd, c=1: calls.append(c) or real(st, kd, c))
    assert _by_blocks(text, cap) == want
    assert max(calls) > 1 and len(calls) < sum(calls)


@pytest.mark.parametrize("cap", [None, 16])
def test_lines_read_by_their_recorder_read_as_by_the_line_pass(monkeypatch, cap):
    """The lines read in order whose own description names their recorder go to it at once
    (kernel_log._line_known), the others (kmsg records, "#012" lines, notices) to `_line`: the same
    result as every line through `_line`; a `line` that is not kernel_log._line gets every line."""
    text = ("\n".join(t for _, t in _texts()) * 8 + "\n" + "\n".join(row for t in range(1, 300) for row in _state_lines(t))
            + "\n" + "\n".join(row.format(s=t % 60, g=t % 8) for t in range(300) for row in _SYSLOG_012) + "\n")
    with monkeypatch.context() as m:
        m.setattr(block, "_fast", lambda *a: False)
        want = _by_blocks(text, cap)
    assert isinstance(want, dict)
    block._memo.clear()
    kinds = []
    real = kernel_log._line_known
    monkeypatch.setattr(kernel_log._line, "known", lambda st, n, raw, k, kind: kinds.append(kind) or real(st, n, raw, k, kind))
    assert _by_blocks(text, cap) == want
    assert {"xid", "sxid", "link", "health", "fault", "reset", "event"} <= set(kinds)
    kinds.clear()
    seen = []
    assert _by_blocks(text, cap, lambda st, n, raw: seen.append(n) or kernel_log._line(st, n, raw)) == want
    assert not kinds and seen


@pytest.mark.parametrize("hist_chars", [0, 1 << 30])
def test_the_lines_before_a_block_kept_whole_or_as_stamps(monkeypatch, hist_chars):
    """The lines before a block kept whole (while they hold at most HIST_CHARS) or as their stamps:
    the driver's window found among them as by the line pass (loads several blocks apart)."""
    monkeypatch.setattr(block, "HIST_CHARS", hist_chars)
    text = "\n".join(row for t in range(1, 200) for row in _state_lines(t)) + "\n"
    text += "".join(f"[{700 + k / 1000:.6f}] x{'y' * (k % 90)}\n" for k in range(6000))
    text += "[706.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14\n"
    want = _line_by_line(text, monkeypatch)
    assert isinstance(want, dict) and want["driver_window_line"] < want["driver_loaded_line"]
    monkeypatch.setattr(block, "FIRST_BLOCK_LINES", 64)
    monkeypatch.setattr(block, "BLOCK_LINES", 256)
    block._memo.clear()
    assert _result(kernel_log.parse, text) == want


def test_the_last_line_of_a_key_found_in_the_tags():
    """`_last`: the index of a key's last line from the digest's tags (each line's key's first index),
    a tag whose bytes also straddle two others' (0x100 then 0: "00 01 00 00 00 00 00 00") included."""
    from array import array

    lines = ["a"] * 300
    for i in range(0, 300, 7):
        lines[i] = "b"
    lines[256], lines[257], lines[299] = "c", "a", "c"
    _n, distinct, tags = block.digest("\n".join(lines))
    assert isinstance(tags, array)
    for key, tag, count, _at in distinct:
        want = max(i for i, x in enumerate(lines) if x == key[4])
        assert block._last(tags, tag, count) == want, key
    tags = array("I", [0, 0x100, 0x10000])  # "00 00 00 00" also at byte 6, inside two items
    assert tags.tobytes().rfind(block.array_of(0)) == 6 and block._last(tags, 0, 2) == 0
