"""nvidia_smi_nvlink_info: the facts the corpus fixture's `#@ expected:` line states, checked by hand
(independently of the .expected.json file), plus the edge cases a live capture brings."""

from __future__ import annotations

import pytest

from tests.fixtures_index import FIXTURES, parser_fixtures
from topodiag.parsers import ParseError, blank_provenance_header, detect
from topodiag.parsers.nvidia_smi_nvlink_info import parse, parse_lines, sniff

DIR = FIXTURES / "nvidia_smi_nvlink_info"
OTHER_MODES = FIXTURES / "nvidia_smi_nvlink_s"
GB200_FIRMWARE = {"mse": "14:4:0", "netir": "36:2014:1862", "netir_uphy": "7:0:0", "netir_cln": "0:9:0",
                  "netir_dln": "0:9:0"}


def load(name: str, folder=DIR) -> str:
    return blank_provenance_header((folder / name).read_bytes().decode("utf-8", errors="replace"))


def test_gb200_corpus_nvle_disabled_same_firmware_on_both_gpus() -> None:
    r = parse(load("nvlink-info-gb200-firmware-partial-01.txt"))
    assert [g.index for g in r.gpus] == [0, 1]
    for g in r.gpus:
        assert g.model == "NVIDIA GB200"
        assert g.nvle == "disabled" and g.nvle_enabled is False
        assert g.firmware == GB200_FIRMWARE
        assert g.fields == {} and g.nvlink_version is None
        assert not g.truncated
        assert not hasattr(g, "links")  # no link state in this mode
    assert r.gpus[1].uuid == "GPU-39ac7bce-e3d6-b426-008e-fa47897c72d5" and r.gpus[1].line_no == 16
    assert r.notes == () and not r.elided


@pytest.mark.parametrize(
    ("name", "mode", "line_no"),
    [
        ("nvlink-s-a100-sxm4-12links-25gbs-elided-01.txt", "`nvidia-smi nvlink -s` (link status)", 9),
        ("nvlink-c-h800-capabilities-01.txt", "`nvidia-smi nvlink -c` (capabilities)", 9),
        ("nvlink-e-h100-error-counters-elided-01.txt", "`nvidia-smi nvlink -e` (error counters)", 9),
        ("nvlink-R-h100-remote-link-info-partial-01.txt", "`nvidia-smi nvlink -R` (remote link info)", 10),
    ],
)
def test_other_nvlink_modes_are_refused_by_name(name: str, mode: str, line_no: int) -> None:
    text = load(name, OTHER_MODES)
    with pytest.raises(ParseError) as info:
        parse(text)
    assert mode in info.value.message and "not `nvidia-smi nvlink -info`" in info.value.message
    assert info.value.line_no == line_no
    assert sniff(text) == 0.0


UUID = "GPU-12345678-1234-1234-1234-123456789abc"
NEWER = (f"GPU 0: NVIDIA GB300 (UUID: {UUID})\n"
         "         NVLink Encryption: Enabled\n"
         "         NVLink Version: 5.0\n"
         "         Firmware Version:\n"
         "             MSE: 15:1:0\n"
         "             NETIR: 37:2100:1900\n"
         "         Some New Field: xyz\n")


def test_renamed_encryption_line_version_line_and_unknown_fields() -> None:
    """Release notes: 'NVLE' renamed 'NVLink Encryption', an NVLink version line added (format invented)."""
    (g,) = parse(NEWER).gpus
    assert g.nvle == "Enabled" and g.nvle_enabled is True and g.nvlink_version == "5.0"
    assert g.firmware == {"mse": "15:1:0", "netir": "37:2100:1900"}
    assert g.fields == {"some_new_field": "xyz"}  # same indent as 'Firmware Version:': not firmware


def test_crlf_tabs_ansi_and_flattened_indentation() -> None:
    text = "\x1b[1m" + NEWER.replace("\n", " \r\n") + "\x1b[0m"
    assert parse(text).gpus == parse(NEWER).gpus
    flat = "\n".join(line.strip() for line in NEWER.splitlines()) + "\n"
    (g,) = parse(flat).gpus
    assert g.firmware == {"mse": "15:1:0", "netir": "37:2100:1900"}  # version-shaped values still firmware
    assert parse_lines(iter(text.splitlines(keepends=True))) == parse(text)


def test_cut_off_paste_and_elision() -> None:
    text = load("nvlink-info-gb200-firmware-partial-01.txt")
    r = parse(text + "GPU 2: NVIDIA GB200 (UUID:")  # where the published excerpt really ends
    assert r.gpus[2].truncated and r.gpus[2].firmware == {} and not r.gpus[1].truncated
    r = parse(text.rstrip("\n").rsplit("\n", 1)[0] + "\n             NETIR DLN:")
    assert r.gpus[1].truncated and "netir_dln" not in r.gpus[1].firmware
    r = parse(text.replace("GPU 1:", "...\nGPU 3:"))
    assert r.elided_gpu_indices == (1, 2)


def test_inactive_gpu_and_nvidia_smi_errors() -> None:
    r = parse(NEWER + f"GPU 1: NVIDIA L40S (UUID: {UUID})\nDevice does not have or support Nvlink\n"
              "Failed to initialize NVML: Driver/library version mismatch\n")
    assert r.gpus[1].nvlink_unsupported and r.gpus[1].firmware == {}
    assert r.errors[0].text.startswith("Failed to initialize NVML")


def test_unknown_encryption_state_is_null_with_a_note() -> None:
    r = parse(f"GPU 0: NVIDIA GB200 (UUID: {UUID})\n NVLE: pending reboot\n")
    assert r.gpus[0].nvle == "pending reboot" and r.gpus[0].nvle_enabled is None
    assert any("not understood" in n for n in r.notes)


@pytest.mark.parametrize("text", ["", "\n\n"])
def test_empty_text_is_refused(text: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.line_no == 0


def test_key_value_text_of_other_tools_is_refused() -> None:
    ibstat = "CA 'mlx5_0'\n\tCA type: MT4129\n\tFirmware version: 28.39.1002\n\tPort 1:\n\t\tState: Active\n"
    with pytest.raises(ParseError) as info:
        parse(ibstat)
    assert info.value.line_no == 1 and "`nvidia-smi nvlink -info`" in info.value.message
    assert sniff(ibstat) == 0.0


def test_headers_alone_are_nvidia_smi_L() -> None:
    with pytest.raises(ParseError) as info:
        parse(f"GPU 0: NVIDIA GB200 (UUID: {UUID})\nGPU 1: NVIDIA GB200 (UUID: {UUID})\n")
    assert info.value.line_no == 1 and "nvidia-smi -L" in info.value.message


def test_detection() -> None:
    text = load("nvlink-info-gb200-firmware-partial-01.txt")
    assert detect(text) == "nvidia_smi_nvlink_info" and sniff(text) >= 0.9
    assert detect(NEWER) == "nvidia_smi_nvlink_info"


@pytest.mark.parametrize("fx", [f for f in parser_fixtures() if f.source != "nvidia_smi_nvlink_info"], ids=lambda f: f.id)
def test_other_fixtures_do_not_look_like_nvlink_info(fx) -> None:
    text = blank_provenance_header(fx.text())
    if "NVLE:" in text:  # the corpus -info sample kept under nvidia_smi_nvlink_s for its refusal
        return
    assert sniff(text) == 0.0
