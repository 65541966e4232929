"""ibnetdiscover: the facts each fixture's `#@ expected:` line states, and the edge cases of the format."""

from __future__ import annotations

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect, ibnetdiscover
from tests.fixtures_index import CORPUS, FIXTURES


def load(name: str) -> str:
    return blank_provenance_header((FIXTURES / "ibnetdiscover" / name).read_bytes().decode())


def node(report, guid):
    [n] = [n for n in report.nodes if n.guid == guid]
    return n


def conns(n):
    return {c.port: c for c in n.connections}


def all_connections(report):
    return [(n, c) for n in report.nodes for c in n.connections]


# -- facts from the `expected:` lines -------------------------------------------------------------


def test_manpage_example_has_two_1x_sdr_links() -> None:
    text = load("ibnetdiscover-manpage-example-sdr-1x-links-01.txt")  # indented 3 spaces (reST literal block)
    assert detect(text) == "ibnetdiscover"
    r = ibnetdiscover.parse(text)
    assert (r.format, r.generated_on) == ("topology", "Tue Jun  5 14:15:10 2007")
    assert (r.from_node_guid, r.from_port_guid) == ("0x0008f10403960558", "0x0008f10403960559")
    assert [(n.kind, n.nports) for n in r.nodes] == [
        ("Switch", 24), ("Switch", 8), ("Ca", 2), ("Ca", 2), ("Ca", 2), ("Ca", 2)]
    isr = node(r, "0x005442ba00003080")
    assert (isr.name, isr.description, isr.lid, isr.lmc, isr.port0) == (
        "S-005442ba00003080", "ISR9024 Voltaire", 6, 0, "base")
    assert (isr.vendid, isr.devid, isr.sysimgguid, isr.port_guid) == (
        "0x8f1", "0x5a06", "0x005442ba00003000", "0x005442ba00003080")
    sw6 = node(r, "0x0008f10400410015")
    assert (sw6.description, sw6.lid, sw6.sysimgguid) == ("SW-6IB4 Voltaire", 3, None)
    one_x = [(n.name, c.port, c.peer_name, c.peer_port) for n, c in all_connections(r) if c.width == "1x"]
    assert one_x == [
        ("S-0008f10400410015", 1, "S-005442ba00003080", 10), ("H-0008f10403960558", 1, "S-005442ba00003080", 12)]
    for n, c in all_connections(r):
        assert c.speed == "SDR"
        assert (c.width_lanes, c.rate_gbps) == ((1, 2.5) if c.width == "1x" else (4, 10.0))
    hca = node(r, "0x0008f10403960558")
    c1 = conns(hca)[1]
    assert (c1.port_guid, c1.lid, c1.lmc, c1.peer_kind, c1.peer_description, c1.peer_lid) == (
        "0x0008f10403960559", 10, 1, "Switch", "ISR9024 Voltaire", 6)
    to_hca = conns(isr)[22]
    assert (to_hca.peer_kind, to_hca.peer_port_guid, to_hca.peer_lid, to_hca.lid) == (
        "Ca", "0x0008f10403961355", 4, None)
    assert r.notes == () and r.errors == ()


def test_ndr_leaves_all_4x_ndr() -> None:
    r = ibnetdiscover.parse(load("ibnetdiscover-ndr-quantum2-leaves-head-01.txt"))
    a, b = r.nodes
    assert (a.description, a.lid, a.port0, a.nports, a.devid) == (
        "MF0;A09-P1-IBLEAF-04-04:MQM9701/U1", 73, "enhanced", 65, "0xd2f2")
    assert (b.description, b.lid) == ("MF0;A09-P1-IBLEAF-04-02:MQM9701/U1", 159)
    assert sorted(conns(a)) == [*range(1, 18), *range(35, 51), 65]
    assert sorted(conns(b)) == [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 18, *range(35, 51), 65]
    for _, c in all_connections(r):
        assert (c.width, c.width_lanes, c.speed, c.rate_gbps) == ("4x", 4, "NDR", 400.0)
    for n in (a, b):
        agg = conns(n)[65]
        assert (agg.peer_kind, agg.peer_description) == ("Ca", "Mellanox Technologies Aggregation Node")
        spines = {c.peer_description for p, c in conns(n).items() if 35 <= p <= 50}
        assert len(spines) == 8 and all(c.peer_kind == "Switch" for p, c in conns(n).items() if 35 <= p <= 50)
    defaults = [c.port for c in b.connections if c.peer_description == "MT4129 ConnectX7   Mellanox Technologies"]
    assert defaults == [6, 8, 9, 13, 17]
    c1 = conns(a)[1]
    assert (c1.peer_name, c1.peer_port_guid, c1.peer_lid) == ("H-e09d7303007a4bd8", "0xe09d7303007a4bd8", 647)


