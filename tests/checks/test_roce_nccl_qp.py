"""IB014 from an NCCL log's per-QP lines (nccl_debug qp_mtus): low RoCE MTUs, MTUs that differ
between hosts, and no second finding when the port tools already judged the host's ports."""

from __future__ import annotations

from topodiag.checks import roce
from topodiag.parsers.nccl_debug import parse

USING = "{h}:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>\n"
QP = "{h}:1:2 [0] NCCL INFO NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn {n} mtu {m} {ll} 3 (0/1) fifoRkey=0x1 fifoLkey=0x1\n"


class _Ports:
    def __init__(self, ports=()):
        self._ports = list(ports)

    def ib_ports(self):
        return self._ports


def _log(*qps) -> object:
    return parse("".join(USING.format(h=h) + QP.format(h=h, n=i, m=m, ll=ll) for i, (h, m, ll) in enumerate(qps)))


def test_roce_qps_at_1024_are_a_warning_naming_the_nic():
    [h] = roce.ib014(_Ports(), nccl_debug=_log(("a", 3, "GID"), ("b", 3, "GID")))
    assert h.variant == "nccl_low" and h.severity is None  # the rule's warning
    assert list(h.subjects) == ["nic:mlx5_0"]
    assert "a mlx5_0 port 1 mtu 3 (1024 bytes, 1 QP line)" in h.values["qps"]
    assert [e.line_no for e in h.evidence] == [2, 4]


def test_hosts_at_different_mtus_are_a_mismatch():
    hits = list(roce.ib014(_Ports(), nccl_debug=_log(("a", 5, "GID"), ("b", 3, "GID"))))
    assert [h.variant for h in hits] == ["nccl_low", "nccl_mismatch"]
    assert "b mlx5_0 port 1 mtu 3" in hits[1].values["mtus"] and "a mlx5_0 port 1 mtu 5" in hits[1].values["mtus"]


def test_infiniband_qps_at_4096_pass_and_ib_at_2048_is_only_a_mismatch_with_others():
    assert list(roce.ib014(_Ports(), nccl_debug=_log(("a", 5, "LID"), ("b", 5, "LID")))) == []
    assert list(roce.ib014(_Ports(), nccl_debug=_log(("a", 4, "LID")))) == []  # IB at 2048: not a RoCE MTU finding
    [h] = roce.ib014(_Ports(), nccl_debug=_log(("a", 4, "LID"), ("b", 5, "LID")))
    assert h.variant == "nccl_mismatch"


def test_port_facts_win_on_one_host_but_not_across_hosts():
    eth = [("nic:mlx5_0", {"port": 1, "link_layer": "Ethernet", "state": "Active", "active_mtu": 1024,
                           "max_mtu": 4096, "sources": []}),
           ("nic:mlx5_1", {"port": 1, "link_layer": "Ethernet", "state": "Active", "active_mtu": 1024,
                           "max_mtu": 4096, "sources": []})]
    hits = list(roce.ib014(_Ports(eth), nccl_debug=_log(("a", 3, "GID"))))
    assert [h.variant for h in hits] == ["default"]  # the ports' finding, no NCCL repeat
    hits = list(roce.ib014(_Ports(eth), nccl_debug=_log(("a", 3, "GID"), ("b", 5, "GID"))))
    assert [h.variant for h in hits] == ["nccl_mismatch", "default"]
    assert hits[1].severity is None


def test_a_log_without_qp_lines_adds_nothing():
    log = parse("a:1:1 [0] NCCL INFO Using network IB\n")
    assert list(roce.ib014(_Ports(), nccl_debug=log)) == []
