"""Parser for nccl-tests results (all_reduce_perf, sendrecv_perf, alltoall_perf, ... stdout).

What nccl-tests prints (src/common.cu; the banner and columns changed across versions):

    # nccl-tests version 2.20.0 (b4d5bee) nccl-headers=23102 nccl-library=23102
    # Collective test starting: all_reduce_perf
    # nThread 1 nGpus 1 minBytes 8192 maxBytes 8589934592 step: 2(factor) warmup iters: 10 iters: 100 ...
    # Using devices
    #  Rank  0 Group  0 Pid 1666603 on spark-d708 device  0 [000f:01:00] NVIDIA GB10
    #       size         count      type   redop    root     time   algbw   busbw  #wrong     time ...
         8192          2048     float     sum      -1    35.15    0.23    0.23       0    30.33 ...
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 0.6575

Older builds (2.4 era) print no "root" column and an `error` column (max error, "1e-07") instead
of `#wrong`, and no Group on device lines. The column layout is read from the results header when
there is one, else inferred from the row. Tolerated: srun " 0: " prefixes, MPI "[0]" tags (even
glued inside a row), NCCL INFO lines interleaved, indentation, CRLF, ANSI codes, fragments that
start or end mid-table, duplicated banners of non-MPI builds (each process a 1-rank run).

JSON: {source: "nccl_tests", collective ("all_reduce"; from "Collective test starting: X_perf" or
an echoed command line; null), nccl_tests_version, nccl_version ("2.31.2", from nccl-library= or an
"NCCL version" line), nccl_headers_version, nranks (distinct ranks on "#  Rank N" lines of one run,
else NCCL's "nranks N"), devices [{rank, group, host, pid, device, bus_id, name, run}], parameters
({nthread, ngpus, min_bytes, max_bytes, step_factor | step_bytes, warmup_iters, iters, agg_iters,
validation, graph, unalign, ...}), rows [{size_bytes, count, type, redop, root, oop_time_us,
oop_algbw_gbps, oop_busbw_gbps, oop_wrong, oop_error, ip_time_us, ip_algbw_gbps, ip_busbw_gbps,
ip_wrong, ip_error, run, line_no}] ("N/A" -> null), avg_busbw_gbps (the first summary's),
peak_busbw_gbps (max over rows of oop/ip busbw), out_of_bounds (summed over runs), out_of_bounds_ok,
runs (banners / results headers seen; > 1 means several independent runs in one file), failures
[{line_no, text, size_bytes, run, class, entry, severity}] (Test CUDA/NCCL failure, Test failure,
timeouts, FAILED, aborts, and the usage errors and ignored options the nccl-tests catalogue knows:
nccl_tests_failures.py; "class" null for a line no catalogue entry explains, which the report's
`unrecognised` lists for SYS004), warnings [{line_no, text}] (NCCL WARN lines), notes [str]}.
A row's `run` is the run whose banner or header last preceded it (approximate when the output of
several processes interleaves). NCCL INFO lines are otherwise left to the nccl_debug parser.

Big inputs (a cluster's logs appended together: gigabytes, thousands of runs): `parse_binary` and
`parse_chunks` read bytes a chunk at a time (`digest` + `ChunkReader`: stream.py; the loader reads a file
once for this parser and nccl_debug, topodiag/scan/onepass.py), with the result of `parse(text)`.
The result is bounded: past ROW_CAP rows only sizes not kept yet are kept (up to ROW_HARD_CAP); runs
are kept whole while fewer than RUN_ROWS_CAP rows and DEVICE_CAP rank lines are kept, and the runs
after that are counted, not kept (a note says how many, with their rows and any wrong results), so
every kept run is judged as a run; failure, WARN and note lines keep the first LIST_CAP.

The package reads -> assembles -> validates: read.py (one line: prefixes, patterns, cells, layouts),
assemble.py (the state over the lines: runs, rank lines, rows, failures), validate.py (the report and
its notes, or ParseError); stream.py is the chunk engine over bytes, records.py what the report holds;
its sniff is topodiag/parsers/sniff/nccl_tests.py. The limits below are read when a reader is made
(`limits()`): a caller (a test) may lower them.
"""

from __future__ import annotations

from typing import BinaryIO, Iterable, Iterator

