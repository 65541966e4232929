"""Many findings of one rule on one input are one finding with a count (topodiag/engine/aggregate.py)."""

from __future__ import annotations

import json

import topodiag
from topodiag.engine import Evidence, Finding, Severity
from topodiag.engine.aggregate import COLLAPSE_OVER, MAX_INSTANCES, collapse
from topodiag.parsers import blank_provenance_header
from tests.fixtures_index import FIXTURES


def _f(i: int, severity=Severity.WARNING, file="big.log", code="PERF001") -> Finding:
    return Finding(code, "busbw-low", severity, (f"run:{i}",), f"run {i} is slow", (Evidence("nccl_tests", file, 10 * i + 1),))


def test_few_findings_stay_as_they_are() -> None:
    few = [_f(i) for i in range(COLLAPSE_OVER)]
    assert collapse(few) == few


def test_many_findings_of_one_rule_on_one_file_are_one() -> None:
    many = [_f(i) for i in range(120)] + [_f(999, Severity.ERROR)]
    [one] = collapse(many)
    assert one.count == 121 and one.severity is Severity.ERROR  # the most severe instance leads
    assert one.message.startswith("run 999 is slow [1 of 121 PERF001 findings on big.log; the first at lines 9991, 1, 11")
    assert len(one.instances) == MAX_INSTANCES and one.instances[0]["line_no"] == 9991
    assert len(one.subjects) == 50 and one.subjects[0] == "run:999"
    d = one.to_dict()
    assert d["count"] == 121 and len(d["instances"]) == MAX_INSTANCES
    assert "count" not in _f(1).to_dict()  # a single finding's JSON is unchanged


def test_each_file_and_rule_is_its_own_group() -> None:
    mixed = [_f(i, file="a.log") for i in range(30)] + [_f(i, file="b.log") for i in range(5)]
    out = collapse(mixed)
    assert [(f.count, f.evidence[0].file) for f in out] == [(30, "a.log")] + [(1, "b.log")] * 5


def test_a_log_of_many_slow_runs_gives_one_perf001_with_the_count(tmp_path) -> None:
    """The 2x8 H100 run that the thread found at 155 GB/s busbw, 30 times in one log (as a cluster's
    logs appended together): one PERF001 finding with count 30, not 30 findings."""
    fx = FIXTURES / "nccl_tests" / "nccltests-allreduce-2x8h100-ndr-degraded-155-srun-prefix-01.txt"
    if not fx.exists():
        fx = next((FIXTURES / "nccl_tests").glob("nccltests-allreduce-2x8h100-ndr-degraded-155-srun-prefix-01.*"))
    text = blank_provenance_header(fx.read_text())
    big = tmp_path / "appended.log"
    big.write_text(text * 30)
    single = [f for f in topodiag.diagnose([str(fx)]).findings if f.code == "PERF001"]
    many = [f for f in topodiag.diagnose([str(big)]).findings if f.code == "PERF001"]
    assert len(single) == 1 and single[0].count == 1
    assert len(many) == 1 and many[0].count == 30 and many[0].severity == single[0].severity
    report = json.loads(json.dumps(topodiag.diagnose([str(big)]).to_json()))
    [perf] = [f for f in report["findings"] if f["code"] == "PERF001"]
    assert perf["count"] == 30 and len(perf["instances"]) == 30
