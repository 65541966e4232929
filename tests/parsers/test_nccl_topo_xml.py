"""nccl_topo_xml: the facts each fixture's `#@ expected:` line states, checked by hand (independently
of the .expected.json files), plus the safety and robustness cases an XML reader needs."""

from __future__ import annotations

import pytest

from tests.fixtures_index import FIXTURES
from topodiag.parsers import ParseError, blank_provenance_header, detect
from topodiag.parsers.nccl_topo_xml import decode_affinity, parse, sniff

DIR = FIXTURES / "nccl_topo_xml"


def load(name: str) -> str:
    return blank_provenance_header((DIR / name).read_bytes().decode("utf-8", errors="replace"))


def pci_under(topo, numaid: int, kind: str | None = None) -> list[str]:
    return [p.busid for p in topo.pci if p.numaid == numaid and (kind is None or p.kind == kind)]


def children(topo, busid: str) -> list[str]:
    return [p.busid for p in topo.pci if p.parent_busid == busid]


# -- corpus files: the expert's conclusions ------------------------------------------------------


def test_a100pcie_roce_dump() -> None:
    t = parse(load("nccl-topo-dump-a100pcie-2gpu-roce-nccl2.30-01.xml"))
    assert t.kind == "system" and t.version == 1
    assert [(c.numaid, c.affinity, c.cpus) for c in t.cpus] == [
        (0, "0000,000fffff,ff000000,0fffffff", "0-27,56-83"),
        (1, "ffff,fff00000,00ffffff,f0000000", "28-55,84-111"),
    ]
    assert (t.cpus[0].arch, t.cpus[0].vendor, t.cpus[0].family, t.cpus[0].model) == ("x86_64", "GenuineIntel", 6, 106)
    (nic,) = [p for p in t.pci if p.kind == "nic"]
    assert (nic.busid, nic.numaid, nic.link_width, nic.link_speed_gts) == ("0000:16:00.0", 0, 8, 16.0)
    assert [(n.name, n.port, n.speed_mbps, n.gdr, n.busid, n.numaid) for n in t.nets] == [
        ("mlx5_0", 1, 100000, 0, "0000:16:00.0", 0),
        ("mlx5_1", 2, 100000, 0, "0000:16:00.0", 0),
    ]
    assert t.nets[0].guid == t.nets[1].guid == "0x78ad550003d3ebe8"  # one dual-port card
    assert [(g.dev, g.busid, g.numaid, g.rank, g.sm, g.gdr) for g in t.gpus] == [
        (0, "0000:69:00.0", 0, 0, 80, 1),
        (1, "0000:b1:00.0", 1, 1, 80, 1),
    ]
    assert all(g.nvlinks == () for g in t.gpus)  # no NVLink
    assert not any(n.numaid == 1 for n in t.nets)  # GPU1's NIC path crosses sockets


def test_aws_g5_minimal_static_file() -> None:
    t = parse(load("nccl-topo-xml-aws-g5-48xl-static-minimal-01.xml"))
    assert [c.numaid for c in t.cpus] == [0, 1]
    assert all(c.affinity is None and c.cpus is None for c in t.cpus)
    assert pci_under(t, 0) == ["0000:00:16.0", "0000:00:17.0", "0000:00:18.0", "0000:00:19.0"]
    assert pci_under(t, 1) == ["0000:00:1a.0", "0000:00:1b.0", "0000:00:1c.0", "0000:00:1d.0", "0000:00:15.0"]
    assert all(p.pci_class is None and p.kind == "other" for p in t.pci)  # types not given
    assert t.gpus == () and t.nets == ()


def test_aws_p4d_four_switches_two_gpus_one_nic_each() -> None:
    t = parse(load("nccl-topo-xml-aws-p4d-24xl-static-01.xml"))
    assert [(c.numaid, c.affinity) for c in t.cpus] == [
        (0, "000000ff,ffff0000,00ffffff"), (1, "ffffff00,0000ffff,ff000000")]
    switches = [p for p in t.pci if p.kind == "switch"]
    assert [s.busid for s in switches] == ["ffff:ff:01.0", "ffff:ff:02.0", "ffff:ff:03.0", "ffff:ff:04.0"]
    assert all((s.link_speed, s.link_width, s.parent_busid) == ("8 GT/s", 16, None) for s in switches)
    by_busid = {p.busid: p for p in t.pci}
    for sw, bus in zip(switches, ("10", "20", "90", "a0")):
        kids = children(t, sw.busid)
        assert [by_busid[k].kind for k in kids] == ["gpu", "gpu", "nic"]
        assert all(k.startswith(f"0000:{bus}:") for k in kids)
    assert [s.numaid for s in switches] == [0, 0, 1, 1]


