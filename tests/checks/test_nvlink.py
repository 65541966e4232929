"""NVL001-003 on corpus `nvidia-smi nvlink -s` outputs: hand-checked findings; truncated GPUs never judged."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from topodiag import parsers
from topodiag.checks import nvlink, topo
from topodiag.engine import Severity
from topodiag.model import build
from topodiag.records import ParsedInput

from .test_topo import REPO, catalog, findings  # noqa: F401 (catalog is a fixture)
from .wording import worded

NVL = "fixtures/nvidia_smi_nvlink_s/"


def nvl(catalog, code, name):
    return findings(catalog, code, nvidia_smi_nvlink_s=NVL + name + ".txt")


def model_of(name, source="nvidia_smi_nvlink_s", folder=NVL):
    rel = folder + name + ".txt"
    parsed = parsers.get(source).parse(parsers.blank_provenance_header((REPO / rel).read_text(encoding="utf-8")))
    return build([ParsedInput(source, rel, parsed)]), parsed


def test_v100_links_3_and_5_inactive(catalog):
    [f] = nvl(catalog, "NVL001", "nvlink-s-v100-sxm2-2-inactive-links-01")
    assert f.subjects == ("gpu:3",) and f.severity == Severity.ERROR
    assert "link(s) 3, 5 inactive" in f.message and "4 of 6 up" in f.message
    # 2 of 6 links x 25 GB/s one-way lost out of 150
    assert "about 50 of 150 GB/s" in f.message
    assert f.expectation == "GPU model V100 SXM2"
    assert f.evidence[0].source == "nvidia_smi_nvlink_s"


def test_b200_all_links_inactive(catalog):
    [f] = nvl(catalog, "NVL001", "nvlink-s-b200-all-links-inactive-redacted-01")
    assert f.subjects == ("gpu:2",) and f.severity == Severity.ERROR
    assert "all links inactive" in f.message and "0 of 18 up" in f.message


@pytest.mark.parametrize("name", ["nvlink-s-a100-sxm4-12links-25gbs-elided-01", "nvlink-s-gb200-18links-53gbs-elided-01",
                                  "nvlink-status-h100-elided-short-01", "nvlink-status-h800-8links-elided-01"])
@pytest.mark.parametrize("code", ["NVL001", "NVL002", "NVL003"])
def test_healthy_and_elided_outputs_give_nothing(catalog, code, name):
    assert nvl(catalog, code, name) == []


def test_cut_off_gpu_is_not_judged(catalog):
    # GPU0 6/6, GPU1 links 2 and 5 inactive, GPU2 cut off after link 1 (truncated): only GPU1 is named
    found = nvl(catalog, "NVL001", "nvlink-s-invented-v100-crlf-prompt-cut-off-01")
    assert [f.subjects for f in found] == [("gpu:1",)]
    assert "link(s) 2, 5 inactive" in found[0].message
    [f] = nvl(catalog, "NVL003", "nvlink-s-invented-v100-crlf-prompt-cut-off-01")
    assert f.subjects == ("gpu:1",) and "gpu:0: 6, gpu:1: 4" in f.message and "gpu:2" not in f.message


def test_truncated_gpu_with_printed_inactive_link_reports_only_what_is_printed():
    text = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)\n"
            "         Link 0: 26.562 GB/s\n         Link 1: <inactive>\n         ...\n")
    parsed = parsers.get("nvidia_smi_nvlink_s").parse(text)
    assert parsed.gpus[0].truncated
    t = build([ParsedInput("nvidia_smi_nvlink_s", None, parsed)])
    [h] = list(nvlink.nvlink_inactive(t, {}))
    assert h.variant == "truncated"
    assert "1 printed link(s) inactive (1)" in worded("NVL001", h) and "truncated" in worded("NVL001", h)


def test_bridged_card_without_bridge_is_info(catalog):
    [f] = nvl(catalog, "NVL001", "nvlink-s-rtxa6000-bridge-inactive-gpu-01")
    assert f.subjects == ("gpu:2",) and f.severity == Severity.INFO
    assert "bridge" in f.message
    assert nvl(catalog, "NVL003", "nvlink-s-rtxa6000-bridge-inactive-gpu-01") == []


def test_profile_expectation_wins():
    t, parsed = model_of("nvlink-status-h800-8links-elided-01")
    profile = SimpleNamespace(name="dgx-h100", nvlinks_per_gpu=18, nvlink_speed_gbps=26.562)
    hits = list(nvlink.nvlink_inactive(t, {}, profile=profile))
    # the "..." hides GPUs 2-6 whole; GPUs 0, 1 and 7 are complete, with 8 of the profile's 18
    assert [h.subjects for h in hits] == [("gpu:0",), ("gpu:1",), ("gpu:7",)]
    assert all(h.expectation == "profile dgx-h100" and h.values["expected"] == 18 for h in hits)


def test_speed_low_inline():
    text = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)\n"
            "         Link 0: 25 GB/s\n         Link 1: 12.5 GB/s\n")
    parsed = parsers.get("nvidia_smi_nvlink_s").parse(text)
    t = build([ParsedInput("nvidia_smi_nvlink_s", None, parsed)])
    [h] = list(nvlink.nvlink_speed_low(t, {"rel_tol": 0.03}))
    assert h.values["links"] == "1" and h.values["speed"] == "12.5" and h.values["fraction"] == "48%"
    assert h.values["nominal"] == "25.781"


def test_speed_low_fail_example_message(catalog):
    from topodiag.engine import run
    text = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)\n"
            "         Link 0: 26.562 GB/s\n         Link 1: 13.281 GB/s\n")
    parsed = parsers.get("nvidia_smi_nvlink_s").parse(text)
    t = build([ParsedInput("nvidia_smi_nvlink_s", None, parsed)])
    out = run(catalog, {"nvidia_smi_nvlink_s": parsed, "topology": t}, select="NVL002")
    [f] = [f for f in out.findings if f.code == "NVL002"]
    assert f.message == ("gpu:0 (NVIDIA H100 80GB HBM3): 1 link(s) (1) below nominal: slowest 13.281 GB/s "
                         "vs 26.562 GB/s (50% of nominal)")


def test_topo001_profile_escalates_to_error():
    t, parsed = model_of("topo-rtxa6000-3gpu-nv4-bridge-ansi-01", "nvidia_smi_topo_m", "fixtures/nvidia_smi_topo_m/")
    profile = SimpleNamespace(name="x", gpu_pair_class="NV4", gpu_nic_max_path=None)
    [h] = list(topo.gpu_link_asymmetry(t, {}, profile=profile))
    assert h.severity == Severity.ERROR and h.expectation == "profile x: every GPU pair NV4"


def test_topo001_with_model_from_nvlink_s_uses_exact_numbers():
    # topo -m of a V100 DGX-1 plus nvlink -s naming the V100: exact generation, no "assumed" text
    rel_t = "fixtures/nvidia_smi_topo_m/topo-v100-dgx1-mlx5-legacy-01.txt"
    rel_n = NVL + "nvlink-s-v100-sxm2-2-inactive-links-01.txt"
    items = []
    for src, rel in (("nvidia_smi_topo_m", rel_t), ("nvidia_smi_nvlink_s", rel_n)):
        text = (REPO / rel).read_text(encoding="utf-8")
        items.append(ParsedInput(src, rel, parsers.get(src).parse(parsers.blank_provenance_header(text))))
    t = build(items)
    [h] = list(topo.gpu_link_asymmetry(t, {}))
    assert h.severity == Severity.INFO and h.variant == "default" and h.values["model"] == "V100 SXM2"
    assert "(~50 GB/s) (V100 SXM2), 3.1x" in worded("TOPO001", h)
    assert h.values["slow_gbyte_s"] == "16" and h.values["best_gbyte_s"] == "50"


def test_shipped_profiles():
    from topodiag.engine import load_catalog, run
    from topodiag.profiles import load_profiles

    profiles = load_profiles()
    cat = load_catalog(REPO / "rules")
    t, parsed = model_of("topo-h100-hgx-nv18-8nic-pix-gpunumaid-01", "nvidia_smi_topo_m", "fixtures/nvidia_smi_topo_m/")
    out = run(cat, {"nvidia_smi_topo_m": parsed, "topology": t, "profile": profiles["dgx-h100"]}, select="TOPO")
    assert set(out.ran) >= {"TOPO001", "TOPO002", "TOPO003"} and not out.findings
    t, parsed = model_of("nvlink-status-h100-elided-short-01")
    out = run(cat, {"nvidia_smi_nvlink_s": parsed, "topology": t, "profile": profiles["dgx-h100"]}, select="NVL")
    assert set(out.ran) >= {"NVL001", "NVL002", "NVL003"} and not out.findings
    # a PCIe-box profile (no NVLink expected) never calls present links inactive
    t, parsed = model_of("nvlink-s-a100-sxm4-12links-25gbs-elided-01")
    pcie = next(p for p in profiles.values() if p.nvlinks_per_gpu == 0)
    out = run(cat, {"nvidia_smi_nvlink_s": parsed, "topology": t, "profile": pcie}, select="NVL001")
    assert not out.findings
    # TOPO003 under a profile uses its gpu_nic_max_path and says so
    t, parsed = model_of("topo-a800-nv8-4nic-dualport-01", "nvidia_smi_topo_m", "fixtures/nvidia_smi_topo_m/")
    out = run(cat, {"nvidia_smi_topo_m": parsed, "topology": t, "profile": profiles["dgx-a100"]}, select="TOPO003")
    assert out.findings and all(f.expectation.startswith("profile dgx-a100") for f in out.findings)


def test_nvl004_v100_replays_and_a_saturated_crc_counter():
    """ScuffedSquared notes (fixture): GPU 0 link 3 Replay Errors 211 (line 22); GPU 2 link 0 Replay
    Errors 2 (line 35) and CRC Errors 65535 (line 37), the V100 counter's ceiling."""
    from topodiag.engine import load_catalog, load_checks, run

    load_checks()
    rel = "fixtures/nvidia_smi_nvlink_e/nvlink-e-v100-sxm2-replay-crc-nonzero-01.txt"
    parsed = parsers.get("nvidia_smi_nvlink_e").parse(parsers.blank_provenance_header((REPO / rel).read_text()))
    a, b = run(load_catalog(REPO / "rules"), {"nvidia_smi_nvlink_e": parsed}, select="NVL004").findings
    assert (a.subjects, a.severity) == (("gpu:0",), Severity.WARNING)
    assert a.message == "gpu:0 (Tesla V100-SXM2-32GB-LS): NVLink errors on 1 link(s): link 3 replay errors 211"
    assert [e.line_no for e in a.evidence] == [22]
    assert (b.subjects, b.severity) == (("gpu:2",), Severity.ERROR)  # at the ceiling: >= error_count
    assert "link 0 crc errors 65535 (the 16-bit counter's ceiling: at least that many)" in b.message
    assert [e.line_no for e in b.evidence] == [35, 37]


