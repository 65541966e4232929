"""sysfs_infiniband: the probe JSON becomes the records ibstat / show_gids give for the same
machine (so the model merges them alike), plus the PCI placement; refusals with line numbers."""

from __future__ import annotations

import json

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect, ibstat, show_gids, sysfs_infiniband
from tests.fixtures_index import FIXTURES

SAME_FACTS_CA = ("name", "node_type", "type", "firmware", "node_guid", "system_guid")
SAME_FACTS_PORT = ("port", "state", "physical_state", "rate_gbps", "link_layer", "base_lid", "sm_lid", "lmc",
                   "capability_mask", "port_guid")


def load(name: str) -> str:
    return blank_provenance_header((FIXTURES / "sysfs_infiniband" / f"{name}.json").read_text())


def parsed(name: str) -> sysfs_infiniband.SysfsInfinibandReport:
    return sysfs_infiniband.parse(load(name))


def ibstat_cas(name: str) -> dict:
    r = ibstat.parse(blank_provenance_header((FIXTURES / "ibstat" / name).read_text()))
    return {c.name: c for c in r.cas}


def same_facts(ours, theirs) -> None:
    for key in SAME_FACTS_CA:
        assert getattr(ours, key) == getattr(theirs, key), (ours.name, key)
    for p, q in zip(ours.ports, theirs.ports):
        for key in SAME_FACTS_PORT:
            if getattr(q, key) is not None:  # what ibstat printed, sysfs says alike
                assert getattr(p, key) == getattr(q, key), (ours.name, key)


def test_ndr_host_matches_ibstat() -> None:
    r = parsed("hgx-h100-cx7-ndr-8rail")
    assert (r.source, r.probe, r.ok, r.errors) == ("sysfs_infiniband", "sysfs", True, ())
    theirs = ibstat_cas("ibstat-cx7-ndr-400-ib-active-h20-01.txt")
    ours = {c.name: c for c in r.cas}
    assert len(ours) == 8
    for name in ("mlx5_0", "mlx5_1", "mlx5_2"):
        same_facts(ours[name], theirs[name])
    m0 = ours["mlx5_0"]
    assert (m0.printed_by, m0.num_ports, m0.hardware_version, m0.line_no) == ("sysfs", 1, "0x0", 14)
    [p] = m0.ports
    assert (p.rate_raw, p.active_width, p.active_speed_gbps) == ("400 Gb/sec (4X NDR)", "4X", 100.0)
    assert p.default_gid == "fe80:0000:0000:0000:a088:c203:0074:cfda"
    assert [(g.index, g.type) for g in p.gids] == [(0, "IB")]
    assert p.state_raw == "4: ACTIVE" and p.physical_state_raw == "5: LinkUp"
    assert {h.name: (h.pci_address, h.numa_node) for h in r.hcas}["mlx5_4"] == ("0000:94:00.0", 1)
    assert (r.hostname, r.kernel_release) == ("hgx-h100-01", "5.15.0-105-generic")


def test_ndr_host_pci_records() -> None:
    r = parsed("hgx-h100-cx7-ndr-8rail")
    gpus = [p for p in r.pci if p.kind == "gpu"]
    assert len(gpus) == 8 and all(g.device == "0x2330" and g.pci_class == "0x030200" for g in gpus)
    hca0 = next(p for p in r.pci if p.rdma_devices == ("mlx5_0",))
    assert hca0.path[:3] == gpus[0].path[:3] and hca0.path[-1] == hca0.bdf == "0000:14:00.0"
    assert (hca0.current_link_speed_gts, hca0.current_link_width, hca0.max_link_width) == (32.0, 16, 16)
    assert hca0.line_no > r.cas[-1].ports[-1].line_no


def test_roce_host_matches_ibstat() -> None:
    r = parsed("roce-cx7-200g-cx6dx-disabled")
    theirs = ibstat_cas("ibstat-cx7-roce-200g-mixed-cx6dx-disabled-01.txt")
    ours = {c.name: c for c in r.cas}
    assert list(ours) == ["mlx5_0", "mlx5_1", "mlx5_10"]
    for name in ours:
        same_facts(ours[name], theirs[name])
    assert ours["mlx5_10"].ports[0].state == "Down" and ours["mlx5_10"].ports[0].physical_state == "Disabled"
    assert [(g.index, g.type) for g in ours["mlx5_0"].ports[0].gids] == [(0, "RoCE v1"), (1, "RoCE v2")]


def test_pod_gid_tables_match_show_gids() -> None:
    r = parsed("roce-pod-show-gids")
    [table] = show_gids.parse(blank_provenance_header(
        (FIXTURES / "show_gids" / "show_gids-roce-8nic-01.txt").read_text())).tables
    ours = {(c.name, g.index): (g.gid, g.type) for c in r.cas for p in c.ports for g in p.gids}
    netdevs = {(n.device, n.index): n.ndev for n in r.gid_netdevs}
    assert len(ours) == len(table.rows) == 14
    for row in table.rows:
        assert ours[(row.device, row.index)] == (row.gid, row.type)
        assert netdevs[(row.device, row.index)] == row.netdev
    assert {h.name: [n.name for n in h.netdevs] for h in r.hcas} == {
        "mlx5_0": ["net1"], "mlx5_1": ["net2"], "mlx5_2": ["net3"], "mlx5_3": ["net4"]}


