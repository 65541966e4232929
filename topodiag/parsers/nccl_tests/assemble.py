"""Lines -> records: the reader's state over the lines of one input (what the banner, device list,
header, rows and summary said so far), fed one cleaned line at a time by the line path (`parse`) and
by the chunk engine (stream.py). Kept runs keep their rank lines and rows; past the cut (runs only
counted) a line's effect is recorded in `Parser.op` so that stream.py can replay it (`replay`).
The report and its notes are made from this state by validate.py."""

from __future__ import annotations

from typing import Any

from .. import _foreign
from .. import nccl_tests_failures as _failures
from ..base import note
from . import validate as _validate
from .read import (_AVG_RE, _DEVICE_RE, _ERROR_RE, _FAIL_RE, _HEADERS_RE, _HOST_TAIL_RE, _INT_RE, _LIBRARY_RE,
                   _NCCL_LOG_RE, _NCCL_VERSION_RE, _NRANKS_RE, _NTHREAD_RE, _OOB_RE, _PERF_RE, _REDUCED_RE,
                   _STARTING_RE, _TAG_RE, _TESTS_VERSION_RE, _USING_RE, _cell_ok, _half, _header_layout, _infer_layout,
                   _is_int, _lead_ok, _num, _parse_params, _plain_halves, _plain_row, _plain_shape, _strip_prefix,
                   _wrong, collective_name)
from .records import Device, Failure, Layout, Limits, NcclTestsReport, Row, WarningLine

# What a line fed did, when feeding the same line again past the cut would do only this (`replay`).
NOTHING = ("nothing",)
_VERSION_OP, _STARTING_OP, _NTHREAD_OP = ("count", "version"), ("count", "starting"), ("count", "nthread")
_BANNER_OP, _RANK_OP = ("banner",), ("rank",)
# a line only counted in lists_dropped (its list full): a note, or a failure line (also in failures_total)
_DROPPED_OP, _DROPPED_FAILURE_OP = ("dropped", 0), ("dropped", 1)
_NOT_ROW = ("not a row",)  # set by `row` for `text_line` (never left in `op`): no state makes the line a row
# The first character after "#" and blanks of a banner line ("nccl-tests version", "rccl-tests version",
# "nThread", "Collective test starting", "Using devices"), of a results header ("size", or "#" again:
# the header's tokens are read after every leading "#"), of a summary ("Out of bounds", "Avg bus").
_BANNER_FIRST, _HEADER_FIRST, _SUMMARY_FIRST = frozenset("nrCU"), frozenset("s#"), frozenset("OA")


