"""`topodiag fleet`: from files, standard input, bundles and a ClusterShell fan-out (the exec
worker running a local command per node name), with its exit codes and usage errors.

The end-to-end fan-out runs the real `topodiag check --format json` on each "node": a directory
holding the four outputs of fixtures/hosts/hgx-h100-healthy-assembled; on gpu06 the ibstat copy has
mlx5_1's Rate changed from 400 to 200 by the test (so the only difference is that port). The tests
with a node that hangs read each node's report made beforehand by the same check (`cat`): a timeout
then needs no margin for eight checks sharing a loaded machine's CPUs."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import topodiag
from topodiag.cli import app
from tests.fleet.conftest import node, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = ROOT / "fixtures" / "hosts" / "hgx-h100-healthy-assembled"
INVENTED_LOG = ROOT / "fixtures" / "nccl_debug" / "nccl-invented-one-host-socket-4node-01.log"


def fleet(*args: str, stdin: str | None = None):
    return CliRunner().invoke(app, ["fleet", *args], input=stdin)


def as_json(res) -> dict:
    return json.loads(res.stdout)


# -- fan-out through ClusterShell ------------------------------------------------------------

@pytest.fixture(scope="module")
def node_dirs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("nodes")
    for i in range(1, 7):
        d = root / f"gpu{i:02d}"
        d.mkdir()
        for f in (HEALTHY / "commands").iterdir():
            shutil.copy(f, d / f.name)
    ibstat = root / "gpu06" / "ibstat.txt"
    lines = ibstat.read_text().splitlines(keepends=True)
    at = [n for n, line in enumerate(lines) if line.strip() == "Rate: 400"]
    lines[at[1]] = lines[at[1]].replace("400", "200")  # the second CA: mlx5_1
    ibstat.write_text("".join(lines))
    for i in range(1, 7):  # each node's report, for the fan-outs that only gather (cat) them
        buf = io.StringIO()
        topodiag.diagnose([str(root / f"gpu{i:02d}")], host=f"gpu{i:02d}").render("json", buf)
        (root / f"gpu{i:02d}.json").write_text(buf.getvalue())
    (root / "gpu07.sh").write_text("sleep 120\n")
    (root / "gpu08.sh").write_text("echo 'topodiag: command not found' >&2; exit 127\n")
    return root


def fan_out_command(root: Path) -> str:
    """gpuNN with a script runs it; else the real check on its directory."""
    check = f"{sys.executable} -m topodiag check --from {root}/%h --host %h --format json"
    return f"sh -c 'if test -f {root}/%h.sh; then exec sh {root}/%h.sh; fi; exec {check}'"


def gather_command(root: Path) -> str:
    """gpuNN with a script runs it; else its report, made by the real check beforehand."""
    return f"sh -c 'if test -f {root}/%h.sh; then exec sh {root}/%h.sh; fi; exec cat {root}/%h.json'"


def test_fan_out_gathers_each_nodes_report_and_lists_the_nodes_that_failed(node_dirs):
    res = fleet("--nodes", "gpu[01-08]", "--local", "--timeout", "5", "--fanout", "8",
                "--command", gather_command(node_dirs), "--format", "json")
    assert res.exit_code == 1, res.output
    data = as_json(res)
    assert data["nodes"] == 6
    assert [o["line"] for o in data["outliers"]] == ["gpu06: nic:mlx5_1 port 1 at 200 Gb/s, 5 others at 400"]
    assert all(f["node"] for f in data["failures"])
    assert {f["input"]: f["reason"] for f in data["failures"]} == {
        "gpu07": "no answer within 5 s (timed out)",
        "gpu08": "no output (exit 127): topodiag: command not found",
    }
    assert data["failed"] == 2 and data["summary"]["nodes"] | {"read": 6, "failed": 2} == data["summary"]["nodes"]


def test_fan_out_text_names_the_outlier_and_the_silent_nodes(node_dirs):
    res = fleet("--nodes", "gpu[05-08]", "--local", "--timeout", "5", "--fail-on", "never",
                "--command", gather_command(node_dirs), "--format", "text")
    # two reports only: too few for a majority, nobody blamed; the two silent nodes still listed
    assert res.exit_code == 3, res.output
    flat = " ".join(res.stdout.split())  # text folds to 80 columns off a terminal
    assert "2 nodes compared" in flat and "2 nodes gave no report" in flat
    assert "Nodes without a report" in flat
    assert "gpu07" in flat and "timed out" in flat and "exit 127" in flat
    assert max(len(ln) for ln in res.stdout.splitlines()) <= 80


def test_fan_out_of_healthy_nodes_exits_0(node_dirs):
    res = fleet("--nodes", "gpu[01-05]", "--local", "--command", fan_out_command(node_dirs), "--format", "json")
    assert res.exit_code == 0, res.output
    data = as_json(res)
    assert data["nodes"] == 5 and data["outliers"] == [] and data["failures"] == []


@pytest.mark.parametrize("nodes, text", [("gpu[3-1", "is not a node set"), ("gpu[01-02", "is not a node set")])
def test_a_bad_node_set_is_a_usage_error(nodes, text):
    res = fleet("--nodes", nodes, "--local")
    assert res.exit_code == 2 and text in res.stderr and res.stdout == ""


# -- reports from files and standard input -----------------------------------------------------

@pytest.fixture
def reports(tmp_path, base_report) -> Path:
    """node01..node10 as one file each; node03 with an older firmware on mlx5_0."""
    d = tmp_path / "reports"
    d.mkdir()
    for i in range(1, 11):
        fp = {"nic:mlx5_0.firmware": "28.39.1002"} if i == 3 else {}
        (d / f"node{i:02d}.json").write_text(json.dumps(node(base_report, f"node{i:02d}", fp=fp), indent=2))
    return d


@pytest.fixture(scope="module")
def base_report():
    from topodiag.fleet.reports import bundle_report

    return bundle_report(str(HEALTHY))


def test_a_directory_of_reports(reports):
    res = fleet(str(reports), "--format", "json")
    assert res.exit_code == 1
    assert [o["line"] for o in as_json(res)["outliers"]] == [
        "node03: firmware of mlx5_0 28.39.1002, 9 others 28.43.2026"]


def test_clush_output_on_standard_input(reports):
    """`clush -w ... topodiag check --format json` without -b: every line prefixed `node: `."""
    text = "".join(f"{p.stem}: {line}\n" for p in sorted(reports.iterdir()) for line in p.read_text().splitlines())
    res = fleet("-", "--format", "json", stdin=text)
    assert res.exit_code == 1, res.output
    data = as_json(res)
    assert data["nodes"] == 10 and [o["node"] for o in data["outliers"]] == ["node03"]


def test_healthy_reports_exit_0_and_the_text_has_the_summary(tmp_path, base_report):
    path = write_jsonl(tmp_path / "all.jsonl", [node(base_report, f"n{i}") for i in range(5)])
    res = fleet(str(path), "--format", "text")
    assert res.exit_code == 0
    assert "5 nodes compared on 35 fingerprint keys: 0 differ from the majority" in res.stdout
    assert "8 x NVIDIA H100 80GB HBM3" in res.stdout


def test_an_unreadable_input_beside_good_reports_exits_3(tmp_path, base_report):
    good = write_jsonl(tmp_path / "all.jsonl", [node(base_report, f"n{i}") for i in range(5)])
    bad = tmp_path / "n9.json"
    bad.write_text('{"schema_version": 1, "fingerprint": {')
    res = fleet(str(good), str(bad), "--format", "json")
    assert res.exit_code == 3
    [failure] = as_json(res)["failures"]
    assert failure["input"].startswith(str(bad))


def test_fail_on_names_the_nodes_with_findings(tmp_path, base_report):
    """An invented finding planted on n2 (the fingerprint unchanged): --fail-on (error by default)
    makes it count; --fail-on never lets only outliers count."""
    sick = node(base_report, "n2")
    sick["findings"] = [{"code": "IB001", "severity": "error"}]
    path = write_jsonl(tmp_path / "all.jsonl", [node(base_report, "n1"), sick, node(base_report, "n3")])
    assert fleet(str(path), "--format", "json", "--fail-on", "never").exit_code == 0
    assert fleet(str(path), "--format", "json").exit_code == 1
    res = fleet(str(path), "--format", "text", "--fail-on", "error")
    assert res.exit_code == 1
    assert "Nodes with findings at or above error: 1" in res.stdout and "n2: error (IB001)" in res.stdout
    assert fleet(str(path), "--fail-on", "critical").exit_code == 0
    data = as_json(fleet(str(path), "--format", "json"))
    assert data["nodes_with_findings"] == [{"node": "n2", "input": f"{path}:2", "host": "n2", "worst": "error",
                                           "codes": ["IB001"]}]


def test_max_outliers_counts_the_rest(tmp_path, base_report):
    reports = [node(base_report, f"n{i:02d}", fp={"gpu:0.numa": 1} if i in (2, 5, 7) else {}) for i in range(1, 21)]
    res = fleet(str(write_jsonl(tmp_path / "r.jsonl", reports)), "--format", "text", "--max-outliers", "1")
    assert res.exit_code == 1
    assert "n02" in res.stdout and "n05" not in res.stdout and "... and 2 more nodes" in res.stdout


def test_bundles_are_checked_then_compared():
    scenarios = [str(ROOT / "fixtures" / "hosts" / n) for n in ("hgx-h100-healthy-assembled", "h800-nv8-4nic",
                                                               "v100-nvlinks-down")]
    res = fleet(*scenarios, "--format", "json", "--group-by", "none")
    assert res.exit_code == 1, res.output
    data = as_json(res)
    assert data["nodes"] == 3 and data["failures"] == []
    # three different machines: each has facts the other two lack; two show 8 GPUs, while the
    # V100 bundle's nvlink -s covers one GPU
    odd = {o["node"]: o["line"] for o in data["outliers"]}
    assert sorted(odd) == ["azure-v100", "h800-llm-action", "hgx-h100-assembled"]
    assert odd["azure-v100"].startswith("azure-v100: 1 GPU, 2 others 8; ")
    assert "28 GPU pairs at NV8, absent on 2 others" in odd["h800-llm-action"]
    assert {r["model"] for r in data["summary"]["gpus"]} >= {"NVIDIA H100 80GB HBM3", "NVIDIA H800"}


def test_a_multi_host_nccl_log_alone():
    res = fleet("--nccl-log", str(INVENTED_LOG), "--format", "json")
    assert res.exit_code == 1, res.output
    [log] = as_json(res)["nccl"]
    assert [o["host"] for o in log["outliers"]] == ["noded"]


# -- usage errors: one line on stderr, exit 2 -----------------------------------------------

@pytest.mark.parametrize("args, text", [
    ([], "give reports"),
    (["x.json", "--min-share", "0.3"], "--min-share: 0.3 is not between 0.5 and 1"),
    (["x.json", "--min-nodes", "1"], "--min-nodes: 1 is below 2"),
    (["x.json", "--local"], "--local goes with --nodes"),
    (["x.json", "--fail-on", "loud"], "--fail-on"),
    (["x.json", "--profile", "dgx-z9"], "--profile: unknown profile 'dgx-z9'"),
    (["x.json", "--select", "NOPE999"], "--select: 'NOPE999' names no rule"),
    (["x.json", "--timeout", "0", "--nodes", "a1"], "must be positive"),
])
def test_usage_errors(args, text):
    res = fleet(*args)
    assert res.exit_code == 2, res.output
    assert text in res.stderr and len(res.stderr.strip().splitlines()) == 1 and res.stdout == ""


def test_nothing_readable_exits_3(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    res = fleet(str(empty), "--format", "json")
    assert res.exit_code == 3 and "no report in the inputs" in res.stderr


# -- the real clush (ClusterShell's command, exec worker), with and without -b ------------------

def clush_output(reports: Path, *flags: str) -> str:
    import subprocess

    clush = Path(sys.executable).parent / "clush"
    assert clush.exists(), "clush comes with ClusterShell in the test extra"
    nodes = ",".join(p.stem for p in sorted(reports.glob("*.json")))
    res = subprocess.run([str(clush), "-R", "exec", "-w", nodes, *flags, "cat", f"{reports}/%h.json"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.parametrize("flags", [(), ("-b",)], ids=["prefixed", "gathered"])
def test_the_output_of_clush_is_read(reports, flags):
    text = clush_output(reports, *flags)
    assert text.startswith("---------------\n") == bool(flags)
    res = fleet("-", "--format", "json", stdin=text)
    assert res.exit_code == 1, res.output
    data = as_json(res)
    assert data["nodes"] == 10 and data["failures"] == []
    assert [o["line"] for o in data["outliers"]] == ["node03: firmware of mlx5_0 28.39.1002, 9 others 28.43.2026"]


def test_clush_b_gathers_alike_outputs_and_each_node_counts(tmp_path, base_report):
    """Reports without a host print alike on every healthy node: clush -b shows one output under
    `node[01-04,06] (5)`; each of those nodes is counted, and node05 stands apart."""
    d = tmp_path / "r"
    d.mkdir()
    for i in range(1, 7):
        r = node(base_report, None, fp={"gpu:6.numa": 0} if i == 5 else {})
        (d / f"node{i:02d}.json").write_text(json.dumps(r, indent=2))
    text = clush_output(d, "-b")
    assert "node[01-04,06] (5)" in text
    data = as_json(fleet("-", "--format", "json", stdin=text))
    assert data["nodes"] == 6 and [o["line"] for o in data["outliers"]] == [
        "node05: gpu:6 on NUMA node 0, 5 others 1"]
