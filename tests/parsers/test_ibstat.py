"""ibstat: the facts each corpus file's `#@ expected:` line states, and the edge cases of the format."""

from __future__ import annotations

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect, ibstat, ibstatus
from tests.fixtures_index import CORPUS, FIXTURES


def load(name: str) -> str:
    return blank_provenance_header((FIXTURES / "ibstat" / name).read_text())


def by_name(report, name):
    [ca] = [c for c in report.cas if c.name == name]
    return ca


def port1(report, name):
    return by_name(report, name).ports[0]


# -- facts from the corpus `expected:` lines ----------------------------------------------------


def test_azure_ibpanic_is_an_error_and_the_printed_output_is_kept() -> None:
    text = load("ibstat-azure-initializing-ibpanic-an0-ibstatus-01.txt")
    assert detect(text) == "ibstat"
    r = ibstat.parse(text)
    [err] = r.errors
    assert err.text.startswith("ibpanic: [8371] main: stat of IB device 'mlx5_an0' failed")
    assert err.line_no == 11
    ib0 = by_name(r, "mlx5_ib0")
    assert ib0.type == "MT4124" and ib0.printed_by == "ibstat"
    p = ib0.ports[0]
    assert (p.state, p.physical_state, p.base_lid) == ("Initializing", "LinkUp", 65535)
    assert p.rate_gbps == 200.0 and p.sm_lid == 361 and p.link_layer == "InfiniBand"  # backtick dropped
    an0 = by_name(r, "mlx5_an0")  # from the ibstatus block pasted after it
    assert an0.printed_by == "ibstatus"
    q = an0.ports[0]
    assert q.default_gid is None  # "default gid: unknown"
    assert (q.state, q.state_raw, q.physical_state) == ("Active", "4: ACTIVE", "LinkUp")
    assert q.rate_gbps == 40.0 and q.base_lid == 0 and q.link_layer is None  # excerpt cut in the rate line


