"""nvidia_smi_nvlink_s: the facts each fixture's `#@ expected:` line states, checked by hand
(independently of the .expected.json files), plus the edge cases a live capture brings."""

from __future__ import annotations

import pytest

from tests.fixtures_index import FIXTURES
from topodiag.parsers import ParseError, blank_provenance_header, detect
from topodiag.parsers.nvidia_smi_nvlink_s import parse, parse_lines, sniff

DIR = FIXTURES / "nvidia_smi_nvlink_s"


def load(name: str) -> str:
    return blank_provenance_header((DIR / name).read_bytes().decode("utf-8", errors="replace"))


def gpu(report, index: int):
    (found,) = [g for g in report.gpus if g.index == index]
    return found


def active(g) -> list[int]:
    return [link.link for link in g.links if link.active]


def inactive(g) -> list[int]:
    return [link.link for link in g.links if not link.active]


# -- corpus files: the expert's conclusions ------------------------------------------------------


def test_a100_two_full_gpus_and_a_truncated_third() -> None:
    r = parse(load("nvlink-s-a100-sxm4-12links-25gbs-elided-01.txt"))
    assert [g.index for g in r.gpus] == [0, 1, 2]
    for i in (0, 1):
        g = gpu(r, i)
        assert active(g) == list(range(12)) and inactive(g) == []
        assert {link.speed_gbps for link in g.links} == {25.0}
        assert not g.truncated and not g.all_links_inactive
    g2 = gpu(r, 2)
    assert active(g2) == [0]
    assert g2.truncated  # 1 link shown, then '......': not "1 link, 11 missing"
    assert not g2.all_links_inactive
    assert r.elided


def test_rtxa6000_bridge_pair_and_a_gpu_without_active_links() -> None:
    r = parse(load("nvlink-s-rtxa6000-bridge-inactive-gpu-01.txt"))
    for i in (0, 1):
        g = gpu(r, i)
        assert active(g) == [0, 1, 2, 3]
        assert all(link.speed_gbps == 14.062 for link in g.links)
    g2 = gpu(r, 2)
    assert g2.links == () and g2.all_links_inactive and not g2.truncated
    assert "all links are inActive" in g2.message
    assert not r.elided and r.errors == ()


def test_v100_degraded_four_of_six() -> None:
    r = parse(load("nvlink-s-v100-sxm2-2-inactive-links-01.txt"))
    assert [g.index for g in r.gpus] == [3]
    g = gpu(r, 3)
    assert g.model == "Tesla V100-SXM2-32GB"
    assert g.uuid is None  # '(UUID: ...)' redacted
    assert active(g) == [0, 1, 2, 4] and inactive(g) == [3, 5]
    assert [link.speed_gbps for link in g.links] == [25.781, 25.781, 25.781, None, 25.781, None]
    assert [link.state for link in g.links if not link.active] == ["inactive", "inactive"]
    assert not g.truncated and not g.all_links_inactive
    assert r.elided and r.elided_gpu_indices == (0, 1, 2)  # the leading '....' hid GPUs 0-2


def test_h100_short_counts_two_observed_links_and_notes_the_elision() -> None:
    r = parse(load("nvlink-status-h100-elided-short-01.txt"))
    g = gpu(r, 0)
    assert [link.link for link in g.links] == [0, 17]
    assert all(link.speed_gbps == 26.562 for link in g.links)
    assert g.truncated  # '[...]' between link 0 and link 17
    assert r.elided and any("[...]" in n for n in r.notes)


def test_h800_three_listed_gpus_eight_links_each() -> None:
    r = parse(load("nvlink-status-h800-8links-elided-01.txt"))
    assert [g.index for g in r.gpus] == [0, 1, 7]  # '...' is neither a GPU nor a link
    for g in r.gpus:
        assert active(g) == list(range(8)) and inactive(g) == []
        assert {link.speed_gbps for link in g.links} == {26.562}
        assert not g.truncated
    assert r.elided_gpu_indices == (2, 3, 4, 5, 6)


