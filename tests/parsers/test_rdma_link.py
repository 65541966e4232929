"""rdma link show: the facts each fixture's `#@ expected:` line states, the format's variants
(old form, JSON, -d caps, one device, older iproute2 without physical_state), sniffing, refusals
and the merge into the model."""

from __future__ import annotations

import json

import pytest

from topodiag.model import ParsedInput, build
from topodiag.parsers import ParseError, blank_provenance_header, detect, get, rdma_link
from tests.fixtures_index import FIXTURES, parser_fixtures

DIR = FIXTURES / "rdma_link"
CX6DX = "rdma_link-roce-cx6dx-two-ports-trailing-space-01.txt"
RXE = "rdma_link-soft-roce-rxe-one-port-01.txt"
DGX = "rdma_link-ib-dgx-a100-disabled-ports-one-roce-01.txt"
FLAP = "rdma_link-ib-port-polling-then-active-three-runs-01.txt"
ONE = "rdma_link-soft-roce-one-link-argument-01.txt"
BOND = "rdma_link-old-format-roce-bond-bluefield3-01.txt"
JSON_FX = "rdma_link-invented-json-ib-polling-roce-01.txt"
DETAILS = "rdma_link-invented-details-siw-rxe-caps-01.txt"


def load(name: str) -> str:
    return blank_provenance_header((DIR / name).read_text())


def states(r) -> list[tuple]:
    return [(lk.device, lk.port, lk.state, lk.physical_state, lk.link_layer) for lk in r.links]


# -- the fixtures' expected lines ---------------------------------------------------------------

def test_roce_two_ports_trailing_blank_and_ip_addr_around() -> None:
    r = rdma_link.parse(load(CX6DX))
    assert r.form == "text" and r.errors == () and r.notes == ()
    assert states(r) == [("mlx5_0", 1, "Active", "LinkUp", "Ethernet"), ("mlx5_1", 1, "Active", "LinkUp", "Ethernet")]
    assert [(lk.netdev, lk.state_raw, lk.physical_state_raw, lk.line_no) for lk in r.links] == [
        ("p1p1", "ACTIVE", "LINK_UP", 14), ("p1p2", "ACTIVE", "LINK_UP", 15)]
    assert all(lk.lid is None and lk.subnet_prefix is None and not lk.software for lk in r.links)


def test_soft_roce_rxe_is_software() -> None:
    r = rdma_link.parse(load(RXE))
    [lk] = r.links  # the `link/ether` lines of ip addr are not RDMA ports
    assert (lk.device, lk.port, lk.state, lk.physical_state, lk.netdev) == ("rxe_0", 1, "Active", "LinkUp", "p1p1")
    assert lk.software is True and lk.link_layer == "Ethernet" and lk.line_no == 9


def test_dgx_infiniband_disabled_ports_and_one_roce_port() -> None:
    r = rdma_link.parse(load(DGX))
    by = {lk.device: lk for lk in r.links}
    assert list(by) == [f"mlx5_{i}" for i in range(9)]
    for dev, lid in (("mlx5_0", 3), ("mlx5_2", 35), ("mlx5_6", 4), ("mlx5_8", 36)):
        lk = by[dev]
        assert (lk.state, lk.physical_state, lk.lid, lk.sm_lid, lk.lmc) == ("Active", "LinkUp", lid, 1, 0)
        assert lk.link_layer == "InfiniBand" and lk.subnet_prefix == "fe80:0000:0000:0000" and lk.netdev is None
    for dev in ("mlx5_1", "mlx5_3", "mlx5_5", "mlx5_7"):
        lk = by[dev]
        assert (lk.state, lk.physical_state, lk.lid, lk.sm_lid) == ("Down", "Disabled", 65535, 0)
        assert (lk.state_raw, lk.physical_state_raw) == ("DOWN", "DISABLED")
    roce = by["mlx5_4"]
    assert (roce.state, roce.netdev, roce.link_layer, roce.lid) == ("Active", "enp97s0f0", "Ethernet", None)
    assert by["mlx5_0"].line_no == 16 and by["mlx5_8"].line_no == 24


