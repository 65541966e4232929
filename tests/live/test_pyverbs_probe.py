"""The pyverbs probe over a fake pyverbs: devices, no devices (PyverbsRDMAError), import failing,
and bindings that fail or misbehave part way. Never needs rdma-core or an HCA."""

from __future__ import annotations

import json
import sys

from topodiag.parsers import blank_provenance_header
from topodiag.live import pyverbs_probe, sysfs_probe
from topodiag.live.pyverbs_probe import probe
from tests.fakes import fake_pyverbs
from tests.fakes.fake_pyverbs import FakeDevice, FakePort, PyverbsRDMAError
from tests.fixtures_index import FIXTURES


def test_devices_ports_and_gids() -> None:
    pv = fake_pyverbs.h20_cx7_ndr()
    r = probe(pv)
    assert (r["probe"], r["schema_version"], r["ok"], r["error"]) == ("pyverbs", 1, True, None)
    assert [d["name"] for d in r["infiniband"]] == ["mlx5_0", "mlx5_1"]
    m0 = r["infiniband"][0]
    assert (m0["node_type"], m0["node_guid"], m0["sys_image_guid"]) == ("CA", "0xa088c2030074cfda", "0xa088c2030074cfda")
    assert (m0["fw_ver"], m0["hw_rev"], m0["hca_type"], m0["vendor_id"], m0["vendor_part_id"]) == (
        "28.43.2026", "0x0", "MT4129", "0x02c9", 4129)
    assert m0["pci_address"] is None and m0["numa_node"] is None and m0["netdevs"] == []  # sysfs serves these
    [p] = m0["ports"]
    assert (p["state"], p["state_num"], p["state_raw"]) == ("Active", 4, "PORT_ACTIVE (4)")
    assert (p["phys_state"], p["phys_state_num"], p["phys_state_raw"]) == ("LinkUp", 5, "LINK_UP (5)")
    assert (p["rate_gbps"], p["active_width"], p["speed_name"], p["rate_raw"]) == (400.0, "4X", "NDR", None)
    assert (p["link_layer"], p["lid"], p["sm_lid"], p["lmc"], p["cap_mask"]) == ("InfiniBand", 50, 1, 0, "0xa751e848")
    assert (p["active_mtu"], p["max_mtu"], p["port_guid"]) == (4096, 4096, "0xa088c2030074cfda")
    assert p["gids"] == [{"index": 0, "gid": "fe80:0000:0000:0000:a088:c203:0074:cfda", "type": "IB",
                          "type_raw": "IB/RoCE v1", "ndev": None}]  # slot 1 (zero) left out
    assert sorted(pv.closed) == ["mlx5_0", "mlx5_1"]  # every Context closed


def test_same_infiniband_shape_as_the_sysfs_probe() -> None:
    pv = probe(fake_pyverbs.h20_cx7_ndr())["infiniband"][0]
    sysfs = sysfs_probe.probe(str(FIXTURES / "sysfs/hgx-h100-cx7-ndr-8rail"))["infiniband"][0]
    assert list(pv) == list(sysfs)
    assert list(pv["ports"][0]) == list(sysfs["ports"][0])
    assert list(pv["ports"][0]["gids"][0]) == list(sysfs["ports"][0]["gids"][0])
    for key in ("node_guid", "sys_image_guid", "fw_ver", "hca_type", "node_type"):
        assert pv[key] == sysfs[key], key
    for key in ("state", "state_num", "phys_state", "rate_gbps", "active_width", "speed_name", "link_layer",
                "lid", "sm_lid", "lmc", "cap_mask", "port_guid", "gids"):
        if key == "gids":
            assert [(g["index"], g["gid"], g["type"]) for g in pv["ports"][0][key]] == [
                (g["index"], g["gid"], g["type"]) for g in sysfs["ports"][0][key]]
        else:
            assert pv["ports"][0][key] == sysfs["ports"][0][key], key


