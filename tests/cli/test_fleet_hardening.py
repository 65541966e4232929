"""`topodiag fleet` against hostile or careless inputs (issue 16): cloned host names, node names that
are not host names, node sets that expand to millions, escape codes in names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topodiag.cli import app
from tests.fleet.conftest import node

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = ROOT / "fixtures" / "hosts" / "hgx-h100-healthy-assembled"


def fleet(*args: str, stdin: str | None = None):
    return CliRunner().invoke(app, ["fleet", *args], input=stdin)


@pytest.fixture(scope="module")
def base_report():
    from topodiag.fleet.reports import bundle_report

    return bundle_report(str(HEALTHY))


@pytest.fixture
def cloned(tmp_path, base_report) -> Path:
    """gpu01..gpu08 all saying they are `node-image`; gpu06 has a port at 200 Gb/s."""
    for i in range(1, 9):
        fp = {"nic:mlx5_1.port1.rate_gbps": 200.0} if i == 6 else {}
        (tmp_path / f"gpu{i:02d}.json").write_text(json.dumps(node(base_report, "node-image", fp=fp)))
    return tmp_path


def test_a_fan_out_over_a_cloned_hostname_counts_every_node_and_exits_1(cloned):
    res = fleet("--nodes", "gpu[01-08]", "--local", "--command", f"cat {cloned}/%h.json", "--format", "json")
    assert res.exit_code == 1, res.output
    data = json.loads(res.stdout)
    assert data["nodes"] == 8 and data["summary"]["nodes"]["duplicates"] == 1
    assert [o["line"] for o in data["outliers"]] == ["gpu06: nic:mlx5_1 port 1 at 200 Gb/s, 7 others at 400"]
    assert data["outliers"][0]["host"] == "node-image"
    [dup] = data["duplicates"]
    assert dup["host"] == "node-image" and dup["sources"] == [f"gpu{i:02d}" for i in range(1, 9)]


def test_the_duplicate_alone_exits_1_and_the_text_names_it(tmp_path, base_report):
    for name, host in (("gpu01", "gpu01"), ("gpu02", "gpu02"), ("gpu05", "gpu01")):
        (tmp_path / f"{name}.json").write_text(json.dumps(node(base_report, host)))
    res = fleet("--nodes", "gpu[01-02,05]", "--local", "--command", f"cat {tmp_path}/%h.json", "--format", "text")
    assert res.exit_code == 1, res.output
    flat = " ".join(res.stdout.split())  # text folds to 80 columns off a terminal
    assert "1 host name reported by more than one source" in flat
    assert "host gpu01 reported by 2 sources: gpu01, gpu05" in flat
    assert "host names reported by 2+ sources" in flat


@pytest.mark.parametrize("nodes, says", [
    ("-oProxyCommand=touch", "node name '-oProxyCommand=touch' starts with '-'"),
    ("gpu1,a;id", "has ';'"),
    ("gpu\x1b[2J", "has '\\x1b'"),
    ("n[1-1000]-[1-1000]", "names more than 100000 nodes"),
])
def test_bad_node_names_and_huge_node_sets_are_usage_errors(nodes, says, tmp_path):
    marker = tmp_path / "ran"
    res = fleet("--nodes", nodes, "--local", "--command", f"touch {marker}")
    assert res.exit_code == 2 and res.stdout == ""
    err = res.stderr.strip()
    assert says in err and "\n" not in err and "\x1b" not in err
    assert not marker.exists()


def test_fan_out_memory_does_not_grow_with_nodes_times_output(tmp_path, base_report):
    """40 nodes each printing its report padded to 4 MB (160 MB in all): the outputs go to disk and
    are read one node at a time, so the peak RSS grows by far less than their sum."""
    import subprocess
    import sys

    report = json.dumps(node(base_report, None), indent=2)
    pad = " " * (4_000_000 - len(report))
    (tmp_path / "report.json").write_text(report[:-1] + pad + "}\n")
    code = f"""
import resource, sys
from topodiag.fleet import run_fleet
from topodiag.actions.fanout import fan_out
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = fan_out("n[01-40]", "cat {tmp_path}/report.json", local=True, fanout=8, timeout_s=60)
result = run_fleet(texts=out.outputs.items(), input_failures=out.failures.items())
out.close()
print(result.nodes, result.failed_count, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
"""
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert got.returncode == 0, got.stderr
    nodes, failed, grew_mb = map(int, got.stdout.split())
    assert (nodes, failed) == (40, 0)
    assert grew_mb < 80, grew_mb  # 160 MB of output; one node's text (and its parse) at a time
