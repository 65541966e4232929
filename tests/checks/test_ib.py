"""IB001-IB005 on real fixtures, beyond the catalog examples: hand-checked findings, severities,
messages, and the profile-driven expectations (which examples cannot pass in)."""

from __future__ import annotations

from pathlib import Path

import pytest

from topodiag import parsers
from topodiag.checks import ib
from topodiag.engine import Severity, load_catalog, load_checks, run
from topodiag.model import build
from topodiag.model.combiners import combine
from topodiag.profiles import load_profiles
from topodiag.records import ParsedInput

REPO = Path(__file__).resolve().parents[2]


def parsed_of(*files: str, inline: dict | None = None) -> list[ParsedInput]:
    items = []
    for rel in files:
        source = Path(rel).parent.name
        text = (REPO / rel).read_text(encoding="utf-8", errors="replace")
        items.append(ParsedInput(source, rel, parsers.get(source).parse(parsers.blank_provenance_header(text))))
    for source, text in (inline or {}).items():
        items.append(ParsedInput(source, None, parsers.get(source).parse(text)))
    return items


def topo_of(*files: str, inline: dict | None = None):
    return build(parsed_of(*files, inline=inline))


def with_views(inputs: dict) -> dict:
    """The inputs plus their combined views (roce_gids, ib_links), as `check` assembles them."""
    return {**inputs, **combine(inputs)}


def findings(code: str, *files: str, profile=None, params=None, inline=None):
    """The code's findings, run through the engine so messages and severities are the final ones."""
    load_checks()
    items = parsed_of(*files, inline=inline)
    inputs = {"topology": build(items), **{i.source: i.result for i in items}}
    if profile is not None:
        inputs["profile"] = profile
    inputs.update(combine(inputs))
    config = {code: {"params": params}} if params else None
    outcome = run(load_catalog(REPO / "rules"), inputs, select=code, config=config)
    assert not outcome.crashes, outcome.crashes
    return [f for f in outcome.findings if f.code == code]


NDR = "fixtures/ibstat/ibstat-cx7-ndr-400-ib-active-h20-01.txt"
B300 = "fixtures/ibstat/ibstat-b300-cx8-disabled-cx7-100g-11ca-01.txt"
CX6_DISABLED = "fixtures/ibstat/ibstat-cx6-hdr-one-port-disabled-01.txt"
CX4LX_MIXED = "fixtures/ibstat/ibstat-cx4lx-eth-25g-plus-cx6-hdr-ib-4ca-01.txt"
ROCE = "fixtures/ibstat/ibstat-cx6dx-roce-ethernet-100g-01.txt"
GPUD = "fixtures/ibstat/ibstat-gpud-a100-8ca-ibpanic-mlx5_8-01.txt"
AZURE = "fixtures/ibstat/ibstat-azure-initializing-ibpanic-an0-ibstatus-01.txt"
VF = "fixtures/ibstat/ibstat-cx6-vf-ib-state-down-physical-linkup-01.txt"
MLX4 = "fixtures/ibstat/ibstat-invented-mlx4-dual-port-polling-crlf-01.txt"
FULL = "fixtures/ibv_devinfo/ibv_devinfo-v-invented-cx7-ib-roce-full-01.txt"
NO_DEV = "fixtures/ibv_devinfo/ibv_devinfo-invented-no-devices-driver-warning-01.txt"
NO_SYSFS = "fixtures/ibstatus/ibstatus-error-no-sysfs-01.txt"


@pytest.mark.parametrize("code", ["IB001", "IB002", "IB003", "IB004", "IB005"])
def test_healthy_ndr_gives_nothing_even_under_the_dgx_h100_profile(code):
    assert findings(code, NDR) == []
    assert findings(code, NDR, profile=load_profiles()["dgx-h100"]) == []


def test_ib001_b300_seven_cx8_disabled_are_errors_and_the_cx7s_are_fine():
    found = findings("IB001", B300)
    assert sorted(s for f in found for s in f.subjects) == sorted(
        f"nic:mlx5_{i}" for i in (0, 1, 6, 7, 8, 9, 10))
    assert {f.severity for f in found} == {Severity.ERROR}
    assert "mlx5_0 port 1 is Down / Disabled (InfiniBand)" in found[0].message


def test_ib001_disabled_second_port_of_an_active_card_is_a_warning():
    (f,) = findings("IB001", CX6_DISABLED)
    assert f.subjects == ("nic:mlx5_1",) and f.severity is Severity.WARNING
    assert "Down / Disabled" in f.message and "mlx5_0 port 1" in f.message and "NCCL_IB_HCA" in f.message
    assert f.evidence[0].line_no is not None


