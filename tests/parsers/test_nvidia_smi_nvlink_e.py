"""nvidia_smi_nvlink_e: the facts each fixture's `#@ expected:` line states, checked by hand
(independently of the .expected.json files), plus the edge cases a live capture brings."""

from __future__ import annotations

import pytest

from tests.fixtures_index import FIXTURES, parser_fixtures
from topodiag.parsers import ParseError, blank_provenance_header, detect
from topodiag.parsers.nvidia_smi_nvlink_e import counter_kind, parse, parse_lines, sniff

DIR = FIXTURES / "nvidia_smi_nvlink_e"
OTHER_MODES = FIXTURES / "nvidia_smi_nvlink_s"


def load(name: str, folder=DIR) -> str:
    return blank_provenance_header((folder / name).read_bytes().decode("utf-8", errors="replace"))


def gpu(report, index):
    (found,) = [g for g in report.gpus if g.index == index]
    return found


def values(g, counter: str) -> dict[int, int | float | None]:
    return {link.link: link.counters[counter].value for link in g.links if counter in link.counters}


def nonzero(g) -> list[tuple[int, str, int | float]]:
    return [(n.link, n.counter, n.value) for n in g.nonzero]


LEGACY = ("replay_errors", "recovery_errors", "crc_errors")

# -- corpus file: the expert's conclusions -------------------------------------------------------


def test_h100_corpus_three_links_shown_all_zero_the_rest_elided() -> None:
    r = parse(load("nvlink-e-h100-error-counters-elided-01.txt"))
    g = gpu(r, 0)
    assert g.model == "NVIDIA H100 80GB HBM3" and g.uuid == "GPU-abcdefab-cdef-abdc-abcd-abababababab"
    assert [link.link for link in g.links] == [0, 1, 17]
    for link in g.links:
        assert set(link.counters) == set(LEGACY)
        assert [c.raw_name for c in link.counters.values()] == ["Replay Errors", "Recovery Errors", "CRC Errors"]
        assert all(c.value == 0 and c.kind == "error" for c in link.counters.values())
    assert g.nonzero == ()  # no NVLink errors
    assert g.truncated and r.elided  # links 2-16 elided by '[...]', not missing
    assert g.links[0].line_no == 9 and g.links[2].counters["crc_errors"].line_no == 21


# -- published outputs beyond the corpus ---------------------------------------------------------


def test_v100_replay_and_crc_errors_on_two_links() -> None:
    r = parse(load("nvlink-e-v100-sxm2-replay-crc-nonzero-01.txt"))
    assert [g.index for g in r.gpus] == [0, 2]  # what was printed; no marker says GPUs 1 and 3 were cut
    g0, g2 = gpu(r, 0), gpu(r, 2)
    assert g0.model == "Tesla V100-SXM2-32GB-LS"
    for g in (g0, g2):
        assert [link.link for link in g.links] == [0, 1, 2, 3, 4, 5]
        assert not g.truncated and not g.all_links_inactive
        assert values(g, "recovery_errors") == dict.fromkeys(range(6), 0)
    assert values(g0, "replay_errors") == {0: 0, 1: 0, 2: 0, 3: 211, 4: 0, 5: 0}
    assert values(g0, "crc_errors") == dict.fromkeys(range(6), 0)
    assert nonzero(g0) == [(3, "replay_errors", 211)]
    assert values(g2, "replay_errors") == {0: 2, 1: 0, 2: 0, 3: 0, 4: 0, 5: 0}
    assert values(g2, "crc_errors") == {0: 65535, 1: 0, 2: 0, 3: 0, 4: 0, 5: 0}
    assert nonzero(g2) == [(0, "replay_errors", 2), (0, "crc_errors", 65535)]
    assert g2.nonzero[1].line_no == 37
    assert not r.elided and r.errors == ()


