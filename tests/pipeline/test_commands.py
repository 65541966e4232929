"""The commands' entry points in topodiag/pipeline/commands: a request in, a result with its report
and its Outcome out; a bad request is a UsageError before anything is read or collected."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from topodiag.errors import UsageError
from topodiag.exit_codes import Outcome, exit_code
from topodiag.pipeline.commands.compare import CompareRequest, compare
from topodiag.pipeline.commands.fleet import FleetRequest, fleet, outcome
from topodiag.pipeline.commands.plan import PlanRequest, plan
from topodiag.pipeline.commands.prolog import PrologRequest, prolog

ROOT = Path(__file__).resolve().parents[2]
NCCL_TESTS = ROOT / "fixtures" / "nccl_tests"
RING = NCCL_TESTS / "nccltests-allreduce-2x8h100-ib400-ring-392-wrapped-cmd-01.txt"
SINGLE = NCCL_TESTS / "nccltests-allreduce-8xh100-nvls-476-single-node-01.txt"
SYSFS = ROOT / "fixtures" / "sysfs" / "hgx-h100-cx7-ndr-8rail"


@pytest.mark.parametrize("request_, words", [
    (FleetRequest(), "give reports"),
    (FleetRequest(paths=["x"], min_share=0.3), "--min-share"),
    (FleetRequest(paths=["x"], min_nodes=1), "--min-nodes"),
    (FleetRequest(paths=["x"], fanout=0), "--fanout"),
    (FleetRequest(paths=["x"], local=True), "--local goes with --nodes"),
    (FleetRequest(paths=["x"], fail_on="loud"), "--fail-on"),
    (FleetRequest(paths=["x"], source="no_such_tool"), "--source"),
])
def test_a_bad_fleet_request_is_a_usage_error(request_, words):
    with pytest.raises(UsageError, match=words.replace("-", r"\-")):
        fleet(request_)


def _result(**kw):
    base = dict(has_outliers=False, has_duplicates=False, nodes=3, nccl=[], failed_count=0)
    base.update(kw)
    flagged = base.pop("flagged", [])
    return SimpleNamespace(at_or_above=lambda severity: flagged, **base)


@pytest.mark.parametrize("result, severity, expected", [
    (_result(), "error", Outcome.OK),
    (_result(has_outliers=True, failed_count=2), "error", Outcome.OUTLIERS),  # a difference outranks a gap
    (_result(has_duplicates=True), None, Outcome.DUPLICATE_HOSTS),
    (_result(flagged=[{"node": "gpu01"}]), "error", Outcome.FINDINGS),
    (_result(flagged=[{"node": "gpu01"}]), None, Outcome.OK),  # --fail-on never: only outliers fail
    (_result(failed_count=1), "error", Outcome.NO_REPORT),
    (_result(nodes=0), "error", Outcome.NO_REPORT),
    (_result(nodes=0, nccl=[{"log": "job.log"}]), "error", Outcome.OK),
])
def test_the_fleets_outcome(result, severity, expected):
    assert outcome(result, severity) == expected


def test_a_fleet_of_one_missing_file_gave_no_report(tmp_path):
    run = fleet(FleetRequest(paths=[str(tmp_path / "missing.json")]))
    assert run.outcome == Outcome.NO_REPORT and exit_code(run.outcome) == 3
    assert run.result.failed_count == 1 and not run.nothing_read


def test_plan_checks_bounds_first_and_plans_a_node():
    with pytest.raises(UsageError):
        plan(PlanRequest(paths=["does-not-matter"], nodes=0))
    run = plan(PlanRequest(paths=[str(ROOT / "fixtures/hosts/dgx1-v100-one-hca")], model="7b"))
    assert run.outcome == Outcome.OK and run.report["kind"] == "plan" and run.report["gpus_per_node"] == 8


def test_compare_refuses_a_noise_that_is_no_fraction_and_compares_two_runs():
    with pytest.raises(UsageError, match="--noise"):
        compare(CompareRequest(runs=[str(SINGLE), str(RING)], noise=1.5))
    with pytest.raises(UsageError, match="two or more"):
        compare(CompareRequest(runs=[str(SINGLE)]))
    run = compare(CompareRequest(runs=[str(SINGLE), str(RING)], labels=["one node", "two nodes"]))
    assert run.outcome == Outcome.OK and [r["label"] for r in run.report["runs"]] == ["one node", "two nodes"]


def test_prolog_refuses_a_bad_duration_before_collecting():
    said = []
    with pytest.raises(UsageError, match="--kernel-log-since"):
        prolog(PrologRequest(kernel_log_since="soon", sysfs_root=str(SYSFS)), say=lambda d, line: said.append(line),
               warn=said.append)
    assert said == []


def test_prolog_says_its_line_and_returns_the_verdict(tmp_path):
    said, warned = [], []
    bad_config = tmp_path / "site.toml"
    bad_config.write_text("this is [not toml\n")
    run = prolog(PrologRequest(deadline=10.0, sysfs_root=str(SYSFS), config=str(bad_config)),
                 say=lambda d, line: said.append(line), warn=warned.append)
    assert said == [run.line] and run.line.startswith("topodiag: ")
    assert len(warned) == 1 and "judging with the default settings" in warned[0]  # not --strict: judged anyway
    assert run.outcome in (Outcome.OK, Outcome.FINDINGS, Outcome.INCOMPLETE, Outcome.INTERNAL)
    assert run.drained is None and not run.drain_held  # no --mark-offline: Slurm was not asked
    assert exit_code(run.outcome, lenient=True) in (0, 1)