def test_ndr_fragment_of_ca_blocks() -> None:
    r = ibnetdiscover.parse(load("ibnetdiscover-ndr-dgx-ca-blocks-tail-01.txt"))
    assert r.generated_on is None and r.notes == ()  # starts at a block boundary mid-file
    assert len(r.nodes) == 19 and all(n.kind == "Ca" and n.nports == 1 and len(n.connections) == 1 for n in r.nodes)
    for n in r.nodes:
        [c] = n.connections
        assert (c.peer_name, c.peer_lid, c.speed, c.width, c.rate_gbps, c.lmc) == (
            "S-2c5eab0300c26480", 119, "NDR", "4x", 400.0, 0)
        assert c.port_guid == n.guid
    agg = r.nodes[0]
    assert (agg.description, agg.devid, agg.sysimgguid) == (
        "Mellanox Technologies Aggregation Node", "0xcf09", "0x2c5eab0300c26480")
    assert (agg.connections[0].peer_port, agg.connections[0].lid) == (65, 200)
    by_host = {n.description: n.connections[0] for n in r.nodes[1:]}
    assert sorted(c.peer_port for c in by_host.values()) == list(range(1, 19))
    assert (by_host["b05-p1-dgx-05-c18 HCA-6"].peer_port, by_host["b05-p1-dgx-05-c18 HCA-6"].lid) == (18, 127)
    assert (by_host["b05-p1-dgx-05-c08 HCA-6"].peer_port, by_host["b05-p1-dgx-05-c08 HCA-6"].lid) == (8, 246)


def test_gb200_ca_without_any_link() -> None:
    r = ibnetdiscover.parse(load("ibnetdiscover-gb200-single-ca-no-links-01.txt"))
    [n] = r.nodes
    assert (n.kind, n.name, n.description, n.nports, n.devid) == (
        "Ca", "H-b8e92403009ca838", "dgx-gb200-n01-c1 HCA-1", 1, "0x1021")
    assert n.connections == ()
    assert r.from_node_guid == n.guid == "0xb8e92403009ca838"


def test_switchib_fabric_with_one_link_at_ddr() -> None:
    r = ibnetdiscover.parse(load("ibnetdiscover-edr-switchib-4xddr-link-01.txt"))
    assert [n.lid for n in r.nodes] == [48, 23, 19, 25]
    assert all((n.nports, n.port0, n.devid) == (36, "base", "0xcb20") for n in r.nodes)
    pairs = all_connections(r)
    assert len(pairs) == 132
    slow = [(n.guid, c.port, c.peer_guid, c.peer_port, c.rate_gbps) for n, c in pairs if c.speed != "EDR"]
    assert slow == [
        ("0xec0d9a0300ec8480", 11, "0xec0d9a0300ec8200", 11, 20.0),
        ("0xec0d9a0300ec8200", 11, "0xec0d9a0300ec8480", 11, 20.0),
    ]
    assert all(c.speed == "DDR" for _, c in pairs if c.speed != "EDR")
    assert all(c.width == "4x" for _, c in pairs) and all(c.rate_gbps == 100.0 for _, c in pairs if c.speed == "EDR")
    gpu001 = conns(node(r, "0xec0d9a0300ec8240"))[11]
    assert (gpu001.peer_description, gpu001.peer_lid) == ("gpu001 HCA-1", 2)
    assert conns(node(r, "0xec0d9a0300ec8240"))[12].peer_port_guid == "0x08c0eb0300ddc0f6"  # "(8c0eb0300ddc0f6)"