def test_bridged_h100_nvl_pair_with_every_bridge_link_up_is_by_design(catalog):
    """H100 NVL: 12 of the 18 printed links active (three bridges x 4 links), the other 6 <inactive> because
    the product cannot connect them: the design, no NVL001 (issue 27)."""
    assert nvl(catalog, "NVL001", "nvlink-s-invented-h100nvl-bridged-12of18-01") == []
    assert nvl(catalog, "NVL003", "nvlink-s-invented-h100nvl-bridged-12of18-01") == []


def test_bridged_h100_nvl_with_a_bridge_link_down_is_a_fault(catalog, tmp_path):
    """The same pair with GPU 1's links 8-11 down (8 of its 12 bridge links up): fewer than the product has."""
    text = (REPO / NVL / "nvlink-s-invented-h100nvl-bridged-12of18-01.txt").read_text()
    head, _, gpu1 = text.partition("GPU 1:")
    for link in range(8, 12):
        gpu1 = gpu1.replace(f"Link {link}: 26.562 GB/s", f"Link {link}: <inactive>")
    parsed = parsers.get("nvidia_smi_nvlink_s").parse(parsers.blank_provenance_header(head + "GPU 1:" + gpu1))
    topology = build([ParsedInput("nvidia_smi_nvlink_s", None, parsed)])
    [f] = list(nvlink.nvlink_inactive(topology, {}, None))
    assert f.subjects == ("gpu:1",) and f.values["active"] == 8 and f.values["expected"] == 12
