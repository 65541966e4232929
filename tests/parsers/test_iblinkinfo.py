"""iblinkinfo: the facts each fixture's `#@ expected:` line states, and the edge cases of the format."""

from __future__ import annotations

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect, iblinkinfo
from tests.fixtures_index import CORPUS, FIXTURES


def load(name: str) -> str:
    return blank_provenance_header((FIXTURES / "iblinkinfo" / name).read_bytes().decode())


def node(report, description):
    [n] = [n for n in report.nodes if n.description == description]
    return n


def ports(n):
    return {link.port: link for link in n.links}


def up_at(link, width, speed_name, rate):
    return (link.state, link.physical_state, link.width, link.speed_name, link.rate_gbps) == (
        "Active", "LinkUp", width, speed_name, rate)


# -- facts from the `expected:` lines -------------------------------------------------------------


def test_corpus_edr_hosts_and_hdr_aggregation_node_all_4x_up() -> None:
    text = load("iblinkinfo-edr-hdr-switch-01.txt")
    assert detect(text) == "iblinkinfo"
    r = iblinkinfo.parse(text)
    assert [n.kind for n in r.nodes] == ["CA", "CA", "CA", "CA", "Switch"]
    links = [link for n in r.nodes for link in n.links]
    assert len(links) == 8
    assert all(link.width == "4X" and link.width_lanes == 4 for link in links)
    assert all((link.state, link.physical_state) == ("Active", "LinkUp") for link in links)
    assert all(link.could_be is None for link in links)
    agg = node(r, "Mellanox Technologies Aggregation Node").links[0]
    assert (agg.speed_gbps, agg.speed_name, agg.rate_gbps, agg.port_guid) == (
        53.125, "HDR", 200.0, "0x0c42a10300b95c02")
    assert (agg.peer.lid, agg.peer.port, agg.peer.description) == (3, 41, "MF0;ibswitch254:MQM8700/U1")
    hosts = [link for link in links if link is not agg]
    assert all((link.speed_gbps, link.speed_name, link.rate_gbps) == (25.78125, "EDR", 100.0) for link in hosts)
    sw = node(r, "MF0;ibswitch254:MQM8700/U1")
    assert (sw.kind, sw.guid, sw.line_no) == ("Switch", "0x0c42a10300b95bfa", 15)
    assert [(link.lid, link.port, link.peer.lid, link.peer.description) for link in sw.links] == [
        (3, 1, 1, "gpu-v100-0 HCA-1"), (3, 2, 2, "gpu-v100-1 HCA-1"),
        (3, 3, 6, "gpu-v100-3 HCA-1"), (3, 4, 5, "gpu-v100-2 HCA-1")]
    assert r.elided and "line 20" in r.notes[0]  # the user's "..." after switch port 4


def test_sb7700_edr_hosts_and_16_ports_polling() -> None:
    r = iblinkinfo.parse(load("iblinkinfo-edr-sb7700-down-polling-01.txt"))
    n02, mgt = node(r, "n02 HCA-1").links[0], node(r, "mgt mlx5_0").links[0]
    assert up_at(n02, "4X", "EDR", 100.0) and (n02.lid, n02.peer.lid, n02.peer.port) == (4, 2, 17)
    assert up_at(mgt, "4X", "EDR", 100.0) and (mgt.lid, mgt.peer.port) == (3, 36)
    sw = node(r, "MF0;SB7700:MSB7700/U1")
    by_port = ports(sw)
    assert sorted(by_port) == list(range(1, 19))
    for p in range(1, 17):
        link = by_port[p]
        assert (link.state, link.physical_state, link.peer) == ("Down", "Polling", None)
        assert (link.width, link.speed_gbps, link.rate_gbps) == (None, None, None)
    assert up_at(by_port[17], "4X", "EDR", 100.0) and by_port[17].peer.description == "n02 HCA-1"
    assert up_at(by_port[18], "4X", "EDR", 100.0) and by_port[18].peer.description == "n01 HCA-1"
    assert r.notes == () and r.errors == ()  # the shell prompt line is skipped silently