def test_ports_report_with_unconnected_ports() -> None:
    text = load("ibnetdiscover-ports-edr-osc-01.txt")
    assert detect(text) == "ibnetdiscover"
    r = ibnetdiscover.parse(text)
    assert (r.format, r.nodes) == ("ports", ())
    linked = [p for p in r.ports if p.peer_lid is not None]
    assert len(linked) == 7 and all((p.width, p.speed, p.rate_gbps) == ("4x", "EDR", 100.0) for p in linked)
    first = r.ports[0]
    assert (first.kind, first.lid, first.port, first.port_guid, first.description) == (
        "Ca", 134, 1, "0x7cfe9003003b4bde", "o0001 HCA-1")
    assert (first.peer_kind, first.peer_lid, first.peer_port, first.peer_description) == (
        "Switch", 1719, 10, "ib-i1l1s01")
    inter = [p for p in linked if p.kind == p.peer_kind == "Switch"]
    assert [(p.port, p.peer_lid, p.peer_description) for p in inter] == [(1, 1516, "ib-i1l2s01")]
    alone = [p for p in r.ports if p.peer_lid is None]
    assert [(p.description, p.port, p.width, p.speed, p.rate_gbps) for p in alone] == [
        ("ib-i4l1s01", 37, "4x", None, None), ("ib-i7l2s01", 80, "4x", "SDR", None)]


def test_ports_report_of_an_older_build_without_quotes() -> None:
    # treydock/infiniband_exporter collectors/fixtures/ibnetdiscover/test3.out (commit 81791e82)
    text = "SW   479 22 0x0002c9020040f161 4x QDR" + " " * 35 + "Infiniscale-IV Mellanox Technologies\n"
    [p] = ibnetdiscover.parse(text).ports
    assert (p.kind, p.lid, p.port, p.speed, p.description, p.peer_kind) == (
        "Switch", 479, 22, "QDR", "Infiniscale-IV Mellanox Technologies", None)


def test_invented_grouping_full_router_and_cut_off_line() -> None:
    r = ibnetdiscover.parse(load("ibnetdiscover-invented-grouping-full-router-01.txt"))
    line = node(r, "0x0002c90200401e88")
    assert (line.sysimgguid, line.port_guid, line.lid) == (
        "0x0002c90200401e90", "0x0002c90200401e88", 3)  # "# Chassis" comments dropped
    c = conns(line)
    assert (c[1].ext_port, c[1].width, c[1].speed, c[1].rate_gbps) == (1, "4x", "FDR10", 40.0)
    assert (c[2].width, c[2].width_lanes, c[2].rate_gbps) == ("1x", 1, 10.0)
    assert (c[3].peer_kind, c[3].width, c[3].speed, c[3].rate_gbps) == ("Rt", None, "FDR10", None)
    assert (c[36].speed, c[36].peer_port) == ("QDR", 40)
    leaf = node(r, "0xb8599f0300d4d4a0")
    lc = conns(leaf)
    assert (lc[1].width, lc[1].speed, lc[1].rate_gbps) == ("2x", "HDR", 100.0)
    assert (lc[2].width, lc[2].speed, lc[2].rate_gbps) == ("4x", None, None)
    assert conns(node(r, "0xb8599f0300e95b44"))[1].width == "2x"
    router = node(r, "0x0002c9030010f0a0")
    assert (router.kind, router.nports, router.connections[0].peer_ext_port) == ("Rt", 2, 3)
    cut = conns(node(r, "0x0002c903000e0b70"))[1]
    assert (cut.peer_name, cut.peer_port, cut.lid, cut.lmc) == ("S-0002c90200401e88", 1, 5, 0)
    assert (cut.peer_description, cut.peer_lid, cut.width, cut.speed) == (None, None, None, None)
    assert r.elided and len(r.notes) == 2 and "line 62" in r.notes[1]


def test_ibhosts_node_list_is_refused_with_the_mode_named() -> None:
    text = load("ibnetdiscover-ibhosts-node-list-refused-01.txt")
    assert detect(text) == "ibnetdiscover"
    with pytest.raises(ParseError) as info:
        ibnetdiscover.parse(text)
    assert info.value.line_no == 6 and "node list" in info.value.message and "-l" in info.value.message


# -- format variants -------------------------------------------------------------------------------


def test_tabs_spaces_crlf_ansi_and_indentation_read_alike() -> None:
    text = load("ibnetdiscover-ndr-dgx-ca-blocks-tail-01.txt")
    base = ibnetdiscover.parse(text).nodes
    variants = [
        text.replace("\t", "    "),
        text.replace("\n", " \r\n"),
        text.replace("Ca\t1", "\x1b[1mCa\x1b[0m\t1"),
        "\n".join("   " + line for line in text.split("\n")),
    ]
    for v in variants:
        assert ibnetdiscover.parse(v).nodes == base


