"""ibv_devinfo: the facts each corpus file's `#@ expected:` line states, and the edge cases of the format."""

from __future__ import annotations

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect, ibv_devinfo
from topodiag.parsers.ib_records import norm_guid, norm_physical_state, norm_state
from tests.fixtures_index import FIXTURES


def load(name: str) -> str:
    return blank_provenance_header((FIXTURES / "ibv_devinfo" / name).read_text())


def by_name(report, name):
    [ca] = [c for c in report.cas if c.name == name]
    return ca


def test_cx6dx_ethernet_port_down_and_cx7() -> None:
    r = ibv_devinfo.parse(load("ibv_devinfo-cx6dx-eth-down-cx7-mixed-01.txt"))
    ca = by_name(r, "mlx5_12")
    assert (ca.firmware, ca.vendor_part_id, ca.type) == ("22.38.1900", 4125, "MT4125")
    assert ca.node_guid == "0xa088c20300309a0d" and ca.system_guid == "0xa088c20300309a0c"
    [p] = ca.ports
    assert (p.state, p.state_raw, p.link_layer, p.active_mtu, p.max_mtu) == ("Down", "PORT_DOWN (1)", "Ethernet", 1024, 4096)
    assert p.rate_gbps is None  # plain ibv_devinfo prints no rate
    cx7 = by_name(r, "mlx5_13")
    assert (cx7.vendor_part_id, cx7.type, cx7.num_ports, cx7.ports) == (4129, "MT4129", 1, ())


def test_cx7_ib_port_down_without_lid() -> None:
    r = ibv_devinfo.parse(load("ibv_devinfo-cx7-ib-port-down-01.txt"))
    [p] = by_name(r, "mlx5_0").ports
    assert (p.state, p.link_layer, p.base_lid, p.sm_lid, p.lmc) == ("Down", "InfiniBand", 65535, 0, 0)
    assert by_name(r, "mlx5_1").firmware == "28.39.2048"  # fragment continues into mlx5_1


def test_mofed4_verbose_capability_block_is_a_ca_with_zero_ports() -> None:
    r = ibv_devinfo.parse(load("ibv_devinfo-v-cx5-mofed4-tabs-exp-flags-01.txt"))
    [ca] = r.cas
    assert (ca.name, ca.transport, ca.firmware, ca.vendor_part_id) == ("mlx5_1", "InfiniBand", "16.23.1020", 4119)
    assert ca.ports == () and r.errors == ()


def test_gid_fragment_roce_v2_ipv4_at_index_3() -> None:
    text = load("ibv_devinfo-v-gid-fragment-roce-bond-01.txt")
    assert detect(text) == "ibv_devinfo"
    [ca] = ibv_devinfo.parse(text).cas
    assert ca.name is None
    [p] = ca.ports
    assert p.port is None and p.physical_state == "LinkUp"
    assert {g.type for g in p.gids} == {"RoCE v1", "RoCE v2"}
    assert (p.gids[1].gid, p.gids[1].type) == ("fe80::ac0:ebff:feda:1cfb", "RoCE v2")
    assert (p.gids[3].index, p.gids[3].gid, p.gids[3].type) == (3, "::ffff:200.0.209.6", "RoCE v2")


def test_verbose_rate_is_width_times_lane_speed() -> None:
    r = ibv_devinfo.parse(load("ibv_devinfo-v-invented-cx7-ib-roce-full-01.txt"))
    ib = by_name(r, "mlx5_0").ports[0]
    assert (ib.active_width, ib.active_speed_gbps, ib.rate_gbps) == ("4X", 100.0, 400.0)
    assert (ib.base_lid, ib.sm_lid, ib.capability_mask, ib.gids[0].type) == (50, 1, "0xa751e848", "IB")
    roce = by_name(r, "mlx5_1").ports[0]
    assert (roce.link_layer, roce.rate_gbps) == ("Ethernet", 200.0)
    assert [(g.index, g.type) for g in roce.gids if g.gid == "::ffff:10.0.1.21"] == [(2, "RoCE v1"), (3, "RoCE v2")]
    spark = by_name(r, "rocep1s0f0").ports[0]
    assert (spark.active_width, spark.active_speed_gbps, spark.rate_gbps) == ("2X", 100.0, 200.0)


