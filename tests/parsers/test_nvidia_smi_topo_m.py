"""Hand-written facts for the `nvidia-smi topo -m` parser: the `#@ expected:` line of each corpus
file, checked independently of the .expected.json sidecars, plus edge cases."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect
from topodiag.parsers import nvidia_smi_topo_m as topo

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "nvidia_smi_topo_m"


def load(name: str) -> topo.TopoMatrix:
    return topo.parse(blank_provenance_header((FIX / name).read_bytes().decode("utf-8")))


def kind(r: topo.TopoMatrix, a: str, b: str) -> str | None:
    for link in r.links:
        if {link.a, link.b} == {a, b}:
            return link.type
    return None


def dev(r: topo.TopoMatrix, name: str) -> topo.Device:
    return next(d for d in r.devices if d.name == name)


def gpus(r: topo.TopoMatrix) -> list[str]:
    return [d.name for d in r.devices if d.kind == "gpu"]


def all_gpu_pairs(r: topo.TopoMatrix) -> set[str]:
    return {kind(r, a, b) for a, b in combinations(gpus(r), 2)}


def has_note(r: topo.TopoMatrix, *words: str) -> bool:
    return any(all(w.lower() in n.lower() for w in words) for n in r.notes)


# -- corpus facts -------------------------------------------------------------------------------


def test_2gpu_indented_linewrapped_paste() -> None:
    r = load("topo-2gpu-node-indented-linewrapped-paste-01.txt")
    assert gpus(r) == ["GPU0", "GPU1"] and len(r.devices) == 2
    assert kind(r, "GPU0", "GPU1") == "NODE"
    for g in ("GPU0", "GPU1"):
        d = dev(r, g)
        assert (d.cpu_affinity, d.numa_affinity, d.numa_node, d.gpu_numa_id) == ("0-15", "0", 0, None)
    assert r.notes == ()  # the wrapped legend lines are not devices and raise nothing


def test_2gpu_nv2_numa_na() -> None:
    r = load("topo-2gpu-nv2-bridge-numa-na-nolegend-01.txt")
    assert kind(r, "GPU0", "GPU1") == "NV2"
    assert dev(r, "GPU0").cpu_affinity == "0-23" and dev(r, "GPU1").cpu_affinity == "0-23"
    assert dev(r, "GPU0").numa_affinity is None and dev(r, "GPU0").numa_node is None
    assert r.affinity_columns == ("CPU Affinity", "NUMA Affinity")


def test_a100_nv12_8nic_roce() -> None:
    r = load("topo-a100-sxm4-80g-nv12-8nic-roce-01.txt")
    assert len(gpus(r)) == 8 and all_gpu_pairs(r) == {"NV12"}
    assert [dev(r, f"NIC{i}").device for i in range(8)] == [f"mlx5_{i}" for i in range(8)]
    for a, b in [(0, 1), (2, 3), (4, 5), (6, 7)]:
        assert kind(r, f"NIC{a}", f"NIC{b}") == "PIX"
        for g in (a, b):
            assert kind(r, f"GPU{g}", f"NIC{a}") == "PXB" and kind(r, f"GPU{g}", f"NIC{b}") == "PXB"
    assert not any(kind(r, g, f"NIC{n}") == "PIX" for g in gpus(r) for n in range(8))
    for g in range(4):
        assert (dev(r, f"GPU{g}").cpu_affinity, dev(r, f"GPU{g}").numa_node) == ("0-31,64-95", 0)
    for g in range(4, 8):
        assert (dev(r, f"GPU{g}").cpu_affinity, dev(r, f"GPU{g}").numa_node) == ("32-63,96-127", 1)


def test_a800_nv8_crlf_dualport() -> None:
    r = load("topo-a800-nv8-4nic-dualport-01.txt")
    assert len(gpus(r)) == 8 and all_gpu_pairs(r) == {"NV8"}
    assert kind(r, "NIC0", "GPU1") == "PIX" and kind(r, "NIC1", "GPU3") == "PIX"
    assert kind(r, "NIC2", "GPU7") == "PIX" and kind(r, "NIC3", "GPU7") == "PIX"
    assert kind(r, "NIC2", "NIC3") == "PIX"
    for g in ("GPU0", "GPU2", "GPU4", "GPU5", "GPU6"):
        assert {kind(r, g, f"NIC{n}") for n in range(4)} <= {"NODE", "SYS"}
    assert [dev(r, f"GPU{g}").numa_node for g in range(8)] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert dev(r, "NIC3").device == "mlx5_3"  # no stray '\r' from CRLF


def test_h100_4gpu_nv6_sparse_cpus_partial() -> None:
    r = load("topo-h100-4gpu-nv6-4nic-8numa-sparse-cpus-partial-01.txt")
    assert all_gpu_pairs(r) == {"NV6"}
    for i in range(4):
        for n in range(4):
            assert kind(r, f"GPU{i}", f"NIC{n}") == ("PIX" if i == n else "SYS")
    assert {kind(r, a, b) for a, b in combinations([f"NIC{n}" for n in range(4)], 2)} == {"SYS"}
    assert [dev(r, f"GPU{i}").numa_node for i in range(4)] == [3, 1, 7, 5]
    assert dev(r, "GPU0").cpu_affinity == "6,14,22,30"
    # the NIC Legend was cut off: device names unknown, and said so
    assert dev(r, "NIC0").device is None and has_note(r, "NIC Legend")


def test_h100_hgx_nv18_rails() -> None:
    r = load("topo-h100-hgx-nv18-8nic-pix-gpunumaid-01.txt")
    assert all_gpu_pairs(r) == {"NV18"}
    for i in range(8):
        assert kind(r, f"GPU{i}", f"NIC{i}") == "PIX"
    assert kind(r, "NIC0", "NIC3") == "NODE" and kind(r, "NIC3", "NIC4") == "SYS"
    assert dev(r, "GPU0").cpu_affinity == "0-47,96-143" and dev(r, "GPU7").cpu_affinity == "48-95,144-191"
    assert all(dev(r, g).gpu_numa_id is None for g in gpus(r))
    assert r.affinity_columns == ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
    assert r.notes == ()


def test_h800_affinity_overflow_split() -> None:
    r = load("topo-h800-nv18-10nic-renamed-affinity-overflow-01.txt")
    assert all_gpu_pairs(r) == {"NV18"}
    for g in range(4):
        d = dev(r, f"GPU{g}")
        assert (d.cpu_affinity, d.numa_affinity, d.numa_node, d.gpu_numa_id) == ("0-45,92-137", "0", 0, None)
    for g in range(4, 8):
        assert (dev(r, f"GPU{g}").cpu_affinity, dev(r, f"GPU{g}").numa_node) == ("46-91,138-183", 1)
    assert has_note(r, "0-45,92-1370", "without a separator")
    assert dev(r, "NIC1").device == "mlx5_gdr_0" and dev(r, "NIC9").device == "mlx5_stor_0"
    for n, g in zip(range(1, 9), range(8)):
        assert kind(r, f"GPU{g}", f"NIC{n}") == "PIX"
    assert kind(r, "GPU1", "NIC1") == "PXB"  # the other GPUs of the socket
    assert {kind(r, f"GPU{g}", "NIC9") for g in range(4)} == {"PXB"}
    assert {kind(r, "NIC0", d.name) for d in r.devices if d.name != "NIC0"} == {"SYS"}


def test_h800_terminal_truncated() -> None:
    r = load("topo-h800-nv8-terminal-truncated-01.txt")
    assert len(gpus(r)) == 8 and all_gpu_pairs(r) == {"NV8"}
    assert [d.name for d in r.devices][8:] == ["NIC0", "NIC1", "NIC2", "NIC3"]
    assert kind(r, "NIC0", "GPU1") == "PIX" and kind(r, "NIC1", "GPU3") == "PIX"
    assert kind(r, "NIC2", "GPU7") == "PIX" and kind(r, "NIC3", "GPU7") == "PIX"
    assert kind(r, "NIC0", "NIC1") is None  # no cell survived: not guessed
    assert [dev(r, f"GPU{g}").numa_node for g in range(8)] == [0, 0, 0, 0, 1, 1, 1, 1]
    # cut CPU lists are not passed on as facts
    assert dev(r, "GPU0").cpu_affinity is None and dev(r, "GPU7").cpu_affinity is None
    assert dev(r, "GPU4").cpu_affinity == "32-63,96-127"
    assert has_note(r, "columns were cut") and has_note(r, "-31,64-95")


def test_pcie_8gpu_all_sys_tabs() -> None:
    r = load("topo-pcie-8gpu-all-sys-tabs-gpunumaid-01.txt")
    assert len(r.devices) == 8 and all_gpu_pairs(r) == {"SYS"}
    assert dev(r, "GPU0").numa_node == 0 and dev(r, "GPU1").numa_node == 0  # SYS within one NUMA node
    assert dev(r, "GPU3").cpu_affinity == "0-15,32-47" and dev(r, "GPU4").cpu_affinity == "16-31,48-63"
    assert all(dev(r, g).gpu_numa_id is None for g in gpus(r))


def test_rtx5090_phb_tabs() -> None:
    r = load("topo-rtx5090-2gpu-phb-tabs-workstation-01.txt")
    assert kind(r, "GPU0", "GPU1") == "PHB"
    assert {(d.cpu_affinity, d.numa_node) for d in r.devices} == {("0-63", 0)}


def test_rtx6000ada_4nic() -> None:
    r = load("topo-rtx6000ada-4gpu-4nic-2numa-01.txt")
    assert not any(t.startswith("NV") for t in all_gpu_pairs(r))
    assert kind(r, "GPU0", "GPU1") == "NODE" and kind(r, "GPU2", "GPU3") == "NODE" and kind(r, "GPU1", "GPU2") == "SYS"
    assert kind(r, "NIC0", "NIC1") == "PIX" and kind(r, "NIC2", "NIC3") == "PIX"
    assert kind(r, "NIC0", "GPU0") == "NODE" and kind(r, "NIC3", "GPU2") == "NODE"
    assert not any(kind(r, g, f"NIC{n}") in ("PIX", "PXB") for g in gpus(r) for n in range(4))
    assert [dev(r, f"NIC{n}").device for n in range(4)] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    assert [dev(r, f"GPU{g}").cpu_affinity for g in range(4)] == ["0-31", "0-31", "32-63", "32-63"]


def test_rtxa6000_ansi_header() -> None:
    r = load("topo-rtxa6000-3gpu-nv4-bridge-ansi-01.txt")
    assert gpus(r) == ["GPU0", "GPU1", "GPU2"]
    assert kind(r, "GPU0", "GPU1") == "NV4" and kind(r, "GPU0", "GPU2") == "NODE" and kind(r, "GPU1", "GPU2") == "NODE"
    assert {(d.cpu_affinity, d.numa_node) for d in r.devices} == {("0-31,64-95", 0)}


def test_v100_unordered_mlx5_columns() -> None:
    r = load("topo-v100-dgx1-4mlx5-unordered-oldlegend-01.txt")
    assert [d.name for d in r.devices][8:] == ["mlx5_2", "mlx5_0", "mlx5_3", "mlx5_1"]
    assert dev(r, "mlx5_0").device == "mlx5_0" and dev(r, "mlx5_0").kind == "nic"
    assert kind(r, "GPU0", "GPU1") == "NV1" and kind(r, "GPU0", "GPU2") == "NV1"
    assert kind(r, "GPU0", "GPU3") == "NV2" and kind(r, "GPU0", "GPU4") == "NV2"
    assert {kind(r, "GPU0", f"GPU{g}") for g in (5, 6, 7)} == {"SYS"}
    for nic, pix in (("mlx5_0", (0, 1)), ("mlx5_1", (2, 3)), ("mlx5_2", (4, 5)), ("mlx5_3", (6, 7))):
        assert {g for g in range(8) if kind(r, f"GPU{g}", nic) == "PIX"} == set(pix)
    assert kind(r, "GPU2", "mlx5_0") == "PHB"
    assert r.affinity_columns == ("CPU Affinity",) and dev(r, "GPU0").numa_affinity is None


def test_v100_legacy_one_mlx5() -> None:
    r = load("topo-v100-dgx1-mlx5-legacy-01.txt")
    nv = {g: sum(1 for h in gpus(r) if h != g and kind(r, g, h).startswith("NV")) for g in gpus(r)}
    assert set(nv.values()) == {4}  # hybrid cube mesh: 4 NVLink peers each
    for g in gpus(r):
        links = sum(int(kind(r, g, h)[2:]) for h in gpus(r) if h != g and kind(r, g, h).startswith("NV"))
        assert links == 6
    assert [kind(r, f"GPU{g}", "mlx5_0") for g in range(8)] == ["NODE", "NODE", "PIX", "PIX"] + ["SYS"] * 4
    assert dev(r, "GPU0").cpu_affinity == "0-11,24-35" and dev(r, "GPU4").cpu_affinity == "12-23,36-47"


def test_k40m_soc_old_driver() -> None:
    r = load("topo-k40m-4gpu-mlx4-soc-oldlegend-tabs-01.txt")
    assert kind(r, "GPU0", "GPU1") == "PHB" and kind(r, "GPU2", "GPU3") == "PHB"
    assert {kind(r, a, b) for a in ("GPU0", "GPU1") for b in ("GPU2", "GPU3")} == {"SOC"}
    assert [kind(r, f"GPU{g}", "mlx4_0") for g in range(4)] == ["SOC", "SOC", "PHB", "PHB"]
    assert r.notes == ()  # SOC is in this driver's legend


# -- links contract -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in FIX.glob("topo-*.txt") if "invented-row" not in p.name
                                        and "header-only" not in p.name))
def test_links_once_per_pair_in_device_order(name: str) -> None:
    r = load(name)
    index = {d.name: i for i, d in enumerate(r.devices)}
    pairs = [(index[link.a], index[link.b]) for link in r.links]
    assert all(a < b for a, b in pairs)
    assert pairs == sorted(set(pairs))
    if not any("no cell" in n for n in r.notes):
        assert len(pairs) == len(r.devices) * (len(r.devices) - 1) // 2


def test_mirror_disagreement_keeps_row_a_and_notes_it() -> None:
    r = load("topo-invented-mirror-disagree-short-row-crlf-01.txt")
    assert kind(r, "GPU0", "GPU1") == "NV4"
    assert has_note(r, "GPU0-GPU1", "NV2", "kept NV4")
    assert kind(r, "GPU2", "NIC0") == "SYS"  # from the mirror (NIC0's row): GPU2's row is cut
    assert kind(r, "GPU2", "NIC1") is None and has_note(r, "GPU2-NIC1")
    assert dev(r, "NIC1").line_no is None and dev(r, "NIC1").device == "mlx5_1"
    assert has_note(r, "NIC5")


def test_single_gpu_with_prompt_around() -> None:
    r = load("topo-invented-1gpu-prompt-around-01.txt")
    assert [d.name for d in r.devices] == ["GPU0"] and r.links == ()
    assert (dev(r, "GPU0").cpu_affinity, dev(r, "GPU0").numa_node) == ("0-71", 1)


# -- tolerance ----------------------------------------------------------------------------------

SPACED = """\
        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      NV18    PIX     0-47,96-143     0               N/A
