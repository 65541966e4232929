"""prolog --mark-offline where Slurm runs it: no PATH (scontrol and sinfo found in a standard place,
given with --scontrol or by the site config), and a drain limit so that a false positive cannot
drain the whole cluster (sinfo -R counts the nodes topodiag drained already)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tests.cli.test_slurm import AZURE_SYSFS, fake_slurm, scontrol  # noqa: F401 (the fixture)
from topodiag.actions import drain_limit, slurm
from topodiag.actions.drain_limit import Limit, parse_nodes, parse_reasons
from topodiag.cli import app

DRAIN = "update nodename=gpu017 state=drain reason=topodiag: IB001 mlx5_ib0 port 1 Initializing/LinkUp"


def prolog(*extra: str):
    return CliRunner().invoke(app, ["prolog", "--sysfs-root", str(AZURE_SYSFS), "--mark-offline", "--node", "gpu017",
                                    *extra])


def said(res) -> str:
    [line] = [ln for ln in res.stderr.splitlines() if "gpu017" in ln]
    return line


@pytest.fixture
def no_path(scontrol, tmp_path, monkeypatch):  # noqa: F811
    """Slurm's prolog environment: PATH empty; scontrol and sinfo only in a standard place."""
    std = tmp_path / "opt-slurm-bin"
    fake_slurm(std, tmp_path)
    (tmp_path / "bin" / "scontrol").unlink()
    (tmp_path / "bin" / "sinfo").unlink()
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(slurm, "BIN_DIRS", ("/nonexistent/bin", str(std)))
    monkeypatch.delenv("TOPODIAG_SLURM_BIN_DIRS")
    return scontrol


def test_with_no_path_scontrol_is_found_in_a_standard_place_and_the_node_drained(no_path):
    log = no_path("NodeName=gpu017 State=IDLE")
    res = prolog()
    assert res.exit_code == 1
    assert log.read_text().splitlines() == [DRAIN]
    assert said(res) == "topodiag: drained gpu017 (1 of at most 8 nodes drained by topodiag)"


def test_the_standard_places_come_from_the_environment_when_set(no_path, tmp_path, monkeypatch):
    log = no_path("NodeName=gpu017 State=IDLE")
    monkeypatch.setattr(slurm, "BIN_DIRS", ())
    monkeypatch.setenv("TOPODIAG_SLURM_BIN_DIRS", f"/nonexistent:{tmp_path / 'opt-slurm-bin'}")
    res = prolog()
    assert res.exit_code == 1 and log.read_text().splitlines() == [DRAIN]
    assert slurm.bin_dirs(("/site/bin",)) == ("/site/bin", "/nonexistent", str(tmp_path / "opt-slurm-bin"))


def test_with_no_path_and_no_scontrol_anywhere_nothing_is_drained(no_path, monkeypatch):
    log = no_path("NodeName=gpu017 State=IDLE")
    monkeypatch.setattr(slurm, "BIN_DIRS", ("/nonexistent/bin",))
    res = prolog()
    assert res.exit_code == 1 and not log.exists()
    assert said(res).startswith("topodiag: not draining gpu017: scontrol not found (searched PATH, /nonexistent/bin; "
                                "give --scontrol PATH)")


def test_an_explicit_scontrol_and_its_sinfo_beside_it(no_path, tmp_path, monkeypatch):
    log = no_path("NodeName=gpu017 State=IDLE")
    monkeypatch.setattr(slurm, "BIN_DIRS", ())
    res = prolog("--scontrol", str(tmp_path / "opt-slurm-bin" / "scontrol"))
    assert res.exit_code == 1 and log.read_text().splitlines() == [DRAIN]


def test_an_explicit_scontrol_that_is_not_there_is_named(no_path, tmp_path):
    log = no_path("NodeName=gpu017 State=IDLE")
    res = prolog("--scontrol", str(tmp_path / "nowhere" / "scontrol"))
    assert res.exit_code == 1 and not log.exists()
    assert said(res) == (f"topodiag: not draining gpu017: scontrol not found (searched {tmp_path}/nowhere/scontrol: "
                         "not an executable file; give --scontrol PATH)")


