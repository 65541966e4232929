"""Hand-written facts for the `nvidia-smi topo -p2p` parser (corpus `#@ expected:` lines) and edge cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect
from topodiag.parsers import nvidia_smi_topo_m, nvidia_smi_topo_p2p as p2p

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "nvidia_smi_topo_p2p"
TOPO_FIX = FIX.parent / "nvidia_smi_topo_m"


def load(name: str) -> p2p.P2PMatrix:
    return p2p.parse(blank_provenance_header((FIX / name).read_bytes().decode("utf-8")))


def status(r: p2p.P2PMatrix, src: str, dst: str) -> str | None:
    return next((c.status for c in r.cells if (c.src, c.dst) == (src, dst)), None)


def test_2gpu_ns_indented_paste() -> None:
    r = load("topo-p2p-2gpu-ns-indented-paste-01.txt")
    assert r.gpus == ("GPU0", "GPU1")
    assert status(r, "GPU0", "GPU1") == "NS" and status(r, "GPU1", "GPU0") == "NS"
    assert not any(c.ok for c in r.cells)
    assert "DR" in {e.code for e in r.legend}


def test_h100_8gpu_all_ok() -> None:
    r = load("topo-p2p-r-h100-8gpu-all-ok-01.txt")
    assert len(r.gpus) == 8 and len(r.cells) == 56 and all(c.ok for c in r.cells)
    assert "DR" not in {e.code for e in r.legend}  # older legend
    assert r.notes == ()


def test_rtx5090_gns_tabs() -> None:
    r = load("topo-p2p-rw-rtx5090-2gpu-gns-01.txt")
    assert [(c.src, c.dst, c.status) for c in r.cells] == [("GPU0", "GPU1", "GNS"), ("GPU1", "GPU0", "GNS")]


def test_asymmetric_with_prompt_after_topo_matrix() -> None:
    r = load("topo-p2p-invented-w-4gpu-asymmetric-prompt-crlf-01.txt")
    assert r.mode == "w" and r.gpus == ("GPU0", "GPU1", "GPU2", "GPU3")
    assert status(r, "GPU3", "GPU0") == "CNS" and status(r, "GPU0", "GPU3") == "OK"
    assert status(r, "GPU1", "GPU2") == "TNS" == status(r, "GPU2", "GPU1")
    assert any("asymmetric" in n and "GPU3->GPU0 CNS" in n for n in r.notes)
    assert len(r.cells) == 12


def test_cells_ordered_by_src_then_dst() -> None:
    r = load("topo-p2p-r-h100-8gpu-all-ok-01.txt")
    idx = {g: i for i, g in enumerate(r.gpus)}
    keys = [(idx[c.src], idx[c.dst]) for c in r.cells]
    assert keys == sorted(keys)


@pytest.mark.parametrize("text, line_no, words", [
    ("", 0, "no text"),
    ("CA 'mlx5_0'\n\tCA type: MT4123\n", 1, "p2p matrix header"),
    ("        GPU0    GPU1\n GPU0   X       OK\n GPU1   NV4     X\n", 3, "topo -m path type"),
    ("        GPU0    GPU1\n GPU0   X       OK   OK\n", 2, "3 cells"),
    ("        GPU0    GPU1\n\nLegend:\n", 1, "no 'gpu0  x  ok"),
])
def test_refused_with_line_number(text: str, line_no: int, words: str) -> None:
    with pytest.raises(ParseError) as info:
        p2p.parse(text)
    assert info.value.line_no == line_no
    assert words.lower() in info.value.message.lower()


def test_sniff_keeps_topo_m_and_p2p_apart() -> None:
    for f in FIX.glob("topo-p2p-*.txt"):
        text = blank_provenance_header(f.read_text())
        assert p2p.sniff(text) >= 0.9 and nvidia_smi_topo_m.sniff(text) < p2p.sniff(text)
        assert detect(text) == "nvidia_smi_topo_p2p"
    for f in TOPO_FIX.glob("topo-*.txt"):
        assert p2p.sniff(blank_provenance_header(f.read_text())) == 0.0