@pytest.mark.parametrize(
    ("name", "mode", "line_no", "detected"),
    [
        ("nvlink-c-h800-capabilities-01.txt", "nvlink -c` (capabilities)", 9, "nvidia_smi_nvlink_c"),
        ("nvlink-e-h100-error-counters-elided-01.txt", "nvlink -e` (error counters)", 9, "nvidia_smi_nvlink_e"),
        ("nvlink-info-gb200-firmware-partial-01.txt", "nvlink -info`", 9, "nvidia_smi_nvlink_info"),
        ("nvlink-R-h100-remote-link-info-partial-01.txt", "nvlink -R` (remote link info)", 10, "nvidia_smi_nvlink_s"),
    ],
)
def test_other_nvlink_modes_are_refused_by_name(name: str, mode: str, line_no: int, detected: str) -> None:
    text = load(name)
    with pytest.raises(ParseError) as info:
        parse(text)
    assert mode in info.value.message and "not `nvidia-smi nvlink -s`" in info.value.message
    assert info.value.line_no == line_no
    # a mode with its own parser is detected as that; one without (-R) as -s, so `topodiag parse` gives
    # this error rather than "unknown tool"
    assert detect(text) == detected


# -- published outputs beyond the corpus ---------------------------------------------------------


def test_gb200_eighteen_links_at_nvlink5_speed() -> None:
    r = parse(load("nvlink-s-gb200-18links-53gbs-elided-01.txt"))
    g0, g1 = gpu(r, 0), gpu(r, 1)
    assert active(g0) == list(range(18)) and {link.speed_gbps for link in g0.links} == {53.125}
    assert not g0.truncated
    assert active(g1) == [0, 1] and g1.truncated


def test_b200_all_inactive_with_redacted_uuid() -> None:
    r = parse(load("nvlink-s-b200-all-links-inactive-redacted-01.txt"))
    g = gpu(r, 2)
    assert g.model == "NVIDIA B200" and g.uuid is None
    assert g.all_links_inactive and g.links == () and not g.nvlink_unsupported


def test_invented_crlf_capture_cut_mid_line() -> None:
    name = "nvlink-s-invented-v100-crlf-prompt-cut-off-01.txt"
    r = parse(load(name))
    assert [g.index for g in r.gpus] == [0, 1, 2]
    assert active(gpu(r, 0)) == list(range(6))
    assert inactive(gpu(r, 1)) == [2, 5]
    g2 = gpu(r, 2)
    assert active(g2) == [0, 1] and g2.truncated  # 'Link 2: 25.7' cut off: not a link with speed 25.7
    raw = (DIR / name).read_bytes().decode()
    assert parse_lines(iter(blank_provenance_header(raw).splitlines(keepends=True))) == r


# -- edge cases ----------------------------------------------------------------------------------

BLOCK = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-12345678-1234-1234-1234-123456789abc)\n" + "".join(
    f"\t Link {i}: 26.562 GB/s\n" for i in range(18))


def test_plain_full_block() -> None:
    r = parse(BLOCK)
    g = gpu(r, 0)
    assert g.uuid == "GPU-12345678-1234-1234-1234-123456789abc"
    assert active(g) == list(range(18)) and not g.truncated and not r.elided
    assert g.line_no == 1 and g.links[0].line_no == 2


def test_crlf_tabs_ansi_trailing_spaces_and_indentation_are_tolerated() -> None:
    text = "\x1b[1m" + BLOCK.replace("\t ", "    ").replace("\n", "   \r\n") + "\x1b[0m"
    assert parse(text).gpus == parse(BLOCK).gpus


def test_inactive_gpu_message_on_the_header_line() -> None:
    r = parse("GPU 1: Quadro RTX 5000 (UUID: GPU-bbbbbbbb-0000-0000-0000-000000000000) "
              "NVML: Unable to retrieve Nvlink information as all links are inActive\n")
    g = gpu(r, 1)
    assert g.all_links_inactive and g.links == () and g.message.startswith("NVML:")


def test_device_without_nvlink_driver_595_message() -> None:
    r = parse("GPU 0: Quadro RTX 4000 with Max-Q Design (UUID: GPU-3193a2da-ea05-d9e8-dd6d-24fa7a760595)\n"
              "Device does not have or support Nvlink\n")
    g = gpu(r, 0)
    assert g.nvlink_unsupported and not g.all_links_inactive and g.links == ()


def test_every_link_inactive_listed() -> None:
    r = parse("GPU 0: NVIDIA L4 (UUID: GPU-0000feed-0000-4000-8000-000000000300)\n"
              "\t Link 0: <inactive>\n\t Link 1: <inactive>\n")
    g = gpu(r, 0)
    assert inactive(g) == [0, 1] and g.all_links_inactive


def test_unknown_state_is_not_counted_as_active() -> None:
    r = parse(BLOCK + "\t Link 18: Disabled\n")
    link = gpu(r, 0).links[-1]
    assert (link.link, link.active, link.speed_gbps, link.state) == (18, False, None, "disabled")
    assert any("disabled" in n.lower() for n in r.notes)


