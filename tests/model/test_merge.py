"""Merge modules: found by discovery, merged in a fixed order whatever the order of the inputs."""

from __future__ import annotations

import importlib
import textwrap

import pytest

from topodiag import parsers
from topodiag.model import build
from topodiag.model.merge import discover, merge_modules, merged_sources
from topodiag.records import ParsedInput

from .test_builder import H20_IBSTAT, H100_TOPO, parsed

# The merge order the model has always had: ids and first-seen facts follow it.
ORDER = ("nvidia_smi_topo_m", "nvidia_smi_topo_p2p", "nvidia_smi_nvlink_s", "nvml", "nvidia_smi_q", "nccl_topo_xml",
         "ibstat", "ibv_devinfo", "ibstatus", "rdma_link", "sysfs_infiniband", "gpu_scope", "nccl_debug", "nccl_tests", "busbw_pairs",
         "nccl_env", "nccl_diag", "p2p_bandwidth_latency", "nvbandwidth")


def test_every_merge_module_is_found_in_order():
    assert [m.__name__.rsplit(".", 1)[1] for m in merge_modules()] == [
        "topo_m", "topo_p2p", "nvlink_s", "nvml", "nvidia_smi_q", "nccl_xml", "ib", "rdma_link", "sysfs", "gpu_scope", "observations", "busbw_pairs", "bench_env"]
    assert merged_sources() == ORDER
    assert set(merged_sources()) <= set(parsers.names())


def test_argument_order_does_not_matter():
    inputs = [parsed("ibstat", H20_IBSTAT),
              parsed("ibv_devinfo", "ibv_devinfo-cx7-ib-port-down-01.txt"),
              parsed("nvidia_smi_topo_m", H100_TOPO),
              parsed("nccl_tests", "nccltests-allreduce-h100-2node-2gpu-147busbw-01.txt")]
    want = build(inputs).to_json()
    assert build(inputs[::-1]).to_json() == want
    ibv_first = build(inputs[1:2] + inputs[:1] + inputs[2:])
    assert ibv_first.to_json() == want
    assert ibv_first.node("nic:mlx5_0")["firmware"] == "28.43.2026"  # ibstat's: of one module, merged first


def test_unknown_sources_are_noted_after_the_rest():
    t = build([ParsedInput("show_gids", "gids.txt", object()), parsed("ibstat", H20_IBSTAT)])
    assert t.notes[-1] == "show_gids (gids.txt): not merged into the topology" and t.nics()


def _package(tmp_path, monkeypatch, name: str, modules: dict[str, str]):
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for mod, text in modules.items():
        (pkg / f"{mod}.py").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return importlib.import_module(name)


MODULE = """
SOURCES = {sources!r}
ORDER = {order}
def merge(topo, item, host_id):
    topo.notes.append("merged " + item.source)
"""


def test_a_new_source_costs_one_module(tmp_path, monkeypatch):
    pkg = _package(tmp_path, monkeypatch, "merge_pkg_ok", {
        "later": MODULE.format(sources=("b", "c"), order=20),
        "first": MODULE.format(sources=("a",), order=10),
        "_helpers": "X = 1\n",  # not a merge module
    })
    assert [m.__name__ for m in discover(pkg)] == ["merge_pkg_ok.first", "merge_pkg_ok.later"]


@pytest.mark.parametrize("modules,error", [
    ({"a": "SOURCES = ('x',)\ndef merge(topo, item, host_id): pass\n"}, TypeError),  # no ORDER
    ({"a": MODULE.format(sources=("x",), order=1), "b": MODULE.format(sources=("x",), order=2)}, ValueError),
    ({"a": MODULE.format(sources=("x",), order=1), "b": MODULE.format(sources=("y",), order=1)}, ValueError),
], ids=["incomplete", "one-source-twice", "one-order-twice"])
def test_discovery_refuses_ambiguity(tmp_path, monkeypatch, modules, error):
    name = f"merge_pkg_{tmp_path.name}"  # unique per test: imported packages stay in sys.modules
    with pytest.raises(error):
        discover(_package(tmp_path, monkeypatch, name, modules))