def test_legoos_qdr_with_elisions() -> None:
    r = iblinkinfo.parse(load("iblinkinfo-qdr-is5035-elided-01.txt"))
    assert r.elided and len(r.notes) == 2
    got = [(n.description, n.links[0].lid, n.links[0].peer.port) for n in r.nodes]
    assert got == [("wuklab00 mlx4_0", 8, 1), ("wuklab01 mlx4_0", 27, 2), ("wuklab02 mlx4_0", 24, 3)]
    for n in r.nodes:
        link = n.links[0]
        assert up_at(link, "4X", "QDR", 40.0) and link.speed_raw == "10.0 Gbps" and link.peer.lid == 22


def test_archwiki_ddr_back_to_back_without_switch() -> None:
    r = iblinkinfo.parse(load("iblinkinfo-ddr-back-to-back-archwiki-01.txt"))
    assert [n.kind for n in r.nodes] == ["CA", "CA"]
    a, b = (n.links[0] for n in r.nodes)
    assert up_at(a, "4X", "DDR", 20.0) and up_at(b, "4X", "DDR", 20.0)
    assert (a.lid, a.peer.lid, b.lid, b.peer.lid) == (4, 3, 3, 4)
    assert b.peer.description == "MT25408 ConnectX Mellanox Technologies"


def test_quantum_hdr_switch_with_four_hosts_at_edr_could_be_hdr() -> None:
    r = iblinkinfo.parse(load("iblinkinfo-hdr-quantum-edr-hosts-could-be-01.txt"))
    [sw] = r.nodes
    assert (sw.kind, sw.guid, sw.description) == ("Switch", "0x08c0eb0300add04e", "Quantum Mellanox Technologies")
    by_port = ports(sw)
    assert sorted(by_port) == list(range(1, 42))
    slow = {p: by_port[p].peer.description for p in (21, 22, 23, 24)}
    assert slow == {21: "node3 HCA-2", 22: "node4 HCA-2", 23: "node2 HCA-2", 24: "node1 HCA-2"}
    for p in slow:
        link = by_port[p]
        assert up_at(link, "4X", "EDR", 100.0)
        assert (link.could_be, link.could_be_speed_gbps, link.could_be_speed_name) == (
            "Could be 53.125 Gbps", 53.125, "HDR")
        assert link.could_be_width is None
    assert up_at(by_port[40], "4X", "HDR", 200.0) and (by_port[40].peer.lid, by_port[40].peer.port) == (4, 40)
    assert up_at(by_port[41], "4X", "HDR", 200.0)
    assert by_port[41].peer.description == "Mellanox Technologies Aggregation Node"
    down = [p for p, link in by_port.items() if link.state == "Down"]
    assert down == [*range(1, 21), *range(25, 40)]
    assert all(by_port[p].physical_state == "Polling" for p in down)


def test_invented_line_mode_degraded_widths_and_states() -> None:
    r = iblinkinfo.parse(load("iblinkinfo-invented-line-mode-degraded-width-01.txt"))
    assert r.line_mode and all(n.kind is None for n in r.nodes)
    leaf = node(r, "MF0;leaf01:MQM8700/U1")  # "%30s" padding stripped
    assert leaf.guid == "0x0c42a10300d4e5f0"
    p = ports(leaf)
    assert up_at(p[1], "4X", "HDR", 200.0) and p[1].peer.guid == "0x0c42a10300aa0101"
    assert (p[2].width, p[2].width_lanes, p[2].rate_gbps, p[2].could_be_width) == ("2X", 2, 100.0, "4X")
    assert (p[3].width, p[3].width_lanes, p[3].rate_gbps, p[3].could_be_width) == ("1X", 1, 50.0, "4X")
    assert (p[4].speed_name, p[4].could_be_speed_gbps, p[4].could_be_width) == ("EDR", 53.125, None)
    assert (p[5].state, p[5].physical_state, p[7].physical_state) == ("Down", "Polling", "Disabled")
    assert (p[6].state, p[6].state_raw, p[6].physical_state) == ("Initializing", "Initialize", "LinkUp")
    assert p[8].state == "Armed"
    assert node(r, "host02 mlx5_0").links[0].could_be == "Could be 4X"
    host07 = node(r, "host07 HCA-1")
    assert host07.guid is None and [link.port_guid for link in host07.links] == [
        "0x0c42a10300aa0701", "0x0c42a10300aa0702"]
    assert host07.links[1].state == "Down"


