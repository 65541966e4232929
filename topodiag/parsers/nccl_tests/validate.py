"""The reader's state -> the report: refused (ParseError) when nothing read was nccl-tests output, else
the records with what is derived from them (nranks, peak bus bandwidth, the NCCL version) and the
notes on them (several independent runs, interleaved processes, what was counted and not kept)."""

from __future__ import annotations

from .. import _foreign
from .. import nccl_tests_failures as _failures
from ..base import ParseError
from .read import version_from_code
from .records import NcclTestsReport, Row


def report(p) -> NcclTestsReport:
    """The report of a Parser (assemble.py) that has read every line."""
    refuse_unless_read(p)
    runs = max(1, *p.counts.values())
    ranks = {d.rank for d in p.devices if d.run == p.devices[0].run} if p.devices else set()
    nranks = len(ranks) if ranks else p.info_nranks
    busbws = [v for r in p.rows for v in (r.oop_busbw_gbps, r.ip_busbw_gbps) if v is not None]
    libraries = list(p.libraries)
    return NcclTestsReport(
        collective=p.collective or p.collective_cmd,
        nccl_tests_version=p.tests_version,
        nccl_version=version_from_code(libraries[0]) if libraries else p.nccl_line_version,
        nccl_headers_version=version_from_code(p.headers) if p.headers else None,
        nranks=nranks,
        devices=tuple(p.devices),
        parameters=dict(p.parameters),
        rows=tuple(p.rows),
        avg_busbw_gbps=p.avgs[0] if p.avgs else None,
        peak_busbw_gbps=max(busbws) if busbws else None,
        out_of_bounds=p.oob,
        out_of_bounds_ok=p.oob_ok,
        runs=runs,
        failures=_failures.classify(p.failures),
        warnings=tuple(p.warnings),
        notes=tuple(notes(p, runs, nranks, busbws)),
    )


def refuse_unless_read(p) -> None:
    """ParseError unless a banner, a results header, a row or a failed row was read."""
    if p.banner or p.counts["header"] or p.rows or any(f.size_bytes is not None for f in p.failures):
        return
    if p.first_text is None:
        raise ParseError("expected nccl-tests output (a '# nThread ...' banner, a results header or rows), "
                         "found no text", 0)
    if p.summary_line is not None:
        line_no, s = p.summary_line
        raise ParseError("expected nccl-tests results (a banner, a results header or rows), found only the "
                         f"summary lines ('{s[:60]}')", line_no)
    line_no, s = p.first_text
    raise ParseError("expected nccl-tests output (a '# nThread ...' banner, a '#  size  count  type ...' "
                     f"results header or a results row), found '{s[:60]}'", line_no)


def notes(p, runs: int, nranks: int | None, busbws: list[float]) -> list[str]:
    """The per-line notes, then the notes on the whole input."""
    out = list(p.notes)
    if p.rows_dropped:
        out.append(f"{len(p.rows) + p.rows_dropped} results rows: {p.rows_dropped} that repeat a size already "
                   f"kept are not kept past the first {p.lim.row_cap} (peak_busbw_gbps and the checks read the "
                   "rows kept)")
    independent_run_notes(p, out, runs, nranks, busbws)
    bound_notes(p, out, runs)
    out.extend(_foreign.notes(p))
    if p.lists_dropped:
        out.append(f"{p.lists_dropped} further per-line notes, NCCL WARN and failure lines past the first "
                   f"{p.lim.list_cap} not kept")
    if len(p.collectives) > 1:
        out.append("the file holds runs of several tests: " + ", ".join(p.collectives))
    if p.avg_count > 1 and (p.avgs_differ or len(set(p.avgs)) > 1):
        more = p.avg_count - len(p.avgs)
        out.append(f"{p.avg_count} result summaries: Avg bus bandwidth "
                   + ", ".join("?" if a is None else f"{a:g}" for a in p.avgs)
                   + (f" and {more} more" if more else "") + " (avg_busbw_gbps is the first)")
    if len(p.libraries) > 1:
        out.append("runs used different NCCL libraries: " + ", ".join(version_from_code(c) for c in p.libraries)
                   + " (nccl_version is the first)")
    return out


def bound_notes(p, notes: list[str], runs: int) -> None:
    """What was counted and not kept to keep the result bounded (thousands of runs in one file)."""
    if p.cut_run is not None:
        notes.append(f"{runs - p.cut_run} runs (from run {p.cut_run + 1} of {runs}) not kept, to keep memory "
                     f"bounded: their {p.rows_cut} results rows and the rank lines are counted, not judged; the "
                     f"first {p.cut_run} runs are kept and judged run by run")
    if p.wrong_cut:
        notes.append(f"{p.wrong_cut[0]} results rows with wrong results (#wrong > 0) in runs not kept, the "
                     f"first at line {p.wrong_cut[1]}")
    if p.devices_dropped:
        notes.append(f"{p.devices_dropped} rank lines (\"# Rank N ... on HOST device ...\") not kept")


def independent_run_notes(p, notes: list[str], runs: int, nranks: int | None, busbws: list[float]) -> None:
    """Signs that each process ran its own 1-rank test (nccl-tests built without MPI=1)."""
    rank0 = [d for d in p.devices if d.rank == 0]
    if p.devices and len(rank0) == len(p.devices) and max(len(rank0), runs) >= 2:
        n = max(len(rank0), runs)
        notes.append(f"{n} independent 1-rank runs: nccl-tests not built with MPI=1 "
                     "(each process lists itself as Rank 0)")
    algbws = [v for r in p.rows for v in (r.oop_algbw_gbps, r.ip_algbw_gbps) if v is not None]
    if busbws and all(v == 0 for v in busbws) and algbws and max(algbws) >= 1.0 and nranks in (None, 1):
        said = "NCCL reports nranks 1" if p.info_nranks == 1 else "1-rank communicators"
        notes.append(f"busbw is 0 in all {len(p.rows)} rows while algbw reaches {max(algbws):.2f} GB/s: "
                     f"{said}, so each process ran its own test (nccl-tests not built with MPI=1?)")
    interleaved = interleaving_note(p.rows)
    if interleaved:
        notes.append(interleaved)


def interleaving_note(rows: list[Row]) -> str | None:
    """The note on a run whose rows repeat message sizes (several processes' output interleaved)."""
    by_run: dict[int, list[Row]] = {}
    for r in rows:
        by_run.setdefault(r.run, []).append(r)
    for run_rows in by_run.values():
        keys = [(r.size_bytes, r.type, r.redop, r.root) for r in run_rows]
        if len(set(keys)) < len(keys):
            return (f"results rows repeat message sizes out of order ({len(set(keys))} distinct in "
                    f"{len(keys)} rows): output of several independent processes interleaved")
    return None