def test_a100_per_gpu_i_loop_eight_gpus_twelve_clean_links() -> None:
    r = parse(load("nvlink-e-a100-sxm4-8gpu-per-gpu-i-loop-01.txt"))
    assert [g.index for g in r.gpus] == list(range(8))  # the '=== GPU i ... ===' echo lines are skipped
    assert gpu(r, 7).uuid == "GPU-63a54e17-d900-3b99-c42a-4506beaaa446"
    for g in r.gpus:
        assert g.model == "NVIDIA A100-SXM4-40GB"
        assert [link.link for link in g.links] == list(range(12))
        assert all(values(g, c) == dict.fromkeys(range(12), 0) for c in LEGACY)
        assert g.nonzero == () and not g.truncated
    assert not r.elided and r.errors == ()


def test_invented_nvlink5_counters_flag_only_error_counts() -> None:
    r = parse(load("nvlink-e-invented-gb200-nvlink5-counters-elided-01.txt"))
    g0, g1 = gpu(r, 0), gpu(r, 1)
    assert [link.link for link in g0.links] == [0, 1] and g0.truncated
    assert [link.link for link in g1.links] == [14] and g1.truncated
    link0 = g0.links[0].counters
    assert len(link0) == 39 and "replay_errors" not in link0
    assert link0["fec_errors_0"].raw_name == "FEC Errors - 0" and link0["fec_errors_0"].value == 36140749276
    assert link0["fec_errors_0"].kind == "fec"
    assert link0["effective_ber"].value == pytest.approx(15e-255) and link0["effective_ber"].kind == "ber"
    assert (link0["raw_errors_lane_0"].value, link0["raw_errors_lane_0"].kind) == (82, "raw")
    assert (link0["tx_packets"].kind, link0["rx_bytes"].kind) == ("traffic", "traffic")
    assert (link0["rx_remote_errors"].raw_name, link0["rx_remote_errors"].kind) == ("Rx remote Errors", "error")
    assert g0.nonzero == ()  # FEC buckets, raw lane counts and traffic are non-zero on a healthy link
    assert nonzero(g1) == [(14, "link_recovery_successful_events", 505), (14, "total_link_recovery_events", 505)]
    assert g1.links[0].counters["raw_errors_lane_1"].value == 90211  # high, but not an error count


def test_invented_crlf_capture_with_inactive_gpu_and_cut_off_line() -> None:
    name = "nvlink-e-invented-a6000-crlf-inactive-cut-off-01.txt"
    r = parse(load(name))
    assert [g.index for g in r.gpus] == [0, 1, 2]
    g0, g1, g2 = r.gpus
    assert [link.link for link in g0.links] == [0, 1, 2, 3] and not g0.truncated
    assert nonzero(g0) == [(2, "replay_errors", 7), (2, "recovery_errors", 1), (2, "crc_errors", 12)]
    assert g1.links == () and g1.all_links_inactive and "all links are inActive" in g1.message
    assert [link.link for link in g2.links] == [0, 1]
    assert "crc_errors" not in g2.links[1].counters  # 'Link 1: CRC Err' is cut: not a counter
    assert g2.truncated and any("cut off" in n for n in r.notes)
    raw = (DIR / name).read_bytes().decode()
    assert parse_lines(iter(blank_provenance_header(raw).splitlines(keepends=True))) == r


# -- the other nvlink modes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "mode", "line_no"),
    [
        ("nvlink-s-a100-sxm4-12links-25gbs-elided-01.txt", "`nvidia-smi nvlink -s` (link status)", 9),
        ("nvlink-c-h800-capabilities-01.txt", "`nvidia-smi nvlink -c` (capabilities)", 9),
        ("nvlink-info-gb200-firmware-partial-01.txt", "`nvidia-smi nvlink -info`", 9),
        ("nvlink-R-h100-remote-link-info-partial-01.txt", "`nvidia-smi nvlink -R` (remote link info)", 10),
    ],
)
def test_other_nvlink_modes_are_refused_by_name(name: str, mode: str, line_no: int) -> None:
    text = load(name, OTHER_MODES)
    with pytest.raises(ParseError) as info:
        parse(text)
    assert mode in info.value.message and "not `nvidia-smi nvlink -e`" in info.value.message
    assert info.value.line_no == line_no
    assert sniff(text) == 0.0


