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
                          "by_worst_finding": {"none": 4, "info": 0, "warning": 0, "error": 1, "critical": 0},
                          "by_worst_finding_named": {"error": ["n4"]}}
    assert s["gpus"] == [{"model": "NVIDIA H100 80GB HBM3", "count": 8, "nodes": 5}]
    assert s["nics"] == [{"model": "MT4129", "firmware": "28.43.2026", "nics": 14, "nodes": 5},
                         {"model": "MT4129", "firmware": "28.39.1002", "nics": 1, "nodes": 1}]
    # the base report has rates for mlx5_0 and mlx5_1 only (its ibstat excerpt ends there)
    assert s["ports"] == [{"rate_gbps": 400.0, "link_layer": "InfiniBand", "ports": 9, "nodes": 5},
                          {"rate_gbps": 200.0, "link_layer": "InfiniBand", "ports": 1, "nodes": 1}]
    assert s["drivers"] == [{"version": "550.54.15", "nodes": 1}, {"version": None, "nodes": 4}]
    assert s["findings"] == [{"code": "IB002", "nodes": 1, "named": ["n4"]}, {"code": "TOPO003", "nodes": 1, "named": ["n4"]}]
    table = rows(s)
    assert ("GPUs", "8 x NVIDIA H100 80GB HBM3", "5 nodes") in table
    assert ("ports", "400 Gb/s InfiniBand", "9 on 5 nodes") in table
    assert ("", "200 Gb/s InfiniBand", "1 on 1 node") in table
    assert ("findings", "IB002: n4", "1 node") in table and ("", "worst finding error: n4", "1") in table


def test_text_form(tmp_path, base_report):
    result = small_fleet(tmp_path, base_report)
    out = io.StringIO()
    render_text(result, file=out)
    text = out.getvalue()
    assert max(len(ln) for ln in text.splitlines()) <= 80  # folded to 80 columns off a terminal
    text = " ".join(text.split())
    assert "5 nodes compared on" in text and "1 input gave no report" in text
    for line in ("nic:mlx5_1 port 1 at 200 Gb/s, 4 others at 400", "firmware of mlx5_0 28.39.1002, 4 others 28.43.2026",
                 "noded: NET/Socket, 3 others NET/IB/GDRDMA", "Cluster summary", "not JSON (line 1 is not a report"):
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
                                 "reason": "not JSON (line 1 is not a report, an array or fan-out output); expected topodiag check reports, "
                                           "one per file or per line"}]
    assert data["nccl"][0]["outliers"][0]["host"] == "noded"


def test_importing_fleet_stays_cheap():
    code = ("import sys, topodiag.fleet, topodiag.fleet.reports, topodiag.fleet.compare, topodiag.fleet.summary; "
            "print(sorted(m for m in ('rich', 'networkx', 'typer') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _summary_node_by_node(tally) -> dict:
    """The NIC, port, GPU and finding counts of `summarize`, counted one node at a time (as
    summary.py counted them before it counted a value at a time)."""
    from collections import Counter

    def node_values(key):
        return {i: v for v, nodes in tally.values(key) for i in nodes}

    def per_entity(suffix, with_suffix):
        for key in [k for k in tally.keys if k.startswith("nic:") and k.endswith(suffix)]:
            sibling = node_values(key[: -len(suffix)] + with_suffix)
            for v, nodes in tally.values(key):
                for i in nodes:
                    yield i, v, sibling.get(i)

    live = list(tally.live())
    model, count = node_values("gpu.model"), node_values("gpu.count")
    gpus = Counter((model.get(i), count.get(i)) for i in live)
    nics, nic_nodes, ports, port_nodes = Counter(), {}, Counter(), {}
    for i, m, fw in per_entity(".model", ".firmware"):
        nics[(m, fw)] += 1
        nic_nodes.setdefault((m, fw), set()).add(i)
    for i, fw, m in per_entity(".firmware", ".model"):
        if m is None:
            nics[(None, fw)] += 1
            nic_nodes.setdefault((None, fw), set()).add(i)
    for i, rate, layer in per_entity(".rate_gbps", ".link_layer"):
        ports[(rate, layer)] += 1
        port_nodes.setdefault((rate, layer), set()).add(i)
    codes, worst = Counter(), Counter()
    for i in live:
        codes.update(tally.codes[i])
        worst[tally.worst[i] or "none"] += 1
    return {"gpus": list(gpus.items()), "nics": [(p, n, len(nic_nodes[p])) for p, n in nics.items()],
            "ports": [(p, n, len(port_nodes[p])) for p, n in ports.items()], "codes": sorted(codes.items()),
            "worst": sorted(worst.items())}


def test_summary_counted_by_value_is_the_node_by_node_count():
    """Random small fleets with values that are equal across types (1, True, 1.0), nulls, missing
    keys, re-read sources: the same counts, in the same order of first node."""
    import random

    from topodiag.fleet.reports import NodeReport
    from topodiag.fleet.summary import summarize
    from topodiag.fleet.tally import Tally

    rnd = random.Random(11)
    values = [None, 1, True, 1.0, "1", "x", "None", 400, 400.0, 200, "IB", "Eth"]
    for _ in range(400):
        tally = Tally()
        n = rnd.randint(0, 25)
        for _ in range(n):
            fp = {f"nic:{nic}.{f}": rnd.choice(values) for nic in ("mlx5_0", "mlx5_1")
                  for f in ("model", "firmware", "port1.rate_gbps", "port1.link_layer") if rnd.random() < 0.7}
            fp.update({f: rnd.choice(values) for f in ("gpu.model", "gpu.count") if rnd.random() < 0.7})
            codes = tuple(sorted(rnd.sample(["IB001", "IB002", "GPU003"], rnd.randint(0, 2))))
            tally.add(NodeReport(f"f{rnd.randint(0, n)}", None, fp, codes, rnd.choice([None, "info", "error"])))
        tally.finish()
        got = summarize(tally)
        want = _summary_node_by_node(tally)

        def same(a, b):  # as JSON: 1, true and 1.0 differ
            assert json.dumps(a) == json.dumps(b)

        def ordered(pairs):
            return sorted(pairs, key=lambda p: (-p[1], str(p[0][0]), str(p[0][1])))

        same([((r["model"], r["count"]), r["nodes"]) for r in got["gpus"]], ordered(want["gpus"]))
        same([((r["model"], r["firmware"]), r["nics"], r["nodes"]) for r in got["nics"]], ordered(want["nics"]))
        same([((r["rate_gbps"], r["link_layer"]), r["ports"], r["nodes"]) for r in got["ports"]],
             ordered(want["ports"]))
        assert sorted((f["code"], f["nodes"]) for f in got["findings"]) == want["codes"]
        assert sorted((k, v) for k, v in got["nodes"]["by_worst_finding"].items() if v) == want["worst"]