def test_the_site_config_names_scontrol_and_the_limit(no_path, tmp_path, monkeypatch):
    log = no_path("NodeName=gpu017 State=IDLE")
    monkeypatch.setattr(slurm, "BIN_DIRS", ())
    site = tmp_path / "site.toml"
    site.write_text(f'[slurm]\nscontrol = "{tmp_path / "opt-slurm-bin" / "scontrol"}"\ndrain_limit = 0\n')
    res = prolog("--config", str(site))
    assert res.exit_code == 0 and not log.exists()  # held back: Slurm would drain a node whose prolog fails
    assert res.stdout.startswith("topodiag: IB001 mlx5_ib0 port 1 Initializing/LinkUp")
    assert said(res).startswith("topodiag: not draining gpu017: the drain limit: 0 (never drain); reporting only "
                                "(topodiag: IB001 mlx5_ib0")
    res = prolog("--config", str(site), "--drain-limit", "3")  # the command line wins
    assert res.exit_code == 1 and log.read_text().splitlines() == [DRAIN]


@pytest.mark.parametrize("key, value, why", [
    ("scontrol", '"scontrol"', "must be an absolute path"),
    ("drain_limit", "-1", "whole number of nodes >= 0"),
    ("drain_limit_percent", "nan", "from 0 to 100"),
    ("drain_limit_percent", "150", "from 0 to 100"),
    ("drain", "3", "unknown key"),
])
def test_a_bad_slurm_table_is_a_config_error(tmp_path, key, value, why):
    from topodiag.engine.site_config import load
    from topodiag.errors import ConfigError

    site = tmp_path / "site.toml"
    site.write_text(f"[slurm]\n{key} = {value}\n")
    with pytest.raises(ConfigError, match=why):
        load(str(site))


def reasons(tmp_path, text: str, nodes: int = 100) -> None:
    (tmp_path / "reasons.txt").write_text(text)
    (tmp_path / "nodes.txt").write_text("".join(f"gpu{i:03d}\n" for i in range(1, nodes + 1)) * 2)  # 2 partitions


def test_past_the_limit_the_node_is_reported_not_drained(scontrol, tmp_path):  # noqa: F811
    log = scontrol("NodeName=gpu017 State=IDLE")
    reasons(tmp_path, "topodiag: NVL001 gpu:3 links 3, 5 inactive [reset-gpu]|gpu[001-005]\n"
                      "topodiag: IB001 mlx5_0 port 1 Down/Polling [reseat-cable]|gpu[010-011],gpu099\n"
                      "Not responding|gpu[020-060]\n")
    res = prolog()
    assert res.exit_code == 0 and not log.exists()  # exit 1 would make Slurm drain it (prolog failed)
    assert said(res) == ("topodiag: not draining gpu017: the drain limit: 8 nodes already drained by topodiag and at "
                         "most 8 allowed (the smaller of 8 nodes and 10% of 100, at least 1); reporting only "
                         "(topodiag: IB001 mlx5_ib0 port 1 Initializing/LinkUp)")
    reasons(tmp_path, "topodiag: NVL001 gpu:3|gpu[001-007]\nNot responding|gpu[020-060]\n")
    res = prolog()  # 7 + this one: within 8
    assert res.exit_code == 1 and log.read_text().splitlines() == [DRAIN]
    assert said(res) == "topodiag: drained gpu017 (8 of at most 8 nodes drained by topodiag)"


def test_the_share_of_a_small_cluster_is_the_limit(scontrol, tmp_path):  # noqa: F811
    log = scontrol("NodeName=gpu017 State=IDLE")
    reasons(tmp_path, "topodiag: TOPO006 1 of 8 GPUs seen|gpu001\n", nodes=20)  # 10% of 20: 2
    res = prolog()
    assert log.read_text().splitlines() == [DRAIN]
    log.unlink()
    reasons(tmp_path, "topodiag: TOPO006 1 of 8 GPUs seen|gpu[001-002]\n", nodes=20)
    res = prolog()
    assert not log.exists() and "at most 2 allowed (the smaller of 8 nodes and 10% of 20, at least 1)" in said(res)
    res = prolog("--drain-limit-percent", "50")
    assert log.read_text().splitlines() == [DRAIN]