class Parser:
    """Line-by-line state: what the banner, device list, header, rows and summary said so far."""

    def __init__(self, lim: Limits) -> None:
        self.lim = lim
        self.collective: str | None = None
        self.collective_cmd: str | None = None
        self.collectives: dict[str, None] = {}  # distinct, in order (up to names_cap)
        self.tests_version: str | None = None
        self.libraries: dict[int, None] = {}  # distinct, in order (up to names_cap)
        self.headers: int | None = None
        self.nccl_line_version: str | None = None
        self.info_nranks: int | None = None
        self.devices: list[Device] = []
        self.parameters: dict[str, Any] = {}
        self.rows: list[Row] = []
        self.avgs: list[float | None] = []  # the first avgs_shown summaries' values
        self.avg_count = 0
        self.avgs_differ = False
        self.oob: int | None = None
        self.oob_ok: bool | None = None
        self.failures: list[Failure] = []
        self.failures_total = 0  # failure lines but the "Out of bounds ... FAILED" summaries, kept or not
        self.warnings: list[WarningLine] = []
        self.notes: list[str] = []
        self.counts = {"version": 0, "starting": 0, "nthread": 0, "header": 0}
        self.run = 0  # run_index(), kept up to date by count()
        self.rows_dropped = 0  # results rows past row_cap not kept (their size was already kept)
        self.kept_keys: set | None = None
        self.lists_dropped = self.foreign = 0  # lists past list_cap; other programs' lines (parsers/_foreign.py)
        self.cut_run: int | None = None  # runs from this one on are not kept
        self.run_seen = -1  # the last run that had a row or a rank line
        self.rows_cut = 0  # results rows of runs not kept
        self.devices_dropped = 0  # rank lines not kept
        self.wrong_cut: list[int] = []  # [count, first line] of rows with wrong results in runs not kept
        self.banner = False
        self.layout: Layout | None = None
        self.first_text: tuple[int, str] | None = None
        self.summary_line: tuple[int, str] | None = None
        # what the last line fed did, when a parser past the cut fed the same line again would do
        # nothing else (`replay`): set by the summary lines' branches, read by ChunkReader
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
        if "NCCL " in s and self.nccl_line(line_no, s):
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
        if not self.row(line_no, s, failed):
            self.text_line(line_no, s, failed)

    def nccl_line(self, line_no: int, s: str) -> bool:
        """An NCCL INFO/WARN/TRACE line (a WARN line is kept) or an "NCCL version" line; False for
        any other line."""
        m = _NCCL_LOG_RE.search(s)
        if m:
            if m.group(1) == "WARN":
                self.warning(WarningLine(line_no, s))
            if self.nccl_line_version is None or self.info_nranks is None:
                self.info_line(s)
            return True
        if not s.startswith("NCCL version "):
            return False
        v = _NCCL_VERSION_RE.search(s)
        if v and self.nccl_line_version is None:
            self.nccl_line_version = v.group(1)
        if self.nccl_line_version is not None:
            self.op = NOTHING
        return True

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

    def text_line(self, line_no: int, s: str, failed: bool) -> None:
        """A line that is neither a comment nor a results row: a failure line (marked, or one the
        catalogue knows: "Invalid number of GPUs: ..."), or an echoed command line naming the test.
        Where `row` said no state could make it a row (`op` _NOT_ROW), what it did is recorded for
        `replay` when it was nothing or a count in `lists_dropped` (the failure list full)."""
        free = self.op is _NOT_ROW
        self.op = None
        if failed:
            self.failure(Failure(line_no, s, None, self.run_index()))
            return
        hit = _failures.recognise(s)
        if hit is not None:
            e = hit.entry
            full = len(self.failures) >= self.lim.list_cap
            self.failure(Failure(line_no, s, None, self.run_index(), e.cls, e.id, e.severity))
            if free and full:
                self.op = _DROPPED_FAILURE_OP if "Out of bounds" not in s else _DROPPED_OP
            return
        m = _PERF_RE.search(s) if "_perf" in s else None
        if m and self.collective_cmd is None:
            self.collective_cmd = collective_name(m.group(1))
        elif free:
            self.op = NOTHING

    # -- comment lines ----------------------------------------------------------------------
    def comment(self, line_no: int, s: str) -> None:
        """A line that starts with "#". Its patterns exclude each other by the word after the "#" (the
        regexes' blanks after "#" are what str.lstrip skips), so each is tried only where that word fits."""
        head = s[1:].lstrip()
        if head.startswith("Rank") and self.device(s):  # the most frequent
            return
        first = head[:1]
        if ((first in _BANNER_FIRST and self.banner_line(s)) or (first in _HEADER_FIRST and self.header_line(s))
                or (first in _SUMMARY_FIRST and self.summary(line_no, s))):
            return
        m = _REDUCED_RE.match(s)
        if m:
            self.parameters = {**self.parameters, "max_bytes_reduced_to": int(m.group(1))}
            self.notes.append(note("nccl_tests", "max-bytes-reduced", line=line_no, max_bytes=m.group(1)))
            return
        if _ERROR_RE.match(s):
            self.failure(Failure(line_no, s, None, self.run_index()))

    def banner_line(self, s: str) -> bool:
        """A line of the banner: the version, "Collective test starting", "nThread ...", "Using devices"."""
        m = _TESTS_VERSION_RE.match(s)
        if m:
            self.version_line(m.group(1), s)
            return True
        m = _STARTING_RE.match(s)
        if m:
            self.starting_line(collective_name(m.group(1)))
            return True
        if _NTHREAD_RE.match(s):
            self.op = _NTHREAD_OP
            self.count("nthread")
            self.banner = True
            if not self.parameters:
                self.parameters = _parse_params(s)
            return True
        if _USING_RE.match(s):
            self.op = _BANNER_OP
            self.banner = True
            return True
        return False

    def version_line(self, version: str, s: str) -> None:
        """'# nccl-tests version 2.20.0 (b4d5bee) nccl-headers=23102 nccl-library=23102'."""
        self.op = _VERSION_OP
        self.count("version")
        self.banner = True
        if self.tests_version is None:
            self.tests_version = version
        h, lib = _HEADERS_RE.search(s), _LIBRARY_RE.search(s)
        if h and self.headers is None:
            self.headers = int(h.group(1))
        if lib and len(self.libraries) < self.lim.names_cap:
            self.libraries.setdefault(int(lib.group(1)))

    def starting_line(self, name: str) -> None:
        """'# Collective test starting: all_reduce_perf' (the collective's name given)."""
        self.op = _STARTING_OP
        self.count("starting")
        self.banner = True
        if len(self.collectives) < self.lim.names_cap:
            self.collectives.setdefault(name)
        if self.collective is None:
            self.collective = name

    def header_line(self, s: str) -> bool:
        """A results header ('#  size  count  type  redop  root  time ...'): a run, and its layout."""
        tokens = s.lstrip("#").split()
        if not (len(tokens) >= 3 and tokens[0] == "size" and tokens[1] == "count"):
            return False
        complete = tokens.count("time") + tokens.count("cputime") >= 2  # a cut header: only if nothing better
        self.op = ("header", _header_layout(tokens), complete)
        replay(self, self.op)
        return True

    def summary(self, line_no: int, s: str) -> bool:
        """'# Out of bounds values : 0 OK' or '# Avg bus bandwidth : 0.6575'; False for other lines."""
        m = _OOB_RE.match(s)
        avg = None if m else _AVG_RE.match(s)
        if m is None and avg is None:
            return False
        if self.summary_line is None:
            self.summary_line = (line_no, s)
        if m:
            n = int(m.group(1))
            word = (m.group(2) or "").upper()
            self.op = ("oob", n, True if word == "OK" else False if word == "FAILED" else n == 0)
        else:
            self.op = ("avg", _num(avg.group(1)))
        replay(self, self.op)  # several runs: the total out of bounds, OK only if every run said OK
        return True

    def device(self, s: str) -> bool:
        """A "#  Rank N Group G Pid P on HOST device D [BUSID] NAME" line; False for anything else."""
        m = _DEVICE_RE.match(s)
        if not m:
            return False
        self.banner = True
        if not self.keeps(self.run_index()) or len(self.devices) >= self.lim.device_hard_cap:
            self.devices_dropped += 1
            self.op = _RANK_OP
            return True
        self.devices.append(Device(
            rank=int(m.group(1)), group=int(m.group(2)) if m.group(2) is not None else None, pid=int(m.group(3)),
            host=m.group(4), device=int(m.group(5)), bus_id=m.group(6).strip(), model=m.group(7).strip(),
            run=self.run_index()))
        return True

    # -- results rows -----------------------------------------------------------------------
    def row(self, line_no: int, s: str, failed: bool = True) -> bool:
        """A results row (or a row cut short by a failure); False when the line is something else.
        `failed` False: _FAIL_RE is known not to match the line."""
        if not failed and self.layout is not None and "[" not in s:
            plain = _plain_row(self.layout, s)  # read.py: the usual row, read by one regex
            if plain is not None and not self.keeps(self.run):  # counted: only its #wrong cells are read
                return self.cut_row(line_no, any(plain[i] not in ("0", "N/A") and _wrong(plain[i])
                                                 for i in _plain_shape(self.layout)[4]))
            if plain is not None:
                return self.add_row(line_no, *_plain_halves(self.layout, plain))
        first = s.split(None, 1)[0] if s else ""
        if "[" not in first and not _is_int(first) and not _cell_ok(first):
            self.op = _NOT_ROW
            return False  # its first token (no tag in it to take out) can start neither a row nor cells
        tokens = (_TAG_RE.sub(" ", s) if "[" in s else s).split()
        if len(tokens) >= 4 and all(_cell_ok(t) for t in tokens):
            # numbers only: the tail of a row whose start was cut (a real row has a type word; its type
            # cell, nan or inf, is none that the plain row's regex takes: no layout makes it a row)
            full = len(self.notes) >= self.lim.list_cap
            self.note(note("nccl_tests", "partial-row", line=line_no))
            self.op = _DROPPED_OP if full else None
            return True
        if not tokens or not _is_int(tokens[0]):
            self.op = _NOT_ROW
            return False
        fail = _FAIL_RE.search(s) if failed else None
        if fail:
            return self.failed_row(line_no, s, fail.start())
        return self.table_row(line_no, tokens)

    def failed_row(self, line_no: int, s: str, at: int) -> bool:
        """A row cut short by a failure mark at `at`:
        "2097152  32768  float  none  -1 node0: Test CUDA failure common.cu:389 '...'"."""
        pre = _TAG_RE.sub(" ", s[:at]).split()
        size = int(pre[0]) if len(pre) >= 3 and _INT_RE.match(pre[0]) and _INT_RE.match(pre[1]) else None
        if size is None:
            return False
        text = s[at:]
        host = _HOST_TAIL_RE.search(s[:at])
        if host and not _INT_RE.match(host.group(1).rstrip(": ")):
            text = host.group(1) + text
        self.failure(Failure(line_no, text.strip(), size, self.run_index()))
        return True

    def table_row(self, line_no: int, tokens: list[str]) -> bool:
        """A row read by its columns (the header's layout, else one inferred from the row)."""
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
            self.note(note("nccl_tests", "row-cut-after-oop", line=line_no))
            ip = {}
        return self.add_row(line_no, lead, oop, ip)

    def add_row(self, line_no: int, lead: dict, oop: dict, ip: dict) -> bool:
        """Keep a results row (or count it: a run not kept, a size kept already past row_cap)."""
        if not self.keeps(self.run_index()):
            return self.cut_row(line_no, (oop.get("wrong") or 0) > 0 or (ip.get("wrong") or 0) > 0)
        if len(self.rows) >= self.lim.row_cap and not self.keep_beyond_cap(lead, line_no):
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

    # -- bounds -----------------------------------------------------------------------------
    def keeps(self, run: int) -> bool:
        """Whether the rows and rank lines of `run` are kept: a run that starts once run_rows_cap rows or
        device_cap rank lines are kept is not, nor any after it."""
        if run > self.run_seen:
            self.run_seen = run
            if self.cut_run is None and (len(self.rows) >= self.lim.run_rows_cap
                                         or len(self.devices) >= self.lim.device_cap):
                self.cut_run = run
        return self.cut_run is None or run < self.cut_run

    def failure(self, f: Failure) -> None:
        """A failure line, up to list_cap of them (the rest are counted)."""
        if "Out of bounds" not in f.text:
            self.failures_total += 1
        if len(self.failures) < self.lim.list_cap:
            self.failures.append(f)
        else:
            self.lists_dropped += 1

    def warning(self, w: WarningLine) -> None:
        """An NCCL WARN line, up to list_cap of them (the rest are counted)."""
        if len(self.warnings) < self.lim.list_cap:
            self.warnings.append(w)
        else:
            self.lists_dropped += 1

    def note(self, text: str) -> None:
        """A per-line note, up to list_cap of them (the rest are counted)."""
        if len(self.notes) < self.lim.list_cap:
            self.notes.append(text)
        else:
            self.lists_dropped += 1

    def repeated_row(self, s: str) -> bool:
        """Past row_cap: a plain results row (no tags, no failure text) whose size was already kept is
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
        """Past row_cap rows, a row is kept only when its (run, size, type, redop, root) was not kept yet,
        so the sizes of every run stay and a huge interleaved log costs memory by distinct sizes, up to
        row_hard_cap rows; the others are counted (a note says how many)."""
        if self.kept_keys is None:
            self.kept_keys = {(r.run, r.size_bytes, r.type, r.redop, r.root) for r in self.rows}
        key = (self.run_index(), int(lead["size"]), lead.get("type", ""), lead.get("redop"),
               int(lead["root"]) if "root" in lead else None)
        if key in self.kept_keys or len(self.rows) >= self.lim.row_hard_cap:
            return False
        self.kept_keys.add(key)
        return True

    # -- the report -------------------------------------------------------------------------
    def finish(self) -> NcclTestsReport:
        """The report (validate.py); ParseError when nothing read was nccl-tests output."""
        return _validate.report(self)


def replay(p: Parser, op: tuple) -> None:
    """What feeding a line again does to a parser past the cut (its first-seen facts are set already),
    from the `op` its first feed recorded; the summary and header lines' first feed does it too."""
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
        if len(p.avgs) < p.lim.avgs_shown:
            p.avgs.append(v)
    elif kind == "dropped":
        p.lists_dropped += 1
        p.failures_total += op[1]
    elif kind in ("rank", "banner"):
        p.banner = True
        if kind == "rank":
            p.devices_dropped += 1