def test_list_form() -> None:
    r = ibv_devinfo.parse(load("ibv_devinfo-invented-list-01.txt"))
    assert [c.name for c in r.cas] == ["mlx5_0", "mlx5_1", "mlx5_bond_0"]


def test_no_devices_is_zero_cas_plus_errors() -> None:
    r = ibv_devinfo.parse(load("ibv_devinfo-invented-no-devices-driver-warning-01.txt"))
    assert r.cas == ()
    assert [e.text.split(":")[0] for e in r.errors] == ["libibverbs", "No IB devices found"]


def test_invalid_vocabulary_values_become_none() -> None:
    text = ("hca_id:\tmlx5_0\n\t\tport:\t1\n\t\t\tstate:\t\t\tinvalid state (0)\n\t\t\tactive_mtu:\t\tinvalid MTU (0)\n"
            "\t\t\tactive_width:\t\tinvalid widthX (0)\n\t\t\tactive_speed:\t\tinvalid speed (0)\n"
            "\t\t\tphys_state:\t\tPORT_CONFIGURATION TRAINNING (4)\n")
    [p] = ibv_devinfo.parse(text).cas[0].ports
    assert (p.state, p.state_raw, p.active_mtu, p.active_width, p.rate_gbps) == (None, "invalid state (0)", None, None, None)
    assert p.physical_state == "PortConfigurationTraining"


def test_old_output_without_link_layer_or_board_id() -> None:
    text = ("hca_id: rxe0\n    transport:          InfiniBand (0)\n    fw_ver:             0.0.0\n"
            "    vendor_id:          0x0000\n    vendor_part_id:         0\n    phys_port_cnt:          1\n"
            "        port:   1\n            state:          PORT_ACTIVE (4)\n            port_lid:       0\n")
    [ca] = ibv_devinfo.parse(text).cas
    assert ca.type is None and ca.board_id is None  # not a Mellanox vendor id: no MT<part> type
    assert ca.ports[0].state == "Active" and ca.ports[0].link_layer is None


def test_crlf_and_ansi_and_spaces_read_alike() -> None:
    text = load("ibv_devinfo-cx7-ib-port-down-01.txt")
    base = ibv_devinfo.parse(text).cas
    assert ibv_devinfo.parse(text.replace("\n", "\r\n")).cas == base
    assert ibv_devinfo.parse(text.replace("hca_id:", "\x1b[1mhca_id:\x1b[0m")).cas == base
    assert ibv_devinfo.parse(text.replace("        ", "\t")).cas == base


def test_bad_guid_is_refused_with_its_line() -> None:
    with pytest.raises(ParseError) as info:
        ibv_devinfo.parse("hca_id: mlx5_0\n\tnode_guid:\t\t\tzzzz:c203\n")
    assert info.value.line_no == 2 and "node_guid" in info.value.message


@pytest.mark.parametrize("text,line_no", [
    ("", 0),
    ("CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n", 1),
    ("x\nInfiniband device 'mlx5_0' port 1 status:\n\tstate:\t\t 4: ACTIVE\n\tlink_layer:\t Ethernet\n", 1),
])
def test_empty_or_foreign_text_is_refused(text: str, line_no: int) -> None:
    with pytest.raises(ParseError) as info:
        ibv_devinfo.parse(text)
    assert info.value.line_no == line_no


def test_vocabulary_normalisation() -> None:
    assert [norm_state(s) for s in ("PORT_ACTIVE (4)", "PORT_INIT (2)", "PORT_ARMED (3)", "4: ACTIVE", "Initializing",
                                     "PORT_ACTIVE_DEFER (5)", "???")] == [
        "Active", "Initializing", "Armed", "Active", "Initializing", "ActiveDefer", None]
    assert [norm_physical_state(s) for s in ("LINK_UP (5)", "5: LinkUp", "DISABLED (3)", "7: Phy Test",
                                              "LINK_ERROR_RECOVERY (6)", "SLEEP (1)")] == [
        "LinkUp", "LinkUp", "Disabled", "PhyTest", "LinkErrorRecovery", "Sleep"]
    assert norm_guid("a088:c203:0030:9a0d") == norm_guid("0xA088C20300309A0D") == "0xa088c20300309a0d"


def test_streaming_form_matches() -> None:
    text = load("ibv_devinfo-v-invented-cx7-ib-roce-full-01.txt")
    assert ibv_devinfo.parse_lines(iter(text.splitlines(keepends=True))) == ibv_devinfo.parse(text)