def test_output_ending_after_a_header_marks_that_gpu_truncated() -> None:
    r = parse(BLOCK + "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-12345678-1234-1234-1234-123456789abd)\n")
    assert not gpu(r, 0).truncated
    assert gpu(r, 1).truncated and gpu(r, 1).links == ()


def test_header_cut_inside_the_uuid() -> None:
    r = parse(BLOCK + "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-1234")
    g = gpu(r, 1)
    assert g.truncated and g.uuid is None and g.model == "NVIDIA H100 80GB HBM3"


def test_elision_between_consecutive_gpus_is_charged_to_the_first() -> None:
    text = BLOCK.replace("\t Link 17: 26.562 GB/s\n", "") + "...\n" + BLOCK.replace("GPU 0:", "GPU 1:")
    r = parse(text)
    assert gpu(r, 0).truncated and not gpu(r, 1).truncated and r.elided_gpu_indices == ()


def test_output_cut_inside_its_last_gpu_is_truncated() -> None:
    second = BLOCK.replace("GPU 0:", "GPU 1:")
    assert parse(BLOCK + second).truncated is False  # both blocks whole
    assert parse(load("nvlink-s-a100-sxm4-12links-25gbs-elided-01.txt")).truncated is True  # ends '......' in GPU 2
    assert parse(BLOCK + second + "...\n").truncated is True  # trailing elision: GPUs after 1 may be cut
    assert parse(BLOCK + second[:-8]).truncated is True  # ends inside a link's speed ("Link 17: 26.5")
    cut = parse(BLOCK + "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-1234")  # header cut inside its UUID
    assert cut.truncated is True and gpu(cut, 1).truncated
    only_header = parse(BLOCK + second.splitlines(keepends=True)[0])
    assert only_header.truncated is True and gpu(only_header, 1).links == ()


def test_links_elided_inside_a_block_the_output_goes_on_after_is_no_cut() -> None:
    # '[...]' between Link 0 and Link 17 of the last GPU: links elided, the output not cut
    text = BLOCK.replace("".join(f"\t Link {i}: 26.562 GB/s\n" for i in range(1, 17)), "\t [...]\n")
    r = parse(text)
    assert gpu(r, 0).truncated and active(gpu(r, 0)) == [0, 17] and r.truncated is False
    # GPUs 2-6 elided between GPU 1 and GPU 7: indices tell which; the output is not cut either
    r = parse(BLOCK + "....\n" + BLOCK.replace("GPU 0:", "GPU 7:"))
    assert r.elided_gpu_indices == (1, 2, 3, 4, 5, 6) and r.truncated is False


def test_interleaved_shell_lines_are_skipped() -> None:
    text = "$ nvidia-smi nvlink -s\n" + BLOCK + "$ echo done\ndone\n"
    r = parse(text)
    assert active(gpu(r, 0)) == list(range(18)) and not gpu(r, 0).truncated


def test_nvidia_smi_failure_lines_are_kept_as_errors() -> None:
    r = parse(BLOCK + "Unable to determine the device handle for GPU0000:9B:00.0: Unknown Error\n")
    assert [e.text for e in r.errors] == ["Unable to determine the device handle for GPU0000:9B:00.0: Unknown Error"]
    assert r.errors[0].line_no == 20


@pytest.mark.parametrize("text", ["", "\n\n   \n"])
def test_empty_text_is_refused(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.line_no == 0


def test_headers_alone_are_nvidia_smi_L_not_link_status() -> None:
    with pytest.raises(ParseError) as info:
        parse("\nGPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-aaaaaaaa-0000-0000-0000-000000000000)\n"
              "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-aaaaaaaa-0000-0000-0000-000000000001)\n")
    assert info.value.line_no == 2 and "nvidia-smi -L" in info.value.message


def test_another_tools_output_is_refused_with_a_line_number() -> None:
    topo = "\n\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-11\nGPU1\tNV4\t X \t0-11\n"
    with pytest.raises(ParseError) as info:
        parse(topo)
    assert info.value.line_no == 2 and "GPU <n>: <name> (UUID" in info.value.message
    assert sniff(topo) == 0.0


def test_sniff_scores() -> None:
    assert sniff(BLOCK) >= 0.9
    assert sniff(BLOCK.split("\n", 1)[1]) >= 0.5  # links without the header: likely
    assert sniff("CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n") == 0.0
    assert sniff("NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n") == 0.0