def test_invented_fdr10_additional_crlf_and_cut_off_last_line() -> None:
    text = load("iblinkinfo-invented-fdr10-additional-crlf-01.txt")
    assert "\r\n" in text and not text.endswith("\n")
    r = iblinkinfo.parse(text)
    sw = node(r, "MF0;ib-core:SX6036/U1")
    p = ports(sw)
    assert (p[1].speed_raw, p[1].speed_gbps, p[1].speed_name, p[1].rate_gbps) == (
        "10.0 Gbps (FDR10)", 10.0, "FDR10", 40.0)
    assert (p[2].speed_name, p[2].rate_gbps) == ("FDR", 56.0)
    assert (p[3].speed_name, p[3].could_be_speed_name) == ("QDR", "FDR10")
    assert (p[4].state, p[5].state) == ("Armed", "Initializing")
    assert p[6].state == "Active" and p[6].peer is None  # "Port not available"
    assert p[7].physical_state == "Disabled" and p[7].hoq_life is None
    assert (p[8].ext_port, p[8].width, p[8].rate_gbps, p[8].could_be_width) == (5, "1X", 14.0, "4X")
    assert all((link.hoq_life, link.vl_stall_count) == (16, 7) for link in sw.links if link.state != "Down")
    router = node(r, "ibrouter01 HCA-1")
    assert router.kind == "Router" and router.links[0].peer.ext_port == 5
    cut = node(r, "n02 HCA-1").links[0]
    assert cut.state == "Active" and cut.peer is None
    assert r.notes == ("line 21: the far end of port 1 is cut off or unreadable",)


# -- format variants -------------------------------------------------------------------------------


def test_tabs_spaces_ansi_indentation_and_backticks_read_alike() -> None:
    text = load("iblinkinfo-edr-sb7700-down-polling-01.txt")
    base = iblinkinfo.parse(text).nodes
    variants = [
        text.replace("      ", "\t"),
        text.replace("\n", "  \r\n"),
        text.replace("Switch: ", "\x1b[1mSwitch: ").replace("MSB7700/U1:", "MSB7700/U1:\x1b[0m"),
        "\n".join(line.strip() for line in text.split("\n")),
        "\n".join("   " + line for line in text.split("\n")),
        "\n".join(f"`{line}`" if line else line for line in text.split("\n")),  # Markdown inline code
    ]
    for v in variants:
        assert iblinkinfo.parse(v).nodes == base


def test_older_narrow_columns_and_spaced_state() -> None:
    text = "Switch: 0x0002c90200402f30 MF0;ib0-is5200-a2-bip-m:IS5200/L07/U1:\n" \
           "           4    1[  ] ==( 4X 10.0 Gbps Active /  LinkUp)==>       3   18[  ] \"ib0gw HCA-1\" ( )\n"
    link = iblinkinfo.parse(text).nodes[0].links[0]
    assert (link.width, link.speed_name, link.state, link.physical_state, link.peer.port) == (
        "4X", "QDR", "Active", "LinkUp", 18)


def test_undefined_speed_of_an_old_libibmad_is_kept_raw() -> None:
    # libibmad before HDR support printed "undefined (4)" for an HDR lane
    text = ("CA: n1 HCA-1:\n"
            "      0x0c42a10300b95c02      4    1[  ] ==( 4X  undefined (4) Active/  LinkUp)==>       3   41[  ] \"sw\" ( )\n")
    link = iblinkinfo.parse(text).nodes[0].links[0]
    assert (link.width, link.speed_raw, link.speed_gbps, link.speed_name, link.rate_gbps) == (
        "4X", "undefined (4)", None, None, None)