def test_ib001_sm_not_activating_and_polling_are_errors_with_both_states():
    (vf,) = findings("IB001", VF)
    assert vf.severity is Severity.ERROR and "Down / LinkUp" in vf.message and "subnet manager" in vf.message
    (az,) = findings("IB001", AZURE)
    assert az.subjects == ("nic:mlx5_ib0",) and "Initializing / LinkUp" in az.message
    (pl,) = findings("IB001", MLX4)
    assert pl.severity is Severity.ERROR and "port 2 is Down / Polling" in pl.message
    assert "link partner" in pl.message


def test_ib001_mixed_host_both_disabled_ports_are_spares():
    found = findings("IB001", CX4LX_MIXED)
    assert {f.subjects[0]: f.severity for f in found} == {"nic:mlx5_1": Severity.WARNING,
                                                          "nic:mlx5_3": Severity.WARNING}


def test_ib002_b300_cx7s_below_their_ndr_capability_as_one_warning():
    (f,) = findings("IB002", B300)
    assert f.subjects == ("nic:mlx5_2", "nic:mlx5_3", "nic:mlx5_4", "nic:mlx5_5")
    assert f.severity is Severity.WARNING
    assert "100 Gb/s (EDR, 12.5 GB/s) is below the 400 Gb/s (NDR, 50 GB/s)" in f.message
    assert "ConnectX-7" in f.message


def test_ib002_profile_expectation_is_an_error_and_named():
    h100 = load_profiles()["dgx-h100"]
    (f,) = findings("IB002", GPUD, profile=h100)
    assert len(f.subjects) == 8 and f.severity is Severity.ERROR
    assert "200 Gb/s (HDR, 25 GB/s) is below the 400 Gb/s (NDR, 50 GB/s) of profile dgx-h100" in f.message
    assert f.expectation == "profile dgx-h100: nic_rate_gbps = 400"
    # the A100 profile expects HDR 200: the same host passes
    assert findings("IB002", GPUD, profile=load_profiles()["dgx-a100"]) == []


def test_ib002_ethernet_ports_are_not_held_to_an_infiniband_profile():
    assert findings("IB002", ROCE, profile=load_profiles()["dgx-h100"]) == []


def _ca(name: str, ca_type: str, rate: int, layer: str = "InfiniBand", fw: str = "28.39.2048") -> str:
    return (f"CA '{name}'\n\tCA type: {ca_type}\n\tNumber of ports: 1\n\tFirmware version: {fw}\n"
            f"\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: {rate}\n"
            f"\t\tBase lid: 5\n\t\tSM lid: 1\n\t\tLink layer: {layer}\n")


def test_ib002_peer_same_model_is_an_error_other_model_a_warning():
    assert findings("IB002", FULL) == []  # 400 IB and 200 RoCE are different link layers
    (same,) = findings("IB002", inline={"ibstat": _ca("mlx5_0", "MT4129", 400) + _ca("mlx5_1", "MT4129", 200)})
    assert same.subjects == ("nic:mlx5_1",) and same.severity is Severity.ERROR
    assert "best InfiniBand port on the host (mlx5_0 port 1, same HCA model)" in same.message
    (other,) = findings("IB002", inline={"ibstat": _ca("mlx5_0", "MT4129", 400) + _ca("mlx5_1", "MT4123", 200)})
    assert other.subjects == ("nic:mlx5_1",) and other.severity is Severity.WARNING


def test_ib002_site_param_wins():
    (f,) = findings("IB002", NDR, params={"expected_rate_gbps": 800})
    assert "of the site config" in f.message and f.expectation == "params.expected_rate_gbps"


def test_ib003_mixed_without_profile_is_a_warning_and_names_both_sides():
    (f,) = findings("IB003", CX4LX_MIXED)
    assert f.subjects == ("nic:mlx5_0",) and f.severity is Severity.WARNING
    assert "mlx5_0 port 1" in f.message and "InfiniBand ports: mlx5_2 port 1" in f.message


def test_ib003_roce_only_passes_unless_the_profile_says_infiniband():
    assert findings("IB003", ROCE) == []
    (f,) = findings("IB003", ROCE, profile=load_profiles()["dgx-h100"])
    assert f.severity is Severity.ERROR and f.subjects == ("nic:mlx5_0", "nic:mlx5_1")
    assert "profile dgx-h100 expects InfiniBand" in f.message and "InfiniBand ports: none" in f.message


