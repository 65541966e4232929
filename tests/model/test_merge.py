"""Merge modules: found by discovery, merged in a fixed order whatever the order of the inputs."""

from __future__ import annotations

import importlib
import textwrap

import pytest

from topodiag import parsers
from topodiag.model import build
from topodiag.model.merge import dependencies, discover, merge_modules, merged_sources
from topodiag.records import ParsedInput

from .test_builder import H20_IBSTAT, H100_TOPO, parsed

# The merge order the model has always had (the ORDER numbers before issue 32 derived it from
# PROVIDES and NEEDS): ids and first-seen facts follow it.
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
PROVIDES = {provides!r}
NEEDS = {needs!r}
def merge(topo, item, host_id):
    topo.notes.append("merged " + item.source)
"""


def mod(sources, provides=(), needs=()):
    return MODULE.format(sources=tuple(sources), provides=tuple(provides), needs=tuple(needs))


def test_a_new_source_costs_one_module_and_its_place_follows_its_needs(tmp_path, monkeypatch):
    pkg = _package(tmp_path, monkeypatch, "merge_pkg_ok", {
        "aaa_later": mod(("b", "c"), provides=("ports",), needs=("nics",)),  # first by name, but needs nics
        "zzz_first": mod(("a",), provides=("nics",)),
        "mmm_free": mod(("d",)),  # needs nothing: goes by name among the free ones
        "_helpers": "X = 1\n",  # not a merge module
    })
    assert [m.__name__ for m in discover(pkg)] == ["merge_pkg_ok.mmm_free", "merge_pkg_ok.zzz_first",
                                                  "merge_pkg_ok.aaa_later"]


def test_fills_do_not_order_and_a_filler_comes_after_the_first_word(tmp_path, monkeypatch):
    """FILLS says a module gives a capability too (for the rules) without ordering anything: a module
    that fills what it needs comes after the one that PROVIDES it, not after the other fillers."""
    pkg = _package(tmp_path, monkeypatch, "merge_pkg_fills", {
        "aaa_filler": mod(("b",), needs=("gpu.nvlinks",)) + "FILLS = ('gpu.nvlinks',)\n",
        "bbb_other_filler": mod(("c",), needs=("gpu.nvlinks",)) + "FILLS = ('gpu.nvlinks',)\n",
        "zzz_first": mod(("a",), provides=("gpu.nvlinks",)),
    })
    mods = discover(pkg)
    assert [m.__name__.split(".")[1] for m in mods] == ["zzz_first", "aaa_filler", "bbb_other_filler"]
    assert dependencies(mods)["merge_pkg_fills.aaa_filler"] == {"merge_pkg_fills.zzz_first": ("gpu.nvlinks",)}


def test_todays_order_comes_from_the_declared_needs():
    """Each step of the order has a declared reason: every module after the first of a pair that is
    not free to swap needs a fact the earlier one provides."""
    mods = merge_modules()
    deps = dependencies(mods)
    for place, mod_ in enumerate(mods):
        for earlier in deps[mod_.__name__]:
            assert earlier in [m.__name__ for m in mods[:place]]
    nvml = deps["topodiag.model.merge.nvml"]
    assert nvml["topodiag.model.merge.nvlink_s"] == ("gpu.nvlinks",)  # NVML fills only what nvlink -s lacks
    assert "gpu.pcie_link" in deps["topodiag.model.merge.nvidia_smi_q"]["topodiag.model.merge.nvml"]
    assert "nic.port_state" in deps["topodiag.model.merge.rdma_link"]["topodiag.model.merge.ib"]


@pytest.mark.parametrize("modules,error,says", [
    ({"a": "SOURCES = ('x',)\ndef merge(topo, item, host_id): pass\n"}, TypeError, "declares SOURCES"),
    ({"a": mod(("x",)), "b": mod(("x",))}, ValueError, "x is merged by both"),
    ({"a": mod(("x",), provides=("p",), needs=("q",)), "b": mod(("y",), provides=("q",), needs=("p",))},
     ValueError, "a cycle"),
    ({"a": mod(("x",), needs=("nothing",))}, ValueError, "needs nothing, which no merge module provides"),
    ({"a": mod(("x",), provides=("p",), needs=("p",))}, ValueError, "both provides and needs p"),
], ids=["incomplete", "one-source-twice", "cycle", "unprovided", "provides-and-needs"])
def test_discovery_refuses_ambiguity(tmp_path, monkeypatch, modules, error, says):
    name = f"merge_pkg_{tmp_path.name}"  # unique per test: imported packages stay in sys.modules
    with pytest.raises(error, match=says):
        discover(_package(tmp_path, monkeypatch, name, modules))