GPU1    NV18     X      NODE    0-47,96-143     0               N/A
NIC0    PIX     NODE     X

Legend:

  X    = Self
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
"""


def test_crlf_tabs_ansi_indent_read_alike() -> None:
    base = topo.parse(SPACED)
    assert kind(base, "GPU0", "GPU1") == "NV18" and dev(base, "NIC0").device == "mlx5_0"
    tabbed = "\n".join("\t".join(line.split("    ")) if line.startswith(("GPU", "NIC", " ")) else line
                       for line in SPACED.splitlines())
    crlf = SPACED.replace("\n", "\r\n")
    ansi = SPACED.replace("        GPU0", "\t\x1b[4mGPU0").replace("GPU NUMA ID\n", "GPU NUMA ID\x1b[0m\n", 1)
    indented = "\n".join("    " + line for line in SPACED.splitlines())
    trailing = "\n".join(line + "   " for line in SPACED.splitlines())
    for text in (tabbed, crlf, ansi, indented, trailing):
        r = topo.parse(text)
        assert (r.devices, r.links) == (base.devices, base.links)


def test_glued_affinity_with_ambiguous_digits_uses_other_rows() -> None:
    text = ("        GPU0    GPU1    CPU Affinity       NUMA Affinity   GPU NUMA ID\n"
            "GPU0     X      NV4     0-150                      N/A\n"
            "GPU1    NV4      X      16-31              1               N/A\n")
    r = topo.parse(text)
    assert (dev(r, "GPU0").cpu_affinity, dev(r, "GPU0").numa_affinity) == ("0-15", "0")


def test_row_cut_before_numa_is_not_split() -> None:
    text = ("        GPU0    GPU1    CPU Affinity    NUMA Affinity\n"
            "GPU0     X      NV4     0-23\n"
            "GPU1    NV4      X      0-23            0\n")
    r = topo.parse(text)
    assert (dev(r, "GPU0").cpu_affinity, dev(r, "GPU0").numa_affinity) == ("0-23", None)
    assert has_note(r, "GPU0", "row ends before NUMA Affinity")


def test_unknown_path_type_is_kept_and_noted() -> None:
    text = ("        GPU0    GPU1    CPU Affinity\n"
            "GPU0     X      C2C     0-71\n"
            "GPU1    C2C      X      0-71\n")
    r = topo.parse(text)
    assert kind(r, "GPU0", "GPU1") == "C2C" and has_note(r, "C2C")


def test_second_matrix_is_noted() -> None:
    r = topo.parse(SPACED + "\n" + SPACED)
    assert len(r.devices) == 3 and has_note(r, "another matrix header")


# -- refusals -----------------------------------------------------------------------------------

NVLINK_S = """\
GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1b2c)
\t Link 0: 25 GB/s
\t Link 1: <inactive>
"""
IBSTAT = """\
CA 'mlx5_0'
\tCA type: MT4123
\tNumber of ports: 1
\tPort 1:
\t\tState: Active
"""
P2P = """\
        GPU0    GPU1
 GPU0   X       OK
 GPU1   OK      X

