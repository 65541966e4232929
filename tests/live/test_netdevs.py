"""Per-interface live sources (`ethtool -S IF`, `mlnx_qos -i IF`: topodiag/live/netdevs.py): the RoCE
interfaces from a sysfs tree, one run per interface under its own timeout inside the source's budget,
one member whose prompt lines the parsers read as named sections; with a fake command runner."""

from __future__ import annotations

from pathlib import Path

import pytest

import topodiag.live.collection as live
from topodiag.checks import roce
from topodiag.live import netdevs
from topodiag.live.commands import CommandResult
from topodiag.parsers import ethtool_stats, mlnx_qos

FIX = Path(__file__).resolve().parents[2] / "fixtures"

ETHTOOL = """NIC statistics:
     rx_packets: 10
     rx_discards_phy: {discards}
     rx_prio3_pause: 4
"""
QOS = """DCBX mode: OS controlled
Priority trust state: {trust}
PFC configuration:
        priority    0   1   2   3   4   5   6   7
        enabled     0   0   0   {pfc}   0   0   0   0
"""


def tree(root: Path) -> Path:
    ib = root / "sys/class/infiniband"
    for dev, ll in (("mlx5_0", "Ethernet"), ("mlx5_1", "InfiniBand"), ("mlx5_2", "Ethernet"), ("mlx5_3", "Ethernet")):
        (ib / dev / "ports/1").mkdir(parents=True)
        (ib / dev / "ports/1/link_layer").write_text(ll + "\n")
    (ib / "mlx5_0/device/net/ens1f0np0").mkdir(parents=True)
    (ib / "mlx5_1/device/net/ibp1s0").mkdir(parents=True)  # InfiniBand: IPoIB, not run
    ndevs = ib / "mlx5_2/ports/1/gid_attrs/ndevs"  # a RoCE LAG: no device/net, the bond in the GID table
    ndevs.mkdir(parents=True)
    (ndevs / "0").write_text("bond0\n")
    (ndevs / "1").write_text("bond0\n")
    (ib / "mlx5_3/device/net/-rf").mkdir(parents=True)  # never an option-like word on a command line
    return root


class FakeRunner:
    """Answers by argv; records each call's timeout."""

    def __init__(self, answers):
        self.answers, self.calls = answers, []

    def __call__(self, argv, timeout_s, env=None, deadline=None):
        self.calls.append((tuple(argv), timeout_s))
        got = self.answers.get(tuple(argv))
        if got is None:
            return CommandResult(tuple(argv), 1, "", f"{argv[0]}: no such device\n", 0.01,
                                 reason=f"{argv[0]} exited 1: no such device")
        if got == "missing":
            return CommandResult(tuple(argv), None, "", "", 0.0, not_found=True, reason=f"{argv[0]}: not installed")
        if got == "timeout":
            return CommandResult(tuple(argv), None, "", "", timeout_s, timed_out=True, reason="timed out")
        return CommandResult(tuple(argv), 0, got, "", 0.01)


def _source(name: str) -> live.LiveSource:
    return next(s for s in live.command_sources() if s.name == name)


def test_the_roce_interfaces_of_a_sysfs_tree(tmp_path):
    assert netdevs.roce_netdevs(str(tree(tmp_path))) == ["ens1f0np0", "bond0"]
    assert netdevs.roce_netdevs(str(FIX / "sysfs/roce-pod-show-gids")) == ["net1", "net2", "net3", "net4"]
    assert netdevs.roce_netdevs(str(FIX / "sysfs/hgx-h100-cx7-ndr-8rail")) == []  # InfiniBand only
    assert netdevs.roce_netdevs(str(tmp_path / "nothing")) == []


def test_ethtool_runs_per_interface_into_one_member_the_parser_names(tmp_path, monkeypatch):
    fake = FakeRunner({("ethtool", "-S", "ens1f0np0"): ETHTOOL.format(discards=7),
                       ("ethtool", "-S", "bond0"): ETHTOOL.format(discards=0)})
    monkeypatch.setattr(netdevs, "run", fake)
    [rec] = live.collect(live.Options(deadline_s=20, sysfs_root=str(tree(tmp_path))), [_source("ethtool_stats")])
    assert (rec.status, rec.member, rec.reason) == ("ok", "commands/ethtool_stats.txt", "")
    assert rec.argv == ("ethtool", "-S", "{ens1f0np0,bond0}")
    assert [c[0] for c in fake.calls] == [("ethtool", "-S", "ens1f0np0"), ("ethtool", "-S", "bond0")]
    assert all(t == netdevs.PER_NETDEV_S["ethtool"] for _, t in fake.calls)  # its own timeout, each
    assert rec.text.startswith("$ ethtool -S ens1f0np0\nNIC statistics:\n")
    parsed = ethtool_stats.parse(rec.text)
    assert [(s.interface, s.stats["rx_discards_phy"]) for s in parsed.sections] == [("ens1f0np0", 7), ("bond0", 0)]
    [h] = roce.ib016(parsed)
    assert list(h.subjects) == ["netdev:ens1f0np0"]


