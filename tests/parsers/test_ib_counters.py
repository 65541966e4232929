"""ib_counters, mlnx_qos and ethtool_stats: what the fixture pairs do not show (sniffing, the forms a
person pastes, two samples and their window, bad input with its line number)."""

from __future__ import annotations

import json

import pytest

from topodiag.parsers import ParseError, detect, ethtool_stats, ib_counters, mlnx_qos


def test_grep_lines_path_space_value_and_net_lines():
    r = ib_counters.parse("/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed 2\r\n"
                          "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/rnr_nak_retry_err:0\n"
                          "/sys/class/net/ens1f0np0/mtu:1500\n"
                          "/sys/class/net/ens1f0np0/ecn/roce_np/enable/3:0\n"
                          "/sys/class/net/ens1f0np0/ecn/roce_rp/enable/3:1\n")
    [p] = r.ports
    assert (p.device, p.port, p.counters, p.hw_counters, p.line_no) == (
        "mlx5_0", 1, {"link_downed": 2}, {"rnr_nak_retry_err": 0}, 1)
    [n] = r.netdevs
    assert (n.name, n.mtu, n.ecn_np, n.ecn_rp) == ("ens1f0np0", 1500, {3: False}, {3: True})
    assert r.samples == 1 and r.interval_s is None


def test_a_repeated_reading_is_a_second_sample_without_a_window_unless_a_sleep_says_it():
    text = ("/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:5\n"
            "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:9\n")
    r = ib_counters.parse(text)
    assert r.samples == 2 and r.interval_s is None
    assert r.ports[0].before_counters == {"symbol_error": 5} and r.ports[0].counters == {"symbol_error": 9}
    r = ib_counters.parse(text.replace("\n", "\n$ sleep 30\n", 1))
    assert r.interval_s == 30.0


@pytest.mark.parametrize("text, line", [
    ("hello\nworld\n", 1),
    ("\n\n   \n", 0),
    ('{"probe": "sysfs", "schema_version": 1}', 1),
    ('{"probe": "ib_counters", "schema_version": 7}', 1),
    ('{"probe": "ib_counters", "schema_version": 1,\n "samples": [{"ports": [{"device": "mlx5_0", "counters": {"x": -1}}]}]}', 2),
])
def test_bad_input_is_a_parse_error_with_a_line(text, line):
    with pytest.raises(ParseError) as exc:
        ib_counters.parse(text)
    assert exc.value.line_no == line


def test_probe_json_two_samples():
    data = {"probe": "ib_counters", "schema_version": 1, "ok": True, "error": None, "hostname": "n1",
            "interval_s": 10.0,
            "samples": [{"ports": [{"device": "mlx5_0", "port": 1, "link_layer": "InfiniBand", "rate_gbps": 400.0,
                                    "counters": {"symbol_error": 1}, "hw_counters": {}}]},
                        {"ports": [{"device": "mlx5_0", "port": 1, "link_layer": "InfiniBand", "rate_gbps": 400.0,
                                    "counters": {"symbol_error": 4}, "hw_counters": {}}]}],
            "netdevs": [{"name": "ib0", "device": "mlx5_0", "mtu": 4092, "ecn": {"roce_np": {}, "roce_rp": {}}}]}
    r = ib_counters.parse(json.dumps(data, indent=1))
    assert r.samples == 2 and r.interval_s == 10.0 and r.hostname == "n1"
    [p] = r.ports
    assert (p.counters, p.before_counters, p.rate_gbps) == ({"symbol_error": 4}, {"symbol_error": 1}, 400.0)
    assert detect(json.dumps(data)) == "ib_counters"


def test_sniffers_pick_their_own():
    assert detect("/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed:0\n") == "ib_counters"
    assert detect("Priority trust state: dscp\nPFC configuration:\n") == "mlnx_qos"
    assert detect("NIC statistics:\n     rx_discards_phy: 0\n") == "ethtool_stats"


def test_mlnx_qos_needs_trust_or_pfc():
    with pytest.raises(ParseError) as exc:
        mlnx_qos.parse("\nDCBX mode: OS controlled\nCable len: 7\n")
    assert exc.value.line_no == 2
    r = mlnx_qos.parse("$ mlnx_qos -i eth2\nPriority trust state: dscp\ndscp2prio mapping:\n"
                       "        prio:3 dscp:31,30,29,28,27,26,25,24,\n        prio:0 dscp:30,\n"
                       "PFC configuration:\n        priority    0   1   2   3   4   5   6   7\n"
                       "        enabled     0   0   0   1   0   0   0   0\n")
    [s] = r.sections
    assert s.interface == "eth2" and s.dscp2prio[26] == 3 and s.dscp2prio[30] == 0 and s.pfc_enabled[3]


def test_ethtool_sections_by_command_and_grep_pastes():
    r = ethtool_stats.parse("$ ethtool -S ens1 | grep pause\n     rx_prio3_pause: 142\n"
                            "$ ethtool -S ens2\nNIC statistics:\n     rx_discards_phy: 7\n     rxq0: rx_bytes: 9\n")
    assert [(s.interface, s.stats) for s in r.sections] == [
        ("ens1", {"rx_prio3_pause": 142}), ("ens2", {"rx_discards_phy": 7, "rxq0: rx_bytes": 9})]
    with pytest.raises(ParseError) as exc:
        ethtool_stats.parse("x\n     rx_discards_phy: 7\n")
    assert exc.value.line_no == 1


def test_perfquery_names_the_port_by_its_ca_when_the_command_gives_one():
    r = ib_counters.parse("# perfquery -C mlx5_2 -P 1\n# Port counters: Lid 7 port 1 (CapMask: 0x5A00)\n"
                          "PortSelect:......................1\nLinkDownedCounter:...............3\n"
                          "SymbolErrorCounter:..............65535\n")
    [p] = r.ports
    assert (p.device, p.port, p.counters) == ("mlx5_2", 1, {"link_downed": 3, "symbol_error": 65535})
