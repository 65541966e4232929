"""`topodiag compare` on real nccl-tests outputs: an NCCL_ALGO comparison from one thread (nccl-tests
#309: the default NVLSTree run and the NCCL_ALGO=Ring run on the same 2 HGX H100 hosts), a degraded
2-node pair from another (nccl-tests #290: default vs NCCL_ALGO=RING, both far below the NICs), and
a single node against two nodes; labels, bands, noise, the PERF001 expectation, charts and errors."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.compare import compare_files
from topodiag.compare.runs import settings
from topodiag.errors import InputError, UsageError

ROOT = Path(__file__).resolve().parents[2]
F = ROOT / "fixtures/nccl_tests"
NVLSTREE = F / "nccltests-allreduce-2x8h100-ndr-nvlstree-469-xpmem-warning-01.txt"
RING = F / "nccltests-allreduce-2x8h100-ib400-ring-392-wrapped-cmd-01.txt"
DEGRADED = ROOT / "fixtures/hosts/2x8h100-ndr-degraded/commands"
SINGLE = F / "nccltests-allreduce-8xh100-nvls-476-single-node-01.txt"
SENDRECV = F / "nccltests-sendrecv-a100-8gpu-nvlink-01.txt"


def test_algo_comparison_on_two_hgx_hosts() -> None:
    r = compare_files([str(NVLSTREE), str(RING)])
    a, b = r["runs"]
    assert a["label"] == "ALGO=default P2P_LEVEL=NVL" and b["label"] == "ALGO=Ring P2P_LEVEL=default"
    assert a["label_from"] == b["label_from"] == "NCCL settings in the output"
    assert b["env"]["NCCL_ALGO"] == "Ring" and a["env"]["NCCL_NET_GDR_LEVEL"] == "1"
    assert r["collective"] == "all_reduce"
    large = r["large"]
    assert large["size"] == 8 << 30  # the largest size both runs have (the first also has 16 GiB)
    assert large["busbw"] == [468.67, 392.69]
    assert [d["label"] for d in large["differ"]] == [b["label"]] and large["differ"][0]["below_best_pct"] == 16.2
    bands = {x["band"]: x for x in r["bands"]}
    assert set(bands) == {"medium", "large"}  # the Ring run starts at 1 MiB
    assert bands["large"]["best"] == a["label"]
    exp = r["expectation"]
    assert exp["gbps"] == 400.0 and "8 x 50 GB/s" in exp["how"]  # PERF001's: 8 NDR rails per node
    assert exp["verdict"] == "reached" and exp["reached_by"] == [a["label"], b["label"]]
    assert any("exceeds the expected network bandwidth" in s and "NCCL_ALGO=Ring" in s for s in r["summary"])


def test_degraded_pair_is_not_the_algorithm() -> None:
    r = compare_files([str(DEGRADED / "nccl_tests.txt"), str(DEGRADED / "nccl_tests-2.txt")])
    assert [x["label"] for x in r["runs"]] == ["nccl_tests", "nccl_tests-2"]  # nothing else tells them apart
    assert r["large"]["busbw"] == [155.57, 89.9]
    assert r["expectation"]["verdict"] == "none_reach"
    line = next(s for s in r["summary"] if s.startswith("no run reaches"))
    assert "it is not the algorithm" in line and "NCCL001" in line and "IB001" in line and "TOPO" in line


def test_labels_from_the_header_and_from_the_command_line() -> None:
    r = compare_files([str(SINGLE), str(NVLSTREE)])
    assert [x["label"] for x in r["runs"]] == ["1x8 GPUs P2P_LEVEL=default NET_GDR_LEVEL=default",
                                               "2x8 GPUs P2P_LEVEL=NVL NET_GDR_LEVEL=1"]
    assert r["runs"][0]["label_from"] == "header and NCCL settings in the output"
    r = compare_files([str(SINGLE), str(NVLSTREE)], labels=["before", "after"])
    assert [(x["label"], x["label_from"]) for x in r["runs"]] == [("before", "--label"), ("after", "--label")]


@pytest.mark.parametrize("line, key, value", [
    # nccl#1368, nccl-tests#309: mpirun -x; nccl#1530: a shell prefix; NCCL's INFO line
    ("mpirun -np 40 -x NCCL_IB_GID_INDEX=3 -x NCCL_ALGO=Ring -x NCCL_PXN_DISABLE=0 ./all_reduce_perf", "NCCL_ALGO", "Ring"),
    ("NCCL_ALGO=TREE ./all_reduce_perf -g 8 -b 8 -e 128M -f 2", "NCCL_ALGO", "TREE"),
    ("node1:1:2 [0] NCCL INFO NCCL_PROTO set by environment to LL128.", "NCCL_PROTO", "LL128"),
    ("export NCCL_BUFFSIZE=8388608", "NCCL_BUFFSIZE", "8388608"),
])
def test_settings_the_output_carries(line, key, value) -> None:
    assert settings(line)[key] == value


def test_settings_leave_out_what_does_not_change_speed() -> None:
    assert settings("-x NCCL_DEBUG=INFO -x NCCL_SOCKET_IFNAME=eth0 -x NCCL_IB_HCA=mlx5_0") == {}


def test_errors() -> None:
    with pytest.raises(UsageError, match="two or more"):
        compare_files([str(SINGLE)])
    with pytest.raises(UsageError, match="different collectives"):
        compare_files([str(SINGLE), str(SENDRECV)])
    with pytest.raises(UsageError, match="--label given 3 times for 2 runs"):
        compare_files([str(SINGLE), str(RING)], labels=["a", "b", "c"])
    with pytest.raises(InputError, match="not nccl-tests output"):
        compare_files([str(SINGLE), str(ROOT / "fixtures/ibstat/ibstat-cx6dx-roce-ethernet-100g-01.txt")])


def test_cli_text_json_svg_and_exit_codes(tmp_path: Path) -> None:
    runner = CliRunner()
    svg = tmp_path / "busbw.svg"
    res = runner.invoke(app, ["compare", str(NVLSTREE), str(RING), "--plot", str(svg)])
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())  # folded to 80 columns off a terminal
    assert "busbw GB/s; A = ALGO=default" in flat and "- = expected 400 GB/s" in flat
    assert max(len(ln) for ln in res.output.splitlines()) <= 80
    root = ET.fromstring(svg.read_text())
    assert root.tag.endswith("svg") and len(root.findall("{http://www.w3.org/2000/svg}polyline")) == 2
    assert "expected 400" in svg.read_text()
    out = runner.invoke(app, ["compare", str(NVLSTREE), str(RING), "--format", "json"])
    data = json.loads(out.output)
    assert data["kind"] == "compare" and len(data["table"][0]["busbw"]) == 2
    one = runner.invoke(app, ["compare", str(RING)])
    assert one.exit_code == 2 and one.output.count("\n") == 1
    missing = runner.invoke(app, ["compare", str(RING), str(tmp_path / "nope.txt")])
    assert missing.exit_code == 3 and "nope.txt: no such file" in missing.output
    bad = runner.invoke(app, ["compare", str(RING), str(NVLSTREE), "--noise", "2"])
    assert bad.exit_code == 2


def test_pcie_runs_are_judged_against_pcie_p2p() -> None:
    """Two PCIe boxes (V100 PCIe, NCCL 2.4 format; 4x RTX 4090, 256 MiB to 1 GiB): the first run's GPU
    (V100 PCIe, Gen3, no NVLink) gives the PCIe P2P expectation, 16 GB/s x 0.70 = 11.2 GB/s (issue 27;
    knowledge/busbw.toml), which both reach (~11.2 and ~25.9 GB/s); no size in common (8 B..128 MiB vs
    256 MiB..1 GiB)."""
    r = compare_files([str(F / "nccltests-allreduce-v100-pcie-4gpu-nccl2.4-oldformat-01.txt"),
                       str(F / "nccltests-allreduce-4x-rtx4090-pcie-256m-2g-26-01.txt")])
    exp = r["expectation"]
    assert exp["gbps"] == 11.2 and exp["verdict"] == "reached" and "PCIe P2P" in exp["how"]
    assert r["large"] is None and r["bands"] == []
    # one shape (all_reduce, 1 node x 4 GPUs) on two different machines: said, since a difference
    # between them is the machine, not a setting
    assert r["summary"][:2] == ["the runs share no message size: compare them by eye on the chart",
                                "the runs have one shape but ran on different hosts: a difference may be the hosts, "
                                "not the settings (compare runs of one host set to judge a setting)"]
    assert [g["runs"] for g in r["shapes"]] == [[x["label"] for x in r["runs"]]]


def test_expectation_from_the_node_given_with_from() -> None:
    """A run with no "# Rank" lines (rows only, to 32 MiB) and an 8x H200 run: with the HGX H100
    node's topo -m and nvlink -s, the profile comes from its GPU model, as `check` would choose it."""
    hgx = ROOT / "fixtures/hosts/hgx-h100-healthy-assembled/commands"
    r = compare_files([str(F / "nccltests-allreduce-rows-only-e32m-still-rising-300-01.txt"),
                       str(F / "nccltests-allreduce-8xh200-nvls-477-8gib-01.txt")],
                      node=[str(hgx / "nvidia_smi_topo_m.txt"), str(hgx / "nvidia_smi_nvlink_s.txt")])
    exp = r["expectation"]
    assert exp["profile"] == "dgx-h100 (detected from NVIDIA H100 80GB HBM3)"
    assert exp["gbps"] == 370.0 and exp["how"] == "profile dgx-h100: all_reduce busbw 370 GB/s in one node"
    without = compare_files([str(F / "nccltests-allreduce-rows-only-e32m-still-rising-300-01.txt"),
                             str(F / "nccltests-allreduce-8xh200-nvls-477-8gib-01.txt")])
    assert without["expectation"]["profile"].startswith("hgx-h200")  # from the H200 run's rank lines