def test_connection_lines_before_any_node_line_are_a_fragment() -> None:
    text = '[11]\t"S-ec0d9a0300ec8200"[11]\t\t# "SwitchIB Mellanox Technologies" lid 25 4xDDR\n'
    r = ibnetdiscover.parse(text)
    [n] = r.nodes
    assert (n.kind, n.guid, n.connections[0].speed) == (None, None, "DDR")
    assert "fragment" in r.notes[0]


def test_truncated_mid_line_keeps_what_is_complete() -> None:
    text = load("ibnetdiscover-manpage-example-sdr-1x-links-01.txt")
    cut = text[: text.index('[8]     "H-0008f10403960558"[2](8f104') + 30]
    r = ibnetdiscover.parse(cut)
    assert [c.port for c in r.nodes[0].connections] == [22, 10]
    assert r.notes == ("line 21: connection line cut off or garbled; skipped",)


def test_tool_errors_are_kept() -> None:
    r = ibnetdiscover.parse("ibwarn: [2113] mad_rpc_open_port: can't open UMAD port ((null):0)\n"
                            "ibnetdiscover: iberror: failed: discover failed\n")
    assert r.nodes == () and len(r.errors) == 2


# -- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text,line_no", [("", 0), ("\n \n", 0), ("hello\nworld\n", 1)])
def test_empty_or_foreign_text_is_refused(text: str, line_no: int) -> None:
    with pytest.raises(ParseError) as info:
        ibnetdiscover.parse(text)
    assert info.value.line_no == line_no


def test_iblinkinfo_output_is_refused_and_named() -> None:
    text = blank_provenance_header((FIXTURES / "iblinkinfo" / "iblinkinfo-edr-hdr-switch-01.txt").read_text())
    assert ibnetdiscover.sniff(text) == 0
    with pytest.raises(ParseError) as info:
        ibnetdiscover.parse(text)
    assert "looks like iblinkinfo output" in info.value.message and info.value.line_no == 7


def test_ibstat_output_is_refused_and_named() -> None:
    text = blank_provenance_header((FIXTURES / "ibstat" / "ibstat-b300-cx8-disabled-cx7-100g-11ca-01.txt").read_text())
    with pytest.raises(ParseError) as info:
        ibnetdiscover.parse(text)
    assert "looks like ibstat output" in info.value.message


def test_node_list_mode_is_refused() -> None:
    text = 'Switch\t : 0x0002c9020046c588 ports 36 devid 0xbd36 vendid 0x2c9 "Infiniscale-IV Mellanox Technologies"\n'
    assert detect(text) == "ibnetdiscover"
    with pytest.raises(ParseError) as info:
        ibnetdiscover.parse(text)
    assert info.value.line_no == 1 and "node list" in info.value.message


# -- detection ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted((FIXTURES / "ibnetdiscover").glob("*.txt")), ids=lambda p: p.name)
def test_detection_names_ibnetdiscover(path) -> None:
    assert detect(blank_provenance_header(path.read_bytes().decode())) == "ibnetdiscover"


OTHER_IB = [p for d in ("ibstat", "ibstatus", "ibv_devinfo", "iblinkinfo")
            for p in sorted((FIXTURES / d).glob("*.txt"))]


