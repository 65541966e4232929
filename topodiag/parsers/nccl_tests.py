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
`parse_chunks` read bytes a chunk at a time (`digest` + `ChunkReader`, below; the loader reads a file
once for this parser and nccl_debug, topodiag/load/onepass.py), with the result of `parse(text)`.
The result is bounded: past ROW_CAP rows only sizes not kept yet are kept (up to ROW_HARD_CAP); runs
are kept whole while fewer than RUN_ROWS_CAP rows and DEVICE_CAP rank lines are kept, and the runs
after that are counted, not kept (a note says how many, with their rows and any wrong results), so
every kept run is judged as a run; failure, WARN and note lines keep the first LIST_CAP.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
import re
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Iterable, Iterator, Optional

from ..scan import chunks as _chunks, lines as _linescan
from . import _foreign, nccl_tests_failures as _failures
from ..scan.chunks import CHUNK
from .base import ANSI_RE, ParseError, ParserInfo, clean_lines, iter_clean_lines

INFO = ParserInfo(
    source="nccl_tests",
    tool="nccl-tests *_perf",
    description="an nccl-tests run (all_reduce_perf, sendrecv_perf...): bus bandwidth by size",
)
SOURCE = INFO.source

# Line prefixes a launcher adds: srun "-l" (" 0: "), OpenMPI --tag-output ("[1,0]<stdout>:"), "[0]".
_SRUN_RE = re.compile(r"^[0-9]+:(?:\s+|$)")
_TAG_RE = re.compile(r"\[[0-9]+(?:,[0-9]+)*\](?:<std(?:out|err)>:?)?")
_LEAD_TAG_RE = re.compile(r"^\[[0-9]+(?:,[0-9]+)*\](?:<std(?:out|err)>)?:?\s*")

_NCCL_LOG_RE = re.compile(r"\bNCCL (INFO|WARN|TRACE)\b")
_NCCL_VERSION_RE = re.compile(r"\bNCCL version ([0-9]+\.[0-9]+\.[0-9]+)")
_NRANKS_RE = re.compile(r"\bnranks ([0-9]+)\b")

_TESTS_VERSION_RE = re.compile(r"^#\s*(?:nccl|rccl)-tests version (\S+)")
_HEADERS_RE = re.compile(r"\bnccl-headers=([0-9]+)")
_LIBRARY_RE = re.compile(r"\bnccl-library=([0-9]+)")
_STARTING_RE = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_NTHREAD_RE = re.compile(r"^#\s*nThread\s+[0-9]+")
_USING_RE = re.compile(r"^#\s*Using devices\b")
_DEVICE_RE = re.compile(
    r"^#\s*Rank\s+([0-9]+)\s+(?:Group\s+([0-9]+)\s+)?Pid\s+([0-9]+)\s+on\s+(\S+)\s+device\s+([0-9]+)\s+\[([^\]]*)\]\s*(.*)$")
_OOB_RE = re.compile(r"^#\s*Out of bounds values\s*:\s*([0-9]+)\s*(\w+)?")
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_REDUCED_RE = re.compile(r"^#\s*Reducing maxBytes to ([0-9]+)")
_ERROR_RE = re.compile(r"^#\s*error:\s*(.+)$")
_PERF_RE = re.compile(r"(?:^|[\s/])([a-z][a-z0-9_]*?)_perf(?:_mpi)?(?=\s|$)")

_FAIL_RE = _failures.FAIL_RE  # a failure mark ("Test CUDA failure", FAILED, aborts...)
_FAIL_WORDS = _failures.FAIL_WORDS  # a literal of each of its alternatives (searched in bytes)

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

_INT_RE = re.compile(r"^-?[0-9]+$")
_NUM_RE = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")  # the dot leads: linear
_WORD_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

# header column name -> the row field it fills (None: a column this parser does not report)
_HALF_NAMES = {"time": "time", "cputime": "time", "algbw": "algbw", "busbw": "busbw", "#wrong": "wrong",
               "error": "error"}
_PARAM_KEYS = {"nThread": "nthread", "nGpus": "ngpus", "minBytes": "min_bytes", "maxBytes": "max_bytes",
               "warmup iters": "warmup_iters", "agg iters": "agg_iters"}

# The sniffers' patterns stay on one line: [ \t], never \s (in re.M, `^\s*` runs over the newlines after
# every line start: quadratic on a file of blank lines), digits are [0-9], runs are bounded.
_SNIFF_STRONG = re.compile(
    r"^[^\n#]{0,24}#[ \t]*(?:(?:nccl|rccl)-tests version |Collective test starting:|nThread [0-9]+ nGpus [0-9]+"
    r"|size[ \t]+count[ \t]+type[ \t]|out-of-place[ \t]+in-place)", re.M)
_SNIFF_SUMMARY = re.compile(r"^[^\n#]{0,24}#[ \t]*(?:Out of bounds values|Avg bus bandwidth)[ \t]*:", re.M)
_SNIFF_DEVICE = re.compile(r"^[^\n#]{0,24}#[ \t]*Rank[ \t]+[0-9]{1,9}[ \t]+(?:Group[ \t]+[0-9]{1,9}[ \t]+)?Pid[ \t]+[0-9]{1,12}"
                           r"[ \t]+on[ \t]+[^ \t\n]{1,512}[ \t]+device[ \t]", re.M)
_SNIFF_ROW = re.compile(
    r"^[ \t]*(?:[0-9]{1,9}:[ \t]+)?(?:\[[0-9]{1,9}\][ \t]*)?[0-9]{1,20}[ \t]+[0-9]{1,20}[ \t]+"
    r"(?:float|half|bfloat16|double|u?int(?:8|32|64)|char|int|fp8[A-Za-z0-9_]{0,16})"
    r"[ \t]+[^ \t\n]{1,64}[ \t]+-?[0-9]", re.M)


@dataclass(frozen=True)
class Device:
    rank: int
    group: int | None
    host: str
    pid: int
    device: int
    bus_id: str
    name: str
    run: int = 0


@dataclass(frozen=True)
class Row:
    size_bytes: int
    count: int
    type: str
    redop: str | None
    root: int | None
    oop_time_us: float | None
    oop_algbw_gbps: float | None
    oop_busbw_gbps: float | None
    oop_wrong: int | None
    oop_error: float | None
    ip_time_us: float | None
    ip_algbw_gbps: float | None
    ip_busbw_gbps: float | None
    ip_wrong: int | None
    ip_error: float | None
    run: int
    line_no: int


Failure = _failures.Failure  # {line_no, text, size_bytes, run, class, entry, severity}


@dataclass(frozen=True)
class WarningLine:
    line_no: int
    text: str