from ...scan import chunks as _chunks
from ...scan.chunks import CHUNK
from ..base import ParseError, ParserInfo, clean_lines, iter_clean_lines
from . import stream as _stream
from .assemble import Parser
from .read import _NUM_RE, collective_name, version_from_code  # noqa: F401 -- _NUM_RE: tests/hostile
from .records import Device, Failure, Limits, NcclTestsReport, Row, WarningLine
from ..sniff.nccl_tests import sniff
from .stream import Digest, digest

__all__ = ["INFO", "SOURCE", "CHUNK", "ChunkReader", "Device", "Digest", "Failure", "Limits", "NcclTestsReport",
           "ParseError", "Row", "WarningLine", "collective_name", "digest", "iter_chunks", "limits", "parse",
           "parse_binary", "parse_chunks", "parse_lines", "sniff", "version_from_code"]

INFO = ParserInfo(
    source="nccl_tests",
    tool="nccl-tests *_perf",
    description="an nccl-tests run (all_reduce_perf, sendrecv_perf...): bus bandwidth by size",
)
SOURCE = INFO.source

# A results table has tens of rows per run; a huge NCCL log with interleaved rows can hold hundreds of
# thousands, and a cluster's logs appended together thousands of runs. Past ROW_CAP only rows of a size
# not kept yet are kept (up to ROW_HARD_CAP). A run is kept whole or not at all: once RUN_ROWS_CAP rows or
# DEVICE_CAP rank lines are kept, the runs that start after are counted, not kept (a note says which), so
# every run kept is judged as a run and the result, and every check's pass over it, stay bounded.
ROW_CAP = 4096
ROW_HARD_CAP = 16384
RUN_ROWS_CAP = 12288
DEVICE_CAP = 8192
DEVICE_HARD_CAP = 16384  # rank lines of one giant run
LIST_CAP = 1000  # per-line notes, NCCL WARN lines, failure lines
NAMES_CAP = 64  # distinct collectives and NCCL libraries named in notes
AVGS_SHOWN = 50  # "Avg bus bandwidth" values a note lists
MEMO_CAP = 4096  # distinct lines whose effect is remembered past the cut (stream.py)
_BULK_MIN = 64  # lines a chunk past the cut holds before it is sieved (fewer: one by one)


def limits() -> Limits:
    """The limits above, as they are now (read when a reader is made)."""
    return Limits(row_cap=ROW_CAP, row_hard_cap=ROW_HARD_CAP, run_rows_cap=RUN_ROWS_CAP, device_cap=DEVICE_CAP,
                  device_hard_cap=DEVICE_HARD_CAP, list_cap=LIST_CAP, names_cap=NAMES_CAP, avgs_shown=AVGS_SHOWN,
                  memo_cap=MEMO_CAP, bulk_min=_BULK_MIN)


def _parse(lines: Iterable[str]) -> NcclTestsReport:
    p = Parser(limits())
    for line_no, line in enumerate(lines, 1):
        p.feed(line_no, line)
    return p.finish()


def parse(text: str) -> NcclTestsReport:
    """nccl-tests stdout -> NcclTestsReport; ParseError without a banner, results header or row."""
    return _parse(clean_lines(text))


def parse_lines(lines: Iterable[str]) -> NcclTestsReport:
    """Streaming form of parse for an iterable of raw lines."""
    return _parse(iter_clean_lines(lines))


class ChunkReader(_stream.ChunkReader):
    """Chunks of whole lines in order (`feed(chunk, digest=None)`), then `result()` (stream.py), under
    the limits of the moment."""

    def __init__(self) -> None:
        super().__init__(limits())


def parse_chunks(chunks: Iterable) -> NcclTestsReport:
    """Chunks of whole lines, in order (bytes, or (bytes, digest or None) pairs) -> the report."""
    return _chunks.feed_all(ChunkReader(), chunks)


def iter_chunks(handle: BinaryIO) -> Iterator[bytes]:
    """Chunks of whole lines of about CHUNK bytes from a file opened "rb" (topodiag/scan/chunks.py)."""
    return _chunks.iter_chunks(handle, CHUNK)


def parse_binary(handle: BinaryIO) -> NcclTestsReport:
    """nccl-tests output from a file opened in binary mode, read a chunk at a time; the result is
    `parse(data.decode("utf-8", "replace"))`."""
    return parse_chunks(iter_chunks(handle))