def test_initializing_port_matches_ibstat() -> None:
    r = parsed("azure-ib-initializing-an0")
    theirs = ibstat_cas("ibstat-azure-initializing-ibpanic-an0-ibstatus-01.txt")
    ours = {c.name: c for c in r.cas}
    same_facts(ours["mlx5_ib0"], theirs["mlx5_ib0"])
    p = ours["mlx5_ib0"].ports[0]
    assert (p.state, p.physical_state, p.base_lid) == ("Initializing", "LinkUp", 65535)
    an0 = ours["mlx5_an0"].ports[0]
    assert (an0.state, an0.base_lid, an0.sm_lid, an0.default_gid) == ("Active", 0, 0, None)
    assert {h.name: h.numa_node for h in r.hcas} == {"mlx5_an0": None, "mlx5_ib0": None}


def test_no_hca_and_x8_gpu() -> None:
    r = parsed("no-hca-mlx4-unbound")
    assert r.ok and r.cas == () and r.hostname == "node045"
    [nic] = r.pci
    assert (nic.kind, nic.driver, nic.rdma_devices) == ("nic", None, ())
    r = parsed("a100pcie-gpu1-x8")
    assert [(g.bdf, g.current_link_width, g.max_link_width) for g in r.pci] == [
        ("0000:69:00.0", 16, 16), ("0000:b1:00.0", 8, 16)]


def test_pyverbs_probe_json_is_marked_and_matches_ibstat() -> None:
    r = parsed("pyverbs-h20-cx7-ndr")
    assert r.probe == "pyverbs" and r.pci == () and r.root is None
    theirs = ibstat_cas("ibstat-cx7-ndr-400-ib-active-h20-01.txt")
    for ca in r.cas:
        assert ca.printed_by == "pyverbs"
        same_facts(ca, theirs[ca.name])
    assert (r.cas[0].vendor_id, r.cas[0].vendor_part_id, r.cas[0].ports[0].active_mtu) == ("0x02c9", 4129, 4096)
    r = parsed("pyverbs-no-rdma-devices")
    assert (r.ok, r.cas) == (False, ())
    [err] = r.errors
    assert err.text == "pyverbs probe: no RDMA devices (Failed to get devices list)" and err.line_no == 8


def test_detection() -> None:
    assert detect(load("roce-pod-show-gids")) == "sysfs_infiniband"
    assert detect(load("pyverbs-no-rdma-devices")) == "sysfs_infiniband"
    assert sysfs_infiniband.sniff("CA 'mlx5_0'\n\tCA type: MT4129\n") == 0.0
    assert sysfs_infiniband.sniff('{"infiniband": [], "x": 1}') == 0.5


def test_compact_json_parses_with_line_one() -> None:
    data = json.loads(load("azure-ib-initializing-an0"))
    r = sysfs_infiniband.parse(json.dumps(data))
    assert [c.line_no for c in r.cas] == [1, 1] and r.cas[1].ports[0].line_no == 1


@pytest.mark.parametrize("text, line_no, contains", [
    ("", 0, "found no text"),
    ("   \n\n", 0, "found no text"),
    ("{}", 1, '"probe": "sysfs" or "pyverbs"'),
    ('{"probe": "nvml", "schema_version": 1}', 1, '"probe": "sysfs" or "pyverbs"'),
    ("[1, 2]", 1, '"probe": "sysfs" or "pyverbs"'),
    ('{\n  "probe": "sysfs",\n  "schema_version": 2\n}', 3, "newer than this topodiag reads"),
    ('{"probe": "sysfs", "schema_version": "1"}', 1, "schema_version: expected a positive integer"),
    ('{\n  "probe": "sysfs",\n  "schema_version": 1,\n  "infiniband": [\n', 5, "expected a sysfs or pyverbs probe JSON"),
    ('{"probe": "sysfs", "schema_version": 1, "infiniband": [{"ports": []}]}', 1, "needs a name"),
    ('{"probe": "sysfs", "schema_version": 1, "infiniband": {}}', 1, "expected a list"),
    ('{"probe": "sysfs", "schema_version": 1, "pci": [{"bdf": 3}]}', 1, "pci[0].bdf: expected a string"),
    ('{"probe": "sysfs", "schema_version": 1, "ok": "yes"}', 1, "ok: expected true or false"),
    ('{"probe": "sysfs", "schema_version": 1, "pci": [{"bdf": "0000:01:00.0", "current_link_speed_gts": NaN}]}',
     1, "expected a number"),
    ("[" * 100000, 1, "expected a sysfs or pyverbs probe JSON"),
])
def test_refusals(text, line_no, contains) -> None:
    with pytest.raises(ParseError) as info:
        sysfs_infiniband.parse(text)
    assert info.value.line_no == line_no
    assert contains in info.value.message


def test_a_wrong_value_names_its_port_line() -> None:
    text = load("azure-ib-initializing-an0").replace('"lid": 65535', '"lid": "abc"')
    with pytest.raises(ParseError) as info:
        sysfs_infiniband.parse(text)
    assert "infiniband[1].ports[0].lid: expected an integer or null, found 'abc'" == info.value.message
    assert text.split("\n")[info.value.line_no - 1].strip() == '"port": 1,'