def test_azure_ndv2_flat_gpus_and_one_ib_nic_on_numa0() -> None:
    t = parse(load("nccl-topo-xml-azure-ndv2-static-01.xml"))
    assert [(c.numaid, c.affinity) for c in t.cpus] == [(0, "00000000,000fffff"), (1, "000000ff,fff00000")]
    assert pci_under(t, 0, "gpu") == ["0001:00:00.0", "0002:00:00.0", "0003:00:00.0", "0004:00:00.0"]
    assert pci_under(t, 0, "nic") == ["0101:00:00.0"]
    assert [p.pci_class for p in t.pci if p.kind == "nic"] == ["0x020700"]
    assert pci_under(t, 1, "gpu") == ["0005:00:00.0", "0006:00:00.0", "0007:00:00.0", "0008:00:00.0"]
    assert pci_under(t, 1, "nic") == []  # GPUs 4-7 reach the NIC across sockets
    assert all(p.parent_busid is None and p.link_speed == "16 GT/s" for p in t.pci)


def test_azure_ndv4_one_switch_two_gpus_two_nics_per_numa() -> None:
    t = parse(load("nccl-topo-xml-azure-ndv4-static-01.xml"))
    assert [c.numaid for c in t.cpus] == [0, 1, 2, 3]
    assert {c.vendor for c in t.cpus} == {"AuthenticAMD"}
    want = {0: (["0003", "0004"], ["0103", "0104"]), 1: (["0001", "0002"], ["0101", "0102"]),
            2: (["000d", "000e"], ["0107", "0108"]), 3: (["000b", "000c"], ["0105", "0106"])}
    for numaid, (gpus, nics) in want.items():
        (sw,) = [p for p in t.pci if p.numaid == numaid and p.kind == "switch"]
        assert sw.busid == f"ffff:ff:0{numaid + 1}.0" and (sw.link_speed_gts, sw.link_width) == (16.0, 16)
        kids = children(t, sw.busid)
        assert [k[:4] for k in kids if k in pci_under(t, numaid, "gpu")] == gpus
        assert [k[:4] for k in kids if k in pci_under(t, numaid, "nic")] == nics
    assert len([p for p in t.pci if p.kind == "gpu"]) == 8 and len([p for p in t.pci if p.kind == "nic"]) == 8
    assert t.gpus == ()  # NVLink not described


def test_azure_ncv4_graph_file() -> None:
    t = parse(load("nccl-graph-xml-azure-ncv4-01.xml"))
    assert t.kind == "graphs" and t.cpus == () and t.pci == ()
    assert [(g.id, g.pattern, g.nchannels, len(g.channels)) for g in t.graphs] == [(0, 4, 2, 2), (1, 1, 4, 4), (2, 3, 4, 4)]
    for g in t.graphs:
        assert (g.speedintra, g.speedinter, g.typeintra, g.typeinter, g.crossnic) == (12.0, 12.0, "SYS", "PIX", 0)
        assert all(hop.kind == "gpu" for ch in g.channels for hop in ch)  # no <net> endpoints
    assert [[hop.dev for hop in ch] for ch in t.graphs[0].channels] == [[0, 1, 2, 3], [0, 3, 2, 1]]


# -- published / invented variants ---------------------------------------------------------------


def test_h200_vm_dump_hides_numa_switches_and_nvswitches() -> None:
    t = parse(load("nccl-topo-invented-h200-vm-closed-paste-01.xml"))
    (cpu,) = t.cpus
    assert cpu.numaid == -1 and cpu.affinity is None and cpu.cpus is None
    (g,) = t.gpus
    assert (g.busid, g.sm, g.gdr) == ("0000:05:00.0", 90, 1)
    assert [(n.target, n.count, n.tclass) for n in g.nvlinks] == [("fffffff:ff:ff.0", 18, "0x068000")]
    assert [(n.name, n.speed_mbps, n.busid) for n in t.nets] == [("mlx5_0", 400000, "0000:0d:00.0")]
    assert all(p.parent_busid is None and p.link_speed_gts == 16.0 for p in t.pci)


def test_graph_with_net_hops() -> None:
    t = parse(load("nccl-graph-invented-2node-ring-tree-net-hops-01.xml"))
    ring = t.graphs[0]
    assert (ring.pattern, ring.typeintra, ring.speedinter) == (4, "NVL", 40.0)
    first = ring.channels[0]
    assert (first[0].kind, first[0].dev, first[-1].kind, first[-1].dev) == ("net", 0, "net", 0)
    assert [h.dev for h in first[1:-1]] == list(range(8))


