"""The cluster summary (data and table rows), the text and JSON forms, and the import budget."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from topodiag.fleet import render_json, render_text, run_fleet
from topodiag.fleet.summary import rows

from .conftest import INVENTED_LOG, node, write_jsonl


def small_fleet(tmp_path, base):
    reports = [node(base, f"n{i}") for i in range(1, 6)]
    reports[1]["fingerprint"]["nic:mlx5_1.port1.rate_gbps"] = 200.0
    reports[2]["fingerprint"]["nic:mlx5_0.firmware"] = "28.39.1002"
    reports[3]["findings"] = [{"code": "IB002", "severity": "error"}, {"code": "IB002", "severity": "error"},
                              {"code": "TOPO003", "severity": "warning"}]
    reports[4]["fingerprint"]["driver_version"] = "550.54.15"
    path = write_jsonl(tmp_path / "fleet.jsonl", reports)
    (tmp_path / "bad.json").write_text("nope")
    return run_fleet([str(path), str(tmp_path / "bad.json")], nccl_logs=[str(INVENTED_LOG)])


def test_summary_counts(tmp_path, base_report):
    s = small_fleet(tmp_path, base_report).summary
    assert s["nodes"] == {"read": 5, "failed": 1, "duplicates": 0,
                          "by_worst_finding": {"none": 4, "info": 0, "warning": 0, "error": 1, "critical": 0}}
    assert s["gpus"] == [{"model": "NVIDIA H100 80GB HBM3", "count": 8, "nodes": 5}]
    assert s["nics"] == [{"model": "MT4129", "firmware": "28.43.2026", "nics": 14, "nodes": 5},
                         {"model": "MT4129", "firmware": "28.39.1002", "nics": 1, "nodes": 1}]
    # the base report has rates for mlx5_0 and mlx5_1 only (its ibstat excerpt ends there)
    assert s["ports"] == [{"rate_gbps": 400.0, "link_layer": "InfiniBand", "ports": 9, "nodes": 5},
                          {"rate_gbps": 200.0, "link_layer": "InfiniBand", "ports": 1, "nodes": 1}]
    assert s["drivers"] == [{"version": "550.54.15", "nodes": 1}, {"version": None, "nodes": 4}]
    assert s["findings"] == [{"code": "IB002", "nodes": 1}, {"code": "TOPO003", "nodes": 1}]
    table = rows(s)
    assert ("GPUs", "8 x NVIDIA H100 80GB HBM3", "5 nodes") in table
    assert ("ports", "400 Gb/s InfiniBand", "9 on 5 nodes") in table
    assert ("", "200 Gb/s InfiniBand", "1 on 1 node") in table
    assert ("findings", "IB002", "1 node") in table


def test_text_form(tmp_path, base_report):
    result = small_fleet(tmp_path, base_report)
    out = io.StringIO()
    render_text(result, file=out)
    text = out.getvalue()
    assert "5 nodes compared on" in text and "1 input gave no report" in text
    for line in ("nic:mlx5_1 port 1 at 200 Gb/s, 4 others at 400", "firmware of mlx5_0 28.39.1002, 4 others 28.43.2026",
                 "noded: NET/Socket, 3 others NET/IB/GDRDMA", "Cluster summary", "not JSON (line 1 starts 'nope')"):
        assert line in text, line
    assert "\x1b[" not in text  # no colour off a terminal


def test_json_form(tmp_path, base_report):
    result = small_fleet(tmp_path, base_report)
    data = json.loads(render_json(result))
    assert data["schema_version"] == 1 and data["nodes"] == 5 and data["failed"] == 1
    assert [o["line"] for o in data["outliers"]] == [
        "n2: nic:mlx5_1 port 1 at 200 Gb/s, 4 others at 400",
        "n3: firmware of mlx5_0 28.39.1002, 4 others 28.43.2026",
        "n5: driver 550.54.15, absent on 4 others"]
    assert data["failures"] == [{"input": str(tmp_path / "bad.json"),
                                 "reason": "not JSON (line 1 starts 'nope'); expected topodiag check reports, "
                                           "one per file or per line"}]
    assert data["nccl"][0]["outliers"][0]["host"] == "noded"


def test_importing_fleet_stays_cheap():
    code = ("import sys, topodiag.fleet, topodiag.fleet.reports, topodiag.fleet.compare, topodiag.fleet.summary; "
            "print(sorted(m for m in ('rich', 'networkx', 'typer') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
