"""nvidia-bug-report logs built to cost time or memory (topodiag/load/bug_report.py).

- Blank lines before many sections: each section used to be padded with one "\\n" per line before
  it, so memory and time were (sections x lines before them): a 3 KB .log.gz of 2,000,000 blank
  lines and 2,000 "dmesg:" sections took > 5 GB. Sections now carry a line offset.
- A .log.gz that decompresses to a gigabyte (a `yes` of one kernel line, gzip -1: 7 MB) used to be
  decompressed whole, decoded and split: 8 GB. It is now streamed and refused by the decompressed
  count (a cap, and a ratio to the compressed size) as it is read, in flat memory.
"""

from __future__ import annotations

import gzip

from tests.load.bug_report_lines import lines_of, sections
from topodiag.load import bug_report
from topodiag.load.gather import gather

from ._limits import run_limited

SEP = "_" * 44
HEAD = (f"{SEP}\n\nStart of NVIDIA bug report log file.\n\nnvidia-bug-report.sh Version: 1\n\n"
        "uname: Linux h 6.0 #1 x86_64\n\n")
LOAD = "[ 1.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05"
SECTION = f"{SEP}\n\ndmesg:\n\n{LOAD}\n"


def _padded_bomb(path, blanks: int, sections: int) -> None:
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.write(HEAD.encode())
        fh.write(b"\n" * blanks)
        fh.write(SECTION.encode() * sections)


def test_blank_lines_before_many_sections_cost_their_count_once(tmp_path):
    path = tmp_path / "bomb.log.gz"
    _padded_bomb(path, 2_000_000, 1000)
    assert path.stat().st_size < 10_000
    # padded, the sections' text was 1000 x 2,000,000 characters: far over the ceiling
    code = f"""
from topodiag.load.gather import gather
got = gather([{str(path)!r}])
assert not got.problems, got.problems
assert len(got.parsed) == 1000, len(got.parsed)
print(got.parsed[-1].result.driver_loaded_line)
"""
    done = run_limited(code, limit_mb=300)
    assert done.returncode == 0, done.stderr[-2000:]
    # the last section's load line is the file's last line (line numbers are the file's)
    assert int(done.stdout.split()[-1]) == HEAD.count("\n") + 2_000_000 + SECTION.count("\n") * 1000


def test_the_section_text_is_not_padded():
    lines = (HEAD + "\n" * 5000 + SECTION * 3).split("\n")
    secs = list(sections(lines))
    assert [s.text for s in secs] == [LOAD, LOAD, LOAD + "\n"]
    assert [s.start_line for s in secs] == [lines.index(LOAD) + 1 + 5 * i for i in range(3)]


def test_sections_are_capped(tmp_path):
    path = tmp_path / "many.log.gz"
    _padded_bomb(path, 0, bug_report.MAX_SECTIONS + 1)
    got = gather([str(path)])
    assert not got.parsed and len(got.problems) == 1
    assert f"more than {bug_report.MAX_SECTIONS} sections" in got.problems[0].reason


def _yes_bomb(path, megabytes: int) -> None:
    line = (f"[    1.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05 padpadpadpadpad\n").encode()
    block = line * ((1 << 20) // len(line))
    with gzip.open(path, "wb", compresslevel=1) as fh:
        fh.write(f"{HEAD}{SEP}\n\ndmesg:\n\n".encode())
        for _ in range(megabytes):
            fh.write(block)


def test_a_gzip_bomb_is_refused_by_its_ratio_as_it_streams(tmp_path):
    path = tmp_path / "b.log.gz"
    _yes_bomb(path, 48)  # 48 MiB from ~350 KB: ~140 times
    code = f"""
from topodiag.load.gather import gather
got = gather([{str(path)!r}])
print(len(got.parsed), got.problems[0].reason)
"""
    done = run_limited(code, limit_mb=120)  # the old reader held 48 MiB x 3 at least
    assert done.returncode == 0, done.stderr[-2000:]
    count, reason = done.stdout.strip().split(" ", 1)
    assert count == "0" and f"more than {bug_report.MAX_RATIO} times its size" in reason


def test_streaming_memory_is_flat_without_the_caps(tmp_path):
    """With the caps lifted, 96 MiB of a skipped section is read in memory that does not grow with
    it: the stream holds one chunk and one line at a time."""
    path = tmp_path / "big.log.gz"
    with gzip.open(path, "wb", compresslevel=1) as fh:
        fh.write(f"{HEAD}{SEP}\n\n*** /etc/issue\n".encode())
        block = b"x" * 99 + b"\n"
        for _ in range(96):
            fh.write(block * ((1 << 20) // 100))
        fh.write(SECTION.encode())
    code = f"""
from topodiag.load import bug_report
from topodiag.load.gather import gather
bug_report.MAX_BYTES = bug_report.MAX_RATIO = 1 << 40
got = gather([{str(path)!r}])
assert not got.problems, got.problems
print([p.source for p in got.parsed])
"""
    done = run_limited(code, limit_mb=64)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['kernel_log']"


def test_a_huge_section_is_not_read_and_says_so():
    lines = (HEAD + SECTION).split("\n")
    big = lines[:-1] + ["x" * 1000] * (bug_report.MAX_SECTION_BYTES // 1000 + 1) + [SEP, "", "dmesg:", LOAD]
    secs = list(sections(big))
    assert secs[0].text is None and "not read" in secs[0].problem
    assert secs[1].text == LOAD


def test_a_long_line_is_cut():
    import io

    got = lines_of(io.BytesIO(b"a" * (3 * bug_report.MAX_LINE) + b"\nb\n"))  # as the loader cuts them
    assert [len(x) for x in got] == [bug_report.MAX_LINE, 1]