def test_truncated_real_paste_is_refused_at_its_last_line() -> None:
    text = load("nccl-topo-dump-h200-baremetal-truncated-paste-01.xml")
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.line_no == len(text.rstrip().split("\n"))
    assert "truncated" in info.value.message
    assert detect(text) == "nccl_topo_xml"


def test_billion_laughs_is_refused_before_parsing() -> None:
    with pytest.raises(ParseError) as info:
        parse(load("nccl-topo-invented-doctype-entity-refused-01.xml"))
    assert info.value.line_no == 6 and "DOCTYPE" in info.value.message


# -- edge cases ----------------------------------------------------------------------------------

SMALL = ('<system version="1">\n  <cpu numaid="0" affinity="ff">\n'
         '    <pci busid="0000:01:00.0" class="0x030200"><gpu dev="0" sm="90" rank="0" gdr="1"/></pci>\n'
         "  </cpu>\n</system>\n")


@pytest.mark.parametrize(("mask", "cpus"), [
    ("0000,000fffff,ff000000,0fffffff", "0-27,56-83"),
    ("ffff,fff00000,00ffffff,f0000000", "28-55,84-111"),
    ("00000001", "0"), ("80000000,00000001", "0,63"), ("5", "0,2"), ("0", ""), ("ff,", None), ("xyz", None),
])
def test_decode_affinity(mask: str, cpus: str | None) -> None:
    assert decode_affinity(mask) == cpus


def test_blank_lines_and_declaration_keep_line_numbers() -> None:
    text = "\n\n\n" + '<?xml version="1.0"?>\n' + SMALL.replace("</cpu>", "</cpux>")
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.line_no == 8  # 3 blank + declaration + 4th line of SMALL


def test_crlf_and_surrounding_shell_text() -> None:
    t = parse("$ cat /tmp/topo.xml\r\n" + SMALL.replace("\n", "\r\n") + "$ \r\n")
    assert [g.dev for g in t.gpus] == [0] and t.cpus[0].cpus == "0-7"
    assert any("before the XML" in n for n in t.notes) and any("after the root" in n for n in t.notes)


def test_kind_from_children_when_class_is_missing() -> None:
    t = parse('<system version="1"><cpu numaid="0"><pci busid="a"><pci busid="b"><gpu dev="0"/></pci>'
              '<pci busid="c"><nic><net name="mlx5_0" dev="0"/></nic></pci></pci></cpu></system>')
    assert [(p.busid, p.kind, p.parent_busid) for p in t.pci] == [("a", "switch", None), ("b", "gpu", "a"), ("c", "nic", "a")]
    assert t.nets[0].busid == "c" and t.nets[0].numaid == 0


def test_bad_numbers_become_null_with_a_note() -> None:
    t = parse('<system version="1"><cpu numaid="zero"><pci busid="a" link_width="x16"/></cpu></system>')
    assert t.cpus[0].numaid is None and t.pci[0].link_width is None
    assert len(t.notes) == 2


@pytest.mark.parametrize(("text", "line_no", "words"), [
    ("", 0, "found no text"),
    ("\n\nhello", 3, "found 'hello'"),
    ('<?xml version="1.0"?>\n<nvidia_smi_log><gpu/></nvidia_smi_log>', 2, "found <nvidia_smi_log>"),
    ('<system version="1"/>', 1, "without any <cpu>"),
    ('<system version="1"><cpu numaid="0">\n<pci busid="a">\n</cpu></system>', 3, "mismatched tag"),
    ('<system><!ENTITY x "y"></system>', 1, "ENTITY"),
])
def test_refusals_carry_line_numbers(text: str, line_no: int, words: str) -> None:
    with pytest.raises(ParseError) as info:
        parse(text)
    assert info.value.line_no == line_no and words in info.value.message


def test_deep_nesting_is_a_parse_error_not_a_recursion_error() -> None:
    deep = "<system><cpu>" + "<pci>" * 5000 + "</pci>" * 5000 + "</cpu></system>"
    with pytest.raises(ParseError):
        parse(deep)


def test_another_tools_output_is_refused() -> None:
    ibstat = "CA 'mlx5_0'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Active\n"
    with pytest.raises(ParseError) as info:
        parse(ibstat)
    assert info.value.line_no == 1
    assert sniff(ibstat) == 0.0


def test_sniff_scores() -> None:
    assert sniff(SMALL) >= 0.9
    assert sniff("\n\n" + load("nccl-graph-xml-azure-ncv4-01.xml")) >= 0.9
    assert sniff("NCCL INFO Attribute <system> of node cpu not found\n") == 0.0
    assert sniff("GPU 0: NVIDIA H100 (UUID: GPU-x)\n\t Link 0: 26.562 GB/s\n") == 0.0