def _devinfo_ca(name: str, fw: str, board: str) -> str:
    return (f"hca_id:\t{name}\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t{fw}\n"
            f"\tvendor_id:\t\t\t0x02c9\n\tvendor_part_id:\t\t\t4129\n\tboard_id:\t\t\t{board}\n"
            f"\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n"
            f"\t\t\tphys_state:\t\tLINK_UP (5)\n\t\t\tlink_layer:\t\tInfiniBand\n\n")


def test_ib004_names_the_lagging_firmware_among_cards_of_one_board():
    text = (_devinfo_ca("mlx5_0", "28.39.2048", "MT_0000000838") + _devinfo_ca("mlx5_1", "28.36.1010", "MT_0000000838")
            + _devinfo_ca("mlx5_2", "28.39.2048", "MT_0000000838"))
    (f,) = findings("IB004", inline={"ibv_devinfo": text})
    assert f.subjects == ("nic:mlx5_1",) and f.severity is Severity.WARNING
    assert f.message == ("ConnectX-7 (MT4129) HCAs differ in firmware: 28.39.2048 on mlx5_0, mlx5_2; "
                         "28.36.1010 on mlx5_1")


def test_ib004_cards_of_another_board_id_are_not_compared():
    # FULL: mlx5_0/mlx5_1 (PSID MT_0000000838) on 28.39.2048, rocep1s0f0 (NVD0000000087) on 28.45.4028
    assert findings("IB004", FULL) == []
    # with two boards on the host, a lagging card is still found among the cards of its own board
    text = (_devinfo_ca("mlx5_0", "28.39.2048", "MT_0000000838") + _devinfo_ca("mlx5_1", "28.36.1010", "MT_0000000838")
            + _devinfo_ca("mlx5_2", "28.39.2048", "MT_0000000838") + _devinfo_ca("mlx5_3", "28.45.4028", "NVD0000000087"))
    (f,) = findings("IB004", inline={"ibv_devinfo": text})
    assert f.subjects == ("nic:mlx5_1",)
    assert f.message == ("ConnectX-7 (MT4129, board MT_0000000838) HCAs differ in firmware: "
                         "28.39.2048 on mlx5_0, mlx5_2; 28.36.1010 on mlx5_1")


def test_ib004_different_models_are_not_compared():
    """Firmware and rate are compared within a model only; two models with Active ports are named once,
    as info when they are on different link layers (CX4 Lx Ethernet beside CX6 InfiniBand)."""
    assert findings("IB004", B300) == []  # the ConnectX-8s have no Active port: IB001's business
    (f,) = findings("IB004", CX4LX_MIXED)
    assert f.severity is Severity.INFO and "differ in" not in f.message
    assert f.message.startswith("Active ports of more than one HCA family on the host: ConnectX-6 (MT4123)")
    assert "ConnectX-4 Lx (MT4117)" in f.message and "NCCL_IB_HCA=^" in f.message


def test_ib005_no_device_is_an_error_with_the_provider_hint():
    (f,) = findings("IB005", NO_DEV)
    assert f.severity is Severity.ERROR and f.subjects == ("host:local",)
    assert f.message.startswith("ibv_devinfo line 6: No IB devices found: no RDMA device")
    assert "libmlx5-rdmav34.so" in f.message and "NET/Socket" in f.message
    (g,) = findings("IB005", NO_SYSFS)
    assert g.severity is Severity.ERROR and "sys files not found" in g.message


def test_ib005_ibpanic_is_a_warning_or_info_when_another_block_lists_the_device():
    (f,) = findings("IB005", GPUD)
    assert f.subjects == ("nic:mlx5_8",) and f.severity is Severity.WARNING
    (g,) = findings("IB005", AZURE)
    assert g.subjects == ("nic:mlx5_an0",) and g.severity is Severity.INFO


def test_rate_names():
    assert ib.rate_name(400) == "NDR" and ib.rate_name(56) == "FDR" and ib.rate_name(25) == "25G"
    assert ib.rate_name(None) == "unknown"


def test_ib003_extra_ethernet_ports_pass_when_the_profile_rails_are_all_infiniband():
    import dataclasses

    one_rail = dataclasses.replace(load_profiles()["dgx-h100"], nics=1)
    assert findings("IB003", FULL, profile=one_rail) == []  # 1 IB rail as expected; RoCE = storage
    (f,) = findings("IB003", FULL, profile=load_profiles()["dgx-h100"])  # 1 of 8 rails: error
    assert f.severity is Severity.ERROR and "1 InfiniBand port(s) of the 8 compute NICs expected" in f.message