@pytest.mark.parametrize("path", OTHER_IB, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_ib_tools_are_not_sniffed_as_ibnetdiscover(path) -> None:
    text = blank_provenance_header(path.read_bytes().decode())
    assert ibnetdiscover.sniff(text) == 0 and detect(text) != "ibnetdiscover"


def test_corpus_copy_is_the_fixture() -> None:
    path = CORPUS / "ib" / "ibnetdiscover-manpage-example-sdr-1x-links-01.txt"
    if not path.exists():
        pytest.skip("corpus not beside the checkout")
    assert path.read_bytes() == (FIXTURES / "ibnetdiscover" / path.name).read_bytes()


def test_streaming_form_matches() -> None:
    for name in ("ibnetdiscover-invented-grouping-full-router-01.txt", "ibnetdiscover-ports-edr-osc-01.txt"):
        text = load(name)
        assert ibnetdiscover.parse_lines(iter(text.splitlines(keepends=True))) == ibnetdiscover.parse(text)


# -- redacted node names (issue 10) -----------------------------------------------------------------

_MASKED = """\
vendid=0x2c9
devid=0xcb20
sysimgguid=0xxxxxxxxxxxxxxxxx
switchguid=0xxxxxxxxxxxxxxxxx(xxxxxxxxxxxxxxxx)
Switch\t36 "S-xxxxxxxxxxxxxxxx"\t\t# "leaf1" base port 0 lid xx lmc 0
[11]\t"S-0x..."[11]\t\t# "leaf2" lid 25 4xDDR
[13]\t"H-<redacted>"[1](<redacted>) \t\t# "gpu045 HCA-1" lid 100 4xEDR
[14]\t"*"[1]\t\t# "gpu046 HCA-1" lid 101 4xEDR

caguid=0x8f10403960558
Ca\t2 "H-<redacted>"\t\t# "gpu045 HCA-1"
[1](<redacted>) \t"S-xxxxxxxxxxxxxxxx"[13]\t\t# lid 100 lmc 0 "leaf1" lid xx 4xEDR

Ca\t1 "H-<redacted>"\t\t# "gpu047 HCA-1"
"""


@pytest.mark.parametrize("name", ["S-xxxxxxxxxxxxxxxx", "S-0x...", "H-<redacted>", "H-REDACTED", "S-*", "*",
                                  "<redacted>", "S-ec0d9a0300xxxxxx", "R-0x<hidden>"])
def test_masked_node_name_is_read_guid_null(name: str) -> None:
    r = ibnetdiscover.parse(f'Switch\t36 "{name}"\t\t# "leaf1" base port 0 lid 3 lmc 0\n'
                            f'[1]\t"{name}"[2]\t\t# "leaf2" lid 4 4xHDR\n')
    [n] = r.nodes
    assert (n.kind, n.guid, n.name, n.description, n.lid) == ("Switch", None, name, "leaf1", 3)
    [c] = n.connections
    assert (c.peer_guid, c.peer_name, c.peer_port, c.peer_description, c.peer_lid, c.rate_gbps) == (
        None, name, 2, "leaf2", 4, 200.0)
    assert c.peer_kind == {"S": "Switch", "H": "Ca", "R": "Rt"}.get(name[0] if name[1:2] == "-" else "")
    assert any(f"node GUID redacted ('{name}')" in note for note in r.notes)
    assert detect(f'Switch\t36 "{name}"\t\t# "leaf1"\n[1]\t"{name}"[2]\t\t# "leaf2" lid 4 4xHDR\n') == \
        "ibnetdiscover"


def test_masked_topology_keeps_ports_links_descriptions_and_names_each_mask_once() -> None:
    r = ibnetdiscover.parse(_MASKED)
    sw, ca, lone = r.nodes
    assert (sw.guid, sw.sysimgguid, sw.port_guid, sw.lid, sw.vendid) == (None, None, None, None, "0x2c9")
    assert [(c.port, c.peer_kind, c.peer_description, c.peer_lid, c.speed) for c in sw.connections] == [
        (11, "Switch", "leaf2", 25, "DDR"), (13, "Ca", "gpu045 HCA-1", 100, "EDR"), (14, None, "gpu046 HCA-1", 101, "EDR")]
    assert (ca.guid, ca.name, ca.description) == (None, "H-<redacted>", "gpu045 HCA-1")
    [c] = ca.connections
    assert (c.port_guid, c.lid, c.peer_name, c.peer_lid, c.rate_gbps) == (None, 100, "S-xxxxxxxxxxxxxxxx", None, 100.0)
    assert lone.connections == ()
    assert "lines 5, 12: node GUID redacted ('S-xxxxxxxxxxxxxxxx'): read as null" in r.notes
    assert "lines 7, 11, 14: node GUID redacted ('H-<redacted>'): read as null" in r.notes
    assert "lines 5, 12: LID redacted ('xx'): read as null" in r.notes


def test_masked_guids_do_not_merge_distinct_links() -> None:
    """Every "H-<redacted>" looks alike: the links stay apart by description, and the two views of the
    switch <-> gpu045 link are still one link."""
    from topodiag.model.combiners import _ibnetdiscover_links

    links = _ibnetdiscover_links(ibnetdiscover.parse(_MASKED))
    assert sorted((x.a, x.b) for x in links) == [
        ("leaf1 port 11", "leaf2 port 11"), ("leaf1 port 13", "gpu045 HCA-1 port 1"), ("leaf1 port 14", "gpu046 HCA-1 port 1")]
