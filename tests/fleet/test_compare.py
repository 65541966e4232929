"""Outliers against the majority, on fleets derived from a real report (the healthy 8x H100 HGX
node of fixtures/hosts, made by the check pipeline): each planted difference is found, worded as a
person would say it, and no other node is reported."""

from __future__ import annotations

import json

import pytest

from topodiag.fleet import run_fleet
from topodiag.fleet.compare import compare
from topodiag.fleet.reports import accept
from topodiag.fleet.tally import Tally

from .conftest import node, write_jsonl

# node -> (fingerprint key, planted value, the line fleet must print). The base node has:
# mlx5_0..2 ports at 400 Gb/s InfiniBand Active, firmware 28.43.2026, every GPU at PIX from its
# own NIC (gpu:N -> mlx5_N), gpu:0-3 on NUMA 0 and gpu:4-7 on NUMA 1, 28 NV18 pairs.
PLANTED = {
    "node04": ("nic:mlx5_1.port1.rate_gbps", 200.0, "nic:mlx5_1 port 1 at 200 Gb/s, 39 others at 400"),
    "node09": ("nic:mlx5_0.firmware", "28.39.1002", "firmware of mlx5_0 28.39.1002, 39 others 28.43.2026"),
    "node12": ("gpu:3.nearest_nic", "mlx5_3 SYS", "gpu:3 nearest NIC mlx5_3 at SYS, 39 others at PIX"),
    "node17": ("gpu:6.numa", 0, "gpu:6 on NUMA node 0, 39 others 1"),
    "node23": ("nic:mlx5_2.port1.state", "Down", "nic:mlx5_2 port 1 Down, 39 others Active"),
    "node31": ("gpu_pairs.NV18", 27, "27 GPU pairs at NV18, 39 others 28"),
    "node35": ("gpu.model", "NVIDIA H100 PCIe", "GPU model NVIDIA H100 PCIe, 39 others NVIDIA H100 80GB HBM3"),
    "node38": ("nic:mlx5_0.port1.link_layer", "Ethernet",
               "nic:mlx5_0 port 1 link layer Ethernet, 39 others InfiniBand"),
}


def fleet(base, n, planted=None, **per_node):
    """Reports node01..nodeNN from base; `planted` {node: (key, value, _)}; per_node {node: changes}."""
    out = []
    for i in range(1, n + 1):
        host = f"node{i:02d}"
        changes = dict(per_node.get(host, {}))
        if planted and host in planted:
            key, value, _ = planted[host]
            changes.setdefault("fp", {})[key] = value
        out.append(node(base, host, **changes))
    return out


def compared(reports, **params):
    tally = Tally()
    for i, r in enumerate(reports):
        tally.add(accept(r, f"r{i}"))
    return compare(tally, **params)


def lines(comparison) -> dict[str, str]:
    return {o.node: o.line for o in comparison.outliers}


def test_the_base_report_has_the_keys_the_planted_values_change(base_report):
    fp = base_report["fingerprint"]
    for key, value, _ in PLANTED.values():
        assert key in fp and fp[key] != value


def test_every_planted_outlier_is_found_and_nothing_else(tmp_path, base_report):
    path = write_jsonl(tmp_path / "fleet.jsonl", fleet(base_report, 40, PLANTED))
    result = run_fleet([str(path)])
    assert result.nodes == 40 and result.failures == []
    assert lines(result.comparison) == {n: f"{n}: {text}" for n, (_, _, text) in PLANTED.items()}
    assert result.comparison.splits == []
    o = {o.node: o for o in result.outliers}["node04"]
    [d] = o.differences
    assert (d.kind, d.key, d.value, d.majority, d.others) == ("differs", "nic:mlx5_1.port1.rate_gbps", 200.0, 400.0, 39)
    entry = {e["key"]: e for e in result.comparison.by_key}["nic:mlx5_1.port1.rate_gbps"]
    assert entry["majority"] == 400.0 and entry["majority_nodes"] == 39
    assert entry["differs"] == [{"value": 200.0, "nodes": ["node04"]}]
    json.dumps(result.to_dict())


def test_a_node_with_two_differences_gets_one_line_in_key_order(base_report):
    reports = fleet(base_report, 10, node07={"fp": {"nic:mlx5_2.firmware": "28.39.1002", "gpu:1.numa": 1}})
    assert lines(compared(reports)) == {
        "node07": "node07: gpu:1 on NUMA node 1, 9 others 0; firmware of mlx5_2 28.39.1002, 9 others 28.43.2026"}


def test_a_missing_key_is_an_outlier(base_report):
    reports = fleet(base_report, 10, node03={"drop": ["nic:mlx5_0.firmware"]})
    c = compared(reports)
    assert lines(c) == {"node03": "node03: firmware of mlx5_0 absent, 9 others 28.43.2026"}
    assert c.outliers[0].differences[0].kind == "missing"


def test_a_missing_nic_or_port_is_one_item(base_report):
    nic = [k for k in base_report["fingerprint"] if k.startswith("nic:mlx5_2.")]
    port = [k for k in nic if k.startswith("nic:mlx5_2.port1.")]
    reports = fleet(base_report, 10, node05={"drop": nic}, node06={"drop": port})
    c = compared(reports)
    # the port's facts are on 8 others (node05 and node06 both lack them): the fewest is said
    assert lines(c) == {
        "node05": f"node05: nic:mlx5_2 absent ({len(nic)} facts), 8 others have it",
        "node06": f"node06: nic:mlx5_2 port 1 absent ({len(port)} facts), 8 others have it",
    }
    assert set(c.outliers[0].differences[0].keys) == set(nic)