Legend:

  X    = Self
  OK   = Status Ok
"""


@pytest.mark.parametrize("text, line_no, words", [
    ("", 0, "no text"),
    ("\n\n   \n", 0, "no text"),
    (NVLINK_S, 1, "matrix header row"),
    (IBSTAT, 1, "matrix header row"),
    ("Legend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe\n", 1, "matrix header row"),
    ("        NIC0    NIC1\nNIC0     X      PIX\nNIC1    PIX      X\n", 1, "matrix header row"),
    (P2P, 2, "topo -p2p"),
    ("        GPU0    GPU1\nGPU0     X      NV2\nGPU1     X      NV2\n", 3, "'X' (self) under GPU0"),
    ("        GPU0    GPU1\nGPU0     X      NV2\nGPU0    NV2      X\n", 3, "second row"),
    ("        GPU0    GPU1    CPU Affinity\nGPU0     X      NV2     0-3   0\nGPU1    NV2      X      0-3\n",
     2, "affinity column"),
    ("        GPU0    GPU1    GPU2   CPU Affinity\nGPU0     X      NV2     0-3\n", 2, "cannot be assigned"),
])
def test_refused_with_line_number(text: str, line_no: int, words: str) -> None:
    with pytest.raises(ParseError) as info:
        topo.parse(text)
    assert info.value.line_no == line_no
    assert words.lower() in info.value.message.lower()


# -- sniff --------------------------------------------------------------------------------------


def test_sniff() -> None:
    assert topo.sniff(SPACED) >= 0.95
    assert topo.sniff(SPACED.replace("    CPU Affinity    NUMA Affinity   GPU NUMA ID", "")) >= 0.9
    assert topo.sniff((FIX / "topo-rtxa6000-3gpu-nv4-bridge-ansi-01.txt").read_text()) >= 0.9
    for other in (NVLINK_S, IBSTAT, P2P, "", "GPU0 is hot\n"):
        assert topo.sniff(other) == 0.0
    assert detect(SPACED) == "nvidia_smi_topo_m"
