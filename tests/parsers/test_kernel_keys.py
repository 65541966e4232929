"""The kernel log's line keys in C (topodiag/scan/_cscan.c `kernel_keys`, used by
topodiag/parsers/_kernel_log_keys.py `digest`) against their twin, the regex (`digest_py`, _KEY_RE's
five groups: the syslog month's first letter, "<host> kernel: ", the "[" of a dmesg stamp, the ";" of
a /dev/kmsg prefix, the rest): the same count of lines, distinct keys in the same order with the same
counts, the same tag for each line. On every fixture, on generated texts built from the pieces where
the grammar's bounds lie (a host of 64 and 65 characters, 12 and 13 digits of seconds, 40 and 41
characters of /dev/kmsg flags, the blanks \\s knows beyond the ASCII blank), and on a text whose keys
were written here by hand. A text that is not ASCII is the regex's (the C gives None)."""

from __future__ import annotations

import random
from array import array
from pathlib import Path

import pytest

from topodiag.parsers import _kernel_log_block as B
from topodiag.parsers import _kernel_log_keys as keys
from topodiag.scan import lines as scan_lines

ROOT = Path(__file__).resolve().parents[2]
keys_c = scan_lines._compiled.kernel_keys if scan_lines._compiled is not None and hasattr(
    scan_lines._compiled, "kernel_keys") else None
needs_c = pytest.mark.skipif(keys_c is None, reason="the C scanner is not compiled in this install")

# the pieces generated lines are made of: each bound of the grammar on both sides
PIECES = ["Sep 19 16:18:02 ", "Jan  1 00:00:00 ", "Mar 3 01:02:03 ", "jan. 29 20:50:17 ", "Sep 19 16:18:0",
          "bubz", "h" * 63, "h" * 64, "h" * 65, " kernel: ", " kernel:", "kernel: ", " kernel:  ", "host kernel: ",
          "[", "]", "[ ", "[\t", "[  ", "68183", "1" * 12, "1" * 13, ".", "615790", "9" * 9, "9" * 10, "] ",
          "[   12.345678] ", "[68183.615790]", "[ +0.000012] ", "6,", "12,", "1234,", "5678901,", "1" * 20 + ",",
          "1" * 21 + ",", "1" * 17 + ",", "1" * 18 + ",", "-;", "c;", "f" * 40 + ";", "f" * 41 + ";", ";", ",",
          "6,1234,5678901,-;", " SUBSYSTEM=pci", "NVRM: Xid (PCI:0000:01:00): 79, pid=1", "pcieport 0000:00:03.1: AER: ",
          "mlx5_core 0000:3b:00.0: ", " ", "\t", "\x0b", "\x0c", "\r", "\x1c", "\x1f", "\x1b", "\x7f", "x", "Z", "a",
          "0", ":", "\n", "\n\n", "kernel", "Sep", "S", "\x00", "h\x00"]


def random_text(rng: random.Random, pieces: int = 40) -> str:
    """A text of kernel-log-like lines from PIECES (no final newline, as `digest` is given)."""
    return "".join(rng.choice(PIECES) for _ in range(rng.randrange(pieces)))


def structured_line(rng: random.Random) -> str:
    """A line field by field (a syslog prefix, a stamp, a rest), each field on or near a bound."""
    out = ""
    if rng.random() < 0.5:
        host = rng.choice(["h", "bubz", "h" * 64, "h" * 65, "bu\x1cz", "bu\x0bz", "bu\tz", "x:y", "h\x00"])
        out += rng.choice(["Sep 19 16:18:02 ", "Oct  3 01:02:03 ", "sep 19 16:18:02 ", "Sep 19 16:18:02"]) + host
        out += rng.choice([" kernel:", " kernel: ", " kernel:  ", " kernel", "  kernel: "])
    r = rng.random()
    if r < 0.4:
        out += "[" + rng.choice(["", " ", "\t", " \t "]) + "1" * rng.choice([0, 1, 5, 12, 13]) + rng.choice([".", ",", ""])
        out += "9" * rng.choice([0, 1, 6, 9, 10]) + rng.choice(["]", "", " ]"])
    elif r < 0.8:
        out += ",".join("7" * rng.choice([0, 1, most, most + 1]) for most in (3, 20, 17)) + ","
        out += "f" * rng.choice([0, 1, 40, 41]) + rng.choice([";", "", ","])
    return out + rng.choice(["", " x", " NVRM: Xid 79", "] y", ";z", " kernel: w"])