def test_b300_cx8_disabled_cx7_active_at_100() -> None:
    r = ibstat.parse(load("ibstat-b300-cx8-disabled-cx7-100g-11ca-01.txt"))
    assert len(r.cas) == 11 and not r.errors
    for name in ("mlx5_0", "mlx5_1", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9", "mlx5_10"):
        ca = by_name(r, name)
        p = ca.ports[0]
        assert ca.type == "MT4131" and ca.firmware == "40.46.5500"
        assert (p.state, p.physical_state, p.rate_gbps, p.base_lid) == ("Down", "Disabled", 10.0, 65535)
    for name, lid in (("mlx5_2", 1), ("mlx5_3", 4), ("mlx5_4", 5), ("mlx5_5", 6)):
        ca = by_name(r, name)
        p = ca.ports[0]
        assert ca.type == "MT4129"
        assert (p.state, p.physical_state, p.rate_gbps, p.base_lid, p.sm_lid) == ("Active", "LinkUp", 100.0, lid, 1)


def test_cx4lx_ethernet_and_cx6_hdr_ib() -> None:
    r = ibstat.parse(load("ibstat-cx4lx-eth-25g-plus-cx6-hdr-ib-4ca-01.txt"))
    assert [c.name for c in r.cas] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    p = port1(r, "mlx5_0")
    assert (p.link_layer, p.state, p.rate_gbps, p.base_lid) == ("Ethernet", "Active", 25.0, 0)
    p = port1(r, "mlx5_1")
    assert (p.link_layer, p.state, p.physical_state, p.rate_gbps) == ("Ethernet", "Down", "Disabled", 40.0)
    p = port1(r, "mlx5_2")
    assert (p.link_layer, p.state, p.physical_state, p.rate_gbps) == ("InfiniBand", "Active", "LinkUp", 200.0)
    assert (p.base_lid, p.sm_lid) == (37, 26)
    p = port1(r, "mlx5_3")
    assert (p.link_layer, p.state, p.physical_state, p.base_lid) == ("InfiniBand", "Down", "Disabled", 65535)


def test_cx6_hdr_one_port_disabled_fragment() -> None:
    r = ibstat.parse(load("ibstat-cx6-hdr-one-port-disabled-01.txt"))
    for name, lid in (("mlx5_0", 9), ("mlx5_2", 10)):
        p = port1(r, name)
        assert (p.state, p.physical_state, p.rate_gbps, p.base_lid, p.sm_lid) == ("Active", "LinkUp", 200.0, lid, 9)
    ca1 = by_name(r, "mlx5_1")
    assert ca1.node_guid == "0xe8ebd30300229551" and ca1.system_guid == "0xe8ebd30300229550"
    p = ca1.ports[0]
    assert (p.state, p.physical_state, p.rate_gbps, p.base_lid) == ("Down", "Disabled", 10.0, 65535)
    assert all(p.link_layer == "InfiniBand" for c in r.cas for p in c.ports)
    assert by_name(r, "mlx5_3").ports == ()  # the excerpt stops inside mlx5_3's CA header


def test_cx6_vf_down_while_physically_up() -> None:
    r = ibstat.parse(load("ibstat-cx6-vf-ib-state-down-physical-linkup-01.txt"))
    [ca] = r.cas
    assert ca.name == "mlx5_7" and ca.type == "MT4124"
    p = ca.ports[0]
    assert (p.state, p.physical_state, p.base_lid, p.sm_lid) == ("Down", "LinkUp", 65535, 1)


def test_cx6dx_roce_two_ethernet_ports_at_100() -> None:
    r = ibstat.parse(load("ibstat-cx6dx-roce-ethernet-100g-01.txt"))
    assert len(r.cas) == 2
    for ca in r.cas:
        p = ca.ports[0]
        assert (p.state, p.physical_state, p.rate_gbps, p.link_layer) == ("Active", "LinkUp", 100.0, "Ethernet")
        assert (p.base_lid, p.sm_lid, p.capability_mask) == (0, 0, "0x00010000")


def test_cx7_ndr_400_native_ib() -> None:
    r = ibstat.parse(load("ibstat-cx7-ndr-400-ib-active-h20-01.txt"))
    assert port1(r, "mlx5_0").rate_gbps == 400.0 and port1(r, "mlx5_0").base_lid == 50
    assert port1(r, "mlx5_1").rate_gbps == 400.0 and port1(r, "mlx5_1").base_lid == 49
    p = port1(r, "mlx5_2")  # fragment: stops after Physical state
    assert (p.state, p.physical_state, p.rate_gbps, p.link_layer) == ("Active", "LinkUp", None, None)


def test_cx7_roce_200_and_disabled_cx6dx() -> None:
    r = ibstat.parse(load("ibstat-cx7-roce-200g-mixed-cx6dx-disabled-01.txt"))
    assert [c.name for c in r.cas] == ["mlx5_0", "mlx5_1", "mlx5_10"]  # printed order kept
    for name in ("mlx5_0", "mlx5_1"):
        p = port1(r, name)
        assert (p.state, p.rate_gbps, p.link_layer, p.base_lid) == ("Active", 200.0, "Ethernet", 0)
    ca = by_name(r, "mlx5_10")
    assert ca.type == "MT4125"
    assert (ca.ports[0].state, ca.ports[0].physical_state) == ("Down", "Disabled")


def test_gpud_partial_output_before_ibpanic() -> None:
    r = ibstat.parse(load("ibstat-gpud-a100-8ca-ibpanic-mlx5_8-01.txt"))
    assert [c.name for c in r.cas] == [f"mlx5_{i}" for i in range(8)]
    assert all(c.ports[0].state == "Active" and c.ports[0].rate_gbps == 200.0 for c in r.cas)
    [err] = r.errors
    assert "stat of IB device 'mlx5_8' failed" in err.text


# -- format variants -----------------------------------------------------------------------------


def test_single_port_form_fdr10_and_no_link_layer() -> None:
    r = ibstat.parse(load("ibstat-invented-single-port-fdr10-no-link-layer-01.txt"))
    [ca] = r.cas
    assert ca.name == "mlx4_0" and ca.type is None
    p = ca.ports[0]
    assert (p.rate_gbps, p.rate_raw, p.link_layer, p.base_lid) == (40.0, "40 (FDR10)", None, 12)


def test_sdr_rate_and_switch_node() -> None:
    text = "Switch 'sw0'\n\tSwitch type: MT54000\n\tNumber of ports: 36\n\tPort 1:\n\t\tState: Armed\n\t\tRate: 2.5\n"
    [ca] = ibstat.parse(text).cas
    assert (ca.node_type, ca.type, ca.num_ports) == ("Switch", "MT54000", 36)
    assert (ca.ports[0].state, ca.ports[0].rate_gbps) == ("Armed", 2.5)


def test_dual_port_crlf() -> None:
    r = ibstat.parse(load("ibstat-invented-mlx4-dual-port-polling-crlf-01.txt"))
    [ca] = r.cas
    assert [p.port for p in ca.ports] == [1, 2]
    assert ca.ports[1].physical_state == "Polling" and ca.ports[1].state == "Down"


def test_tabs_spaces_ansi_and_trailing_blanks_read_alike() -> None:
    base = ibstat.parse(load("ibstat-cx6-vf-ib-state-down-physical-linkup-01.txt"))
    text = load("ibstat-cx6-vf-ib-state-down-physical-linkup-01.txt")
    variants = [
        text.replace("        ", "\t"),
        text.replace("\n", "  \r\n"),
        text.replace("CA 'mlx5_7'", "\x1b[1mCA 'mlx5_7'\x1b[0m"),
        "\n".join(line.strip() for line in text.split("\n")),
    ]
    for v in variants:
        assert ibstat.parse(v).cas == base.cas


def test_truncated_mid_line_keeps_what_is_complete() -> None:
    text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n\t\tPhysical sta"
    p = ibstat.parse(text).cas[0].ports[0]
    assert p.state == "Active" and p.physical_state is None


def test_short_format_has_cas_without_ports() -> None:
    text = "CA 'mlx5_0'\n\tCA type: MT4129\n\tNumber of ports: 1\nCA 'mlx5_1'\n\tCA type: MT4129\n"
    r = ibstat.parse(text)
    assert [c.name for c in r.cas] == ["mlx5_0", "mlx5_1"] and all(c.ports == () for c in r.cas)


def test_ibpanic_alone_is_zero_cas_and_an_error() -> None:
    r = ibstat.parse("ibpanic: [12] main: can't init UMAD library: No such file or directory\n")
    assert r.cas == () and len(r.errors) == 1 and r.errors[0].line_no == 1


def test_garbled_value_is_refused_with_its_line() -> None:
    with pytest.raises(ParseError) as info:
        ibstat.parse("CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n\t\tSM lid: x1\n")
    assert info.value.line_no == 4 and "SM lid" in info.value.message


@pytest.mark.parametrize("text,line_no", [("", 0), ("\n\n   \n", 0), ("hello\nworld\n", 1)])
def test_empty_or_foreign_text_is_refused(text: str, line_no: int) -> None:
    with pytest.raises(ParseError) as info:
        ibstat.parse(text)
    assert info.value.line_no == line_no


def test_other_ib_tools_are_refused_and_not_sniffed() -> None:
    for name in ("iblinkinfo-edr-hdr-switch-01.txt", "ibnetdiscover-manpage-example-sdr-1x-links-01.txt"):
        path = CORPUS / "ib" / name
        if not path.exists():
            pytest.skip("corpus not beside the checkout")
        text = blank_provenance_header(path.read_text())
        assert ibstat.sniff(text) == 0 and ibstatus.sniff(text) == 0
        with pytest.raises(ParseError) as info:
            ibstat.parse(text)
        assert info.value.line_no > 0


def test_ibv_devinfo_output_is_refused() -> None:
    text = "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n"
    assert ibstat.sniff(text) == 0
    with pytest.raises(ParseError) as info:
        ibstat.parse(text)
    assert info.value.line_no == 1 and "CA '<name>'" in info.value.message


def test_streaming_form_matches() -> None:
    text = load("ibstat-azure-initializing-ibpanic-an0-ibstatus-01.txt")
    assert ibstat.parse_lines(iter(text.splitlines(keepends=True))) == ibstat.parse(text)


def test_redacted_fields_are_null_and_ibpanic_marks_the_output_incomplete() -> None:
    from topodiag.parsers import blank_provenance_header, ibstat
    from tests.fixtures_index import FIXTURES

    text = (FIXTURES / "ibstat" / "ibstat-gpud-pr752-redacted-dots-ibpanic-mlx5_8-01.txt").read_text()
    r = ibstat.parse(blank_provenance_header(text))
    (ca,) = r.cas
    assert ca.name == "mlx5_7" and ca.type is None and ca.node_guid is None and ca.firmware is None
    (p,) = ca.ports
    assert (p.state, p.rate_gbps, p.base_lid, p.sm_lid, p.port_guid) == ("Active", 200.0, 13305, 1, None)
    assert r.incomplete and "mlx5_8" in r.errors[0].text
    assert "line 14: Node GUID redacted ('...'): node_guid is null" in r.notes


def test_ibwarn_trace_lines_are_not_errors_but_an_ibwarn_failure_is() -> None:
    from topodiag.parsers import ibstat

    r = ibstat.parse("ibwarn: [1] umad_get_ca: opened mlx4_0\nCA 'mlx4_0'\n\tCA type: MT4099\n\tNode GUID: xxxx\n"
                     "ibwarn: [1] mad_rpc_open_port: client_register for mgmt 1 failed\n")
    assert [e.line_no for e in r.errors] == [5] and not r.incomplete
    assert r.cas[0].node_guid is None and any("ibwarn debug trace" in n for n in r.notes)


def test_is_redacted_forms() -> None:
    from topodiag.parsers.ib_records import is_mac_derived, is_redacted

    for raw in ("...", "xxxx", "XXXX", "<redacted>", "REDACTED", "*", "****", "0x7cfe900300xxxxxx",
                "fe80::xxxx:xxxx", "10.x.x.x", "b8:ce:f6:xx:xx:xx"):
        assert is_redacted(raw), raw
    for raw in ("0x7cfe900300a1b2c3", "4X (2)", "PORT_ACTIVE (4)", "2.42.5000", "Ethernet", "0"):
        assert not is_redacted(raw), raw
    assert is_mac_derived("0x5aa2e1fffedae626") and is_mac_derived("fe80::e42:a1ff:fe1d:d12a")
    assert not is_mac_derived("0x1070fd03008eb580")