def test_fixture_json_is_what_the_probe_gives() -> None:
    for name, pv in (("pyverbs-h20-cx7-ndr", fake_pyverbs.h20_cx7_ndr()),
                     ("pyverbs-no-rdma-devices",
                      fake_pyverbs.make([], list_error=PyverbsRDMAError("Failed to get devices list")))):
        text = (FIXTURES / "sysfs_infiniband" / f"{name}.json").read_text()
        assert json.loads(blank_provenance_header(text)) == probe(pv), name


def test_no_devices_is_not_available() -> None:
    r = probe(fake_pyverbs.make([], list_error=PyverbsRDMAError("Failed to get devices list")))
    assert (r["ok"], r["error"], r["infiniband"]) == (False, "no RDMA devices (Failed to get devices list)", [])
    r = probe(fake_pyverbs.make([]))  # an empty list, as a newer rdma-core gives
    assert (r["ok"], r["error"]) == (False, "no RDMA devices")


def test_other_failures_of_the_device_list() -> None:
    r = probe(fake_pyverbs.make([], list_error=RuntimeError("libibverbs: boom")))
    assert not r["ok"] and r["error"] == "pyverbs failed: RuntimeError: libibverbs: boom"


def test_import_failing_is_not_available(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pyverbs", None)  # `import pyverbs` raises ImportError
    r = probe()
    assert not r["ok"] and r["error"].startswith("pyverbs not importable:")
    assert r["infiniband"] == []


def test_roce_gid_types_and_empty_slots() -> None:
    ll, v4 = "fe80:0000:0000:0000:5aa2:e1ff:feda:e626", "0000:0000:0000:0000:0000:ffff:0a9c:8184"
    port = FakePort(link_layer=2, active_width=2, active_speed=64, lid=0,
                    gids={0: (ll, 0), 1: (ll, 1), 3: (v4, None), 4: (v4, 1)}, gid_tbl_len=8)
    r = probe(fake_pyverbs.make([FakeDevice("mlx5_0", 0x58A2E10300DAE626, ports=[port])]))
    [p] = r["infiniband"][0]["ports"]
    assert (p["link_layer"], p["rate_gbps"], p["speed_name"]) == ("Ethernet", 200.0, "HDR")
    assert [(g["index"], g["type"], g["type_raw"]) for g in p["gids"]] == [
        (0, "RoCE v1", "IB/RoCE v1"), (1, "RoCE v2", "RoCE v2"), (3, None, None), (4, "RoCE v2", "RoCE v2")]
    assert p["port_guid"] == "0x5aa2e1fffedae626"


def test_a_device_or_port_that_fails_is_skipped_not_fatal() -> None:
    good = FakeDevice("mlx5_0", 0x1, ports=[FakePort(), FakePort(fail=True)])
    locked = FakeDevice("mlx5_1", 0x2, open_fails=True, ports=[FakePort()])
    r = probe(fake_pyverbs.make([good, locked]))
    assert r["ok"]
    m0, m1 = r["infiniband"]
    assert [p["port"] for p in m0["ports"]] == [1]
    assert m1["name"] == "mlx5_1" and m1["ports"] == [] and m1["node_guid"] == "0x0000000000000002"
    assert [s["path"] for s in r["skipped"]] == ["mlx5_0/ports/2", "mlx5_1"]
    assert "Permission denied" in r["skipped"][1]["reason"]


def test_a_misbehaving_binding_never_raises() -> None:
    pv = fake_pyverbs.make([FakeDevice("mlx5_0", 0x1, ports=[FakePort(state="x", active_speed=999, link_layer=7)])])
    r = probe(pv)
    [p] = r["infiniband"][0]["ports"]
    assert (p["state"], p["state_num"], p["rate_gbps"], p["speed_name"], p["link_layer"]) == (None, None, None, None, None)

    class Broken:
        device = None  # no get_device_list at all

    r = probe(Broken())
    assert not r["ok"] and r["error"].startswith("pyverbs failed:")


def test_module_does_not_import_pyverbs_until_asked() -> None:
    assert "pyverbs" not in pyverbs_probe.__dict__