def test_a_node_topodiag_drained_already_gets_its_new_reason_whatever_the_count(scontrol, tmp_path):  # noqa: F811
    log = scontrol("NodeName=gpu017 State=IDLE+DRAIN Reason=topodiag: TOPO006 gpu-missing gpu:3 [root@t]")
    reasons(tmp_path, "topodiag: x|gpu[001-050]\n")
    res = prolog()
    assert log.read_text().splitlines() == [DRAIN] and said(res) == "topodiag: drained gpu017"


@pytest.mark.parametrize("sinfo_r, why", [
    (None, "the drain limit: cannot be checked: sinfo not found"),
    ("exit 1", "the drain limit: cannot be checked: sinfo -R: sinfo exit 1: failed"),
    ("echo 'slurm_load_partitions: Unable to contact slurm controller'; exit 0",
     "the drain limit: cannot be checked: sinfo printed what topodiag cannot read (line 1 is not REASON|NODELIST"),
])
def test_when_the_drains_cannot_be_counted_the_node_is_not_drained(scontrol, tmp_path, sinfo_r, why):  # noqa: F811
    log = scontrol("NodeName=gpu017 State=IDLE")
    sinfo = tmp_path / "bin" / "sinfo"
    if sinfo_r is None:
        sinfo.unlink()
    else:
        sinfo.write_text(f"#!/bin/sh\n{sinfo_r}\n")
    res = prolog()
    assert res.exit_code == 0 and not log.exists()
    assert said(res).startswith(f"topodiag: not draining gpu017: {why}")


def test_sinfo_reason_lines_both_formats():
    # the default format, as a real `sinfo -R` printed it (awslabs/awsome-distributed-ai#185)
    real = "REASON USER TIMESTAMP NODELIST\nKill task failed root 2024-01-25T15:12:23 ip-10-0-1-23\n"
    assert parse_reasons(real) == [("Kill task failed", "ip-10-0-1-23")]
    ours = ("topodiag: IB001 mlx5_0 port 1 Down/Polling [reseat-cable]   root 2026-12-01T10:00:00 gpu[001-003]\n"
            "topodiag: a|b reason|gpu[004-005]\nNot responding|gpu007\n")
    rows = parse_reasons(ours)
    assert rows == [("topodiag: IB001 mlx5_0 port 1 Down/Polling [reseat-cable]", "gpu[001-003]"),
                    ("topodiag: a|b reason", "gpu[004-005]"), ("Not responding", "gpu007")]
    names, n = drain_limit.drained_by_topodiag(rows, "topodiag:")
    assert n == 5 and names == {"gpu001", "gpu002", "gpu003", "gpu004", "gpu005"}
    assert parse_nodes("gpu1\ngpu2\ngpu1\n") == {"gpu1", "gpu2"}


def test_without_clustershell_the_lists_are_counted_from_their_text(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ClusterShell", None)
    monkeypatch.setitem(sys.modules, "ClusterShell.NodeSet", None)
    names, n = drain_limit.drained_by_topodiag([("topodiag: x", "gpu[001-003,007],rack[1-2]-n[1-4]")], "topodiag:")
    assert n == 12 and not names


@pytest.mark.parametrize("nodes, percent, cluster, allowed", [
    (8, 10, 1000, 8), (8, 10, 80, 8), (8, 10, 79, 7), (8, 10, 20, 2), (8, 10, 19, 1), (8, 10, 3, 1),
    (0, 10, 1000, 0), (100, 100, 50, 50), (8, 0, 1000, 1),
])
def test_the_limit_is_the_smaller_knob_and_at_least_one_node(nodes, percent, cluster, allowed):
    assert Limit(nodes, percent).allowed(cluster) == allowed
