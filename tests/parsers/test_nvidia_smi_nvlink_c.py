"""nvidia_smi_nvlink_c: the facts each fixture's `#@ expected:` line states, checked by hand
(independently of the .expected.json files), plus the edge cases a live capture brings."""

from __future__ import annotations

import pytest

from tests.fixtures_index import FIXTURES, parser_fixtures
from topodiag.parsers import ParseError, blank_provenance_header, detect
from topodiag.parsers.nvidia_smi_nvlink_c import capability_name, parse, parse_lines, sniff

DIR = FIXTURES / "nvidia_smi_nvlink_c"
OTHER_MODES = FIXTURES / "nvidia_smi_nvlink_s"
NAMES = ["p2p_supported", "sysmem_access", "p2p_atomics", "sysmem_atomics", "sli", "link_supported"]


def load(name: str, folder=DIR) -> str:
    return blank_provenance_header((folder / name).read_bytes().decode("utf-8", errors="replace"))


def gpu(report, index):
    (found,) = [g for g in report.gpus if g.index == index]
    return found


def caps(link) -> dict[str, bool | None]:
    return {name: c.value for name, c in link.capabilities.items()}


# -- corpus file: the expert's conclusions -------------------------------------------------------


def test_h800_corpus_three_gpus_eight_links_link_is_supported_false() -> None:
    r = parse(load("nvlink-c-h800-capabilities-01.txt"))
    assert [g.index for g in r.gpus] == [0, 1, 7]
    for g in r.gpus:
        assert g.model == "NVIDIA H800"
        assert [link.link for link in g.links] == list(range(8))
        for link in g.links:
            assert list(link.capabilities) == NAMES
            assert caps(link) == {"p2p_supported": True, "sysmem_access": True, "p2p_atomics": True,
                                  "sysmem_atomics": True, "sli": True, "link_supported": False}  # as printed
        assert not g.truncated and not g.all_links_inactive
    assert gpu(r, 1).uuid == "GPU-f5046fa5-3db4-45e8-870a-dc1376becaa5"
    assert r.elided and r.elided_gpu_indices == (2, 3, 4, 5, 6)  # the '...' hid GPUs 2-6
    link0 = gpu(r, 0).links[0]
    assert link0.line_no == 9 and link0.capabilities["sysmem_access"].raw_name == "Access to system memory supported"
    assert link0.capabilities["link_supported"].line_no == 14


# -- published outputs beyond the corpus ---------------------------------------------------------


def test_h100_single_gpu_eighteen_links_all_true() -> None:
    r = parse(load("nvlink-c-h100-18links-all-true-single-gpu-01.txt"))
    (g,) = r.gpus
    assert (g.index, g.model, g.uuid) == (0, "NVIDIA H100 80GB HBM3", "GPU-5a10e6e5-95f7-2785-ed63-6f6147f304f7")
    assert [link.link for link in g.links] == list(range(18))
    assert all(caps(link) == dict.fromkeys(NAMES, True) for link in g.links)
    assert not g.truncated and not r.elided and r.notes == ()


# -- the other nvlink modes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "mode", "line_no"),
    [
        ("nvlink-s-a100-sxm4-12links-25gbs-elided-01.txt", "`nvidia-smi nvlink -s` (link status)", 9),
        ("nvlink-e-h100-error-counters-elided-01.txt", "`nvidia-smi nvlink -e` (error counters)", 9),
        ("nvlink-info-gb200-firmware-partial-01.txt", "`nvidia-smi nvlink -info`", 9),
        ("nvlink-R-h100-remote-link-info-partial-01.txt", "`nvidia-smi nvlink -R` (remote link info)", 10),
    ],
)
def test_other_nvlink_modes_are_refused_by_name(name: str, mode: str, line_no: int) -> None:
    text = load(name, OTHER_MODES)
    with pytest.raises(ParseError) as info:
        parse(text)
    assert mode in info.value.message and "not `nvidia-smi nvlink -c`" in info.value.message
    assert info.value.line_no == line_no
    assert sniff(text) == 0.0


def test_utilization_counters_are_not_capabilities() -> None:
    with pytest.raises(ParseError) as info:
        parse("GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-12345678-1234-1234-1234-123456789abc)\n"
              "         Link 0, Tx0: 0 KBytes\n         Link 0, Rx0: 0 KBytes\n")
    assert "`nvidia-smi nvlink -g`" in info.value.message and info.value.line_no == 2


# -- edge cases ----------------------------------------------------------------------------------

UUID = "GPU-12345678-1234-1234-1234-123456789abc"
LINES = ["P2P is supported: true", "Access to system memory supported: true", "P2P atomics supported: true",
         "System memory atomics supported: false", "SLI is supported: false", "Link is supported: false"]