def structured_text(rng: random.Random) -> str:
    """Lines from `structured_line`, some again with another month or stamp: keys that differ in one group."""
    lines = [structured_line(rng) for _ in range(rng.randrange(1, 12))]
    again = [x.replace("Sep 19 16:18:02", "Oct  3 01:02:03").replace("[ 1", "[ 3") for x in lines if rng.random() < 0.5]
    return "\n".join(lines + again)


def _plain(dg) -> tuple:
    return dg[0], dg[1], list(dg[2])


def _c(text: str):
    """The C scanner's digest of `text` (None: not ASCII), whatever TOPODIAG_PURE says."""
    got = keys_c(text)
    if got is None:
        return None
    tags = array("I")
    tags.frombytes(got[2])
    return got[0], got[1], list(tags)


@needs_c
def test_by_hand() -> None:
    lines = ["[   12.345678] NVRM: Xid (PCI:0000:01:00): 79, pid=1",
             "Sep 19 16:18:02 bubz kernel: [68183.615790] pcieport 0000:00:03.1: AER: x",
             "6,1234,5678901,-;mlx5_core 0000:3b:00.0: y",
             "",
             "[1234567890123.1] thirteen digits",
             "Sep  1 12:00:00 " + "h" * 65 + " kernel: z",
             "Sep  1 12:00:00 " + "h" * 64 + " kernel:[ 1.5] z",
             "1,2,3," + "f" * 41 + ";x",
             "[99999.000001] NVRM: Xid (PCI:0000:01:00): 79, pid=1",
             "Oct  3 01:02:03 bubz kernel: [ 0.1] pcieport 0000:00:03.1: AER: x",
             "Sep  1 12:00:00 h kernel:",  # the shortest syslog prefix
             "Sep  1 12:00:00 bu\x1cz kernel: x",  # \x1c is a blank to \S: no host, no prefix
             "[\t 7.25] tab",
             "1,2," + "3" * 18 + ",-;x"]  # 18 digits of microseconds: no /dev/kmsg prefix
    n, distinct, tags = _c("\n".join(lines))
    assert n == 14
    assert distinct == [
        (("", "", "[", "", " NVRM: Xid (PCI:0000:01:00): 79, pid=1"), 0, 2, 0),
        (("S", "bubz kernel: ", "[", "", " pcieport 0000:00:03.1: AER: x"), 1, 1, 1),
        (("", "", "", ";", "mlx5_core 0000:3b:00.0: y"), 2, 1, 2),
        (("", "", "", "", ""), 3, 1, 3),
        (("", "", "", "", "[1234567890123.1] thirteen digits"), 4, 1, 4),  # 13 digits: no stamp
        (("", "", "", "", lines[5]), 5, 1, 5),  # a host of 65 characters: no syslog prefix
        (("S", "h" * 64 + " kernel:", "[", "", " z"), 6, 1, 6),
        (("", "", "", "", lines[7]), 7, 1, 7),  # 41 characters of flags: no /dev/kmsg prefix
        (("O", "bubz kernel: ", "[", "", " pcieport 0000:00:03.1: AER: x"), 9, 1, 9),  # another month
        (("S", "h kernel:", "", "", ""), 10, 1, 10),
        (("", "", "", "", lines[11]), 11, 1, 11),
        (("", "", "[", "", " tab"), 12, 1, 12),
        (("", "", "", "", lines[13]), 13, 1, 13),
    ]
    assert tags == [0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11, 12, 13]
    assert _plain(B.digest_py("\n".join(lines))) == (n, distinct, tags)


@needs_c
def test_every_fixture() -> None:
    seen = 0
    for path in sorted((ROOT / "fixtures").rglob("*")):
        if path.suffix not in (".txt", ".log") or not path.is_file():
            continue
        text = "\n".join(B._LINE_END.split(path.read_text(encoding="utf-8", errors="replace")))
        got = _c(text)
        if got is None:
            assert not text.isascii()
            continue
        seen += 1
        assert got == _plain(B.digest_py(text)), path.name
    assert seen > 300


@needs_c
def test_generated() -> None:
    rng = random.Random(29)
    for _ in range(4000):
        text = random_text(rng)
        assert keys_c(text) is not None
        assert _c(text) == _plain(B.digest_py(text)), repr(text)


@needs_c
def test_generated_field_by_field() -> None:
    rng = random.Random(30)
    for _ in range(3000):
        text = structured_text(rng)
        assert _c(text) == _plain(B.digest_py(text)), repr(text)