def test_a_fact_only_one_node_has_is_an_outlier(base_report):
    reports = fleet(base_report, 10, node02={"fp": {"gpu:3.lost": True}},
                    node08={"fp": {"nic:mlx5_9.model": "MT4129", "nic:mlx5_9.port1.rate_gbps": 400.0}})
    assert lines(compared(reports)) == {
        "node02": "node02: gpu:3 lost (fell off the bus), absent on 9 others",
        "node08": "node08: nic:mlx5_9 present (2 facts), absent on 9 others",
    }


def test_an_even_split_blames_nobody(base_report):
    reports = fleet(base_report, 6, **{f"node0{i}": {"fp": {"nic:mlx5_0.firmware": "28.39.1002"}} for i in (1, 2, 3)})
    c = compared(reports)
    assert c.outliers == []
    [s] = c.splits
    assert s.key == "nic:mlx5_0.firmware" and s.text == "nic:mlx5_0.firmware: 28.39.1002 on 3, 28.43.2026 on 3"


def test_no_value_with_half_the_nodes_is_a_split(base_report):
    # 5 nodes: 2 on 400, 2 on 200, 1 on 100: nobody has 50%
    reports = fleet(base_report, 5, node01={"fp": {"nic:mlx5_0.port1.rate_gbps": 200.0}},
                    node02={"fp": {"nic:mlx5_0.port1.rate_gbps": 200.0}},
                    node03={"fp": {"nic:mlx5_0.port1.rate_gbps": 100.0}})
    c = compared(reports)
    assert c.outliers == [] and [s.key for s in c.splits] == ["nic:mlx5_0.port1.rate_gbps"]


def test_a_narrow_majority_counts_unless_min_share_asks_for_more(base_report):
    slow = {f"node0{i}": {"fp": {"nic:mlx5_0.port1.rate_gbps": 200.0}} for i in (1, 2, 3)}
    reports = fleet(base_report, 7, **slow)  # 4 at 400, 3 at 200
    assert sorted(lines(compared(reports))) == ["node01", "node02", "node03"]
    c = compared(reports, min_share=0.75)
    assert c.outliers == [] and len(c.splits) == 1


def test_an_even_presence_is_a_split(base_report):
    reports = fleet(base_report, 8, **{f"node0{i}": {"drop": ["nic:mlx5_0.firmware"]} for i in (1, 2, 3, 4)})
    c = compared(reports)
    assert c.outliers == []
    [s] = c.splits
    assert s.absent == 4 and s.text == "nic:mlx5_0.firmware: 28.43.2026 on 4, absent on 4"


def test_two_nodes_are_too_few_for_a_majority(base_report):
    reports = fleet(base_report, 2, node01={"fp": {"gpu:0.numa": 1}})
    c = compared(reports)
    assert c.outliers == [] and [s.key for s in c.splits] == ["gpu:0.numa"]


def test_identical_nodes_have_no_outliers_and_no_splits(base_report):
    c = compared(fleet(base_report, 12))
    assert c.outliers == [] and c.splits == [] and c.nodes == 12 and c.keys == len(base_report["fingerprint"])


def test_the_real_host_scenarios_compare_without_error(host_reports, tmp_path):
    """15 different machines: most keys are splits or only on a few; the run still completes."""
    path = write_jsonl(tmp_path / "hosts.jsonl", list(host_reports.values()))
    result = run_fleet([str(path)])
    assert result.nodes == len(host_reports) and result.failures == []
    assert {s.key for s in result.comparison.splits} >= {"gpu.count"}
    json.dumps(result.to_dict())


def test_numbers_compare_by_value(base_report):
    reports = fleet(base_report, 4, node01={"fp": {"nic:mlx5_0.port1.rate_gbps": 400}})  # int 400 == 400.0
    assert compared(reports).outliers == []


@pytest.mark.parametrize("key, value, majority, text", [
    ("gpu:5.nvlinks_active", 17, 18, "gpu:5 has 17 active NVLinks, 9 others 18"),
    ("gpu:0000:07:00.0.pcie", "Gen4 x16", "Gen5 x16", "gpu:0000:07:00.0 PCIe Gen4 x16, 9 others Gen5 x16"),
    ("gpu:3.nearest_nic", "mlx5_4 PIX", "mlx5_3 PIX", "gpu:3 nearest NIC mlx5_4 at PIX, 9 others mlx5_3 at PIX"),
    ("nic:mlx5_3.model", "MT4123", "MT4129", "nic:mlx5_3 model MT4123, 9 others MT4129"),
    ("nic:mlx5_3.numa", 1, 0, "nic:mlx5_3 on NUMA node 1, 9 others 0"),
    ("nic:eth0.100.port1.physical_state", "Polling", "LinkUp",
     "nic:eth0.100 port 1 physical state Polling, 9 others LinkUp"),
    ("driver_version", "535.104.05", "550.54.15", "driver 535.104.05, 9 others 550.54.15"),
    ("cuda_driver_version", "12.2", "12.4", "CUDA driver 12.2, 9 others 12.4"),
    ("gpu.count", 7, 8, "7 GPUs, 9 others 8"),
    ("nccl.transports", "NET/Socket,SHM", "NET/IB/GDRDMA,P2P/CUMEM",
     "NCCL transports NET/Socket,SHM, 9 others NET/IB/GDRDMA,P2P/CUMEM"),
    ("something.new", 1.5, 2, "something.new 1.5, 9 others 2"),
])
def test_wording(key, value, majority, text):
    from topodiag.fleet import wording

    assert wording.differs(key, value, majority, 9) == text