def test_port_lines_before_any_header_are_a_fragment() -> None:
    text = "     3    2[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       2    1[  ] \"gpu-v100-1 HCA-1\" ( )\n"
    r = iblinkinfo.parse(text)
    [n] = r.nodes
    assert (n.kind, n.description, n.links[0].port) == ("Switch", None, 2)
    assert "fragment" in r.notes[0]


def test_truncated_mid_line_keeps_what_is_complete() -> None:
    text = load("iblinkinfo-edr-sb7700-down-polling-01.txt")
    cut = text[: text.index("Gbps Active/  LinkUp)==>       1    1[  ]") + 4]  # inside port 18's link
    r = iblinkinfo.parse(cut)
    sw = node(r, "MF0;SB7700:MSB7700/U1")
    assert [link.port for link in sw.links] == list(range(1, 18))
    assert r.notes == ("line 31: port line cut off or garbled; skipped",)


def test_tool_errors_are_kept() -> None:
    text = ("ibwarn: [3914] mad_rpc_open_port: client_register for mgmt 1 failed\n"
            "iblinkinfo: iberror: failed: discover failed\n")
    r = iblinkinfo.parse(text)
    assert r.nodes == () and [e.line_no for e in r.errors] == [1, 2]


# -- refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text,line_no", [("", 0), ("\n\n   \n", 0), ("hello\nworld\n", 1)])
def test_empty_or_foreign_text_is_refused(text: str, line_no: int) -> None:
    with pytest.raises(ParseError) as info:
        iblinkinfo.parse(text)
    assert info.value.line_no == line_no


def test_ibstat_output_is_refused_and_named() -> None:
    text = blank_provenance_header((FIXTURES / "ibstat" / "ibstat-cx7-ndr-400-ib-active-h20-01.txt").read_text())
    assert iblinkinfo.sniff(text) == 0
    with pytest.raises(ParseError) as info:
        iblinkinfo.parse(text)
    assert "looks like ibstat output" in info.value.message and info.value.line_no > 0


def test_ibnetdiscover_output_is_refused_and_named() -> None:
    path = FIXTURES / "ibnetdiscover" / "ibnetdiscover-manpage-example-sdr-1x-links-01.txt"
    text = blank_provenance_header(path.read_text())
    assert iblinkinfo.sniff(text) == 0
    with pytest.raises(ParseError) as info:
        iblinkinfo.parse(text)
    assert "looks like ibnetdiscover output" in info.value.message and info.value.line_no == 6


def test_ibstat_single_port_form_is_not_a_node_header() -> None:
    with pytest.raises(ParseError):
        iblinkinfo.parse("CA: 'mlx4_0'\nPort 1:\nState: Active\n")


# -- detection ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted((FIXTURES / "iblinkinfo").glob("*.txt")), ids=lambda p: p.name)
def test_detection_names_iblinkinfo(path) -> None:
    assert detect(blank_provenance_header(path.read_bytes().decode())) == "iblinkinfo"


OTHER_IB = [p for d in ("ibstat", "ibstatus", "ibv_devinfo", "ibnetdiscover")
            for p in sorted((FIXTURES / d).glob("*.txt"))]