def test_flapping_port_three_runs_in_fences() -> None:
    r = rdma_link.parse(load(FLAP))
    assert [(lk.state, lk.physical_state, lk.line_no) for lk in r.links] == [
        ("Down", "Polling", 10), ("Down", "LinkUp", 16), ("Active", "LinkUp", 20)]
    assert all((lk.device, lk.lid, lk.sm_lid, lk.lmc) == ("mlx5_7", 3403, 1, 0) for lk in r.links)
    [note] = r.notes
    assert "mlx5_7/1 printed 3 times (lines 10, 16, 20)" in note


def test_one_device_named_on_the_command_line() -> None:
    r = rdma_link.parse(load(ONE))
    [lk] = r.links
    assert (lk.device, lk.port, lk.state, lk.netdev, lk.software, lk.line_no) == ("rxe_eth0", 1, "Active", "eth0", True, 10)


def test_old_form_with_device_index() -> None:
    r = rdma_link.parse(load(BOND))
    assert [(lk.dev_index, lk.device, lk.netdev) for lk in r.links] == [
        (8, "mlx5_bond_0", "reth0"), (9, "mlx5_bond_1", "reth2"), (10, "mlx5_bond_2", "reth4"), (11, "mlx5_bond_3", "reth6")]
    assert {(lk.state, lk.physical_state, lk.link_layer, lk.software) for lk in r.links} == {
        ("Active", "LinkUp", "Ethernet", False)}


def test_json_form() -> None:
    r = rdma_link.parse(load(JSON_FX))
    assert r.form == "json"
    assert states(r) == [("mlx5_0", 1, "Active", "LinkUp", "InfiniBand"), ("mlx5_1", 1, "Down", "Polling", "InfiniBand"),
                         ("mlx5_2", 1, "Active", "LinkUp", "Ethernet")]
    ib, down, roce = r.links
    assert (ib.netdev, ib.netdev_index, ib.lid, ib.sm_lid, ib.dev_index) == ("ibp12s0", 4, 12, 1, 0)
    assert (down.lid, down.sm_lid, down.netdev) == (65535, 0, "ibp13s0")
    assert (roce.netdev, roce.netdev_index, roce.dev_index) == ("ens3f0np0", 6, 2)
    assert {lk.line_no for lk in r.links} == {8}


def test_details_caps_and_software_devices() -> None:
    r = rdma_link.parse(load(DETAILS))
    ib, siw, rxe = r.links
    assert (ib.netdev, ib.netdev_index, ib.link_layer, ib.software) == ("ib0", 4, "InfiniBand", False)
    assert ib.caps[:2] == ("TRAP", "SL_MAP") and len(ib.caps) == 9
    assert (siw.device, siw.software, siw.caps, siw.netdev_index) == ("siw0", True, ("CM", "DEVICE_MGMT"), 2)
    assert (rxe.device, rxe.software, rxe.state, rxe.physical_state, rxe.caps) == ("rxe_eth1", True, "Down", "Disabled", ("CM",))


# -- variants and edge cases ---------------------------------------------------------------------

def test_pretty_json_lines_and_pre_5_5_ifname() -> None:
    doc = [{"ifindex": 1, "port": 1, "ifname": "mlx5_0/1", "subnet_prefix": "fe80:0000:0000:0000", "lid": 5,
            "sm_lid": 1, "lmc": 0, "state": "ACTIVE", "physical_state": "LINK_UP", "caps": ["SM", "CM"]},
           {"ifindex": 2, "ifname": "rxe0/1", "state": "ACTIVE", "physical_state": "LINK_UP", "netdev": "eth1",
            "netdev_index": 3}]
    text = "$ rdma -p -j link show\n" + json.dumps(doc, indent=4) + "\n"
    r = rdma_link.parse(text)
    assert r.form == "json"
    assert [(lk.device, lk.port, lk.line_no) for lk in r.links] == [("mlx5_0", 1, 3), ("rxe0", 1, 18)]
    assert r.links[0].caps == ("SM", "CM") and r.links[0].link_layer == "InfiniBand"
    assert r.links[1].software and r.links[1].link_layer == "Ethernet"