@needs_c
def test_many_distinct_keys_and_repeats() -> None:
    """More distinct keys than the C table's first room (its growth), each repeated out of order."""
    rows = [f"[{k}.{k % 7:06d}] line {k % 5000}" for k in range(12000)]
    rows += [f"Sep  1 12:00:00 h{k % 300} kernel: [{k}.5] x" for k in range(900)]
    text = "\n".join(rows)
    got = _c(text)
    assert got == _plain(B.digest_py(text))
    assert got[0] == 12900 and len(got[1]) == 5300
    assert got[1][0][2] == 3 and got[1][4999][2] == 2  # lines 0, 5000, 10000; 4999, 9999


@needs_c
def test_not_ascii_is_the_regexs() -> None:
    text = "[ 1.0] é\n[ 2.0] é\nSep  1 12:00:00 hôte kernel: x"
    assert keys_c(text) is None
    n, distinct, tags = B.digest(text)
    assert (n, list(tags)) == (3, [0, 0, 2])
    assert distinct[1][0] == ("S", "hôte kernel: ", "", "", "x")
    with pytest.raises(TypeError):
        keys_c(b"[ 1.0] x")


def test_pure_twin_when_not_compiled(monkeypatch) -> None:
    """Without the C scanner (TOPODIAG_PURE, or an install with no compiler) `digest` is the regex's."""
    monkeypatch.setattr(keys, "_compiled_keys", None)
    text = "[ 1.0] a\n[ 2.0] a\nb"
    assert _plain(B.digest(text)) == (3, [(("", "", "[", "", " a"), 0, 2, 0), (("", "", "", "", "b"), 2, 1, 2)],
                                      [0, 0, 2])


@needs_c
@pytest.mark.parametrize("text", ["a\n\nbc\n[ 1.0] d\n", "\n", "x\n", "\n\n\n", "[ 1.0] a\n" * 5 + "tail\n"])
def test_lines_cut_from_their_ends_read_as_the_list(text, monkeypatch) -> None:
    """`Lines` (the merge's lines of a block, cut as they are read) reads as text.split("\\n") of the block."""
    monkeypatch.setattr(keys, "_compiled_keys", keys_c)  # the C pass, whatever TOPODIAG_PURE says
    n, distinct, tags, ends, longest = keys.digest(text[:-1], ends=True)
    want = text[:-1].split("\n")
    got = keys.Lines(text, ends)
    assert (n, len(got), longest) == (len(want), len(want), max(map(len, want)))
    assert [got[i] for i in range(len(want))] == want and [got[-i] for i in range(1, len(want) + 1)] == want[::-1]
    for cut in (slice(None), slice(-2, None), slice(-10, None), slice(1, 3), slice(5, 2), slice(None, None, 2),
                slice(None, None, -1), slice(1, -1)):
        assert got[cut] == want[cut]
    assert list(got) == want and (n, distinct, list(tags)) == _plain(B.digest_py(text[:-1]))


@needs_c
def test_the_merge_of_a_big_file_reads_lines_cut_from_their_ends(tmp_path, monkeypatch) -> None:
    """A big ASCII file read with a worker: its blocks come as `Lines` (the worker's ends), with the
    line path's result; the fixtures' kernel logs, each a few times over."""
    from tests.parsers.test_kernel_log_block import _lines_of, _result, _texts
    from topodiag.parsers import _kernel_log_par as par
    from topodiag.parsers import kernel_log
    from topodiag.scan import parallel, workers

    monkeypatch.setattr(keys, "_compiled_keys", keys_c)  # (forked: the worker has it too)
    monkeypatch.setenv(workers.ENV, "2")
    monkeypatch.setattr(par, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(B, "FIRST_BLOCK_CHARS", 4096)
    monkeypatch.setattr(B, "BLOCK_CHARS", 1 << 16)
    monkeypatch.setattr(parallel, "_behind", lambda pending, ahead: False)
    made = []
    monkeypatch.setattr(par, "Lines", lambda text, ends: made.append(len(ends)) or keys.Lines(text, ends))
    B._memo.clear()
    data = (("\n".join(t for _, t in _texts() if t.isascii()) + "\n") * 20).encode()
    path = tmp_path / "kern.log"
    path.write_bytes(data)
    with open(path, "rb") as fh:
        got = _result(kernel_log.parse_binary, fh)
    assert got == _result(_lines_of, data)
    assert len(made) >= 8 and sum(made) == data.count(b"\n")  # every block, every line
