"""The reader's state -> the report: refused (ParseError) when nothing read was nccl-tests output, else
the records with what is derived from them (nranks, peak bus bandwidth, the NCCL version) and the
notes on them (several independent runs, interleaved processes, what was counted and not kept)."""

from __future__ import annotations

from .. import _foreign
from .. import nccl_tests_failures as _failures
from ..base import ParseError, note
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
        failures_total=p.failures_total,
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
        out.append(note("nccl_tests", "rows-not-kept", total=len(p.rows) + p.rows_dropped, dropped=p.rows_dropped,
                        cap=p.lim.row_cap))
    independent_run_notes(p, out, runs, nranks, busbws)
    bound_notes(p, out, runs)
    out.extend(_foreign.notes(p))
    if p.lists_dropped:
        out.append(note("nccl_tests", "lists-not-kept", dropped=p.lists_dropped, cap=p.lim.list_cap))
    if len(p.collectives) > 1:
        out.append(note("nccl_tests", "several-tests", collectives=", ".join(p.collectives)))
    if p.avg_count > 1 and (p.avgs_differ or len(set(p.avgs)) > 1):
        more = p.avg_count - len(p.avgs)
        avgs = ", ".join("?" if a is None else f"{a:g}" for a in p.avgs) + (f" and {more} more" if more else "")
        out.append(note("nccl_tests", "avg-summaries", count=p.avg_count, avgs=avgs))
    if len(p.libraries) > 1:
        versions = ", ".join(version_from_code(c) for c in p.libraries)
        out.append(note("nccl_tests", "several-libraries", versions=versions))
    return out


def bound_notes(p, notes: list[str], runs: int) -> None:
    """What was counted and not kept to keep the result bounded (thousands of runs in one file)."""
    if p.cut_run is not None:
        notes.append(note("nccl_tests", "runs-not-kept", not_kept=runs - p.cut_run, first=p.cut_run + 1, runs=runs,
                          rows=p.rows_cut, kept=p.cut_run))
    if p.wrong_cut:
        notes.append(note("nccl_tests", "wrong-rows-not-kept", rows=p.wrong_cut[0], line=p.wrong_cut[1]))
    if p.devices_dropped:
        notes.append(note("nccl_tests", "rank-lines-not-kept", dropped=p.devices_dropped))


def independent_run_notes(p, notes: list[str], runs: int, nranks: int | None, busbws: list[float]) -> None:
    """Signs that each process ran its own 1-rank test (nccl-tests built without MPI=1)."""
    rank0 = [d for d in p.devices if d.rank == 0]
    if p.devices and len(rank0) == len(p.devices) and max(len(rank0), runs) >= 2:
        n = max(len(rank0), runs)
        notes.append(note("nccl_tests", "independent-rank0-runs", runs=n))
    algbws = [v for r in p.rows for v in (r.oop_algbw_gbps, r.ip_algbw_gbps) if v is not None]
    if busbws and all(v == 0 for v in busbws) and algbws and max(algbws) >= 1.0 and nranks in (None, 1):
        rows, algbw = len(p.rows), max(algbws)
        notes.append(note("nccl_tests", "busbw-zero-nranks-1", rows=rows, algbw=algbw) if p.info_nranks == 1
                     else note("nccl_tests", "busbw-zero-1-rank", rows=rows, algbw=algbw))
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
            return note("nccl_tests", "rows-interleaved", distinct=len(set(keys)), rows=len(keys))
    return None