def test_empty_json_array_is_no_device() -> None:
    r = rdma_link.parse("[]\n")
    assert r.form == "json" and r.links == () and "no RDMA device" in r.notes[0]


def test_older_iproute2_without_physical_state_or_netdev() -> None:
    r = rdma_link.parse("1/1: mlx5_0/1: subnet_prefix fe80:0000:0000:0000 lid 13 sm_lid 1 lmc 0 state ACTIVE \n"
                        "2/1: mlx5_1/1: state DOWN \n")
    a, b = r.links
    assert (a.state, a.physical_state, a.lid, a.link_layer, a.dev_index) == ("Active", None, 13, "InfiniBand", 1)
    assert (b.state, b.physical_state, b.link_layer) == ("Down", None, None)  # no netdev, no LID: unknown


def test_other_states_and_iproute2_phys_names() -> None:
    r = rdma_link.parse("link mlx5_0/1 state INIT physical_state LINK_UP\n"
                        "link mlx5_1/1 state ARMED physical_state ARMED\n"
                        "link mlx5_2/1 state ACTIVE_DEFER physical_state LINK_ERROR_RECOVER\n"
                        "link mlx5_3/2 state NOP physical_state SLEEP\n")
    assert [(lk.state, lk.physical_state) for lk in r.links] == [
        ("Initializing", "LinkUp"), ("Armed", "PortConfigurationTraining"), ("ActiveDefer", "LinkErrorRecovery"),
        (None, "Sleep")]
    assert r.links[3].state_raw == "NOP" and r.links[3].port == 2


def test_colon_after_name_lm_alias_and_oneline_caps() -> None:
    r = rdma_link.parse("link mlx5_0/1: state ACTIVE physical_state LINK_UP netdev ens21f0\n"
                        "link mlx5_2/1 subnet_prefix fe80:0000:0000:0000 lid 12 sm_lid 1 lm 0 state ACTIVE "
                        "physical_state LINK_UP \\    caps: <SM, CM>\n")
    a, b = r.links
    assert (a.device, a.netdev) == ("mlx5_0", "ens21f0")
    assert (b.lid, b.lmc, b.caps) == (12, 0, ("SM", "CM"))


def test_redacted_values_are_none() -> None:
    r = rdma_link.parse("link mlx5_0/1 subnet_prefix xxxx:xxxx lid ... sm_lid * lmc 0 state ACTIVE "
                        "physical_state LINK_UP netdev <redacted>\n"
                        "link xxxx/1 state DOWN physical_state POLLING netdev XXXX\n"
                        "link mlx5_2/1 state ACTIVE physical_state LINK_UP netdev \u2026\n")
    a, b, c = r.links
    assert (a.lid, a.sm_lid, a.lmc, a.netdev, a.link_layer) == (None, None, 0, None, "InfiniBand")
    assert a.subnet_prefix == "xxxx:xxxx"  # partly masked: kept as printed
    assert (b.device, b.netdev, b.state, b.software) == (None, None, "Down", False)
    assert c.netdev is None and c.link_layer == "Ethernet"  # the netdev was printed, only its name hidden
    assert any("redacted" in n for n in r.notes)


def test_quoted_reply_lines() -> None:
    r = rdma_link.parse("> $ rdma link\n> link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev eth2\n")
    assert [(lk.device, lk.netdev, lk.line_no) for lk in r.links] == [("mlx5_0", "eth2", 2)]


def test_rdma_errors_are_kept() -> None:
    r = rdma_link.parse("$ rdma link show mlx5_9/1\nWrong device name\n")
    assert r.links == () and [(e.line_no, e.text) for e in r.errors] == [(2, "Wrong device name")]