def _gids(source: str, rel: str):
    load_checks()
    text = (REPO / rel).read_text(encoding="utf-8", errors="replace")
    parsed = parsers.get(source).parse(parsers.blank_provenance_header(text))
    outcome = run(load_catalog(REPO / "rules"), with_views({source: parsed}), select="IB006")
    assert not outcome.crashes, outcome.crashes
    return [f for f in outcome.findings if f.code == "IB006"]


def test_ib006_pods_with_different_gid_indexes():
    """multus-cni #1100 (corpus): pod 1's IPv4 RoCE v2 GID (172.20.1.1) at index 5, pod 2's (172.20.1.2) at 7."""
    [f] = _gids("show_gids", "fixtures/show_gids/show_gids-roce-macvlan-pods-01.txt")
    assert f.severity == Severity.WARNING and f.subjects == ("nic:mlx5_4",)
    assert "index 5 on mlx5_4:1 (table 1) 172.20.1.1; 7 on mlx5_4:1 (table 2) 172.20.1.2" in f.message


def test_ib006_names_the_index_to_use_and_skips_the_cut_port():
    """nccl #1538 (corpus): index 7 is the IPv4 RoCE v2 GID on mlx5_0..2; the paste stops inside mlx5_3
    (only its fe80 rows 4/5 shown), which must not be called link-local only."""
    [f] = _gids("show_gids", "fixtures/show_gids/show_gids-roce-8nic-01.txt")
    assert f.severity == Severity.INFO and f.subjects == ("nic:mlx5_0", "nic:mlx5_1", "nic:mlx5_2")
    assert "NCCL_IB_GID_INDEX=7" in f.message and "index 5 is the link-local fe80:: RoCE v2 GID" in f.message


def test_ib006_from_ibv_devinfo_gid_types():
    """nccl #769 (corpus): GID[1] fe80:: RoCE v2 (not routable), GID[3] ::ffff:200.0.209.6 RoCE v2."""
    [f] = _gids("ibv_devinfo", "fixtures/ibv_devinfo/ibv_devinfo-v-gid-fragment-roce-bond-01.txt")
    assert f.severity == Severity.INFO and "NCCL_IB_GID_INDEX=3" in f.message and "200.0.209.6" in f.message
    assert "index 1 is the link-local" in f.message


def test_ib006_port_without_an_address():
    text = ("DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n"
            "mlx5_0\t1\t0\tfe80:0000:0000:0000:0ac0:ebff:fe21:03da\t\t\tv1\trdma0\n"
            "mlx5_0\t1\t1\tfe80:0000:0000:0000:0ac0:ebff:fe21:03da\t\t\tv2\trdma0\n"
            "n_gids_found=2\n")
    load_checks()
    outcome = run(load_catalog(REPO / "rules"), with_views({"show_gids": parsers.get("show_gids").parse(text)}),
                  select="IB006")
    [f] = outcome.findings
    assert f.severity == Severity.WARNING and "mlx5_0:1 has only link-local (fe80::) RoCE v2 GIDs" in f.message


def test_ib001_lone_disabled_card_of_another_model_is_a_warning():
    """Mooncake #1999 (corpus): mlx5_0/mlx5_1 ConnectX-7 (MT4129) Active at 200 Gb/s Ethernet, mlx5_10 a
    ConnectX-6 Dx (MT4125) Down / Disabled: an extra card to leave out of NCCL_IB_HCA, not a dead rail."""
    [f] = findings("IB001", "fixtures/ibstat/ibstat-cx7-roce-200g-mixed-cx6dx-disabled-01.txt")
    assert f.subjects == ("nic:mlx5_10",) and f.severity == Severity.WARNING
    assert "the host's only ConnectX-6 Dx (MT4125) port next to 2 Active ConnectX-7 (MT4129) port(s)" in f.message


def test_ib001_b300_disabled_rails_outnumber_the_active_model_and_stay_errors():
    found = findings("IB001", B300)
    assert len(found) == 7 and {f.severity for f in found} == {Severity.ERROR}
    assert not [f for f in found if "spare card" in f.message]


def _fabric(source: str, rel: str):
    load_checks()
    text = (REPO / rel).read_text(encoding="utf-8", errors="replace")
    parsed = parsers.get(source).parse(parsers.blank_provenance_header(text))
    outcome = run(load_catalog(REPO / "rules"), with_views({source: parsed}), select="IB007")
    assert not outcome.crashes, outcome.crashes
    return [f for f in outcome.findings if f.code == "IB007"]


