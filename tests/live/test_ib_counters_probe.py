"""The counters probe over a small tree: one sample, two with an interval, bad roots, and the
parser reading what it writes."""

from __future__ import annotations

import json
import os

from topodiag.live import ib_counters_probe as probe_mod
from topodiag.parsers import ib_counters


def tree(root, link_downed="0"):
    port = root / "sys/class/infiniband/mlx5_0/ports/1"
    (port / "counters").mkdir(parents=True, exist_ok=True)
    (port / "hw_counters").mkdir(parents=True, exist_ok=True)
    (port / "counters/link_downed").write_text(link_downed + "\n")
    (port / "counters/symbol_error").write_text("N/A (no PMA)\n")
    (port / "hw_counters/out_of_sequence").write_text("3\n")
    (port / "rate").write_text("200 Gb/sec (2X NDR)\n")
    (port / "link_layer").write_text("Ethernet\n")
    (root / "sys/class/infiniband/mlx5_0/device/net/ens1").mkdir(parents=True, exist_ok=True)
    net = root / "sys/class/net/ens1"
    (net / "ecn/roce_np/enable").mkdir(parents=True, exist_ok=True)
    (net / "mtu").write_text("9000\n")
    (net / "ecn/roce_np/enable/3").write_text("1\n")
    if not (port / "counters/port_rcv_errors").exists():
        os.mkfifo(port / "counters/port_rcv_errors")  # a FIFO in a file's place must not block
    return root


def test_one_sample_reads_counters_rate_and_netdevs(tmp_path):
    out = probe_mod.probe(str(tree(tmp_path)))
    assert out["ok"] and out["interval_s"] is None and len(out["samples"]) == 1
    [p] = out["samples"][0]["ports"]
    assert p["counters"] == {"link_downed": 0, "port_rcv_errors": None, "symbol_error": None}
    assert (p["hw_counters"], p["rate_gbps"], p["link_layer"]) == ({"out_of_sequence": 3}, 200.0, "Ethernet")
    assert out["netdevs"] == [{"name": "ens1", "device": "mlx5_0", "mtu": 9000,
                               "ecn": {"roce_np": {"3": True}, "roce_rp": {}}}]
    parsed = ib_counters.parse(json.dumps(out, indent=1))
    assert parsed.ports[0].counters["link_downed"] == 0 and parsed.netdevs[0].ecn_np == {3: True}


def test_two_samples_with_an_interval(tmp_path, monkeypatch):
    root = tree(tmp_path)
    slept = []
    monkeypatch.setattr(probe_mod.time, "sleep", lambda s: (slept.append(s), tree(root, "4")))
    out = probe_mod.probe(str(root), interval_s=2.5)
    assert slept == [2.5] and len(out["samples"]) == 2 and out["interval_s"] is not None
    parsed = ib_counters.parse(json.dumps(out))
    [p] = parsed.ports
    assert p.before_counters["link_downed"] == 0 and p.counters["link_downed"] == 4


def test_no_sysfs_is_not_ok_and_env_interval_is_bounded(tmp_path):
    out = probe_mod.probe(str(tmp_path / "missing"))
    assert out["ok"] is False and "sys/ is missing" in out["error"]
    assert probe_mod.interval_from_env({"TOPODIAG_COUNTER_INTERVAL": "1e9"}) == probe_mod.MAX_INTERVAL_S
    assert probe_mod.interval_from_env({"TOPODIAG_COUNTER_INTERVAL": "nan"}) == 0.0
    assert probe_mod.interval_from_env({}) == 0.0