@pytest.mark.parametrize("path", OTHER_IB, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_other_ib_tools_are_not_sniffed_as_iblinkinfo(path) -> None:
    text = blank_provenance_header(path.read_bytes().decode())
    assert iblinkinfo.sniff(text) == 0 and detect(text) != "iblinkinfo"


def test_corpus_copy_is_the_fixture() -> None:
    path = CORPUS / "ib" / "iblinkinfo-edr-hdr-switch-01.txt"
    if not path.exists():
        pytest.skip("corpus not beside the checkout")
    assert path.read_bytes() == (FIXTURES / "iblinkinfo" / path.name).read_bytes()


def test_streaming_form_matches() -> None:
    for name in ("iblinkinfo-invented-fdr10-additional-crlf-01.txt", "iblinkinfo-edr-hdr-switch-01.txt"):
        text = load(name)
        assert iblinkinfo.parse_lines(iter(text.splitlines(keepends=True))) == iblinkinfo.parse(text)


# -- redacted LIDs and GUIDs inside the grammar (issue 10) ------------------------------------------

_MASKED = """\
Switch: 0x... Quantum Mellanox Technologies:
          xxx    5[  ] ==(                Down/ Polling)==>             [  ] "" ( )
          xxx   21[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>      ...    1[  ] "node3 HCA-2" ( Could be 53.125 Gbps)
          xxx   22[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>      ...    1[  ] "node4 HCA-2" ( )
   <redacted>   40[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>       4   40[  ] "MF0;d32-03-1:MQM8700/U1" ( )
CA: node3 HCA-2:
      0xxxxxxxxxxxxxxxxx     <redacted>    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       xxx   21[  ] "Quantum Mellanox Technologies" ( )
"""


@pytest.mark.parametrize("lid", ["xxx", "XX", "...", "\u2026", "<redacted>", "REDACTED", "***", "[hidden]"])
def test_masked_lid_on_switch_and_peer_side(lid: str) -> None:
    text = (f"Switch: <redacted> Quantum Mellanox Technologies:\n"
            f"   {lid}   21[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>      {lid}    1[  ] \"node3 HCA-2\" ( )\n")
    r = iblinkinfo.parse(text)
    [n] = r.nodes
    assert (n.kind, n.guid, n.description) == ("Switch", None, "Quantum Mellanox Technologies")
    [ln] = n.links
    assert (ln.lid, ln.port, ln.rate_gbps, ln.state, ln.peer.lid, ln.peer.port, ln.peer.description) == (
        None, 21, 100.0, "Active", None, 1, "node3 HCA-2")
    assert any(f"LID redacted ('{lid}')" in note for note in r.notes)
    assert detect(text) == "iblinkinfo"


def test_masked_fabric_keeps_every_link_and_names_each_mask() -> None:
    r = iblinkinfo.parse(_MASKED)
    sw, ca = r.nodes
    assert [(x.lid, x.port, x.state, x.rate_gbps, x.peer and x.peer.lid) for x in sw.links] == [
        (None, 5, "Down", None, None), (None, 21, "Active", 100.0, None), (None, 22, "Active", 100.0, None),
        (None, 40, "Active", 200.0, 4)]
    [c] = ca.links
    assert (c.port_guid, c.lid, c.peer.lid, c.peer.port) == (None, None, None, 21)
    assert r.notes == (
        "lines 2, 3, 4, 7: LID redacted ('xxx'): read as null",
        "lines 3, 4: LID redacted ('...'): read as null",
        "lines 5, 7: LID redacted ('<redacted>'): read as null",
        "line 7: port GUID redacted ('0xxxxxxxxxxxxxxxxx'): read as null",
        "line 1: node GUID redacted ('0x...'): read as null",
    )


def test_masked_lids_do_not_merge_distinct_links() -> None:
    """Links whose LIDs are all "xxx" stay apart (ports 21 and 22 to two hosts), and the Could-be is kept."""
    from topodiag.model.combiners import _iblinkinfo_links

    links, _ = _iblinkinfo_links(iblinkinfo.parse(_MASKED))
    assert sorted((x.a, x.b, x.could_be) for x in links) == [
        ("Quantum Mellanox Technologies port 21", "node3 HCA-2 port 1", "Could be 53.125 Gbps"),
        ("Quantum Mellanox Technologies port 22", "node4 HCA-2 port 1", None),
        ("Quantum Mellanox Technologies port 40", "MF0;d32-03-1:MQM8700/U1 port 40", None)]
