"""What the nccl-tests reader gives: its records (a rank line, a results row, a WARN line, the report)
and the limits that keep the report bounded on a cluster's logs appended together."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import nccl_tests_failures as _failures

SOURCE = "nccl_tests"


@dataclass(frozen=True)
class Limits:
    """The bounds of one read (the package's ROW_CAP, RUN_ROWS_CAP... when the reader is made: see
    topodiag/parsers/nccl_tests/__init__.py for what each bounds)."""
    row_cap: int
    row_hard_cap: int
    run_rows_cap: int
    device_cap: int
    device_hard_cap: int
    list_cap: int
    names_cap: int
    avgs_shown: int
    memo_cap: int
    bulk_min: int


@dataclass(frozen=True)
class Device:
    rank: int
    group: int | None
    host: str
    pid: int
    device: int
    bus_id: str
    model: str
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
    # the failure lines read other than the "Out of bounds values : N FAILED" summaries (out_of_bounds
    # says those): the ones in `failures` and those past its cap (a lists-not-kept note says so)
    failures_total: int = 0
    warnings: tuple[WarningLine, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def unrecognised(self) -> tuple[Failure, ...]:
        """The failure lines no catalogue entry explains (their "class" is null): SYS004 reports them."""
        return _failures.unrecognised(self.failures)


@dataclass(frozen=True)
class Layout:
    """Where the columns of a results row are: leading names, then the two halves' field names."""
    lead: tuple[str, ...]
    oop: tuple[str | None, ...]
    ip: tuple[str | None, ...]
