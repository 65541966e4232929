"""Reading node reports: files, JSON lines (plain, clush/srun-prefixed, interleaved), directories,
bundles; every bad input is one failure with a one-line reason."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from topodiag.fleet import run_fleet
from topodiag.fleet.reports import Failure, NodeReport, read_reports, read_texts

from .conftest import BASE_SCENARIO, node, scenarios, write_jsonl


def items(*paths):
    return list(read_reports([str(p) for p in paths]))


def one_failure(path) -> Failure:
    got = items(path)
    assert len(got) == 1 and isinstance(got[0], Failure), got
    assert "\n" not in got[0].reason and got[0].reason
    return got[0]


def test_real_reports_of_every_host_scenario_are_read_from_a_directory(tmp_path, host_reports):
    for name, report in host_reports.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(report, indent=2))
    (tmp_path / "notes.txt").write_text("not a report, not a .json: skipped")
    got = items(tmp_path)
    assert all(isinstance(g, NodeReport) for g in got)
    assert [g.label for g in got] == [str(tmp_path / f"{n}.json") for n in sorted(host_reports)]
    for g, name in zip(got, sorted(host_reports)):
        report = host_reports[name]
        assert g.host == report["host"] and g.fingerprint == report["fingerprint"]
        assert g.codes == tuple(sorted({f["code"] for f in report["findings"]}))


def test_a_bundle_directory_and_archive_give_the_check_report(tmp_path, base_report):
    from topodiag.bundle import pack

    archive = tmp_path / "node.tar.gz"
    pack(str(BASE_SCENARIO), str(archive))
    for path in (BASE_SCENARIO, archive):
        [got] = items(path)
        assert isinstance(got, NodeReport), got
        assert got.label == str(path) and got.host == base_report["host"]
        assert got.fingerprint == base_report["fingerprint"] and got.codes == ()


def test_the_host_scenarios_directory_is_read_as_bundles():
    result = run_fleet([str(BASE_SCENARIO.parent)])
    assert result.nodes == len(scenarios()) and result.failures == []


def test_json_lines_one_report_per_line(tmp_path, base_report):
    path = write_jsonl(tmp_path / "fleet.jsonl", [node(base_report, f"n{i}") for i in range(3)])
    got = items(path)
    assert [g.host for g in got] == ["n0", "n1", "n2"]
    assert [g.label for g in got] == [f"{path}:{i}" for i in (1, 2, 3)]


def test_a_single_report_file_is_labelled_by_the_file(tmp_path, base_report):
    path = tmp_path / "n1.json"
    path.write_text(json.dumps(node(base_report, "n1"), indent=2) + "\n")
    [got] = items(path)
    assert got.label == str(path) and got.host == "n1"


def test_clush_prefixed_lines_and_interleaved_indented_reports(tmp_path, base_report):
    """clush without -b prints `node: line` as lines arrive: indented reports of several nodes
    interleave; each is put back together by its prefix. The prefix names a report without host."""
    a = json.dumps(node(base_report, "gpu01"), indent=2).splitlines()
    b_report = node(base_report, None)
    b = json.dumps(b_report, indent=2).splitlines()
    lines = []
    for i in range(max(len(a), len(b))):
        if i < len(a):
            lines.append(f"gpu01: {a[i]}")
        if i < len(b):
            lines.append(f"gpu02: {b[i]}")
    lines.append("gpu03: " + json.dumps(node(base_report, "gpu03")))
    lines.append("  7: " + json.dumps(node(base_report, "gpu07")))  # srun --label
    path = tmp_path / "clush.out"
    path.write_text("\n".join(lines) + "\n")
    got = items(path)
    assert sorted(g.name for g in got) == ["gpu01", "gpu02", "gpu03", "gpu07"]
    assert all(isinstance(g, NodeReport) and g.fingerprint == base_report["fingerprint"] for g in got)


def test_reports_from_a_fan_out_in_memory(base_report):
    text = json.dumps(node(base_report, None), indent=2)
    [got] = list(read_texts([("gpu05", text)]))
    assert got.name == "gpu05" and got.fingerprint == base_report["fingerprint"]


def test_a_json_array_of_reports(tmp_path, base_report):
    path = tmp_path / "all.json"
    path.write_text(json.dumps([node(base_report, "a"), node(base_report, "b")]))
    assert [g.host for g in items(path)] == ["a", "b"]


@pytest.mark.parametrize("content, reason", [
    ("hello world\n", "not JSON (line 1 is not a report"),
    ("", "empty file"),
    ("\n\n  \n", "empty file"),
    ('{\n  "schema_version": 1,\n  "fingerprint": {"a": 1', "not complete at the end of the input"),
    ('{"schema_version": 1, "fingerprint": {} x}', "not JSON"),
    ('"just a string"\n', "not JSON (line 1"),
    ('[1]', "not a topodiag report (JSON a number, expected an object)"),
    ('{"source": "nvml", "gpus": []}', "a `topodiag parse` output (source nvml)"),
    ('{"host": "x", "findings": []}', "not a topodiag report (no schema_version and fingerprint)"),
    ('{"schema_version": 1, "host": "x", "fingerprint": {}}', "report schema_version 1; this topodiag reads 4 (and 2, 3"),
    ('{"schema_version": 2, "host": "x", "fingerprint": [1]}', "fingerprint is not an object"),
    ('{"schema_version": 2, "host": "x", "fingerprint": {}, "findings": 3}', "findings is not a list"),
])
def test_bad_report_files_are_one_failure_each(tmp_path, content, reason):
    path = tmp_path / "bad.json"
    path.write_text(content)
    f = one_failure(path)
    assert reason in f.reason, f.reason


def test_binary_and_missing_files(tmp_path):
    path = tmp_path / "bin.json"
    path.write_bytes(b"\x00\x01\x02")
    assert "not JSON" in one_failure(path).reason or "binary" in one_failure(path).reason
    assert one_failure(tmp_path / "nope.json").reason == "no such file or directory"


def test_bad_bundles_are_failures(tmp_path):
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(gzip.compress(b"this is not a tar archive"))
    assert "not a readable tar archive" in one_failure(broken).reason
    bundle = tmp_path / "bundle"
    shutil.copytree(BASE_SCENARIO, bundle)
    (bundle / "manifest.json").write_text("{ not json")
    assert one_failure(bundle).label == str(bundle)


def test_bad_lines_in_json_lines_are_failures_and_good_lines_still_count(tmp_path, base_report):
    path = tmp_path / "fleet.jsonl"
    path.write_text(json.dumps(node(base_report, "a")) + "\n"
                    + "clush: b: exited with exit code 255\n"
                    + '{"truncated": \n'
                    + json.dumps(node(base_report, "c")) + "\n")
    got = items(path)
    assert [g.host for g in got if isinstance(g, NodeReport)] == ["a", "c"]
    fails = [g for g in got if isinstance(g, Failure)]
    assert len(fails) == 2 and fails[0].label == f"{path}:2" and fails[1].label == f"{path}:3"
    assert "cut off: a new one starts at line 4" in fails[1].reason
    assert "not a JSON report line" in fails[0].reason


def test_many_bad_lines_are_listed_up_to_a_cap_and_counted(tmp_path, base_report):
    from topodiag.fleet.reports import MAX_FAILURES_PER_FILE

    path = tmp_path / "fleet.jsonl"
    path.write_text(json.dumps(node(base_report, "a")) + "\n" + "{oops}\n" * (MAX_FAILURES_PER_FILE + 20))
    result = run_fleet([str(path)])
    assert result.nodes == 1 and result.failed_count == MAX_FAILURES_PER_FILE + 20
    assert len(result.failures) == MAX_FAILURES_PER_FILE + 1
    assert result.failures[-1].reason == "20 more lines that are not reports"


def test_the_same_host_from_two_sources_counts_twice_and_is_reported(tmp_path, base_report):
    """Nodes are keyed by where their report came from, not by the host it claims (issue 16: a
    cloned hostname folded eight nodes into one and hid the broken one). Was: the last report won."""
    first = node(base_report, "n2", fp={"nic:mlx5_0.firmware": "old"})
    path = write_jsonl(tmp_path / "fleet.jsonl", [node(base_report, "n1"), first, node(base_report, "n3"),
                                                  node(base_report, "n2")])
    result = run_fleet([str(path)])
    assert result.nodes == 4 and [o.node for o in result.outliers] == [f"n2 ({path}:2)"]
    assert result.outliers[0].host == "n2"
    assert result.duplicates == [{"host": "n2", "sources": [f"{path}:2", f"{path}:4"],
                                  "nodes": [f"n2 ({path}:2)", f"n2 ({path}:4)"],
                                  "text": f"host n2 reported by 2 sources: n2 ({path}:2), n2 ({path}:4)"}]
    assert result.summary["nodes"]["duplicates"] == 1 and result.has_duplicates


def test_the_same_input_twice_counts_once(tmp_path, base_report):
    path = tmp_path / "n1.json"
    path.write_text(json.dumps(node(base_report, "n1")))
    result = run_fleet([str(path), str(path)])
    assert result.nodes == 1 and not result.duplicates and result.rereads == [str(path)]


def test_indented_reports_concatenated_are_each_read(tmp_path, base_report):
    path = tmp_path / "all.json"
    a = json.dumps(node(base_report, "a"), indent=2)
    path.write_text(a + "\n" + json.dumps(node(base_report, "b"), indent=2) + "\n")
    got = items(path)
    assert [(g.host, g.label) for g in got] == [("a", f"{path}:1"), ("b", f"{path}:{a.count(chr(10)) + 2}")]


def test_a_broken_indented_report_says_where(tmp_path, base_report):
    path = tmp_path / "n1.json"
    text = json.dumps(node(base_report, "n1"), indent=2).splitlines()
    path.write_text("\n".join(text[:10] + ["  oops,"] + text[10:]) + "\n")
    f = one_failure(path)
    assert f.label == f"{path}:1" and f.reason.startswith("not JSON: Expecting")


def test_standard_input_and_a_byte_order_mark(tmp_path, base_report):
    import subprocess
    import sys

    text = "".join("n%d: %s\n" % (i, json.dumps(node(base_report, None))) for i in (1, 2))
    code = ("from topodiag.fleet.reports import read_reports; "
            "print([(i.name, i.label) for i in read_reports(['-'])])")
    out = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[('n1', '<stdin>:1'), ('n2', '<stdin>:2')]"
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(node(base_report, "b"), indent=2).encode())
    [got] = items(path)
    assert isinstance(got, NodeReport) and got.host == "b"


def test_run_fleet_takes_a_fan_outs_outputs_and_failures(base_report):
    text = json.dumps(node(base_report, None), indent=2)
    result = run_fleet(texts=[("gpu01", text)], input_failures=[("gpu02", "ssh failed (exit 255)")])
    assert result.nodes == 1 and result.comparison.outliers == []
    assert [f.to_dict() for f in result.failures] == [{"input": "gpu02", "reason": "ssh failed (exit 255)", "node": True}]


def test_check_options_reach_the_bundle_pipeline(capsys):
    [got] = list(read_reports([str(BASE_SCENARIO)], {"profile": "no-such-profile"}))
    assert isinstance(got, Failure)
    assert got.reason.startswith("the check pipeline refused it: --profile: unknown profile 'no-such-profile'")
    assert capsys.readouterr().err == ""  # the library raises; it never prints


SEP = "-" * 15


def clush_b(blocks) -> str:
    """clush -b's layout, as ClusterShell's Display.format_header writes it."""
    return "".join(f"{SEP}\n{header}\n{SEP}\n{body}\n" for header, body in blocks)


def test_clush_b_blocks_name_their_node(tmp_path, base_report):
    a, b = node(base_report, None), node(base_report, "b.cluster.local")
    path = tmp_path / "clush.txt"
    path.write_text(clush_b([("a", json.dumps(a, indent=2)), ("b", json.dumps(b, indent=2))]))
    got = items(path)
    a_lines = json.dumps(a, indent=2).count("\n") + 1
    second = 3 + a_lines + 3 + 1  # a's header, a's report, b's header, then b's first line
    # the block names the node; b's report also says its own host (kept as data)
    assert [(g.name, g.host, g.label) for g in got] == [("a", None, f"{path}:4"),
                                                         ("b", "b.cluster.local", f"{path}:{second}")]


def test_a_gathered_block_counts_for_each_node(tmp_path, base_report):
    path = tmp_path / "clush.txt"
    path.write_text(clush_b([("gpu[1-3,7] (4)", json.dumps(node(base_report, None)))]))
    got = items(path)
    assert [g.name for g in got] == ["gpu1", "gpu2", "gpu3", "gpu7"]
    assert got[0].label == f"{path}:4 (gpu1)"


@pytest.mark.parametrize("text, reason", [
    (f"{SEP}\ngpu1\n{{\n", "a clush -b header without its closing dashes"),
    (f"{SEP}\ngpu[3-1] (3)\n{SEP}\n{{}}\n", "not a node set in a clush -b header"),
    (f"{SEP}\ngpu 1 2\n{SEP}\n{{}}\n", "not a node set in a clush -b header"),
])
def test_broken_clush_b_headers(tmp_path, text, reason):
    path = tmp_path / "clush.txt"
    path.write_text(text)
    got = items(path)
    assert any(isinstance(g, Failure) and reason in g.reason for g in got), got


def test_a_gathered_block_without_clustershell_says_so(tmp_path, base_report, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ClusterShell.NodeSet", None)
    path = tmp_path / "clush.txt"
    path.write_text(clush_b([("gpu[1-2] (2)", json.dumps(node(base_report, None)))]))
    f = items(path)[0]
    assert isinstance(f, Failure) and "output gathered for gpu[1-2]: expanding it needs ClusterShell" in f.reason
