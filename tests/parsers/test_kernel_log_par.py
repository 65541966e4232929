"""The kernel log of a big file read with forked workers (topodiag/parsers/_kernel_log_par.py: the keys
and their Counter of each block computed in a worker, the blocks read in order here) gives what the line
path gives: LF, CRLF and CR line ends, blocks small enough that the lists fill and AER windows and
driver loads straddle them, a line past LINE_LIMIT, no worker at all."""

from __future__ import annotations

import io

import pytest

from tests.parsers.test_kernel_log_block import _lines_of, _result, _texts
from topodiag.scan import parallel, workers
from topodiag.parsers import _kernel_log_block as block
from topodiag.parsers import _kernel_log_par as par
from topodiag.parsers import kernel_log
from topodiag.load import files


@pytest.fixture
def small_blocks(monkeypatch):
    """Every file goes to the workers (two processes), in blocks of 4 KiB doubling to 64 KiB; counts
    the chunks that come with a worker's digest."""
    monkeypatch.setenv(workers.ENV, "2")
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(block, "FIRST_BLOCK_CHARS", 4096)
    monkeypatch.setattr(block, "BLOCK_CHARS", 1 << 16)
    used = []
    blocks_of = par._blocks_of

    def counted(data, dg):
        used.append(dg is not None)
        return blocks_of(data, dg)

    monkeypatch.setattr(par, "_blocks_of", counted)
    monkeypatch.setattr(parallel, "_behind", lambda pending, ahead: False)  # every chunk to the worker
    block._memo.clear()
    return used


def _file(tmp_path, data: bytes):
    path = tmp_path / "kern.log"
    path.write_bytes(data)
    with open(path, "rb") as fh:
        return _result(kernel_log.parse_binary, fh)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_read_with_workers_as_the_line_path_reads(tmp_path, small_blocks, newline):
    text = ("\n".join(t for _, t in _texts()) + "\n") * 30
    data = text.replace("\n", newline).encode("utf-8")
    want = _result(_lines_of, data)
    assert isinstance(want, dict) and want["xids_total"] > kernel_log.MAX_EVENTS < want["events_total"]
    small_blocks.clear()  # the line path's blocks
    assert _file(tmp_path, data) == want
    if newline != "\r":  # a file without "\n" is one chunk, read here
        assert len(small_blocks) > 10 and sum(small_blocks) >= len(small_blocks) - 1  # all but the last
    assert _file(tmp_path, data[:-7]) == _result(_lines_of, data[:-7])  # the last line without its end


def test_bad_bytes_and_a_last_line_without_its_end(tmp_path, small_blocks):
    text = "\n".join(t for _, t in _texts()) * 6
    data = text.encode("utf-8").replace(b"NVRM: Xid", b"NVRM: \xff\xfeXid", 50) + b"\n[ 1.0] tail \xe2\x82"
    assert _file(tmp_path, data) == _result(_lines_of, data)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r", "some \r"])
def test_without_a_worker_the_same(tmp_path, small_blocks, monkeypatch, newline):
    monkeypatch.setattr(parallel, "worker_pool", lambda n: None)  # where scan/parallel.py makes its pool
    text = ("\n".join(t for _, t in _texts()) + "\n") * 4
    data = (text.replace("\n", "\r", 40) if newline == "some \r" else text.replace("\n", newline)).encode()
    want = _result(_lines_of, data)
    small_blocks.clear()
    assert _file(tmp_path, data) == want
    assert small_blocks and not any(small_blocks)


def test_a_line_past_the_limit_is_read_by_the_line_path(tmp_path, small_blocks, monkeypatch):
    monkeypatch.setattr(block, "LINE_LIMIT", 300)
    monkeypatch.setattr(files, "LINE_LIMIT", 300)
    text = "[    1.000000] NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus. " + "x" * 5000 + "\n"
    data = ("\n".join(t for _, t in _texts()) + "\n" + text * 3).encode()
    got = _file(tmp_path, data)
    assert got == _result(lambda d: kernel_log.parse_lines(files.bounded_lines(
        io.TextIOWrapper(io.BytesIO(d), encoding="utf-8", errors="replace", newline=""), 300)), data)
    assert got["xids_total"] > 3


def test_what_lies_past_the_limit_of_a_long_line_is_not_read(tmp_path, small_blocks, monkeypatch):
    """An Xid past LINE_LIMIT characters of its line is not seen, as the line path cuts the line there
    (the worker's digest says how long the longest line is: the block goes to the line path)."""
    monkeypatch.setattr(block, "LINE_LIMIT", 300)
    monkeypatch.setattr(files, "LINE_LIMIT", 300)
    text = "[    1.000000] " + "x" * 400 + " NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.\n"
    data = ("[    0.500000] usb 1-1: new device\n" * 20 + text * 3).encode()
    got = _file(tmp_path, data)
    assert got == _result(lambda d: kernel_log.parse_lines(files.bounded_lines(
        io.TextIOWrapper(io.BytesIO(d), encoding="utf-8", errors="replace", newline=""), 300)), data)
    assert got["xids_total"] == 0


