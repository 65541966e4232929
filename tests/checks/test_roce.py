"""IB012-IB016: IB port counters and RoCE MTU / lossless configuration, edge cases the rule examples
do not show; and an NCCL log's status-12 completions attached to the RoCE findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from topodiag.checks import ib_counters as counters_checks
from topodiag.checks import roce
from topodiag.engine import Severity
from topodiag.parsers import ethtool_stats, ib_counters, mlnx_qos
from topodiag.parsers.base import blank_provenance_header
from topodiag.parsers.nccl_debug import parse as parse_nccl

FIX = Path(__file__).resolve().parents[2] / "fixtures"


def fixture(source: str, name: str):
    text = blank_provenance_header((FIX / source / name).read_text())
    return {"ib_counters": ib_counters, "mlnx_qos": mlnx_qos, "ethtool_stats": ethtool_stats}[source].parse(text)


def test_symbol_error_limit_follows_the_link_rate():
    assert counters_checks.symbol_limit_per_hour(400.0) == pytest.approx(1440.0)
    assert counters_checks.symbol_limit_per_hour(200.0) == pytest.approx(720.0)
    assert counters_checks.symbol_limit_per_hour(None) == 120.0
    assert counters_checks.symbol_limit_per_hour(10.0) == 120.0  # the published floor


def test_growth_without_a_window_is_a_warning_for_receive_errors_only():
    r = ib_counters.parse("/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors:1\n"
                          "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:1\n"
                          "/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_errors:5\n"
                          "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:9000\n")
    [h] = counters_checks.ib013(r, {})
    assert h.variant == "no_window" and h.severity == Severity.WARNING and "port_rcv_errors +4" in h.values["what"]


def test_symbol_errors_within_the_budget_at_ndr_are_no_finding():
    r = ib_counters.parse("/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:0\n$ sleep 3600\n"
                          "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:1000\n")
    ports = type("T", (), {"ib_ports": lambda self: [("nic:mlx5_0", {"port": 1, "rate_gbps": 400.0})]})()
    assert list(counters_checks.ib013(r, {}, topology=ports)) == []  # 1000/h < 1440/h at 400 Gb/s
    [h] = counters_checks.ib013(r, {})  # rate unknown: the 120/h floor
    assert "1000/h (limit 120/h)" in h.values["what"]


def test_dscp_mapped_off_the_pfc_priority_is_lossy():
    qos = mlnx_qos.parse("Priority trust state: dscp\ndscp2prio mapping:\n        prio:0 dscp:26,\n"
                         "PFC configuration:\n        priority    0   1   2   3   4   5   6   7\n"
                         "        enabled     0   0   0   1   0   0   0   0\n")
    [h] = roce.ib015(qos, {"roce_dscp": 26})
    assert h.variant == "dscp_not_lossless" and h.values["mapped"] == 0 and h.values["pfc"] == "3"


def test_trust_pcp_with_pfc_is_info():
    qos = mlnx_qos.parse("Priority trust state: pcp\nPFC configuration:\n"
                         "        priority    0   1   2   3   4   5   6   7\n"
                         "        enabled     0   0   0   1   0   0   0   0\n")
    [h] = roce.ib015(qos, {})
    assert h.variant == "trust_pcp" and h.severity == Severity.INFO


def test_ecn_off_on_the_pfc_priority_is_noted():
    qos = mlnx_qos.parse("$ mlnx_qos -i ens1\nPriority trust state: pcp\nPFC configuration:\n"
                         "        priority    0   1   2   3   4   5   6   7\n"
                         "        enabled     0   0   0   1   0   0   0   0\n")
    ecn = ib_counters.parse("/sys/class/net/ens1/ecn/roce_np/enable/3:0\n/sys/class/net/ens1/ecn/roce_rp/enable/3:1\n")
    [h] = roce.ib015(qos, {}, ib_counters=ecn)
    assert "ecn_off" in h.notes and h.values["ecn"] == "roce_np prio 3"


def test_nccl_status_12_points_at_the_lossy_port_and_the_drops():
    """The real nccl #1405 log (RoCE v2, three status=12 completions) beside the real lossy mlnx_qos and
    the real mlx5 discard counters: both RoCE findings carry the NCCL lines as evidence."""
    log = parse_nccl(blank_provenance_header((FIX / "nccl_debug/nccl-warn-ib-completion-error-ipv6gid-01.log").read_text()))
    assert len(roce.retry_exceeded(log)) == 3
    [qos] = roce.ib015(fixture("mlnx_qos", "tutorial-ens6-trust-pcp-no-pfc-01.txt"), {}, nccl_debug=log)
    [drops] = roce.ib016(fixture("ethtool_stats", "mlx5-xdp-bpf-list-rx-discards-global-pause-01.txt"), nccl_debug=log)
    for h in (qos, drops):
        assert "retry12" in h.notes and h.values["retries"] == 3
        assert [(e.source, e.line_no) for e in h.evidence if e.source == "nccl_debug"] == [("nccl_debug", 7),
                                                                                          ("nccl_debug", 12)]


def test_pause_without_discards_is_info():
    stats = ethtool_stats.parse("NIC statistics:\n     tx_pause_ctrl_phy: 10\n     rx_discards_phy: 0\n"
                                "     rx_prio3_pause: 4\n")
    [h] = roce.ib016(stats)
    assert h.variant == "pause_only" and h.severity == Severity.INFO
    assert list(roce.ib016(ethtool_stats.parse("NIC statistics:\n     rx_prio3_pause: 4\n"))) == []


class _Topo:
    def __init__(self, ports):
        self._ports = ports

    def ib_ports(self):
        return self._ports


def _port(nic, mtu, layer="Ethernet", port=1):
    return (nic, {"port": port, "state": "Active", "link_layer": layer, "active_mtu": mtu, "max_mtu": 4096})


def test_roce_rails_at_1024_are_a_warning_and_differing_mtus_a_mismatch():
    hits = list(roce.ib014(_Topo([_port("nic:mlx5_0", 1024), _port("nic:mlx5_1", 4096)])))
    low, mismatch = hits
    assert low.severity is None and low.subjects == ("nic:mlx5_0",)  # the rule's warning
    assert mismatch.variant == "mismatch" and set(mismatch.subjects) == {"nic:mlx5_0", "nic:mlx5_1"}
    assert list(roce.ib014(_Topo([_port("nic:mlx5_0", 4096), _port("nic:mlx5_1", 4096)]))) == []


def test_netdev_mtu_alone_from_sysfs():
    c = ib_counters.parse('{"probe": "ib_counters", "schema_version": 1, "samples": [{"ports": [{"device": "mlx5_0", '
                          '"port": 1, "link_layer": "Ethernet", "counters": {}}]}], '
                          '"netdevs": [{"name": "ens1", "device": "mlx5_0", "mtu": 1500}]}')
    [h] = roce.ib014(_Topo([]), ib_counters=c)
    assert h.variant == "netdev" and "ens1 MTU 1500" in h.values["ports"]


def test_ecn_off_with_a_right_pfc_setup_is_info():
    """PFC on 3 with trust dscp and DSCP 26 in priority 3 is right; ECN off on 3 is then its own finding."""
    qos = mlnx_qos.parse("$ mlnx_qos -i ens1\nPriority trust state: dscp\ndscp2prio mapping:\n        prio:3 dscp:26,\n"
                         "PFC configuration:\n        priority    0   1   2   3   4   5   6   7\n"
                         "        enabled     0   0   0   1   0   0   0   0\n")
    assert list(roce.ib015(qos, {})) == []  # no ECN facts: nothing to say
    on = ib_counters.parse("/sys/class/net/ens1/ecn/roce_np/enable/3:1\n/sys/class/net/ens1/ecn/roce_rp/enable/3:1\n")
    assert list(roce.ib015(qos, {}, ib_counters=on)) == []
    off = ib_counters.parse("/sys/class/net/ens1/ecn/roce_np/enable/3:1\n/sys/class/net/ens1/ecn/roce_rp/enable/3:0\n")
    [h] = roce.ib015(qos, {}, ib_counters=off)
    assert (h.variant, h.severity, h.values["ecn"], list(h.subjects)) == \
        ("ecn_off_only", Severity.INFO, "roce_rp prio 3", ["netdev:ens1"])


def test_ecn_alone_from_sysfs():
    """Without mlnx_qos: an interface whose ECN switches are all off on one side is info; a partly
    enabled one is not judged (its RoCE priority is unknown)."""
    some = ib_counters.parse("/sys/class/net/ens1/ecn/roce_np/enable/0:0\n/sys/class/net/ens1/ecn/roce_np/enable/3:1\n")
    assert list(roce.ib015(None, {}, ib_counters=some)) == []
    none = ib_counters.parse("/sys/class/net/ens1/ecn/roce_np/enable/0:0\n/sys/class/net/ens1/ecn/roce_np/enable/3:0\n"
                             "/sys/class/net/ens1/ecn/roce_rp/enable/3:0\n")
    [h] = roce.ib015(None, {}, ib_counters=none)
    assert (h.variant, h.values["ecn"], h.evidence[0].line_no) == ("ecn_all_off", "roce_np, roce_rp", 1)
