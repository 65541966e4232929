"""nvidia_smi_nvlink_gt: the facts the fixtures' `#@ expected:` lines state, checked by hand (independently
of the .expected.json files), plus the edge cases a live capture brings."""

from __future__ import annotations

import pytest

from tests.fixtures_index import FIXTURES
from topodiag.parsers import ParseError, blank_provenance_header, detect
from topodiag.parsers.nvidia_smi_nvlink_gt import parse, parse_lines, sniff

DIR = FIXTURES / "nvidia_smi_nvlink_gt"
NVLINK_S = FIXTURES / "nvidia_smi_nvlink_s"


def load(name: str, folder=DIR) -> str:
    return blank_provenance_header((folder / name).read_bytes().decode("utf-8", errors="replace"))


def test_h800_raw_counters_eight_gpus_with_three_elided() -> None:
    r = parse(load("nvlink-gt-r-h800-8gpu-elided-01.txt"))
    assert [g.index for g in r.gpus] == [0, 1, 2, 6, 7]
    assert r.elided and r.elided_gpu_indices == (3, 4, 5) and r.counter == "raw"
    g0 = r.gpus[0]
    assert g0.model == "NVIDIA H800" and g0.uuid == "GPU-34bf77d1-c686-6821-79a8-32d326c5039c"
    assert [lk.link for lk in g0.links] == list(range(8))
    assert (g0.links[0].tx_kib, g0.links[0].rx_kib) == (25305739, 25554089)
    assert (g0.links[7].tx_kib, g0.links[7].rx_kib) == (8517607, 8730994)
    # GPU 2 carried far more than the others: 576438247 KiB on link 0 alone
    assert r.gpus[2].links[0].tx_kib == 576438247 and r.gpus[2].tx_kib_total > 50 * g0.tx_kib_total
    assert all(not g.idle_links and not g.truncated for g in r.gpus)


def test_h800_data_counters_idle_and_training() -> None:
    idle = parse(load("nvlink-gt-d-h800-gpu0-idle-01.txt")).gpus[0]
    busy = parse(load("nvlink-gt-d-h800-gpu0-training-01.txt")).gpus[0]
    assert idle.counter == busy.counter == "data"
    assert min(lk.tx_kib for lk in idle.links) == 5861984 and max(lk.tx_kib for lk in idle.links) == 5864630
    assert min(lk.tx_kib for lk in busy.links) == 1390689916 and max(lk.tx_kib for lk in busy.links) == 1391348992
    assert min(lk.rx_kib for lk in busy.links) == 1387795114 and max(lk.rx_kib for lk in busy.links) == 1387910526
    raw = parse(load("nvlink-gt-r-h800-gpu0-training-01.txt")).gpus[0]
    assert raw.counter == "raw"
    # raw counts data plus protocol overhead: above the data counters of the same moment, link by link
    assert all(r.tx_kib > d.tx_kib and r.rx_kib > d.rx_kib for r, d in zip(raw.links, busy.links))


def test_detection_and_sniff() -> None:
    text = load("nvlink-gt-d-h800-gpu0-idle-01.txt")
    assert detect(text) == "nvidia_smi_nvlink_gt"
    assert sniff(text) == 0.95
    assert sniff("         Link 0: Data Tx: 100 KiB\n") == 0.8
    assert sniff("GPU 0: NVIDIA H100 (UUID: GPU-x)\n         Link 0: 26.562 GB/s\n") == 0.0


def test_other_modes_are_refused_by_name() -> None:
    with pytest.raises(ParseError) as info:
        parse(load("nvlink-s-a100-sxm4-12links-25gbs-elided-01.txt", NVLINK_S))
    assert "`nvidia-smi nvlink -s` (link status)" in info.value.message and info.value.line_no


def test_not_nvlink_output() -> None:
    with pytest.raises(ParseError) as info:
        parse("hello\nworld\n")
    assert info.value.line_no == 1
    with pytest.raises(ParseError):
        parse("")


def test_units_idle_links_cut_line_and_headerless_paste() -> None:
    text = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-a)\n"
            "         Link 0: Data Tx: 0 KiB\n"
            "         Link 0: Data Rx: 0 KiB\n"
            "         Link 1: Data Tx: 2 MiB\n"
            "         Link 1: Data Rx: 3072 B\n"
            "         Link 2: Data Tx: 5 KiB\n"
            "         Link 2: Data")
    r = parse(text)
    g = r.gpus[0]
    assert g.idle_links == (0,)
    assert (g.links[1].tx_kib, g.links[1].rx_kib) == (2048, 3)
    assert g.links[2].tx_kib == 5 and g.links[2].rx_kib is None
    assert g.truncated  # the output ends inside link 2's Rx line
    assert g.tx_kib_total == 2048 and g.rx_kib_total == 3  # links printing both Tx and Rx
    assert any("MiB" in n for n in r.notes)
    bare = parse("Link 0: Raw Tx: 1 KiB\nLink 0: Raw Rx: 2 KiB\n")
    assert bare.gpus[0].index is None and bare.gpus[0].counter == "raw"


def test_streaming_matches_whole_text() -> None:
    text = load("nvlink-gt-r-h800-8gpu-elided-01.txt")
    assert parse_lines(text.splitlines(keepends=True)) == parse(text)