def test_status_and_counters_in_one_paste_keep_the_counters() -> None:
    text = load("nvlink-s-rtxa6000-bridge-inactive-gpu-01.txt", OTHER_MODES) + "\n" + load(
        "nvlink-e-h100-error-counters-elided-01.txt")
    r = parse(text)
    assert [g.index for g in r.gpus if g.links] == [0]
    assert any("-s` (link status) lines skipped" in n for n in r.notes)


# -- edge cases ----------------------------------------------------------------------------------

UUID = "GPU-12345678-1234-1234-1234-123456789abc"
BLOCK = f"GPU 0: NVIDIA H100 80GB HBM3 (UUID: {UUID})\n" + "".join(
    f"\t Link {i}: Replay Errors: 0\n\t Link {i}: Recovery Errors: 0\n\t Link {i}: CRC Errors: 0\n\n" for i in range(18))


def test_plain_full_block() -> None:
    r = parse(BLOCK)
    g = gpu(r, 0)
    assert g.uuid == UUID and [link.link for link in g.links] == list(range(18))
    assert not g.truncated and not r.elided and g.nonzero == ()
    assert g.line_no == 1 and g.links[1].line_no == 6 and g.links[1].counters["crc_errors"].line_no == 8


def test_crlf_tabs_ansi_trailing_spaces_and_indentation_are_tolerated() -> None:
    text = "\x1b[1m" + BLOCK.replace("\t ", "        ").replace("\n", "   \r\n") + "\x1b[0m"
    assert parse(text).gpus == parse(BLOCK).gpus


def test_single_gpu_i_output_of_another_index() -> None:
    r = parse(BLOCK.replace("GPU 0:", "GPU 5:"))
    assert [g.index for g in r.gpus] == [5] and r.elided_gpu_indices == ()


def test_messages_instead_of_links() -> None:
    r = parse(f"GPU 1: Quadro RTX 5000 (UUID: {UUID}) NVML: Unable to retrieve Nvlink information as all links "
              "are inActive\nGPU 2: Quadro RTX 4000 (UUID: GPU-3193a2da-ea05-d9e8-dd6d-24fa7a760595)\n"
              "Device does not have or support Nvlink\n")
    g1, g2 = gpu(r, 1), gpu(r, 2)
    assert g1.all_links_inactive and g1.links == () and g1.message.startswith("NVML:")
    assert g2.nvlink_unsupported and not g2.all_links_inactive and g2.links == ()


def test_elision_between_gpus_hides_indices_or_links() -> None:
    r = parse(BLOCK + "...\n" + BLOCK.replace("GPU 0:", "GPU 4:"))
    assert r.elided_gpu_indices == (1, 2, 3) and not gpu(r, 0).truncated
    r = parse(BLOCK + "...\n" + BLOCK.replace("GPU 0:", "GPU 1:"))
    assert r.elided_gpu_indices == () and gpu(r, 0).truncated and not gpu(r, 1).truncated


def test_output_ending_after_a_header_or_inside_its_uuid() -> None:
    r = parse(BLOCK + "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-1234")
    g = gpu(r, 1)
    assert g.truncated and g.uuid is None and g.links == ()
    assert gpu(r, 1).model == "NVIDIA H100 80GB HBM3"
    assert parse(BLOCK + f"GPU 1: NVIDIA H100 80GB HBM3 (UUID: {UUID})\n").gpus[1].truncated


@pytest.mark.parametrize("tail", ["\t Link 18: CRC Errors:", "\t Link 18: Rep", "\t Link 1", "\t Li"])
def test_cut_off_last_line_marks_the_gpu_truncated(tail: str) -> None:
    r = parse(BLOCK + tail)
    g = gpu(r, 0)
    assert g.truncated and [link.link for link in g.links] == list(range(18))


def test_non_numeric_value_is_null_with_a_note() -> None:
    r = parse(BLOCK + "\t Link 18: CRC Errors: N/A\n")
    c = gpu(r, 0).links[-1].counters["crc_errors"]
    assert c.value is None and c.raw_name == "CRC Errors"
    assert any("'N/A'" in n for n in r.notes)


