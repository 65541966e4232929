"""The Topology facade on hand-made graphs: merging, conflicts kept, domain queries, JSON form."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from topodiag.model import SCHEMA_VERSION, Topology, class_rank, nv_count
from topodiag.model.topology import source_ref

TOPO = source_ref("nvidia_smi_topo_m", "topo.txt", 8)
XML = source_ref("nccl_topo_xml", "topo.xml", None)


def small() -> Topology:
    t = Topology()
    for i in range(3):
        t.add_node(f"gpu:{i}", "gpu", TOPO, index=i, numa_node=0 if i < 2 else 1)
    t.add_node("nic:mlx5_0", "nic", TOPO, name="mlx5_0")
    t.add_node("nic:mlx5_1", "nic", TOPO, name="mlx5_1")
    t.add_edge("gpu:1", "gpu:0", "path", TOPO, **{"class": "NV12", "link_count": 12})
    t.add_edge("gpu:0", "gpu:2", "path", TOPO, **{"class": "SYS"})
    t.add_edge("gpu:0", "nic:mlx5_1", "path", TOPO, **{"class": "NODE"})
    t.add_edge("gpu:0", "nic:mlx5_0", "path", TOPO, **{"class": "NODE"})
    t.add_edge("gpu:1", "nic:mlx5_1", "path", TOPO, **{"class": "PIX"})
    t.add_alias("GPU0", "gpu:0")
    return t


def test_class_order():
    assert nv_count("NV18") == 18 and nv_count("PIX") is None and nv_count(None) is None
    ranked = sorted(["SYS", "PIX", "NV4", "NODE", "NV18", "PHB", "PXB", "weird"], key=class_rank)
    assert ranked == ["NV18", "NV4", "PIX", "PXB", "PHB", "NODE", "SYS", "weird"]


def test_pairs_and_nearest_nic():
    t = small()
    assert t.gpus() == ["gpu:0", "gpu:1", "gpu:2"]
    assert t.pair_class("gpu:0", "gpu:1") == "NV12" == t.pair_class("GPU0", "gpu:1")
    assert t.pair("gpu:1", "gpu:2") is None
    assert t.gpu_pairs() == [("gpu:0", "gpu:1", "NV12"), ("gpu:0", "gpu:2", "SYS"), ("gpu:1", "gpu:2", None)]
    assert t.nearest_nic("gpu:0") == ("nic:mlx5_0", "NODE")  # a tie goes to the lower NIC
    assert t.nearest_nic("gpu:1") == ("nic:mlx5_1", "PIX")
    assert t.nearest_nic("gpu:2") is None
    assert t.numa_of("gpu:2") == 1 and t.numa_of("nic:mlx5_0") is None and t.numa_of("nope") is None


def test_conflicting_fact_is_kept_not_overwritten():
    t = small()
    t.add_edge("gpu:0", "gpu:1", "path", XML, **{"class": "NV8"})
    t.add_node("gpu:0", "gpu", XML, numa_node=0, uuid="GPU-1")
    assert t.pair_class("gpu:0", "gpu:1") == "NV12"
    [c] = t.conflicts()
    assert c["field"] == "class" and [v["value"] for v in c["values"]] == ["NV12", "NV8"]
    assert [v["source"]["source"] for v in c["values"]] == ["nvidia_smi_topo_m", "nccl_topo_xml"]
    node = t.node("gpu:0")
    assert node["uuid"] == "GPU-1" and node["provenance"]["uuid"] == XML
    assert node["sources"] == [TOPO, XML]  # the agreeing numa_node is no conflict


def test_nested_ports_merge_field_by_field():
    t = Topology()
    a, b = source_ref("ibstat", "a", 9), source_ref("ibv_devinfo", "b", 19)
    t.add_node("nic:mlx5_0", "nic", a, ports={"1": {"state": "Active", "state_raw": "Active", "rate_gbps": 400.0}})
    t.add_node("nic:mlx5_0", "nic", b, ports={"1": {"state": "Down", "state_raw": "PORT_DOWN (1)", "active_mtu": 4096}})
    [(nic, port)] = t.ib_ports()
    assert nic == "nic:mlx5_0" and port["port"] == 1
    assert port["state"] == "Active" and port["active_mtu"] == 4096 and port["rate_gbps"] == 400.0
    [c] = t.conflicts()  # printed forms (state_raw) differ by dialect and are no conflict
    assert c["subject"] == "nic:mlx5_0 port 1" and c["field"] == "state"
    assert [v["value"] for v in c["values"]] == ["Active", "Down"]


def test_alias_to_two_nodes_is_a_conflict():
    t = small()
    t.add_alias("GPU0", "gpu:1")
    assert t.resolve("GPU0") == "gpu:0"
    assert t.conflicts()[0]["field"] == "alias"


def test_json_round_trip():
    t = small()
    t.add_edge("gpu:0", "gpu:1", "path", XML, **{"class": "NV8"})
    data = json.loads(json.dumps(t.to_json()))
    assert data["schema_version"] == SCHEMA_VERSION == 1
    assert {"nodes", "edges", "conflicts", "aliases"} <= set(data)
    back = Topology.from_json(data)
    assert back.to_json() == data
    assert back.pair_class("GPU0", "gpu:1") == "NV12" and back.nearest_nic("gpu:1") == ("nic:mlx5_1", "PIX")
    assert len(back.conflicts()) == 1


def test_from_json_refuses_other_versions():
    with pytest.raises(ValueError, match="schema_version"):
        Topology.from_json({"schema_version": 2, "nodes": [], "edges": []})


def test_importing_the_model_does_not_import_networkx():
    code = "import sys, topodiag.model; print('networkx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_edges_carry_no_nominal_bandwidth():
    """Nominal bandwidth is the rules' to compute (topodiag.knowledge); older JSON's null slot is dropped."""
    t = small()
    assert all("nominal_gbps" not in d for _, _, _, d in t.edges())
    data = t.to_json()
    for e in data["edges"]:
        e["nominal_gbps"] = None  # what schema_version 1 wrote before the field went
    back = Topology.from_json(data)
    assert back.to_json() == t.to_json()


def test_edges_are_listed_once_each_and_per_node():
    t = small()
    t.add_edge("gpu:0", "gpu:1", "nvlink", XML, link_count=12)  # a second edge kind on one pair
    all_edges = [(a, b, k) for a, b, k, _ in t.edges()]
    assert len(all_edges) == len(set(all_edges)) == 6
    assert ("gpu:0", "gpu:1", "path") in all_edges and ("gpu:0", "gpu:1", "nvlink") in all_edges
    assert sorted((b, k) for _, b, k, _ in t.edges("GPU0")) == [
        ("gpu:1", "nvlink"), ("gpu:1", "path"), ("gpu:2", "path"), ("nic:mlx5_0", "path"), ("nic:mlx5_1", "path")]
    assert [b for _, b, _, _ in t.edges("gpu:1", "path")] == ["gpu:0", "nic:mlx5_1"]
    assert t.edges("nic:mlx5_0", "nvlink") == []
    # one attribute dict per edge, whichever end it is read from
    assert t.edge("gpu:1", "gpu:0", "path") is t.edge("gpu:0", "gpu:1", "path")


def test_graph_is_the_networkx_multigraph():
    import networkx as nx

    t = small()
    g = t.graph
    assert isinstance(g, nx.MultiGraph) and not g.is_directed()
    assert sorted(g.nodes) == t.nodes()
    assert g.nodes["gpu:2"]["numa_node"] == 1 and g.nodes["gpu:2"]["kind"] == "gpu"
    assert [(a, b, k) for a, b, k in g.edges(keys=True)] == [(a, b, k) for a, b, k, _ in t.edges()]
    assert g.edges["gpu:0", "gpu:1", "path"]["class"] == "NV12"
    assert g.edges["gpu:0", "gpu:1", "path"]["sources"] == [TOPO]
    # the model's dicts are the graph's: a fact merged later shows in both
    assert g.edges["gpu:1", "gpu:0", "path"] is t.edge("GPU0", "gpu:1", "path")
    assert g.nodes["gpu:0"] is t.node("GPU0")
    t.add_edge("gpu:0", "gpu:1", "path", XML, derived=True)
    assert g.edges["gpu:1", "gpu:0", "path"]["derived"] is True
    assert Topology.from_json(t.to_json()).graph.edges["gpu:0", "gpu:1", "path"]["class"] == "NV12"


def _imported(argv: list[str]) -> set[str]:
    """Which of networkx, rich and pydantic a `topodiag` command imports, run in a fresh process."""
    code = ("import io, sys\n"
            f"sys.argv = ['topodiag', *{argv!r}]\n"
            "from topodiag.cli import main\n"
            "sys.stdout = io.StringIO()\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "sys.stdout = sys.__stdout__\n"
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules} & {'networkx', 'rich', 'pydantic'})))\n")
    from tests.fixtures_index import ROOT

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


TOPO_M_FIXTURE = "fixtures/nvidia_smi_topo_m/topo-h100-hgx-nv18-8nic-pix-gpunumaid-01.txt"


def test_a_check_run_imports_neither_networkx_nor_rich():
    """`topodiag check --format json` builds a Topology and judges it without networkx (the model's own
    store) and stays off rich: the prolog budget."""
    assert _imported(["check", "--from", TOPO_M_FIXTURE, "--format", "json"]) == set()


def test_the_graph_is_a_networkx_multigraph_over_the_model_itself():
    """`topology.graph` (networkx imported on first use) shares the model's dicts: the same nodes,
    edges in the same order, the NVLink domains networkx finds, and a change through it is seen."""
    import networkx as nx

    from tests.model.test_builder import H100_TOPO, parsed
    from topodiag.model import build

    topo = build([parsed("nvidia_smi_topo_m", H100_TOPO)])
    mine_edges = topo.edges()
    g = topo.graph
    assert isinstance(g, nx.MultiGraph) and topo.graph is g
    assert sorted(g.nodes) == sorted(topo.nodes()) and len(topo.gpus()) == 8
    assert [(a, b, k) for a, b, k, _ in g.edges(keys=True, data=True)] == [(a, b, k) for a, b, k, _ in mine_edges]
    assert [(a, b, k) for a, b, k, _ in g.edges("gpu:0", keys=True, data=True)] == \
        [(a, b, k) for a, b, k, _ in topo.edges("gpu:0")]
    links = [(a, b, k) for a, b, k, d in g.edges(keys=True, data=True)
             if k == "path" and str(d.get("class", "")).startswith("NV")]
    want = sorted(sorted(c & set(topo.gpus())) for c in nx.connected_components(g.edge_subgraph(links)))
    assert sorted(sorted(d) for d in topo.nvlink_domains()) == [d for d in want if d]
    g.add_edge("gpu:0", "nic:mlx5_9", key="numa")
    assert topo.edge("gpu:0", "nic:mlx5_9", "numa") == {} and topo.has_node("nic:mlx5_9")
    topo.join("gpu:0", "nic:mlx5_9")
    assert "nic:mlx5_9" not in g and "nic:mlx5_9" not in g["gpu:0"]


@pytest.mark.parametrize("argv", [["rules"], ["explain", "TOPO001"], ["parse", TOPO_M_FIXTURE]],
                         ids=["rules", "explain", "parse"])
def test_commands_that_build_no_topology_do_not_import_networkx(argv):
    assert "networkx" not in _imported(argv)