BLOCK = f"GPU 0: NVIDIA H100 PCIe (UUID: {UUID})\n" + "".join(
    f"\t Link {i}, {line}\n" for i in range(4) for line in LINES)


def test_plain_block() -> None:
    r = parse(BLOCK)
    g = gpu(r, 0)
    assert [link.link for link in g.links] == [0, 1, 2, 3]
    assert caps(g.links[3]) == {"p2p_supported": True, "sysmem_access": True, "p2p_atomics": True,
                                "sysmem_atomics": False, "sli": False, "link_supported": False}
    assert g.links[1].line_no == 8 and not g.truncated


def test_crlf_tabs_ansi_trailing_spaces_and_indentation_are_tolerated() -> None:
    text = "\x1b[1m" + BLOCK.replace("\t ", "         ").replace("\n", "  \r\n") + "\x1b[0m"
    assert parse(text).gpus == parse(BLOCK).gpus
    assert parse_lines(iter(text.splitlines(keepends=True))) == parse(text)


@pytest.mark.parametrize("tail", ["\t Link 4, P2P is supported: tr", "\t Link 4, P2P is supp", "\t Link 4, P2P is supported:"])
def test_cut_off_last_line_marks_the_gpu_truncated(tail: str) -> None:
    r = parse(BLOCK + tail)
    g = gpu(r, 0)
    assert g.truncated and [link.link for link in g.links] == [0, 1, 2, 3]


def test_elided_links_and_gpus() -> None:
    r = parse(BLOCK + "[...]\n" + BLOCK.replace("GPU 0:", "GPU 3:"))
    assert r.elided_gpu_indices == (1, 2) and not gpu(r, 0).truncated
    r = parse(BLOCK.replace("GPU 0:", "GPU 0:") + "\t [snip]\n" + "\t Link 17, P2P is supported: true\n")
    assert gpu(r, 0).truncated and [link.link for link in gpu(r, 0).links] == [0, 1, 2, 3, 17]


def test_inactive_and_unsupported_gpus() -> None:
    r = parse(BLOCK + f"GPU 1: NVIDIA L4 (UUID: {UUID})\nNVML: Unable to retrieve NVLink information as all links "
              f"are inActive\nGPU 2: NVIDIA L4 (UUID: {UUID})\nDevice does not have or support Nvlink\n")
    assert gpu(r, 1).all_links_inactive and gpu(r, 1).links == ()
    assert gpu(r, 2).nvlink_unsupported and not gpu(r, 2).truncated


def test_header_less_i_paste() -> None:
    """Two published `nvidia-smi nvlink -c [-i 1]` pastes show link lines without their GPU header."""
    r = parse("Link 0, P2P is supported: true\nLink 0, Access to system memory supported: true\n")
    (g,) = r.gpus
    assert g.index is None and caps(g.links[0]) == {"p2p_supported": True, "sysmem_access": True}


def test_unknown_capability_and_value() -> None:
    r = parse(BLOCK + "\t Link 4, Access to system memory is supported: false\n\t Link 4, NVLE is supported: N/A\n")
    link = gpu(r, 0).links[-1]
    assert caps(link) == {"sysmem_access": False, "nvle_supported": None}
    assert any("'n/a', not true/false" in n for n in r.notes)


def test_capability_names() -> None:
    assert [capability_name(c.split(":")[0]) for c in LINES] == NAMES
    assert capability_name("Access to system memory is supported") == "sysmem_access"


@pytest.mark.parametrize("text", ["", "\n \n"])
def test_empty_text_is_refused(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.line_no == 0


def test_headers_alone_and_other_tools_are_refused() -> None:
    with pytest.raises(ParseError) as info:
        parse(f"GPU 0: NVIDIA A100-SXM4-40GB (UUID: {UUID})\n")
    assert info.value.line_no == 1 and "nvidia-smi -L" in info.value.message
    with pytest.raises(ParseError) as info:
        parse("CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n")
    assert info.value.line_no == 1 and "`nvidia-smi nvlink -c`" in info.value.message


# -- detection -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in DIR.glob("*.txt")))
def test_detection_names_this_source(name: str) -> None:
    text = load(name)
    assert detect(text) == "nvidia_smi_nvlink_c" and sniff(text) >= 0.9


@pytest.mark.parametrize("fx", [f for f in parser_fixtures() if f.source != "nvidia_smi_nvlink_c"], ids=lambda f: f.id)
def test_other_fixtures_do_not_look_like_capabilities(fx) -> None:
    text = blank_provenance_header(fx.text())
    if "P2P is supported:" in text:  # the corpus -c sample kept under nvidia_smi_nvlink_s for its refusal
        return
    assert sniff(text) == 0.0