def test_truncated_line_and_unknown_field_are_noted_not_fatal() -> None:
    r = rdma_link.parse("link mlx5_0/1 state ACTIVE physical_state LINK_UP speed 400 netdev ib0\n"
                        "link mlx5_9/1 subnet_prefix fe80:0000:0000:0000 lid 65535 sm_lid 0 lmc 0 state DOWN physical_s\n")
    a, b = r.links
    assert (a.netdev, b.state, b.physical_state) == ("ib0", "Down", None)
    assert any("unknown field 'speed'" in n for n in r.notes) and any("physical_s" in n for n in r.notes)


def test_crlf_tabs_ansi_and_streaming() -> None:
    text = load(DGX)
    base = rdma_link.parse(text)
    assert rdma_link.parse(text.replace("\n", "\r\n")).links == base.links
    assert rdma_link.parse("\x1b[0m" + text).links == base.links
    assert rdma_link.parse(text.replace(" ", "\t")).links == base.links
    assert rdma_link.parse_lines(iter(text.splitlines(keepends=True))) == base


# -- refusals ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,line_no", [
    ("", 0),
    ("\n\nCA 'mlx5_0'\n\tCA type: MT4129\n", 3),
    ("2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP\n    link/ether 9c:63:c0:c5:47:a4 brd ff:ff:ff:ff:ff:ff\n", 1),
    ("mlx5_0 port 1 ==> ens7f0np0 (Down)\n", 1),  # ibdev2netdev
    ("link mlx5_7/1 is flapping again\n", 1),  # prose that names a port
])
def test_text_of_other_tools_is_refused(text: str, line_no: int) -> None:
    with pytest.raises(ParseError) as info:
        rdma_link.parse(text)
    assert info.value.line_no == line_no


def test_json_of_other_tools_is_refused() -> None:
    ip_j = '[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP"],"mtu":65536,"operstate":"UNKNOWN"}]'
    with pytest.raises(ParseError) as info:
        rdma_link.parse("$ ip -j link\n" + ip_j + "\n")
    assert info.value.line_no == 2
    dev_j = '[{"ifindex":0,"ifname":"mlx5_0","node_type":"ca","fw":"28.39.2048","node_guid":"58a2:e103:002a:09b8"}]'
    with pytest.raises(ParseError):
        rdma_link.parse(dev_j)


def test_broken_rdma_json_names_its_line() -> None:
    with pytest.raises(ParseError) as info:
        rdma_link.parse('x\n[{"ifindex":0,"ifname":"mlx5_0","port":1,"state":"ACTIVE","physical_state":"LINK_')
    assert info.value.line_no == 2


def test_non_numeric_lid_is_refused_with_its_line() -> None:
    with pytest.raises(ParseError) as info:
        rdma_link.parse("link mlx5_0/1 state ACTIVE\nlink mlx5_1/1 lid 0xzz state ACTIVE\n")
    assert info.value.line_no == 2


# -- sniffing --------------------------------------------------------------------------------------

RDMA_FIXTURES = sorted(p.name for p in DIR.glob("*.txt"))
IB_TOOL_FIXTURES = [f for f in parser_fixtures() if f.source in ("ibstat", "ibstatus", "ibv_devinfo")]


@pytest.mark.parametrize("name", RDMA_FIXTURES)
def test_detect_picks_rdma_link(name: str) -> None:
    assert detect(load(name)) == "rdma_link"


@pytest.mark.parametrize("fx", IB_TOOL_FIXTURES, ids=lambda f: f.id)
def test_sniff_stays_quiet_on_the_ib_tools(fx) -> None:
    text = blank_provenance_header(fx.text())
    assert rdma_link.sniff(text) == 0.0
    assert detect(text) != "rdma_link"


def test_sniff_values() -> None:
    assert rdma_link.sniff("link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev p1p1 \n") == 0.9
    assert rdma_link.sniff("  8/1: mlx5_bond_0/1: state ACTIVE physical_state LINK_UP netdev reth0\n") == 0.9
    assert rdma_link.sniff('[{"ifindex":0,"ifname":"mlx5_0","port":1,"state":"ACTIVE","physical_state":"LINK_UP"}]') == 0.85
    assert rdma_link.sniff("    link/ether 08:00:27:36:f4:fc brd ff:ff:ff:ff:ff:ff\n") == 0.0
    assert rdma_link.sniff("mlx5_0 port 1 ==> ens7f0np0 (Up)\n") == 0.0
    assert rdma_link.sniff("\x00\xff" * 100) == 0.0


