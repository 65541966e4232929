"""`topodiag show --from`: the model as a table, Topology JSON, DOT and GraphML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.exit_codes import ExitCode
from topodiag.model import SCHEMA_VERSION, Topology

ROOT = Path(__file__).resolve().parents[2]
HGX = ROOT / "fixtures/nvidia_smi_topo_m/topo-h100-hgx-nv18-8nic-pix-gpunumaid-01.txt"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_json_is_the_topology_json():
    res = invoke("show", "--from", str(HGX), "--format", "json")
    assert res.exit_code == ExitCode.OK, res.output
    data = json.loads(res.stdout)
    assert data["schema_version"] == SCHEMA_VERSION
    topo = Topology.from_json(data)
    assert len(topo.gpus()) == 8 and len(topo.nics()) == 8
    assert topo.pair_class("gpu:0", "gpu:7") == "NV18"


def test_table_shows_the_matrix():
    res = invoke("show", "--from", str(HGX))
    assert res.exit_code == ExitCode.OK
    assert "NV18" in res.stdout and "gpu:0" in res.stdout and "\x1b[" not in res.stdout


def test_dot():
    res = invoke("show", "--from", str(HGX), "--format", "dot")
    assert res.exit_code == ExitCode.OK
    assert res.stdout.startswith("graph topology {") and '"gpu:0" -- "gpu:1"' in res.stdout
    assert '"label"="NV18"' in res.stdout and '"sources"' not in res.stdout


def test_graphml_is_xml_with_every_node():
    res = invoke("show", "--from", str(HGX), "--format", "graphml")
    assert res.exit_code == ExitCode.OK
    root = ET.fromstring(res.stdout)
    ids = {n.get("id") for n in root.iter() if n.tag.endswith("node")}
    assert {"gpu:0", "gpu:7", "nic:mlx5_0"} <= ids


def test_without_from_shows_this_host_live(monkeypatch, tmp_path):
    """No GPU tools and no /sys/class/infiniband here (an empty PATH and sysfs root): the model is
    just the host, and that is not an error."""
    monkeypatch.setenv("PATH", str(tmp_path))
    import topodiag.live.collection as live

    monkeypatch.setattr(live, "SOURCES", tuple(s for s in live.SOURCES if s.probe is None))
    res = invoke("show", "--format", "json")
    assert res.exit_code == ExitCode.OK, res.output
    nodes = json.loads(res.stdout)["nodes"]
    assert [n["kind"] for n in nodes] == ["host"]


def test_a_missing_path_exits_3_in_one_line_not_a_topology(tmp_path):
    res = invoke("show", "--from", str(HGX), "--from", str(tmp_path / "missing.txt"), "--format", "json")
    assert res.exit_code == ExitCode.INCOMPLETE and res.stdout == ""
    assert res.stderr.strip() == f"topodiag: error: {tmp_path / 'missing.txt'}: no such file"