@dataclass(frozen=True)
class NcclTestsReport:
    source: str = SOURCE
    collective: str | None = None
    nccl_tests_version: str | None = None
    nccl_version: str | None = None
    nccl_headers_version: str | None = None
    nranks: int | None = None
    devices: tuple[Device, ...] = ()
    parameters: dict[str, Any] = field(default_factory=dict)
    rows: tuple[Row, ...] = ()
    avg_busbw_gbps: float | None = None
    peak_busbw_gbps: float | None = None
    out_of_bounds: int | None = None
    out_of_bounds_ok: bool | None = None
    runs: int = 1
    failures: tuple[Failure, ...] = ()
    warnings: tuple[WarningLine, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def unrecognised(self) -> tuple[Failure, ...]:
        """The failure lines no catalogue entry explains (their "class" is null): SYS004 reports them."""
        return _failures.unrecognised(self.failures)


@dataclass(frozen=True)
class _Layout:
    """Where the columns of a results row are: leading names, then the two halves' field names."""
    lead: tuple[str, ...]
    oop: tuple[str | None, ...]
    ip: tuple[str | None, ...]


def version_from_code(code: int) -> str:
    """NCCL_VERSION_CODE -> dotted version: 23102 -> "2.31.2" (>= 2.9), 2708 -> "2.7.8" (older)."""
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def collective_name(program: str) -> str:
    """'all_reduce_perf' / 'all_reduce_perf_mpi' / './build/sendrecv_perf' -> 'all_reduce' / 'sendrecv'."""
    name = program.rsplit("/", 1)[-1]
    for suffix in ("_perf_mpi", "_perf"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _strip_prefix(line: str) -> str:
    """The line without indentation, an srun task prefix or a leading MPI rank tag."""
    s = line.strip()
    if not s or not (s[0] == "[" or s[0].isdigit()):  # neither prefix can start here
        return s
    for _ in range(2):
        m = _SRUN_RE.match(s) or _LEAD_TAG_RE.match(s)
        if not m:
            break
        s = s[m.end():].strip()
    return s


def _num(tok: str) -> float | None:
    """A table cell as a float; 'N/A', nan and inf as None."""
    if tok.isascii() and tok.replace(".", "", 1).isdigit():  # the usual cell, which _NUM_RE matches
        v = float(tok)
        return v if v != math.inf else None  # 400 digits overflow
    if not _NUM_RE.match(tok):
        return None
    v = float(tok)
    return v if math.isfinite(v) else None


def _wrong(tok) -> bool:
    """Whether a plain decimal #wrong cell (str or bytes) counts wrong results: as `row` reads it, an
    int of its finite value above 0."""
    v = float(tok)
    return v != math.inf and int(v) > 0


def _cell_ok(tok: str) -> bool:
    """Whether a token can be a time/bandwidth/#wrong/error cell."""
    if tok.isascii():
        if tok.replace(".", "", 1).isdigit():
            return True
        if tok.isalpha():
            return tok.lower() in ("nan", "inf")
    return tok == "N/A" or bool(_NUM_RE.match(tok)) or tok.lower() in ("nan", "-nan", "inf", "-inf")


def _is_int(tok: str) -> bool:
    """_INT_RE.match, with the usual case first."""
    return (tok.isascii() and tok.isdigit()) or bool(_INT_RE.match(tok))


def _parse_params(s: str) -> dict[str, Any]:
    """'# nThread 1 nGpus 1 minBytes 8 ... step: 2(factor) warmup iters: 5 ...' -> dict of numbers."""
    out: dict[str, Any] = {}
    label: list[str] = []
    for tok in s.lstrip("#").split():
        m = re.match(r"^(-?[0-9]+)\((\w+)\)$", tok)
        if m and label:
            out["step_factor" if m.group(2) == "factor" else "step_bytes"] = int(m.group(1))
            label = []
            continue
        if _NUM_RE.match(tok) and label:
            name = " ".join(label).rstrip(":").strip()
            key = _PARAM_KEYS.get(name)
            if key is None:
                key = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
                key = re.sub(r"[^A-Za-z0-9]+", "_", key).strip("_").lower()
            out[key] = int(tok) if _INT_RE.match(tok) else _num(tok)
            label = []
            continue
        label.append(tok)
    return out


def _header_layout(tokens: list[str]) -> _Layout | None:
    """Column layout from the '#  size  count  type  redop  root  time ...' header tokens."""
    times = [i for i, t in enumerate(tokens) if t in ("time", "cputime")]
    if not times:
        return None
    lead = tuple(tokens[: times[0]])
    if not lead or lead[0] != "size":
        return None
    if len(times) >= 2:
        h1, h2 = tokens[times[0]: times[1]], tokens[times[1]:]
    else:
        h1 = tokens[times[0]:]
        h2 = h1
    oop = tuple(_HALF_NAMES.get(t) for t in h1)
    ip = tuple(_HALF_NAMES.get(t) for t in h2 if t != "timestamp")
    return _Layout(lead, oop, ip)


def _lead_ok(name: str, tok: str) -> bool:
    """Whether a token fits a leading column (size, count, type, redop, root)."""
    if name in ("size", "count", "root"):
        return _is_int(tok)
    if name in ("type", "redop"):
        return (tok.isascii() and tok.isalpha()) or bool(_WORD_RE.match(tok))
    return True


def _infer_layout(tokens: list[str]) -> _Layout | None:
    """Column layout of a row printed without a header in view (a fragment)."""
    if len(tokens) < 3 or not (_INT_RE.match(tokens[0]) and _INT_RE.match(tokens[1]) and _WORD_RE.match(tokens[2])):
        return None
    lead = ["size", "count", "type"]
    i = 3
    if i < len(tokens) and _WORD_RE.match(tokens[i]) and tokens[i] not in ("nan", "inf"):
        lead.append("redop")
        i += 1
    rest = len(tokens) - i
    if rest >= 1 and _INT_RE.match(tokens[i]) and (rest % 4 == 1 or rest < 4):
        lead.append("root")
        i += 1
    cells = tokens[i:]
    kinds = []
    for j in (3, 7):  # the 4th cell of each half: #wrong (an integer or N/A) or the old max error
        tok = cells[j] if j < len(cells) else "0"
        kinds.append("error" if ("e" in tok.lower() or "." in tok) and tok != "N/A" else "wrong")
    return _Layout(tuple(lead), ("time", "algbw", "busbw", kinds[0]), ("time", "algbw", "busbw", kinds[1]))


_PLAIN: dict = {}  # layout -> how a plain row of it reads (_plain_shape)
_WS_S = r"[ \t\r\x0b\x0c]*"  # what bytes.strip takes off a line (no newline is left in one)
_PLAIN_LAST: list = [None, None]
_PLAIN_WRONG = r"(N/A|[0-9]+\.?[0-9]*|\.[0-9]+)"  # a #wrong cell: a plain decimal
_PLAIN_CELL = r"(N/A|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)"  # the others, "0e+00" too (old builds)


def _plain_shape(layout: _Layout) -> tuple:
    """(regex of a plain row under `layout` or None, lead names, (index, name) of each half's named
    cells, indices of the #wrong cells). A plain row: ASCII, every column there, no tag, the lead
    columns as `_lead_ok` takes them and every cell a plain decimal or N/A."""
    if _PLAIN_LAST[0] is layout:
        return _PLAIN_LAST[1]
    shape = _PLAIN.get(layout)
    if shape is None:
        if len(_PLAIN) > 64:
            _PLAIN.clear()
        n, n_oop = len(layout.lead), len(layout.oop)
        parts = [r"(-?[0-9]+)" if name in ("size", "count", "root") else r"([A-Za-z][A-Za-z0-9_]*)"
                 if name in ("type", "redop") else r"(\S+)" for name in layout.lead]
        parts += [_PLAIN_WRONG if name == "wrong" else _PLAIN_CELL for name in layout.oop + layout.ip]
        usual = layout.lead[:3] == ("size", "count", "type")
        oop_at = [(n + i, name) for i, name in enumerate(layout.oop) if name is not None]
        ip_at = [(n + n_oop + i, name) for i, name in enumerate(layout.ip) if name is not None]
        parts_b = [p.replace(r"(\S+)", r"([!-~]+)") for p in parts]  # over printable ASCII: the same tokens
        wrong_at = [i for i, name in oop_at + ip_at if name == "wrong"]
        shape = _PLAIN[layout] = (re.compile(r"\s+".join(parts)) if usual else None, layout.lead, oop_at, ip_at,
                                  wrong_at, re.compile(r"[ \t]+".join(parts_b).encode()) if usual else None,
                                  _right_row_b(parts_b, wrong_at) if usual else None)
    _PLAIN_LAST[:] = [layout, shape]  # the same layout object row after row: no hashing
    return shape


def _right_row_b(parts_b: list[str], wrong_at: list[int]) -> re.Pattern:
    """A whole line (bytes) that `_counted` counts as a plain row with no wrong results: the plain row
    (indentation and trailing blanks as `strip` takes them), no "[" and no "NCCL" in it, a type that is
    not nan/inf, and every #wrong cell 0 or N/A (any other #wrong value is left to `_counted`)."""
    parts = []
    for i, part in enumerate(parts_b):
        if i in wrong_at:
            part = r"(?:0|N/A)"
        elif part == r"([A-Za-z][A-Za-z0-9_]*)":  # a word: the only cells besides the next that can hold "NCCL"
            part = r"(?![A-Za-z0-9_]*NCCL)" + part
        elif part == r"([!-~]+)":  # any token: the only cell that can hold "["
            part = r"(?![!-~]*(?:NCCL|\[))" + part
        parts.append(part)
    parts[2] = r"(?!(?i:nan|inf)[ \t])" + parts[2]
    body = re.sub(r"\((?!\?)", "(?:", r"[ \t]+".join(parts))  # no groups: only whether it matches
    return re.compile((_WS_S + r"(?=[0-9])" + body + _WS_S).encode())


def _plain_row(layout: _Layout, s: str) -> tuple | None:
    """The tokens of a plain row under `layout` (see _plain_shape), which `row` reads the same way by
    its column checks and regexes; None for any other line (`row` reads it)."""
    regex = _plain_shape(layout)[0]
    if regex is None or not s.isascii():
        return None
    m = regex.fullmatch(s)
    if m is None:
        return None
    tokens = m.groups()
    if tokens[2].lower() in ("nan", "inf"):  # a type that is a cell: `row` decides
        return None
    return tokens


def _plain_halves(layout: _Layout, tokens: tuple) -> tuple[dict, dict, dict]:
    """(lead, out-of-place, in-place) of a plain row's tokens."""
    _, lead_names, oop_at, ip_at, _, _, _ = _plain_shape(layout)
    halves = []
    for at in (oop_at, ip_at):
        half: dict[str, Any] = {}
        for i, name in at:
            tok = tokens[i]
            if name == "wrong":
                v = _num(tok)
                half[name] = None if v is None else int(v)
            else:
                half[name] = None if tok == "N/A" else _num(tok)
        halves.append(half)
    return dict(zip(lead_names, tokens)), halves[0], halves[1]


def _half(names: tuple[str | None, ...], cells: list[str]) -> dict[str, Any] | None:
    """One half (out-of-place or in-place) of a row by column name; None when cells are missing or bad."""
    if len(cells) < len(names):
        return None
    out: dict[str, Any] = {}
    for name, tok in zip(names, cells):
        if name is None:
            continue
        if not _cell_ok(tok):
            return None
        v = _num(tok)
        out[name] = (int(v) if v is not None else None) if name == "wrong" else v
    return out


class _Parser:
    """Line-by-line state: what the banner, device list, header, rows and summary said so far."""

    def __init__(self) -> None:
        self.collective: str | None = None
        self.collective_cmd: str | None = None
        self.collectives: dict[str, None] = {}  # distinct, in order (up to NAMES_CAP)
        self.tests_version: str | None = None
        self.libraries: dict[int, None] = {}  # distinct, in order (up to NAMES_CAP)
        self.headers: int | None = None
        self.nccl_line_version: str | None = None
        self.info_nranks: int | None = None
        self.devices: list[Device] = []
        self.parameters: dict[str, Any] = {}
        self.rows: list[Row] = []
        self.avgs: list[float | None] = []  # the first AVGS_SHOWN summaries' values
        self.avg_count = 0
        self.avgs_differ = False
        self.oob: int | None = None
        self.oob_ok: bool | None = None
        self.failures: list[Failure] = []
        self.warnings: list[WarningLine] = []
        self.notes: list[str] = []
        self.counts = {"version": 0, "starting": 0, "nthread": 0, "header": 0}
        self.run = 0  # run_index(), kept up to date by count()
        self.rows_dropped = 0  # results rows past ROW_CAP not kept (their size was already kept)
        self.kept_keys: set | None = None
        self.lists_dropped = self.foreign = 0  # lists past LIST_CAP; other programs' lines (parsers/_foreign.py)
        self.cut_run: int | None = None  # runs from this one on are not kept
        self.run_seen = -1  # the last run that had a row or a rank line
        self.rows_cut = 0  # results rows of runs not kept
        self.devices_dropped = 0  # rank lines not kept
        self.wrong_cut: list[int] = []  # [count, first line] of rows with wrong results in runs not kept
        self.banner = False
        self.layout: _Layout | None = None
        self.first_text: tuple[int, str] | None = None
        self.summary_line: tuple[int, str] | None = None
        # what the last line fed did, when a parser past the cut fed the same line again would do
        # nothing else (`_replay`): set by the summary lines' branches, read by ChunkReader
        self.op: tuple | None = None

    # -- runs -------------------------------------------------------------------------------
    def run_index(self) -> int:
        """0-based index of the run in progress: banners and results headers seen so far, minus one."""
        return self.run

    def count(self, kind: str) -> None:
        self.counts[kind] += 1
        self.run = max(0, max(self.counts.values()) - 1)

    # -- one line ---------------------------------------------------------------------------
    def feed(self, line_no: int, line: str, may_fail: bool = True) -> None:
        """One line, cleaned (clean_lines). `may_fail` False: the caller knows the line holds none of
        _FAIL_WORDS (the chunk engine finds them in bytes), so _FAIL_RE need not look."""
        if self.first_text is not None and (" NCCL INFO " in line or " NCCL TRACE " in line):
            self.info_line(line)  # the bulk of a log with NCCL_DEBUG=INFO: only two facts are read from it
            return
        s = _strip_prefix(line)
        if _foreign.skip(self, line_no, s, may_fail, _FAIL_RE):  # a blank line, a tqdm bar, a giant line
            return
        m = _NCCL_LOG_RE.search(s) if "NCCL " in s else None
        if m:
            if m.group(1) == "WARN":
                if len(self.warnings) < LIST_CAP:
                    self.warnings.append(WarningLine(line_no, s))
                else:
                    self.lists_dropped += 1
            if self.nccl_line_version is None:
                v = _NCCL_VERSION_RE.search(s)
                if v:
                    self.nccl_line_version = v.group(1)
            if self.info_nranks is None:
                n = _NRANKS_RE.search(s)
                if n:
                    self.info_nranks = int(n.group(1))
            return
        if s.startswith("NCCL version "):
            v = _NCCL_VERSION_RE.search(s)
            if v and self.nccl_line_version is None:
                self.nccl_line_version = v.group(1)
            if self.nccl_line_version is not None:
                self.op = _NOTHING
            return
        if (self.kept_keys is not None and s[:1].isdigit() and (self.cut_run is None or self.run < self.cut_run)
                and self.repeated_row(s)):  # a run not kept has no key kept
            return
        failed = may_fail and bool(_FAIL_RE.search(s))
        if s.startswith("#"):
            self.comment(line_no, s)
            if failed:
                self.failure(Failure(line_no, s, None, self.run_index()))
            return
        if self.row(line_no, s, failed):
            return
        if failed:
            self.failure(Failure(line_no, s, None, self.run_index()))
            return
        hit = _failures.recognise(s)  # a line of text the catalogue knows ("Invalid number of GPUs: ...")
        if hit is not None:
            e = hit.entry
            self.failure(Failure(line_no, s, None, self.run_index(), e.cls, e.id, e.severity))
            return
        m = _PERF_RE.search(s) if "_perf" in s else None
        if m and self.collective_cmd is None:
            self.collective_cmd = collective_name(m.group(1))

    def info_line(self, line: str) -> None:
        """An NCCL INFO/TRACE line (what `feed` does with it, without stripping its prefix or running a
        regex on it unless it can hold the NCCL version or an nranks the result still lacks)."""
        if self.nccl_line_version is None and "NCCL version" in line:
            v = _NCCL_VERSION_RE.search(line)
            if v:
                self.nccl_line_version = v.group(1)
        if self.info_nranks is None and "nranks " in line:
            n = _NRANKS_RE.search(line)
            if n:
                self.info_nranks = int(n.group(1))

    def comment(self, line_no: int, s: str) -> None:
        if s[1:].lstrip().startswith("Rank") and self.device(s):  # the most frequent: no other pattern fits
            return
        m = _TESTS_VERSION_RE.match(s)
        if m:
            self.op = _VERSION_OP
            self.count("version")
            self.banner = True
            if self.tests_version is None:
                self.tests_version = m.group(1)
            h, lib = _HEADERS_RE.search(s), _LIBRARY_RE.search(s)
            if h and self.headers is None:
                self.headers = int(h.group(1))
            if lib and len(self.libraries) < NAMES_CAP:
                self.libraries.setdefault(int(lib.group(1)))
            return
        m = _STARTING_RE.match(s)
        if m:
            self.op = _STARTING_OP
            self.count("starting")
            self.banner = True
            name = collective_name(m.group(1))
            if len(self.collectives) < NAMES_CAP:
                self.collectives.setdefault(name)
            if self.collective is None:
                self.collective = name
            return
        if _NTHREAD_RE.match(s):
            self.op = _NTHREAD_OP
            self.count("nthread")
            self.banner = True
            if not self.parameters:
                self.parameters = _parse_params(s)
            return
        if _USING_RE.match(s):
            self.op = _BANNER_OP
            self.banner = True
            return
        if self.device(s):
            return
        tokens = s.lstrip("#").split()
        if len(tokens) >= 3 and tokens[0] == "size" and tokens[1] == "count":
            self.count("header")
            layout = _header_layout(tokens)
            complete = tokens.count("time") + tokens.count("cputime") >= 2
            self.op = ("header", layout, complete)
            if layout is not None and (complete or self.layout is None):  # a cut header: only if nothing better
                self.layout = layout
            return
        m = _OOB_RE.match(s)
        if (m or _AVG_RE.match(s)) and self.summary_line is None:
            self.summary_line = (line_no, s)
        if m:
            n = int(m.group(1))
            word = (m.group(2) or "").upper()
            ok = True if word == "OK" else False if word == "FAILED" else n == 0
            self.op = ("oob", n, ok)
            self.oob = n + (self.oob or 0)  # several runs: the total, and OK only if every run said OK
            self.oob_ok = ok and self.oob_ok is not False
            return
        m = _AVG_RE.match(s)
        if m:
            v = _num(m.group(1))
            self.op = ("avg", v)
            self.avg_count += 1
            if self.avgs and v != self.avgs[0]:
                self.avgs_differ = True
            if len(self.avgs) < AVGS_SHOWN:
                self.avgs.append(v)
            return
        m = _REDUCED_RE.match(s)
        if m:
            self.parameters = {**self.parameters, "max_bytes_reduced_to": int(m.group(1))}
            self.notes.append(f"line {line_no}: maxBytes reduced to {m.group(1)} due to GPU memory limitation")
            return
        m = _ERROR_RE.match(s)
        if m:
            self.failure(Failure(line_no, s, None, self.run_index()))

    def device(self, s: str) -> bool:
        """A "#  Rank N Group G Pid P on HOST device D [BUSID] NAME" line; False for anything else."""
        m = _DEVICE_RE.match(s)
        if not m:
            return False
        self.banner = True
        if not self.keeps(self.run_index()) or len(self.devices) >= DEVICE_HARD_CAP:
            self.devices_dropped += 1
            self.op = _RANK_OP
            return True
        self.devices.append(Device(
            rank=int(m.group(1)), group=int(m.group(2)) if m.group(2) is not None else None, pid=int(m.group(3)),
            host=m.group(4), device=int(m.group(5)), bus_id=m.group(6).strip(), name=m.group(7).strip(),
            run=self.run_index()))
        return True

    def row(self, line_no: int, s: str, failed: bool = True) -> bool:
        """A results row (or a row cut short by a failure); False when the line is something else.
        `failed` False: _FAIL_RE is known not to match the line."""
        if not failed and self.layout is not None and "[" not in s:
            plain = _plain_row(self.layout, s)
            if plain is not None:
                if not self.keeps(self.run):  # counted: only its #wrong cells are read
                    return self.cut_row(line_no, any(plain[i] not in ("0", "N/A") and _wrong(plain[i])
                                                     for i in _plain_shape(self.layout)[4]))
                return self.add_row(line_no, *_plain_halves(self.layout, plain))
        first = s.split(None, 1)[0] if s else ""
        if "[" not in first and not _is_int(first) and not _cell_ok(first):
            return False  # its first token (no tag in it to take out) can start neither a row nor cells
        tokens = (_TAG_RE.sub(" ", s) if "[" in s else s).split()
        if len(tokens) >= 4 and all(_cell_ok(t) for t in tokens):
            # numbers only: the tail of a row whose start was cut (a real row has a type word)
            self.note(f"line {line_no}: partial results row skipped (no size/count/type columns)")
            return True
        if not tokens or not _is_int(tokens[0]):
            return False
        fail = _FAIL_RE.search(s) if failed else None
        if fail:  # "2097152  32768  float  none  -1 node0: Test CUDA failure common.cu:389 '...'"
            pre = _TAG_RE.sub(" ", s[: fail.start()]).split()
            size = int(pre[0]) if len(pre) >= 3 and _INT_RE.match(pre[0]) and _INT_RE.match(pre[1]) else None
            if size is None:
                return False
            text = s[fail.start():]
            host = re.search(r"(\S+:\s*)$", s[: fail.start()])
            if host and not _INT_RE.match(host.group(1).rstrip(": ")):
                text = host.group(1) + text
            self.failure(Failure(line_no, text.strip(), size, self.run_index()))
            return True
        layout = self.layout
        if layout is None or len(tokens) < len(layout.lead) or not all(
                _lead_ok(n, t) for n, t in zip(layout.lead, tokens)):
            layout = _infer_layout(tokens)
            if layout is None:
                return False
        lead = dict(zip(layout.lead, tokens))
        cells = tokens[len(layout.lead):]
        oop = _half(layout.oop, cells)
        if oop is None:
            return False
        ip = _half(layout.ip, cells[len(layout.oop):])
        if ip is None:
            self.note(f"line {line_no}: results row cut after the out-of-place columns")
            ip = {}
        return self.add_row(line_no, lead, oop, ip)

    def add_row(self, line_no: int, lead: dict, oop: dict, ip: dict) -> bool:
        """Keep a results row (or count it: a run not kept, a size kept already past ROW_CAP)."""
        if not self.keeps(self.run_index()):
            return self.cut_row(line_no, (oop.get("wrong") or 0) > 0 or (ip.get("wrong") or 0) > 0)
        if len(self.rows) >= ROW_CAP and not self.keep_beyond_cap(lead, line_no):
            self.rows_dropped += 1
            return True
        self.rows.append(Row(
            size_bytes=int(lead["size"]), count=int(lead["count"]), type=lead.get("type", ""),
            redop=lead.get("redop"), root=int(lead["root"]) if "root" in lead else None,
            oop_time_us=oop.get("time"), oop_algbw_gbps=oop.get("algbw"), oop_busbw_gbps=oop.get("busbw"),
            oop_wrong=oop.get("wrong"), oop_error=oop.get("error"),
            ip_time_us=ip.get("time"), ip_algbw_gbps=ip.get("algbw"), ip_busbw_gbps=ip.get("busbw"),
            ip_wrong=ip.get("wrong"), ip_error=ip.get("error"),
            run=self.run_index(), line_no=line_no))
        return True

    def cut_row(self, line_no: int, wrong: bool) -> bool:
        """A results row of a run not kept: counted (and its wrong results)."""
        self.rows_cut += 1
        if wrong:
            self.wrong_cut = [self.wrong_cut[0] + 1, self.wrong_cut[1]] if self.wrong_cut else [1, line_no]
        return True

    def keeps(self, run: int) -> bool:
        """Whether the rows and rank lines of `run` are kept: a run that starts once RUN_ROWS_CAP rows or
        DEVICE_CAP rank lines are kept is not, nor any after it."""
        if run > self.run_seen:
            self.run_seen = run
            if self.cut_run is None and (len(self.rows) >= RUN_ROWS_CAP or len(self.devices) >= DEVICE_CAP):
                self.cut_run = run
        return self.cut_run is None or run < self.cut_run

    def failure(self, f: Failure) -> None:
        """A failure line, up to LIST_CAP of them (the rest are counted)."""
        if len(self.failures) < LIST_CAP:
            self.failures.append(f)
        else:
            self.lists_dropped += 1

    def note(self, text: str) -> None:
        """A per-line note, up to LIST_CAP of them (the rest are counted)."""
        if len(self.notes) < LIST_CAP:
            self.notes.append(text)
        else:
            self.lists_dropped += 1

    def repeated_row(self, s: str) -> bool:
        """Past ROW_CAP: a plain results row (no tags, no failure text) whose size was already kept is
        counted without being read further, so a huge log's repeated rows cost one split each."""
        layout = self.layout
        tokens = s.split()
        if layout is None or len(tokens) != len(layout.lead) + len(layout.oop) + len(layout.ip) or "[" in s:
            return False
        lead = dict(zip(layout.lead, tokens))
        try:
            key = (self.run_index(), int(lead["size"]), lead.get("type", ""), lead.get("redop"),
                   int(lead["root"]) if "root" in lead else None)
        except (KeyError, ValueError):
            return False
        if key not in self.kept_keys:
            return False
        self.rows_dropped += 1
        return True

    def keep_beyond_cap(self, lead: dict, line_no: int) -> bool:
        """Past ROW_CAP rows, a row is kept only when its (run, size, type, redop, root) was not kept yet,
        so the sizes of every run stay and a huge interleaved log costs memory by distinct sizes, up to
        ROW_HARD_CAP rows; the others are counted (a note says how many)."""
        if self.kept_keys is None:
            self.kept_keys = {(r.run, r.size_bytes, r.type, r.redop, r.root) for r in self.rows}
        key = (self.run_index(), int(lead["size"]), lead.get("type", ""), lead.get("redop"),
               int(lead["root"]) if "root" in lead else None)
        if key in self.kept_keys or len(self.rows) >= ROW_HARD_CAP:
            return False
        self.kept_keys.add(key)
        return True

    # -- the report -------------------------------------------------------------------------
    def finish(self) -> NcclTestsReport:
        if not (self.banner or self.counts["header"] or self.rows or self.failures and any(
                f.size_bytes is not None for f in self.failures)):
            if self.first_text is None:
                raise ParseError("expected nccl-tests output (a '# nThread ...' banner, a results header or rows), "
                                 "found no text", 0)
            if self.summary_line is not None:
                line_no, s = self.summary_line
                raise ParseError("expected nccl-tests results (a banner, a results header or rows), found only the "
                                 f"summary lines ('{s[:60]}')", line_no)
            line_no, s = self.first_text
            raise ParseError("expected nccl-tests output (a '# nThread ...' banner, a '#  size  count  type ...' "
                             f"results header or a results row), found '{s[:60]}'", line_no)
        runs = max(1, *self.counts.values())
        ranks = {d.rank for d in self.devices if d.run == self.devices[0].run} if self.devices else set()
        nranks = len(ranks) if ranks else self.info_nranks
        busbws = [v for r in self.rows for v in (r.oop_busbw_gbps, r.ip_busbw_gbps) if v is not None]
        peak = max(busbws) if busbws else None
        notes = list(self.notes)
        if self.rows_dropped:
            notes.append(f"{len(self.rows) + self.rows_dropped} results rows: {self.rows_dropped} that repeat a "
                         f"size already kept are not kept past the first {ROW_CAP} (peak_busbw_gbps and the checks read the rows kept)")
        self.independent_run_notes(notes, runs, nranks, busbws)
        self.bound_notes(notes, runs)
        notes.extend(_foreign.notes(self))
        if self.lists_dropped:
            notes.append(f"{self.lists_dropped} further per-line notes, NCCL WARN and failure lines past the first "
                         f"{LIST_CAP} not kept")
        if len(self.collectives) > 1:
            notes.append("the file holds runs of several tests: " + ", ".join(self.collectives))
        if self.avg_count > 1 and (self.avgs_differ or len(set(self.avgs)) > 1):
            more = self.avg_count - len(self.avgs)
            notes.append(f"{self.avg_count} result summaries: Avg bus bandwidth "
                         + ", ".join("?" if a is None else f"{a:g}" for a in self.avgs)
                         + (f" and {more} more" if more else "") + " (avg_busbw_gbps is the first)")
        libraries = list(self.libraries)
        nccl_version = version_from_code(libraries[0]) if libraries else self.nccl_line_version
        if len(libraries) > 1:
            notes.append("runs used different NCCL libraries: "
                         + ", ".join(version_from_code(c) for c in libraries)
                         + " (nccl_version is the first)")
        return NcclTestsReport(
            collective=self.collective or self.collective_cmd,
            nccl_tests_version=self.tests_version,
            nccl_version=nccl_version,
            nccl_headers_version=version_from_code(self.headers) if self.headers else None,
            nranks=nranks,
            devices=tuple(self.devices),
            parameters=dict(self.parameters),
            rows=tuple(self.rows),
            avg_busbw_gbps=self.avgs[0] if self.avgs else None,
            peak_busbw_gbps=peak,
            out_of_bounds=self.oob,
            out_of_bounds_ok=self.oob_ok,
            runs=runs,
            failures=_failures.classify(self.failures),
            warnings=tuple(self.warnings),
            notes=tuple(notes),
        )

    def bound_notes(self, notes: list[str], runs: int) -> None:
        """What was counted and not kept to keep the result bounded (thousands of runs in one file)."""
        if self.cut_run is not None:
            notes.append(f"{runs - self.cut_run} runs (from run {self.cut_run + 1} of {runs}) not kept, to keep memory "
                         f"bounded: their {self.rows_cut} results rows and the rank lines are counted, not judged; the "
                         f"first {self.cut_run} runs are kept and judged run by run")
        if self.wrong_cut:
            notes.append(f"{self.wrong_cut[0]} results rows with wrong results (#wrong > 0) in runs not kept, the "
                         f"first at line {self.wrong_cut[1]}")
        if self.devices_dropped:
            notes.append(f"{self.devices_dropped} rank lines (\"# Rank N ... on HOST device ...\") not kept")

    def independent_run_notes(self, notes: list[str], runs: int, nranks: int | None, busbws: list[float]) -> None:
        """Signs that each process ran its own 1-rank test (nccl-tests built without MPI=1)."""
        rank0 = [d for d in self.devices if d.rank == 0]
        if self.devices and len(rank0) == len(self.devices) and max(len(rank0), runs) >= 2:
            n = max(len(rank0), runs)
            notes.append(f"{n} independent 1-rank runs: nccl-tests not built with MPI=1 "
                         "(each process lists itself as Rank 0)")
        algbws = [v for r in self.rows for v in (r.oop_algbw_gbps, r.ip_algbw_gbps) if v is not None]
        if busbws and all(v == 0 for v in busbws) and algbws and max(algbws) >= 1.0 and nranks in (None, 1):
            said = "NCCL reports nranks 1" if self.info_nranks == 1 else "1-rank communicators"
            notes.append(f"busbw is 0 in all {len(self.rows)} rows while algbw reaches {max(algbws):.2f} GB/s: "
                         f"{said}, so each process ran its own test (nccl-tests not built with MPI=1?)")
        by_run: dict[int, list[Row]] = {}
        for r in self.rows:
            by_run.setdefault(r.run, []).append(r)
        for rows in by_run.values():
            keys = [(r.size_bytes, r.type, r.redop, r.root) for r in rows]
            if len(set(keys)) < len(keys):
                notes.append(f"results rows repeat message sizes out of order ({len(set(keys))} distinct in "
                             f"{len(keys)} rows): output of several independent processes interleaved")
                break


_NOTHING = ("nothing",)
_VERSION_OP, _STARTING_OP, _NTHREAD_OP = ("count", "version"), ("count", "starting"), ("count", "nthread")
_BANNER_OP, _RANK_OP = ("banner",), ("rank",)


def _replay(p: _Parser, op: tuple) -> None:
    """What feeding a line again does to a parser past the cut (its first-seen facts are set already),
    from the `op` its first feed recorded."""
    kind = op[0]
    if kind == "count":
        p.count(op[1])
        p.banner = True
    elif kind == "header":
        p.count("header")
        if op[1] is not None and (op[2] or p.layout is None):
            p.layout = op[1]
    elif kind == "oob":
        p.oob = op[1] + (p.oob or 0)
        p.oob_ok = op[2] and p.oob_ok is not False
    elif kind == "avg":
        v = op[1]
        p.avg_count += 1
        if p.avgs and v != p.avgs[0]:
            p.avgs_differ = True
        if len(p.avgs) < AVGS_SHOWN:
            p.avgs.append(v)
    elif kind == "rank":
        p.banner = True
        p.devices_dropped += 1
    elif kind == "banner":
        p.banner = True


def _parse(lines: Iterable[str]) -> NcclTestsReport:
    p = _Parser()
    for line_no, line in enumerate(lines, 1):
        p.feed(line_no, line)
    return p.finish()


def parse(text: str) -> NcclTestsReport:
    """nccl-tests stdout -> NcclTestsReport; ParseError without a banner, results header or row."""
    return _parse(clean_lines(text))


def parse_lines(lines: Iterable[str]) -> NcclTestsReport:
    """Streaming form of parse for an iterable of raw lines."""
    return _parse(iter_clean_lines(lines))


# ---- the chunk engine: the same _Parser, fed only the lines that can change its result ---------------
#
# A big NCCL_DEBUG log is mostly "NCCL INFO" lines, of which this parser reads two facts (the NCCL
# version, nranks) and only until it has them. `digest(chunk)` is the state-free half, done with C-level
# passes over the chunk's bytes: it splits the chunk into lines and keeps (index, bytes) of each line
# that `_Parser.feed` could act on: every non-empty line that is not an INFO/TRACE line. While the
# parser lacks its first text, the NCCL version or nranks, `ChunkReader` adds the chunk's first
# INFO/TRACE line and its first INFO/TRACE line whose text holds an NCCL version, and one that holds
# an nranks (a later one cannot change what the first set).
# `ChunkReader.feed` decodes those lines and feeds them, with their line numbers, to the same _Parser
# the line path uses, so the result is `parse(text)`'s. An INFO/TRACE line is left out only when a
# printable ASCII character follows its last tag (_linescan.untagged keeps the others), so the line `feed`
# would see, stripped of trailing blanks, still holds the tag and is routed the same way.

_INFO_B, _TRACE_B = _linescan.INFO_TAG, _linescan.TRACE_TAG
_B_ANSI_RE = re.compile(ANSI_RE.pattern.encode())

Digest = tuple  # (lines in the chunk, [indices of the lines picked], [their bytes], {indices of those with a failure word})


def _normal(raw: bytes) -> bytes:
    """CRLF and lone CR to LF, ANSI codes out: what clean_lines does, on bytes (the patterns are ASCII,
    so the bytes of the cleaned text are the cleaned bytes)."""
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"\x1b" in raw:
        raw = _B_ANSI_RE.sub(b"", raw)
    return raw


def _has_tag(line: bytes) -> bool:
    return _INFO_B in line or _TRACE_B in line


def _line_ends(lines: list[bytes]) -> list[int]:
    """Where each line of a chunk ends (the offset of its newline): bisect_right(ends, pos) is the
    index of the line holding the byte at pos."""
    return list(map(operator.add, itertools.accumulate(map(len, lines)), range(len(lines))))


def _first_info_fact(c: bytes, lines: list[bytes], mark: bytes, regex: re.Pattern) -> Optional[int]:
    """Index of the chunk's first INFO/TRACE line whose text `regex` finds something in."""
    pos = c.find(mark)
    while pos >= 0:
        i = c.count(b"\n", 0, pos)
        line = lines[i]
        if _has_tag(line) and regex.search(line.decode("utf-8", "replace").rstrip()):
            return i
        nl = c.find(b"\n", pos)
        if nl < 0:
            return None
        pos = c.find(mark, nl + 1)
    return None


def _fail_lines(keep: list[int], picked) -> set[int]:
    """Indices (in the chunk) of the picked lines that hold one of _FAIL_WORDS (found in bytes: the
    words are ASCII), searched in the picked lines only."""
    blob = b"\n".join(picked)
    present = [w for w in _FAIL_WORDS if w in blob]
    if not present:
        return set()
    ends = _line_ends(list(picked))
    found = set()
    for w in present:
        pos = blob.find(w)
        while pos >= 0:
            found.add(keep[bisect.bisect_right(ends, pos)])
            pos = blob.find(w, pos + 1)
    return found


def _lines_of(raw: bytes) -> tuple[bytes, list[bytes]]:
    c = _normal(raw)
    lines = c.split(b"\n")
    if c.endswith(b"\n"):
        lines.pop()
    return c, lines


def digest(raw: bytes) -> Digest:
    """The state-free half of reading one chunk of whole lines (see above): (its line count, the
    indices of the lines the parser could act on, their bytes, the indices of those that may hold a
    failure mark). The lines are picked in one pass (topodiag/parsers/_linescan.py `untagged`: compiled,
    or C-level map/compress passes), not a Python loop; the INFO/TRACE lines that hold facts are added
    by `ChunkReader` while the parser lacks them."""
    n, keep, picked = _linescan.untagged(_normal(raw))
    return n, keep, picked, _fail_lines(keep, picked)


def _fact_lines(raw: bytes) -> tuple[list[int], list[bytes]]:
    """The chunk's first INFO/TRACE line (it may be the file's first text), its first INFO/TRACE line
    whose text holds an NCCL version and its first that holds an nranks: the parser reads them while it
    lacks those (a later one cannot change what the first set)."""
    c, lines = _lines_of(raw)
    found = sorted({i for i in (_first_info(lines), _first_info_fact(c, lines, b"NCCL version", _NCCL_VERSION_RE),
                                _first_info_fact(c, lines, b"nranks ", _NRANKS_RE)) if i is not None})
    return found, [lines[i] for i in found]


def _first_info(lines: list[bytes]) -> Optional[int]:
    for i, line in enumerate(lines):
        if _has_tag(line):
            return i
    return None


# Past the cut (runs not kept: every run from then on is only counted), the lines of a big log are
# mostly results rows and rank lines whose only effect is a count. `_counted` settles those in bytes,
# for a line with no failure word and no "NCCL": a plain results row of the current layout (the
# layout's row pattern over printable ASCII with tab/space separators) is counted as `row` counts it;
# an ASCII rank line (_DEVICE_RE over bytes; none of the separators \x1c-\x1f that text patterns take
# for blanks) is counted and "# Using devices" sets `banner`, as `comment` does; a bare "#", the lines
# around a results header, and a line whose first character can start neither a row, a launcher
# prefix nor a cell (and holds no "_perf") do nothing in `feed` either. Any other line goes to `feed`.
_SEP_B = re.compile(rb"[\x1c-\x1f]")  # blanks to str.split and re's \s over text, not over bytes
_HINT_B = re.compile(_failures.HINT_RE.pattern.encode())  # a word of a catalogued failure line
_SRUN_B = re.compile(_SRUN_RE.pattern.encode())
_DEVICE_B = re.compile(_DEVICE_RE.pattern.encode())
_USING_B = re.compile(_USING_RE.pattern.encode())
# the lines around a results header that say nothing to the parser: "#   out-of-place   in-place" above
# it, "#  (B)  (elements) ... (us)  (GB/s)" under it
_UNITS_B = re.compile(rb"#\s*(?:\(B\)|out-of-place)\s")


# The same decisions over whole lines, for a chunk's lines at once (`_sieve`: one C-level map of a
# regex's fullmatch over a list of lines): each pattern takes only lines `_counted` settles the same way
# with the same effect, and leaves the rest to it. In one pass: a bare "#" and the lines around a
# results header (no effect), rank lines (banner, devices_dropped), "# Using devices" (banner). Rows of
# the layout in force: _plain_shape's row pattern for it (`_right_row_b`), region by region between
# the lines that may change the layout (a results header holds "count"). (Lines of text whose first
# character can start neither a row, a launcher prefix nor a cell are left to `_counted` and the memo:
# a pattern for them, with its look-aheads for "NCCL" and "_perf", cost more than it saved.)
_ASCII_S = r"(?!.*NCCL)(?=[\x00-\x1b\x20-\x7f]*\Z)"  # no "NCCL", ASCII, none of \x1c-\x1f (as `_counted` asks)
_QUIET_B = re.compile((_WS_S + r"#(?:" + _WS_S + r"|\s*(?:\(B\)|out-of-place)\s+\S.*)").encode())
# (the checks that read the whole line come after a literal start that few lines have, and that holds
# no "NCCL" and nothing but ASCII blanks and letters: a line that fails early costs little)
assert _DEVICE_RE.pattern.startswith(r"^#\s*Rank")
_RANK_B = re.compile((_WS_S + r"#\s*Rank" + _ASCII_S + _DEVICE_RE.pattern[len(r"^#\s*Rank"):]).encode())
_USING_LINE_B = re.compile((_WS_S + r"#\s*Using devices\b" + _ASCII_S + r".*").encode())
_SETTLED_B = re.compile(b"|".join(b"(?:" + r.pattern + b")" for r in (_QUIET_B, _RANK_B, _USING_LINE_B)))


MEMO_CAP = 4096  # distinct lines whose effect is remembered past the cut
_BULK_MIN = 64  # lines a chunk past the cut holds before it is sieved (fewer: one by one)


def _sieve(regex: re.Pattern, at: list[int], lines: list[bytes]) -> tuple[list[int], list[bytes], list[bytes]]:
    """(indices, lines) of the lines `regex` does not fullmatch, and the lines it does."""
    hit = list(map(regex.fullmatch, lines))
    if not any(hit):
        return at, lines, []
    miss = list(map(operator.not_, hit))
    return list(itertools.compress(at, miss)), list(itertools.compress(lines, miss)), list(itertools.compress(lines, hit))


_SETTLED, _NO_EFFECT = 1, 2


def _counted(p: _Parser, line: bytes, line_no: int) -> int:
    """Whether `line` (of a run not kept) was a rank line or a plain results row, now counted (_SETTLED),
    or a line that does nothing whatever the parser's state (_NO_EFFECT); 0 (False): `feed` reads it."""
    st = line.strip()
    if st[:1].isdigit():  # an srun prefix ("0: "), taken as _strip_prefix takes it, at most twice
        for _ in range(2):
            m = _SRUN_B.match(st)
            if m is None:
                break
            st = st[m.end():].strip()
    first = st[:1]
    if first == b"#":
        if st == b"#" or _UNITS_B.match(st):
            return _NO_EFFECT
        if b"NCCL" in st or not st.isascii() or _SEP_B.search(st):  # bytes and text patterns differ there
            return False
        if _DEVICE_B.match(st):
            p.banner = True
            p.devices_dropped += 1
            return True
        if _USING_B.match(st):
            p.banner = True
            return True
        return False
    if first.isdigit():
        regex = _plain_shape(p.layout)[5] if p.layout is not None else None
        m = regex.fullmatch(st) if regex is not None else None
        if m is None or b"[" in st or b"NCCL" in st or m.group(3).lower() in (b"nan", b"inf"):
            return False
        p.cut_row(line_no, any(m.group(i + 1) not in (b"0", b"N/A") and _wrong(m.group(i + 1))
                               for i in _plain_shape(p.layout)[4]))
        return True
    # a line whose first token can be neither a row's size, a launcher prefix nor a cell: nothing to do
    if not first or not 32 < first[0] < 127 or first in b"0123456789+." or b"_perf" in st or b"NCCL" in st:
        return False
    if _HINT_B.search(st):  # may be a failure line the catalogue knows: `feed` looks
        return False
    second = st[1:2]
    if first == b"[" or first == b"-":
        return 0 if second.isdigit() or second == b"." or st[:4].lower() in (b"-nan", b"-inf") else _NO_EFFECT
    return 0 if st[:3].lower() in (b"nan", b"inf", b"n/a") else _NO_EFFECT


class ChunkReader:
    """Chunks of whole lines in order (`feed(chunk, digest=None)`), then `result()`. A chunk may end
    mid-line (a giant line cut by the chunker): the rest of it waits for the next chunk."""

    def __init__(self) -> None:
        self.p = _Parser()
        self.n = 0
        self.carry = b""
        self.memo: dict[bytes, tuple] = {}  # past the cut: a line -> its effect (see `_each`)

    def feed(self, chunk: bytes, dg: Optional[Digest] = None) -> None:
        if self.carry or not chunk.endswith(b"\n"):
            chunk, dg = self.carry + chunk, None
            end = len(chunk) - 1 if chunk.endswith(b"\r") else len(chunk)  # a CR may pair with the next LF
            cut = max(chunk.rfind(b"\n", 0, end), chunk.rfind(b"\r", 0, end)) + 1
            chunk, self.carry = chunk[:cut], chunk[cut:]
            if not chunk:
                return
        self._lines(chunk, digest(chunk) if dg is None else dg)

    def _lines(self, chunk: bytes, dg: Digest) -> None:
        p = self.p
        n, keep, picked, fails = dg
        if p.first_text is None or p.nccl_line_version is None or p.info_nranks is None:
            more, lines = _fact_lines(chunk)  # INFO/TRACE lines the parser may still read
            new = set(more) - set(keep)
            if new:
                merged = dict(zip(more, lines))
                merged.update(zip(keep, picked))
                keep = sorted(merged)
                picked = [merged[i] for i in keep]
                fails = fails | new  # feed looks for failure marks itself in these
        base = self.n + 1
        if p.cut_run is not None and len(keep) > _BULK_MIN:
            self._past_the_cut(base, keep, picked, fails)
        else:
            self._each(base, keep, picked, fails)
        self.n += n

    def _each(self, base: int, keep, picked, fails) -> None:
        """Lines one by one; past the cut, a line fed before whose effect was recorded (`_Parser.op`:
        the banner, header and summary lines a cluster's runs repeat) is replayed without being read
        again (`_replay`), and `_counted` settles most of the others."""
        p = self.p
        feed = p.feed
        memo = self.memo
        for i, line in zip(keep, picked):
            if p.cut_run is None or i in fails:
                feed(base + i, line.decode("utf-8", "replace").rstrip(), i in fails)
                continue
            op = memo.get(line)
            if op is not None:
                _replay(p, op)
                continue
            settled = _counted(p, line, base + i)  # the bulk past the cut
            if settled:
                if settled == _NO_EFFECT:
                    _chunks.bounded_put(memo, line, _NOTHING, MEMO_CAP)
                continue
            p.op = None
            feed(base + i, line.decode("utf-8", "replace").rstrip(), False)
            if p.op is not None:
                _chunks.bounded_put(memo, line, p.op, MEMO_CAP)

    def _past_the_cut(self, base: int, keep: list[int], picked, fails: set[int]) -> None:
        """A chunk's lines past the cut: what `_each` does, with the lines of no effect, the rank lines
        and the plain rows of the layout in force settled in bulk (`_sieve`); the rest, in order, by
        `_each`. Lines that may hold a failure mark go to `_each` (they are never sieved)."""
        p = self.p
        at, lines = list(keep), list(picked)
        held: list[tuple[int, bytes]] = []
        if fails:
            quiet = list(map(fails.__contains__, at))
            held = list(zip(itertools.compress(at, quiet), itertools.compress(lines, quiet)))
            loud = list(map(operator.not_, quiet))
            at, lines = list(itertools.compress(at, loud)), list(itertools.compress(lines, loud))
        at, lines, settled = _sieve(_SETTLED_B, at, lines)  # one pass; then which, over those only
        if settled:  # the three kinds exclude each other: the rank lines are the others (their pattern costs most)
            n_using = sum(map(bool, map(_USING_LINE_B.fullmatch, settled)))
            n_rank = len(settled) - n_using - sum(map(bool, map(_QUIET_B.fullmatch, settled)))
            p.devices_dropped += n_rank
            if n_rank or n_using:
                p.banner = True
        if held:  # back in order, never sieved
            merged = sorted(list(zip(at, lines)) + held)
            at, lines = [i for i, _ in merged], [b for _, b in merged]
        breaks = list(itertools.compress(range(len(lines)), map(operator.contains, lines, itertools.repeat(b"count"))))
        if fails:
            breaks = sorted(set(breaks) | {k for k, i in enumerate(at) if i in fails})
        # Regions of lines under one layout: a break ends one unless it is a line fed before (not one
        # that may hold a failure mark) whose recorded effect leaves the layout in force as it is.
        memo = self.memo
        start = 0
        for b in breaks:
            op = memo.get(lines[b]) if at[b] not in fails else None
            if op is not None and (op[0] != "header" or op[1] is None or not (op[2] or p.layout is None)
                                   or op[1] == p.layout):
                continue
            self._region(base, at[start:b], lines[start:b], fails)
            self._each(base, at[b:b + 1], lines[b:b + 1], fails)
            start = b + 1
        self._region(base, at[start:], lines[start:], fails)

    def _region(self, base: int, at: list[int], lines: list[bytes], fails: set[int]) -> None:
        """Lines under one layout: its plain rows counted at once, the others one by one in order."""
        if not lines:
            return
        p = self.p
        right = _plain_shape(p.layout)[6] if p.layout is not None else None
        if right is not None:
            at, lines, rows = _sieve(right, at, lines)
            p.rows_cut += len(rows)
        self._each(base, at, lines, fails)

    def result(self) -> NcclTestsReport:
        """The report (ParseError as `parse` raises it); call once."""
        if self.carry:
            self._lines(self.carry, digest(self.carry))
            self.carry = b""
        return self.p.finish()


def parse_chunks(chunks: Iterable) -> NcclTestsReport:
    """Chunks of whole lines, in order (bytes, or (bytes, digest or None) pairs) -> the report."""
    r = ChunkReader()
    for item in chunks:
        if isinstance(item, tuple):
            r.feed(item[0], item[1])
        else:
            r.feed(item)
    return r.result()


def iter_chunks(handle: BinaryIO) -> Iterator[bytes]:
    """Chunks of whole lines of about CHUNK bytes from a file opened "rb" (topodiag/parsers/_chunks.py)."""
    return _chunks.iter_chunks(handle, CHUNK)


def parse_binary(handle: BinaryIO) -> NcclTestsReport:
    """nccl-tests output from a file opened in binary mode, read a chunk at a time; the result is
    `parse(data.decode("utf-8", "replace"))`."""
    return parse_chunks(iter_chunks(handle))


def sniff(text: str) -> float:
    """0.95 banner or results header, 0.9 summary lines (0.75 beside NCCL INFO/WARN lines: the tail of an
    NCCL_DEBUG log, which this parser refuses without a banner, header or rows), 0.7 bare rows, 0.5 a
    device list alone."""
    try:
        if _SNIFF_STRONG.search(text):
            return 0.95
        rows = _SNIFF_ROW.findall(text, 0, 65536)
        if _SNIFF_SUMMARY.search(text):
            return 0.75 if len(rows) < 2 and ("NCCL INFO" in text or "NCCL WARN" in text) else 0.9
        if len(rows) >= 2:
            return 0.7
        if _SNIFF_DEVICE.search(text):  # a device list alone: often the head of an NCCL_DEBUG log excerpt
            return 0.5
    except Exception:  # pragma: no cover - regex search on str does not raise
        return 0.0
    return 0.0
