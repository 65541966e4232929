"""Nodes are keyed by where their report came from (issue 16): a report can claim any host name, so
a cloned hostname must not fold nodes together, and a node must not hide another by claiming its
name. The host each report claims is data; a host name claimed by more than one source is reported."""

from __future__ import annotations

import json

from topodiag.fleet import run_fleet

from .conftest import node


def test_eight_nodes_with_a_cloned_hostname_are_eight_and_the_broken_one_shows(base_report):
    texts = []
    for i in range(1, 9):
        fp = {"nic:mlx5_1.port1.rate_gbps": 200.0} if i == 6 else {}
        texts.append((f"gpu{i:02d}", json.dumps(node(base_report, "localhost.localdomain", fp=fp))))
    result = run_fleet(texts=texts)
    assert result.nodes == 8
    assert [o.line for o in result.outliers] == ["gpu06: nic:mlx5_1 port 1 at 200 Gb/s, 7 others at 400"]
    assert result.outliers[0].host == "localhost.localdomain"
    [dup] = result.duplicates
    assert dup["host"] == "localhost.localdomain" and dup["nodes"] == [f"gpu{i:02d}" for i in range(1, 9)]
    assert dup["text"] == ("host localhost.localdomain reported by 8 sources: "
                           "gpu01, gpu02, gpu03, gpu04, gpu05, gpu06, gpu07, gpu08")
    assert result.summary["nodes"]["duplicates"] == 1 and result.summary["nodes"]["read"] == 8
    assert dup["text"] in result.lines()


def test_a_node_claiming_another_nodes_name_hides_nothing(base_report):
    sick = node(base_report, "gpu01")
    sick["findings"] = [{"code": "IB001", "severity": "critical"}]
    texts = [("gpu01", json.dumps(node(base_report, "gpu01"))), ("gpu02", json.dumps(node(base_report, "gpu02"))),
             ("gpu05", json.dumps(sick))]  # gpu05 says it is gpu01
    result = run_fleet(texts=texts)
    assert result.nodes == 3
    assert result.with_findings == [{"node": "gpu05", "input": "gpu05", "host": "gpu01", "worst": "critical",
                                     "codes": ["IB001"]}]
    assert [(d["host"], d["nodes"]) for d in result.duplicates] == [("gpu01", ["gpu01", "gpu05"])]


def test_a_fan_out_nodes_output_cannot_name_another_node(base_report):
    """A prefix or a clush -b header inside one node's own output is its text, not a node name."""
    sick = node(base_report, None)
    sick["findings"] = [{"code": "IB001", "severity": "error"}]
    prefixed = "gpu01: " + json.dumps(sick) + "\n"
    header = "-" * 15 + "\ngpu01\n" + "-" * 15 + "\n" + json.dumps(sick) + "\n"
    for text in (prefixed, header):
        result = run_fleet(texts=[("gpu01", json.dumps(node(base_report, None))), ("gpu07", text)])
        assert result.nodes == 2 and not result.duplicates
        assert [(n["node"], n["input"], n["host"]) for n in result.with_findings] == [("gpu07", "gpu07", None)]


def test_files_claiming_one_host_each_count_and_the_worst_verdict_shows(tmp_path, base_report):
    d = tmp_path / "reports"
    d.mkdir()
    for i in range(1, 9):
        r = node(base_report, "clone")
        if i == 3:
            r["findings"] = [{"code": "NVL001", "severity": "error"}]
        (d / f"n{i}.json").write_text(json.dumps(r, indent=2))
    result = run_fleet([str(d)])
    assert result.nodes == 8
    assert [n["input"] for n in result.at_or_above("error")] == [str(d / "n3.json")]
    assert result.at_or_above("error")[0]["node"] == f"clone ({d / 'n3.json'})"
    [dup] = result.duplicates
    assert dup["sources"] == [str(d / f"n{i}.json") for i in range(1, 9)]
    assert dup["text"].startswith("host clone reported by 8 sources: clone (") and " more" not in dup["text"]


def test_reports_without_a_host_from_distinct_prefixes_are_not_duplicates(tmp_path, base_report):
    path = tmp_path / "clush.txt"
    path.write_text("".join(f"n{i}: {json.dumps(node(base_report, None))}\n" for i in range(1, 4)))
    result = run_fleet([str(path)])
    assert result.nodes == 3 and not result.duplicates


def test_srun_label_task_numbers_are_not_node_names(tmp_path, base_report):
    path = tmp_path / "srun.txt"
    path.write_text("".join(f"{i}: {json.dumps(node(base_report, f'h{i}'))}\n" for i in range(3)))
    result = run_fleet([str(path)])
    assert result.nodes == 3 and not result.duplicates
    # the same task number in two runs appended together is not a duplicate host: the hosts differ
    path.write_text("".join(f"0: {json.dumps(node(base_report, h))}\n" for h in ("h1", "h2")))
    assert not run_fleet([str(path)]).duplicates


def test_a_clush_b_header_naming_a_million_nodes_is_refused_unexpanded(tmp_path, base_report):
    import time

    sep = "-" * 15
    report = json.dumps(node(base_report, None))
    path = tmp_path / "clush.txt"
    path.write_text(f"{sep}\nn[1-1000000] (1000000)\n{sep}\n{report}\n"
                    + "".join(f"{sep}\nm{i}-[1-40000] (40000)\n{sep}\n{report}\n" for i in range(4))
                    + f"{sep}\n@gpu (3)\n{sep}\n{report}\n")
    started = time.process_time()
    result = run_fleet([str(path)])
    assert time.process_time() - started < 20
    reasons = [f.reason for f in result.failures]
    assert "clush -b header: [1-1000000] is 1000000 values; at most 100000 in one range" in reasons
    assert any("more than 100000 nodes in one input" in r for r in reasons), reasons
    assert any("names a @group" in r for r in reasons), reasons
    # the first two 40,000-node blocks; the report under each refused header counts once, unnamed
    assert result.nodes == 80000 + 4