def test_mlnx_qos_per_interface_feeds_ib015_by_name(tmp_path, monkeypatch):
    fake = FakeRunner({("mlnx_qos", "-i", "ens1f0np0"): QOS.format(trust="dscp", pfc=1),
                       ("mlnx_qos", "-i", "bond0"): QOS.format(trust="pcp", pfc=0)})
    monkeypatch.setattr(netdevs, "run", fake)
    [rec] = live.collect(live.Options(deadline_s=40, sysfs_root=str(tree(tmp_path))), [_source("mlnx_qos")])
    assert rec.status == "ok" and all(t == 10.0 for _, t in fake.calls)
    parsed = mlnx_qos.parse(rec.text)
    assert [(s.interface, s.trust) for s in parsed.sections] == [("ens1f0np0", "dscp"), ("bond0", "pcp")]
    hits = list(roce.ib015(parsed, {"roce_dscp": 26}))
    assert [(list(h.subjects), h.variant) for h in hits] == [(["netdev:bond0"], "default")]


def test_one_interface_failing_is_named_the_others_kept(tmp_path, monkeypatch):
    fake = FakeRunner({("ethtool", "-S", "bond0"): ETHTOOL.format(discards=0)})
    monkeypatch.setattr(netdevs, "run", fake)
    [rec] = live.collect(live.Options(deadline_s=20, sysfs_root=str(tree(tmp_path))), [_source("ethtool_stats")])
    assert rec.status == "ok" and "ethtool -S ens1f0np0: ethtool exited 1" in rec.reason
    assert "ens1f0np0" not in rec.text and ethtool_stats.parse(rec.text).sections[0].interface == "bond0"


@pytest.mark.parametrize("answers,status,why", [
    ({}, "failed", "ethtool -S bond0: ethtool exited 1"),
    ({("ethtool", "-S", "ens1f0np0"): "missing"}, "not_available", "not installed"),
    ({("ethtool", "-S", "ens1f0np0"): "timeout", ("ethtool", "-S", "bond0"): "timeout"}, "timed_out", "timed out"),
])
def test_no_answer_at_all(tmp_path, monkeypatch, answers, status, why):
    monkeypatch.setattr(netdevs, "run", FakeRunner(answers))
    [rec] = live.collect(live.Options(deadline_s=20, sysfs_root=str(tree(tmp_path))), [_source("ethtool_stats")])
    assert (rec.status, rec.member, rec.text) == (status, None, None) and why in rec.reason


def test_no_roce_interface_is_not_available_and_nothing_runs(tmp_path, monkeypatch):
    fake = FakeRunner({})
    monkeypatch.setattr(netdevs, "run", fake)
    [rec] = live.collect(live.Options(deadline_s=20, sysfs_root=str(FIX / "sysfs/hgx-h100-cx7-ndr-8rail")),
                         [_source("mlnx_qos")])
    assert rec.status == "not_available" and "no RoCE interface" in rec.reason and fake.calls == []
    assert rec.argv == ("mlnx_qos", "-i", "{netdev}")


def test_the_source_budget_bounds_every_run(tmp_path, monkeypatch):
    """Each run gets min(its own timeout, what is left of the source's budget); interfaces left when
    the budget is spent are not started and are named."""
    src = live.LiveSource("ethtool_stats", "commands/ethtool_stats.txt", 0.3, False, ("ethtool", "-S", "{netdev}"))
    clock = [1000.0]
    monkeypatch.setattr(netdevs.time, "monotonic", lambda: clock[0])

    def slow(argv, timeout_s, env=None, deadline=None):
        slow.timeouts.append(timeout_s)
        clock[0] += 0.3
        return CommandResult(tuple(argv), 0, ETHTOOL.format(discards=1), "", 0.2)

    slow.timeouts = []
    monkeypatch.setattr(netdevs, "run", slow)
    rec = live.Record(src.name, **netdevs.collect_per_netdev(src, live.Options(sysfs_root=str(tree(tmp_path))), 0.3))
    assert slow.timeouts == [pytest.approx(0.3)]  # the budget, not the 5 s of one ethtool
    assert rec.status == "ok" and "not run (bond0)" in rec.reason


def test_neither_runs_in_the_prolog():
    assert all(s.name not in ("ethtool_stats", "mlnx_qos") for s in live.selected(live.Options(prolog=True)))
    assert netdevs.per_netdev(_source("ethtool_stats").argv) and netdevs.per_netdev(_source("mlnx_qos").argv)


def test_a_bundle_of_per_interface_members_reaches_ib015_and_ib016(tmp_path, monkeypatch):
    """collect -> bundle -> check --from: the rules name the interfaces of the members' prompt lines."""
    import topodiag
    from topodiag.bundle.writer import write_bundle_dir

    fake = FakeRunner({("ethtool", "-S", "ens1f0np0"): ETHTOOL.format(discards=7),
                       ("ethtool", "-S", "bond0"): ETHTOOL.format(discards=0),
                       ("mlnx_qos", "-i", "ens1f0np0"): QOS.format(trust="dscp", pfc=1),
                       ("mlnx_qos", "-i", "bond0"): QOS.format(trust="pcp", pfc=0)})
    monkeypatch.setattr(netdevs, "run", fake)
    records = live.collect(live.Options(deadline_s=40, sysfs_root=str(tree(tmp_path / "sys"))),
                           [_source("ethtool_stats"), _source("mlnx_qos")])
    bundle = tmp_path / "bundle"
    write_bundle_dir(str(bundle), records, host="node1", facts={})
    d = topodiag.diagnose([str(bundle)], select=["IB015", "IB016"])
    got = sorted((f.code, tuple(f.subjects)) for f in d.outcome.findings)
    assert got == [("IB015", ("netdev:bond0",)), ("IB016", ("netdev:ens1f0np0",))]