def test_digest_is_the_blocks_keys():
    lines = ["[    1.000000] usb 1-1: new device", "[    2.500000] usb 1-1: new device", "Jan  1 00:00:00 h kernel: x"]
    n, distinct, ids = block.digest("\n".join(lines))
    assert n == 3 and list(ids) == [0, 0, 2]  # a key's tag: the index of its first line
    # (key, tag, count, the index of a line of it: its first; _block._last finds its last)
    assert [(k[4], tag, c, at) for k, tag, c, at in distinct] == [(" usb 1-1: new device", 0, 2, 0), ("x", 2, 1, 2)]
    assert block._last(ids, 0, 2) == 1 and block._last(ids, 2, 1) == 2


@pytest.mark.parametrize("last", ["[    3.000000] usb 1-1: new device", "[ 3.0000000000] x", "[3.0]x", "", "[ 4.5]"])
def test_a_dmesg_block_has_the_keys_of_the_key_regex(last):
    """A block whose lines all start with a dmesg stamp is keyed by its one-group regex: the keys are
    _KEY_RE's (a line that only looks like one, "[3.0000000000]" of ten decimals, an empty last line:
    the block keyed by _KEY_RE)."""
    lines = ["[    1.000000] usb 1-1: new device", "[  2.5]  usb 1-1: new device", "[\t7.25] usb", last]
    n, distinct, ids = block.digest("\n".join(lines))
    keys = block._KEY_RE.findall("\n".join(lines))
    assert n == len(keys) == 4 and [keys.index(k) for k in keys] == list(ids)
    assert [(k, tag, c, at) for k, tag, c, at in distinct] == [
        (k, keys.index(k), keys.count(k), keys.index(k)) for k in dict.fromkeys(keys)]
    assert [block._last(ids, tag, c) for _k, tag, c, _at in distinct] == [
        len(keys) - 1 - keys[::-1].index(k) for k in dict.fromkeys(keys)]


def test_a_merge_quicker_than_the_worker_digests_its_share(tmp_path, small_blocks, monkeypatch):
    """While the worker is behind (`parallel._behind`), a chunk is digested in this process: the same
    result, with the worker's digests for the others."""
    calls = []

    def behind(pending, ahead):
        calls.append(1)
        return len(calls) % 3 == 0

    monkeypatch.setattr(parallel, "_behind", behind)
    data = (("\n".join(t for _, t in _texts()) + "\n") * 30).encode()
    want = _result(_lines_of, data)
    small_blocks.clear()
    assert _file(tmp_path, data) == want
    assert len(small_blocks) > 8 and 0 < sum(small_blocks) <= len(small_blocks) - 3


def test_the_possessive_key_regexes_match_as_the_plain_ones():
    """The possessive runs of _KEY_RE / _DMESG_KEY_RE only save the engine its tries: the keys are
    those of the same patterns without them, on lines made to need a run given back (invented)."""
    import re

    plain = re.compile(r"(?m)^(?:([A-Z])[a-z]{2} [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] (\S{1,64} kernel: ?))?"
                       r"(?:(\[)[ \t]*[0-9]{1,12}\.[0-9]{1,9}\]|[0-9]{1,3},[0-9]{1,20},[0-9]{1,17},[^;\n]{0,40}(;))?(.*)$")
    plain_dmesg = re.compile(r"(?m)^\[[ \t]*[0-9]{1,12}\.[0-9]{1,9}\](.*)$")
    host = "h" * 70
    lines = ["[ \t 12.5] a", "[1234567890123.5] b", "[1.1234567890] c", "[  1.5 ] d", "[ 1.] e",
             f"Jan  1 00:00:00 {host} kernel: x", f"Jan  1 00:00:00 {host[:64]} kernel:[1.5] y",
             "Feb 29 10:00:00 h kernel:  [ 3.25]z", "6,1,2,-;m", "6,1,2,-]x;n", "1234,1,2,-;o",
             "6,1,123456789012345678,-;p", "6,1,2," + "f" * 41 + ";q", "6,1,2,c;", "", "[", "Jan  1 00:00:00 h kernel"]
    text = "\n".join(lines)
    assert block._KEY_RE.findall(text) == plain.findall(text)
    dm = "\n".join(x for x in lines if x.startswith("["))
    assert block._DMESG_KEY_RE.findall(dm) == plain_dmesg.findall(dm)