def test_other_counter_spellings_are_kept() -> None:
    r = parse(f"GPU 0: NVIDIA GeForce RTX 3090 (UUID: {UUID})\n"
              "         Link 0: CRC Flit Errors: 5\n         Link 0: CRC Data Errors: 0\n"
              "         Link 0: Data Tx Errors: 1\n         Link 0: ECC Errors: 0\n")
    g = gpu(r, 0)
    assert set(g.links[0].counters) == {"crc_flit_errors", "crc_data_errors", "data_tx_errors", "ecc_errors"}
    assert nonzero(g) == [(0, "crc_flit_errors", 5), (0, "data_tx_errors", 1)]


def test_link_lines_without_a_gpu_header() -> None:
    r = parse("Link 0: Replay Errors: 0\nLink 0: Recovery Errors: 0\nLink 0: CRC Errors: 3\n")
    (g,) = r.gpus
    assert g.index is None and g.model is None and g.uuid is None
    assert nonzero(g) == [(0, "crc_errors", 3)]
    assert any("no 'GPU n:' header" in n for n in r.notes)


def test_human_summary_lines_are_skipped_with_a_note() -> None:
    r = parse(f"GPU 0: Tesla V100-SXM2-32GB (UUID: {UUID})\n         Link 3: Replay Errors: 2353\n"
              "         Links 0-2, 4-5: Replay/Recovery/CRC Errors: 0\n"
              f"GPU 2: Tesla V100-SXM2-32GB (UUID: {UUID})\n         Link 0: CRC Errors: 65535\n")
    assert [link.link for link in gpu(r, 0).links] == [3]
    assert any("Links 0-2, 4-5" in n for n in r.notes)


def test_nvidia_smi_failure_lines_are_kept_as_errors() -> None:
    r = parse(BLOCK + "Unable to determine the device handle for GPU0000:9B:00.0: Unknown Error\n")
    assert [(e.line_no, e.text[:30]) for e in r.errors] == [(74, "Unable to determine the device")]
    r = parse("No devices were found\n")
    assert r.gpus == () and r.errors[0].text == "No devices were found"


@pytest.mark.parametrize("text", ["", "\n\n   \n"])
def test_empty_text_is_refused(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.line_no == 0


def test_headers_alone_are_nvidia_smi_L() -> None:
    with pytest.raises(ParseError) as info:
        parse(f"\nGPU 0: NVIDIA A100-SXM4-40GB (UUID: {UUID})\nGPU 1: NVIDIA A100-SXM4-40GB (UUID: {UUID})\n")
    assert info.value.line_no == 2 and "nvidia-smi -L" in info.value.message


def test_another_tools_output_is_refused_with_a_line_number() -> None:
    topo = "\n\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-11\nGPU1\tNV4\t X \t0-11\n"
    with pytest.raises(ParseError) as info:
        parse(topo)
    assert info.value.line_no == 2 and "`nvidia-smi nvlink -e`" in info.value.message
    assert sniff(topo) == 0.0


def test_counter_kinds() -> None:
    assert [counter_kind(n) for n in ("replay_errors", "recovery_errors", "crc_errors", "tx_discards",
                                      "link_recovery_failed_events", "plr_xmit_retry_blocks")] == ["error"] * 6
    assert [counter_kind(n) for n in ("tx_packets", "rx_bytes", "plr_xmit_blocks")] == ["traffic"] * 3
    assert [counter_kind(n) for n in ("effective_ber", "symbol_ber", "raw_ber_total")] == ["ber"] * 3
    assert (counter_kind("fec_errors_0"), counter_kind("raw_errors_lane_0"), counter_kind("temperature")) == (
        "fec", "raw", "other")


# -- detection -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in DIR.glob("*.txt")))
def test_detection_names_this_source(name: str) -> None:
    text = load(name)
    assert detect(text) == "nvidia_smi_nvlink_e"
    assert sniff(text) >= 0.9


@pytest.mark.parametrize("fx", [f for f in parser_fixtures() if f.source != "nvidia_smi_nvlink_e"], ids=lambda f: f.id)
def test_other_fixtures_do_not_look_like_error_counters(fx) -> None:
    text = blank_provenance_header(fx.text())
    if "Replay Errors:" in text:  # the corpus -e sample kept under nvidia_smi_nvlink_s for its refusal
        return
    assert sniff(text) == 0.0
