"""Mixed fleets: nodes are compared with nodes of their own GPU model (groups.py). Fleets derived
from the real healthy 8x H100 HGX report; the "A100" nodes are that report with the facts an 8x A100
HGX differs in (model, 28 pairs at NV12, CX6 HDR ports at 200 Gb/s, firmware 20.x), set by hand."""

from __future__ import annotations

import json

from topodiag.fleet import render_text, run_fleet

from .conftest import node, write_jsonl

A100 = {
    "gpu.model": "NVIDIA A100-SXM4-80GB",
    "gpu_pairs.NV12": 28,
    "nic:mlx5_0.firmware": "20.39.1002", "nic:mlx5_1.firmware": "20.39.1002", "nic:mlx5_2.firmware": "20.39.1002",
    "nic:mlx5_0.port1.rate_gbps": 200.0, "nic:mlx5_1.port1.rate_gbps": 200.0,
}


def mixed(base, h100: int, a100: int, h100_changes=None, a100_changes=None):
    """h100 nodes hNN and a100 nodes aNN; *_changes {host: {"fp": ..., "drop": ...}} on top."""
    out = []
    for i in range(1, h100 + 1):
        host = f"h{i:02d}"
        changes = (h100_changes or {}).get(host, {})
        out.append(node(base, host, fp=dict(changes.get("fp", {})), drop=changes.get("drop", ())))
    for i in range(1, a100 + 1):
        host = f"a{i:02d}"
        changes = (a100_changes or {}).get(host, {})
        out.append(node(base, host, fp={**A100, **changes.get("fp", {})},
                        drop=["gpu_pairs.NV18", *changes.get("drop", ())]))
    return out


def test_a_mixed_fleet_has_no_outliers_when_grouped_by_gpu_model(tmp_path, base_report):
    path = write_jsonl(tmp_path / "mixed.jsonl", mixed(base_report, 30, 10))
    result = run_fleet([str(path)])
    assert result.outliers == [] and result.comparison.splits == []
    assert result.comparison.params["group_by"] == "gpu.model"
    assert result.to_dict()["groups"] == [
        {"key": "gpu.model", "value": "NVIDIA H100 80GB HBM3", "nodes": 30, "joined": 0},
        {"key": "gpu.model", "value": "NVIDIA A100-SXM4-80GB", "nodes": 10, "joined": 0},
    ]


def test_without_grouping_the_minority_model_is_blamed(tmp_path, base_report):
    path = write_jsonl(tmp_path / "mixed.jsonl", mixed(base_report, 30, 10))
    result = run_fleet([str(path)], group_by=None)
    assert sorted(o.node for o in result.outliers) == [f"a{i:02d}" for i in range(1, 11)]
    assert "GPU model NVIDIA A100-SXM4-80GB, 30 others NVIDIA H100 80GB HBM3" in result.outliers[0].line


def test_an_outlier_inside_the_smaller_group_is_found_against_its_own_group(tmp_path, base_report):
    reports = mixed(base_report, 30, 10, h100_changes={"h07": {"fp": {"nic:mlx5_1.port1.rate_gbps": 200.0}}},
                    a100_changes={"a04": {"fp": {"nic:mlx5_1.port1.rate_gbps": 100.0}}})
    result = run_fleet([str(write_jsonl(tmp_path / "m.jsonl", reports))])
    got = {o.node: (o.group, o.line) for o in result.outliers}
    assert got == {
        "a04": ("NVIDIA A100-SXM4-80GB", "a04: nic:mlx5_1 port 1 at 100 Gb/s, 9 others at 200"),
        "h07": ("NVIDIA H100 80GB HBM3", "h07: nic:mlx5_1 port 1 at 200 Gb/s, 29 others at 400"),
    }
    by_key = {(e["group"], e["key"]) for e in result.comparison.by_key}
    assert by_key == {("NVIDIA A100-SXM4-80GB", "nic:mlx5_1.port1.rate_gbps"),
                      ("NVIDIA H100 80GB HBM3", "nic:mlx5_1.port1.rate_gbps")}


def test_a_node_without_the_group_key_is_compared_with_the_largest_group(tmp_path, base_report):
    """NVML saw no GPU: no gpu.model. It must not hide in a group of its own."""
    gpu_keys = [k for k in base_report["fingerprint"] if k.startswith("gpu")]
    reports = mixed(base_report, 20, 10, h100_changes={"h05": {"drop": gpu_keys}})
    result = run_fleet([str(write_jsonl(tmp_path / "m.jsonl", reports))])
    [o] = result.outliers
    assert o.node == "h05" and o.group == "NVIDIA H100 80GB HBM3"
    assert o.differences[0].text.startswith("GPU count absent, 19 others 8")
    assert result.comparison.groups[0]["joined"] == 1


def test_a_group_below_min_nodes_joins_the_largest(tmp_path, base_report):
    """Two A100 nodes are too few to stand apart: they are outliers of the H100 majority."""
    result = run_fleet([str(write_jsonl(tmp_path / "m.jsonl", mixed(base_report, 20, 2)))])
    assert [o.node for o in result.outliers] == ["a01", "a02"]
    assert result.comparison.groups == [
        {"key": "gpu.model", "value": "NVIDIA H100 80GB HBM3", "nodes": 22, "joined": 2}]
    assert "GPU model NVIDIA A100-SXM4-80GB, 20 others NVIDIA H100 80GB HBM3" in result.outliers[0].line


def test_group_by_another_key(tmp_path, base_report):
    """--group-by driver_version: two driver generations, each compared apart."""
    reports = [node(base_report, f"n{i:02d}", fp={"driver_version": "550.54.15" if i <= 6 else "535.104.05"})
               for i in range(1, 11)]
    result = run_fleet([str(write_jsonl(tmp_path / "d.jsonl", reports))], group_by="driver_version")
    assert result.outliers == []
    assert [(g["value"], g["nodes"]) for g in result.comparison.groups] == [("550.54.15", 6), ("535.104.05", 4)]
    plain = run_fleet([str(write_jsonl(tmp_path / "d2.jsonl", reports))])
    assert sorted(o.node for o in plain.outliers) == ["n07", "n08", "n09", "n10"]


def test_the_text_form_names_the_groups(tmp_path, base_report):
    import io

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return False

    reports = mixed(base_report, 30, 10, a100_changes={"a04": {"fp": {"nic:mlx5_1.port1.rate_gbps": 100.0}}})
    result = run_fleet([str(write_jsonl(tmp_path / "m.jsonl", reports))])
    out = Tty()
    render_text(result, file=out)
    text = out.getvalue()
    assert "40 nodes compared on" in text and "in 2 groups by gpu.model: 1 differ" in text
    assert "gpu.model = NVIDIA A100-SXM4-80GB: 10 nodes" in text
    assert "a04: " not in text and "nic:mlx5_1 port 1 at 100 Gb/s, 9 others at 200" in text
    json.dumps(result.to_dict())