def test_ib007_two_1x_sdr_links_each_reported_once():
    """ibnetdiscover man page (corpus): SW-6IB4 port 1 -> ISR9024 port 10 and HCA ...0558 port 1 ->
    ISR9024 port 12 are 1xSDR on one end's line (the ISR9024's own lines say 4xSDR): one finding,
    two links, the narrower report kept."""
    [f] = _fabric("ibnetdiscover", "fixtures/ibnetdiscover/ibnetdiscover-manpage-example-sdr-1x-links-01.txt")
    assert f.severity == Severity.WARNING and f.message.startswith("2 fabric link(s) trained narrower than 4X")
    assert "ISR9024 Voltaire port 10 <-> SW-6IB4 Voltaire port 1 at 1X SDR (2.5 Gb/s of 10)" in f.message
    assert "ISR9024 Voltaire port 12 <-> MT23108 InfiniHost Mellanox Technologies port 1 at 1X SDR" in f.message


def test_ib007_could_be_and_healthy_mixed_generations():
    """Ports 21-24 of the Quantum switch: EDR host links, iblinkinfo 'Could be 53.125 Gbps'; the
    corpus EDR+HDR fabric (EDR hosts, HDR Aggregation Node) is healthy."""
    [f] = _fabric("iblinkinfo", "fixtures/iblinkinfo/iblinkinfo-hdr-quantum-edr-hosts-could-be-01.txt")
    assert f.message.startswith("4 fabric link(s) trained below what both ends support")
    assert [s.split(" port ")[-1] for s in f.subjects] == ["21", "22", "23", "24"]
    assert _fabric("iblinkinfo", "fixtures/iblinkinfo/iblinkinfo-edr-hdr-switch-01.txt") == []
    assert _fabric("iblinkinfo", "fixtures/iblinkinfo/iblinkinfo-edr-sb7700-down-polling-01.txt") == []  # Polling = empty


def test_ib007_a_ddr_link_among_edr_and_an_isolated_ca():
    [f] = _fabric("ibnetdiscover", "fixtures/ibnetdiscover/ibnetdiscover-edr-switchib-4xddr-link-01.txt")
    assert "far below the fabric's common 100 Gb/s" in f.message and "at 20 Gb/s (DDR)" in f.message
    assert "5x slower" in f.message
    [f] = _fabric("ibnetdiscover", "fixtures/ibnetdiscover/ibnetdiscover-gb200-single-ca-no-links-01.txt")
    assert f.severity == Severity.ERROR and "dgx-gb200-n01-c1 HCA-1 (CA, 1 port(s)) has no connection" in f.message


SOFT = "fixtures/rdma_link/rdma_link-invented-details-siw-rxe-caps-01.txt"


def test_software_rdma_devices_are_no_hca_ports():
    # mlx5_0/1 IB ACTIVE; siw0/1 (Soft iWARP) ACTIVE on ens33; rxe_eth1/1 (Soft RoCE) DOWN / DISABLED on eth1
    assert findings("IB001", SOFT) == []  # the disabled rxe port is no HCA port down
    assert findings("IB003", SOFT) == []  # siw0 / rxe are no RoCE rails beside the IB HCA
    t = topo_of(SOFT)
    assert [p["name"] for p in ib._ports(t)] == ["mlx5_0"]
    assert {n: t.node(n).get("software_rdma_kind") for n in t.nics()} == {
        "nic:mlx5_0": None, "nic:rxe_eth1": "Soft RoCE (rxe)", "nic:siw0": "Soft iWARP (siw)"}


def test_software_rdma_recognised_by_vendor_id_when_renamed():
    # an rxe device named 'softroce0' (rdma link add softroce0 type rxe netdev eth1): rxe's vendor id 0xffffff
    soft = ("hca_id:\tsoftroce0\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t0.0.0\n"
            "\tvendor_id:\t\t\t0xffffff\n\tvendor_part_id:\t\t\t0\n\tphys_port_cnt:\t\t\t1\n"
            "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tphys_state:\t\tDISABLED (3)\n"
            "\t\t\tlink_layer:\t\tEthernet\n\n")
    t = topo_of(inline={"ibv_devinfo": _devinfo_ca("mlx5_0", "28.39.2048", "MT_0000000838") + soft})
    assert t.node("nic:softroce0")["software_rdma"] is True
    assert t.node("nic:softroce0")["software_rdma_kind"] == "Soft RoCE (rxe)"
    assert "software_rdma" not in t.node("nic:mlx5_0")
    assert findings("IB001", inline={"ibv_devinfo": soft}) == []
    # the same port on a hardware card is an IB001 error
    (f,) = findings("IB001", inline={"ibv_devinfo": soft.replace("0xffffff", "0x02c9")})
    assert f.subjects == ("nic:softroce0",) and f.severity is Severity.ERROR
