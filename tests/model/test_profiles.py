"""rules/profiles/*.toml: each loads, its numbers agree with docs/domain.md / docs/architecture.md, detection works
on the GPU names the nvlink -s fixtures hold, and a malformed profile fails with a clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from topodiag import knowledge
from topodiag.profiles import (default_profiles_dir, BusbwExpectation, Profile, ProfileError, detect_profile,
                               load_profile, load_profiles)
from tests.fixtures_index import FIXTURES

EXPECTED_PROFILES = {"dgx-h100", "dgx-a100", "hgx-h200", "dgx-b200", "pcie-8gpu"}


@pytest.fixture(scope="module")
def profiles() -> dict[str, Profile]:
    return load_profiles()


def test_every_profile_loads(profiles):
    assert EXPECTED_PROFILES <= set(profiles)
    assert set(profiles) == {p.stem for p in default_profiles_dir().glob("*.toml")}
    for name, prof in profiles.items():
        assert prof.name == name and prof.description and prof.match
        assert prof.path is not None and prof.path.stem == name
        hash(prof)  # frozen and hashable


def test_dgx_h100_numbers(profiles):
    p = profiles["dgx-h100"]
    # docs/domain.md "A typical 8-GPU node (DGX H100)": 8 GPUs, every pair NV18, 8 NDR 400 NICs at PIX/PXB
    assert (p.gpus, p.gpu_pair_class, p.nvlinks_per_gpu) == (8, "NV18", 18)
    assert (p.nics, p.nic_rate_gbps, p.link_layer, p.gpu_nic_max_path) == (8, 400, "InfiniBand", "PXB")
    assert p.nvlink_speed_gbps == 26.562  # docs/domain.md "NVLink": 26.562 GB/s on H100
    # docs/architecture.md "Numbers the rules use": ~370 ring, ~480 NVLS
    ar = p.busbw["all_reduce"]
    assert (ar.in_node_gbps, ar.in_node_nvls_gbps) == (370, 480) and "docs/architecture.md" in ar.source


def test_hgx_h200_numbers(profiles):
    p = profiles["hgx-h200"]
    assert (p.gpus, p.gpu_pair_class, p.nvlinks_per_gpu, p.nvlink_speed_gbps) == (8, "NV18", 18, 26.562)
    assert (p.nics, p.nic_rate_gbps, p.link_layer, p.gpu_nic_max_path) == (8, 400, "InfiniBand", "PXB")
    assert (p.busbw["all_reduce"].in_node_gbps, p.busbw["all_reduce"].in_node_nvls_gbps) == (370, 480)


def test_dgx_a100_numbers(profiles):
    p = profiles["dgx-a100"]
    # docs/domain.md "NVLink" 3.0: 12 links; A100 prints 25 (newer drivers) / 25.781
    assert (p.gpus, p.gpu_pair_class, p.nvlinks_per_gpu, p.nvlink_speed_gbps) == (8, "NV12", 12, 25.0)
    # docs/domain.md IB table: HDR 4x = 200 Gb/s
    assert (p.nics, p.nic_rate_gbps, p.link_layer, p.gpu_nic_max_path) == (8, 200, "InfiniBand", "PXB")
    assert p.busbw["all_reduce"] == BusbwExpectation(
        "all_reduce", 230.0, p.busbw["all_reduce"].source, None)  # docs/architecture.md: 8xA100 ~230 GB/s


def test_dgx_b200_numbers(profiles):
    p = profiles["dgx-b200"]
    # docs/domain.md "NVLink" 5.0: 18 links, about 50 GB/s printed per link
    assert (p.gpus, p.gpu_pair_class, p.nvlinks_per_gpu, p.nvlink_speed_gbps) == (8, "NV18", 18, 50.0)
    assert (p.nics, p.nic_rate_gbps, p.link_layer, p.gpu_nic_max_path) == (8, 400, "InfiniBand", "PXB")
    assert dict(p.busbw) == {}  # no measured anchor in docs/architecture.md


def test_pcie_box_numbers(profiles):
    p = profiles["pcie-8gpu"]
    assert (p.gpus, p.gpu_pair_class, p.nvlinks_per_gpu, p.nvlink_speed_gbps) == (8, "SYS", 0, None)
    assert (p.nics, p.nic_rate_gbps, p.link_layer) == (None, None, None)


def test_profiles_agree_with_knowledge(profiles):
    """A profile's NVLink numbers are the knowledge tables' numbers for its GPU model."""
    for name, model in (("dgx-h100", "NVIDIA H100 80GB HBM3"), ("hgx-h200", "NVIDIA H200"),
                        ("dgx-a100", "NVIDIA A100-SXM4-80GB"), ("dgx-b200", "NVIDIA B200")):
        p, f = profiles[name], knowledge.gpu_facts(model)
        assert p.nvlinks_per_gpu == f.nvlinks == knowledge.nvlink_count(p.gpu_pair_class)
        assert p.nvlink_speed_gbps == f.nvlink_speed_gbps
        assert knowledge.nvlink_speed_ok(p.nvlink_speed_gbps, f.nvlink_generation)
        assert knowledge.ib_rate_name(p.nic_rate_gbps) in ("HDR", "NDR")
        assert p.matches(model)


def _nvlink_fixture_names() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for exp in sorted((FIXTURES / "nvidia_smi_nvlink_s").glob("*.expected.json")):
        names = {g["model"] for g in json.loads(exp.read_text()).get("gpus") or [] if g.get("model")}
        if names:
            out[exp.name] = names
    return out


DETECTED = {
    "NVIDIA A100-SXM4-80GB": "dgx-a100",
    "NVIDIA B200": "dgx-b200",
    "NVIDIA GB200": "gb200-nvl",      # NVL72 compute tray (4 GPUs, Grace), not an 8-GPU DGX B200
    "Tesla V100-SXM2-16GB": None,     # no DGX-1 profile (hybrid cube-mesh)
    "Tesla V100-SXM2-32GB": None,
    "NVIDIA RTX A6000": None,         # bridged workstation cards
    "NVIDIA H100 80GB HBM3": "dgx-h100",
    "NVIDIA H800": None,              # no H800 profile (8 vs 18 links varies by SKU)
}


def test_detection_on_nvlink_fixture_names(profiles):
    seen = _nvlink_fixture_names()
    assert len(seen) >= 8
    all_names = set().union(*seen.values())
    assert all_names == set(DETECTED), "a new GPU name in fixtures: add it to DETECTED"
    for fixture, names in seen.items():
        for name in names:
            got = detect_profile([name], profiles)
            assert (got.name if got else None) == DETECTED[name], (fixture, name)
        got = detect_profile(sorted(names), profiles)
        assert (got.name if got else None) == DETECTED[sorted(names)[0]], fixture


def test_detection_rules(profiles):
    assert detect_profile([], profiles) is None
    assert detect_profile(["", "  "], profiles) is None
    assert detect_profile(["NVIDIA H100 80GB HBM3"] * 8, profiles).name == "dgx-h100"
    assert detect_profile(["NVIDIA H100 80GB HBM3"] * 8, profiles, gpu_count=8).name == "dgx-h100"
    assert detect_profile(["NVIDIA H100 80GB HBM3"] * 4, profiles, gpu_count=4) is None  # 4-GPU board
    # a node that lost a GPU or two is still that platform (TOPO006 then says which is missing) ...
    assert detect_profile(["NVIDIA H100 80GB HBM3"] * 7, profiles, gpu_count=7).name == "dgx-h100"
    assert detect_profile(["NVIDIA H100 80GB HBM3"] * 6, profiles, gpu_count=6).name == "dgx-h100"
    # ... but not one with half or fewer, nor more GPUs than the profile's
    assert detect_profile(["NVIDIA H100 80GB HBM3"] * 5, profiles, gpu_count=5) is None
    assert detect_profile(["NVIDIA H100 80GB HBM3"] * 9, profiles, gpu_count=9) is None
    assert detect_profile(["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"], profiles) is None  # mixed
    assert detect_profile(["NVIDIA H100 PCIe"], profiles).name == "pcie-8gpu"
    assert detect_profile(["NVIDIA H200 NVL"], profiles) is None
    assert detect_profile(["NVIDIA L40S"], profiles).name == "pcie-8gpu"
    assert detect_profile(["NVIDIA A100-PCIE-40GB"], profiles).name == "pcie-8gpu"
    assert detect_profile(["NVIDIA H20"], profiles) is None  # "H20" is not "H200"
    assert detect_profile(["NVIDIA H100 80GB HBM3"]).name == "dgx-h100"  # default directory


GOOD = """\
name = "{name}"
description = "test box"
match = ["H100"]
gpus = 8
gpu_pair_class = "NV18"
nvlinks_per_gpu = 18
"""


def _write(tmp_path: Path, body: str, name: str = "box") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(body)
    return path


def test_minimal_profile_loads(tmp_path):
    _write(tmp_path, GOOD.format(name="box") + 'gpu_nic_max_path = "pxb"\n[busbw.allreduce]\n'
           'in_node_gbps = 300\nsource = "test"\n')
    p = load_profiles(tmp_path)["box"]
    assert p.gpu_nic_max_path == "PXB" and p.busbw["all_reduce"].in_node_gbps == 300.0
    assert p.nics is None and p.match_exclude == ()


@pytest.mark.parametrize("body, key, words", [
    (GOOD.format(name="box").replace("gpus = 8", 'gpus = "eight"'), "gpus", "integer"),
    (GOOD.format(name="box").replace("gpus = 8\n", ""), "gpus", "missing"),
    (GOOD.format(name="other"), "name", "file name"),
    (GOOD.format(name="box").replace('"NV18"', '"NVLINK"'), "gpu_pair_class", "path class"),
    (GOOD.format(name="box").replace("nvlinks_per_gpu = 18", "nvlinks_per_gpu = 12"), "nvlinks_per_gpu",
     "fewer"),
    (GOOD.format(name="box") + "nic_rate = 400\n", "nic_rate", "unknown key"),
    (GOOD.format(name="box") + 'link_layer = "RoCE"\n', "link_layer", "InfiniBand"),
    (GOOD.format(name="box") + 'gpu_nic_max_path = "NV4"\n', "gpu_nic_max_path", "PCIe path class"),
    (GOOD.format(name="box") + "nic_rate_gbps = -1\n", "nic_rate_gbps", "positive"),
    (GOOD.format(name="box").replace('["H100"]', "[]"), "match", "at least one"),
    (GOOD.format(name="box").replace('["H100"]', '"H100"'), "match", "list"),
    (GOOD.format(name="box") + '[busbw.all_reduce]\nsource = "x"\n', "busbw.all_reduce.in_node_gbps", "missing"),
    (GOOD.format(name="box") + '[busbw.allsmash]\nin_node_gbps = 1\nsource = "x"\n', "busbw.allsmash",
     "unknown collective"),
])
def test_malformed_profile_error_names_file_and_key(tmp_path, body, key, words):
    path = _write(tmp_path, body)
    with pytest.raises(ProfileError) as info:
        load_profiles(tmp_path)
    msg = str(info.value)
    assert "\n" not in msg
    assert str(path) in msg and f"key '{key}'" in msg and words in msg, msg


def test_invalid_toml_and_missing_dir(tmp_path):
    path = _write(tmp_path, "name = \n")
    with pytest.raises(ProfileError, match=r"box\.toml: not valid TOML"):
        load_profile(path)
    with pytest.raises(ProfileError, match="profile directory not found"):
        load_profiles(tmp_path / "nope")
    with pytest.raises(ProfileError, match="cannot read"):
        load_profile(tmp_path / "absent.toml")


def test_gb200_tray_profile_by_count(profiles):
    """A GB200 compute tray has 4 GPUs: 4 (or 3, one lost) match gb200-nvl; 8 B200 stay dgx-b200."""
    assert detect_profile(["NVIDIA GB200"] * 4, profiles, gpu_count=4).name == "gb200-nvl"
    assert detect_profile(["NVIDIA GB200"] * 3, profiles, gpu_count=3).name == "gb200-nvl"
    assert detect_profile(["NVIDIA GB200"] * 2, profiles, gpu_count=2) is None
    assert detect_profile(["NVIDIA B200"] * 8, profiles, gpu_count=8).name == "dgx-b200"
    assert profiles["gb200-nvl"].nics == 4 and profiles["gb200-nvl"].gpu_nic_max_path is None