def test_info() -> None:
    assert rdma_link.SOURCE == rdma_link.INFO.source == "rdma_link"
    assert rdma_link.INFO.argv == () and rdma_link.INFO.timeout_s == 10.0  # files only for now (see INFO)
    assert get("rdma_link") is rdma_link


# -- the model -------------------------------------------------------------------------------------

def built(*names: str):
    inputs = [ParsedInput("rdma_link", str(DIR / n), rdma_link.parse(load(n))) for n in names]
    return build(inputs)


def test_model_nic_ports_from_rdma_link() -> None:
    topo = built(DGX)
    assert topo.nics() == [f"nic:mlx5_{i}" for i in range(9)]
    p = topo.node("nic:mlx5_1")["ports"]["1"]
    assert (p["state"], p["physical_state"], p["link_layer"], p["base_lid"], p["sm_lid"], p["lmc"]) == (
        "Down", "Disabled", "InfiniBand", 65535, 0, 0)
    assert p["printed_by"] == "rdma_link" and p["state_raw"] == "DOWN"
    assert p["sources"][0]["source"] == "rdma_link" and p["sources"][0]["line_no"] == 17
    roce = topo.node("nic:mlx5_4")
    assert roce["netdevs"] == ["enp97s0f0"] and roce["ports"]["1"]["netdev"] == "enp97s0f0"
    assert "software_rdma" not in roce
    ports = topo.ib_ports()
    assert len(ports) == 9
    assert [(nic, p["port"], p["state"]) for nic, p in ports if p["state"] != "Active"] == [
        (f"nic:mlx5_{i}", 1, "Down") for i in (1, 3, 5, 7)]
    assert topo.conflicts() == []


def test_model_software_rdma_and_last_run_wins() -> None:
    topo = built(RXE, FLAP)
    assert topo.node("nic:rxe_0")["software_rdma"] is True
    assert topo.node("nic:rxe_0")["netdevs"] == ["p1p1"]
    [(nic, port)] = [(n, p) for n, p in topo.ib_ports() if n == "nic:mlx5_7"]
    assert (port["state"], port["physical_state"], port["line_no"]) == ("Active", "LinkUp", 20)
    assert topo.conflicts() == []


def test_model_agrees_with_ibstat_on_a_shared_port() -> None:
    ibstat = get("ibstat").parse(
        "CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Active\n"
        "\t\tPhysical state: LinkUp\n\t\tRate: 200\n\t\tBase lid: 3\n\t\tLMC: 0\n\t\tSM lid: 1\n"
        "\t\tLink layer: InfiniBand\n")
    rdma = rdma_link.parse("link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 3 sm_lid 1 lmc 0 state ACTIVE "
                           "physical_state LINK_UP netdev ibp12s0 \n")
    topo = build([ParsedInput("rdma_link", "r.txt", rdma), ParsedInput("ibstat", "i.txt", ibstat)])
    p = topo.node("nic:mlx5_0")["ports"]["1"]
    assert (p["rate_gbps"], p["netdev"], p["base_lid"], p["printed_by"]) == (200.0, "ibp12s0", 3, "ibstat")
    assert [s["source"] for s in p["sources"]] == ["ibstat", "rdma_link"]
    assert topo.conflicts() == []


def test_model_skips_redacted_devices() -> None:
    topo = build([ParsedInput("rdma_link", "r.txt", rdma_link.parse("link xxxx/1 state ACTIVE physical_state LINK_UP\n"))])
    assert topo.nics() == [] and any("redacted" in n for n in topo.notes)


def test_model_keeps_rdma_errors_as_observation() -> None:
    topo = build([ParsedInput("rdma_link", "r.txt", rdma_link.parse("Wrong device name\n"))],
                 host="n1")
    [obs] = topo.observations("rdma_link")
    assert obs["errors"] == [{"line_no": 1, "text": "Wrong device name"}]
