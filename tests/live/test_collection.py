"""What live collection runs: the commands come from the parsers' INFO, the probes are declared in
collection.py and feed exactly the prolog-safe parsers, and prolog mode imports no parser."""

from __future__ import annotations

import subprocess
import sys

import pytest

import topodiag.live.collection as live
from topodiag.parsers import info, infos, names


def test_commands_are_the_parsers_with_an_argv():
    commands = live.command_sources()
    with_argv = [i for i in infos() if i.argv]
    assert [c.name for c in commands] == [i.source for i in with_argv] == sorted(c.name for c in commands)
    for cmd, i in zip(commands, with_argv):
        assert (cmd.member, cmd.argv, cmd.timeout_s, cmd.prolog, cmd.probe) == \
            (f"commands/{i.source}.txt", i.argv, i.timeout_s, False, None)


def test_the_commands_run_are_those_of_before():
    """The commands, argv and timeouts live collection ran when it kept them in a list of its own."""
    assert {c.name: (c.argv, c.timeout_s) for c in live.command_sources()} == {
        "nvidia_smi_topo_m": (("nvidia-smi", "topo", "-m"), 30.0),
        "lspci_vvv": (("lspci", "-vvv"), 20.0),
        "lspci_tree": (("lspci", "-tv"), 10.0),  # issue 12: the PCIe tree  # issue 12: ACS and PCIe links (ACS needs root)
        "kernel_cmdline": (("cat", "/proc/cmdline"), 5.0),  # issue 12: the IOMMU mode
        "nvidia_smi_nvlink_s": (("nvidia-smi", "nvlink", "-s"), 30.0),
        "nvidia_smi_nvlink_e": (("nvidia-smi", "nvlink", "-e"), 30.0),
        "nvidia_smi_topo_p2p": (("nvidia-smi", "topo", "-p2p", "r"), 30.0),
        "ibstat": (("ibstat",), 15.0),
        "ibv_devinfo": (("ibv_devinfo", "-v"), 15.0),
        "show_gids": (("show_gids",), 15.0),
        # the kernel log (issue 12) is read by the kernel_log probe (/dev/kmsg, no subprocess) since wt-k12
        # issue 12: the Fabric Manager unit's state and last journal lines (exit 3/4 are answers)
        "fabricmanager": (("systemctl", "status", "nvidia-fabricmanager", "--no-pager", "--lines=20"), 10.0),
        # issue 13: once per RoCE interface ("{netdev}", topodiag/live/netdevs.py), within the source's budget
        "ethtool_stats": (("ethtool", "-S", "{netdev}"), 15.0),
        "mlnx_qos": (("mlnx_qos", "-i", "{netdev}"), 30.0),
    }


def test_sources_are_the_probes_then_the_commands():
    assert live.SOURCES == live.PROBES + live.command_sources()
    members = [s.member for s in live.SOURCES]
    assert len(members) == len(set(members))
    assert {s.name for s in live.SOURCES} <= set(names())
    assert live.selected(live.Options()) == list(live.SOURCES)
    with pytest.raises(AttributeError):
        live.NO_SUCH_THING  # noqa: B018


def test_probes_feed_exactly_the_prolog_safe_parsers():
    assert {p.name for p in live.PROBES} == {i.source for i in infos() if i.prolog_safe}
    for p in live.PROBES:
        fed = info(p.name)
        assert p.probe is not None and p.argv == () and p.member.startswith("probes/")
        assert fed.probe is not None and fed.argv == ()
        assert p.timeout_s == fed.timeout_s, f"{p.member}: timeout differs from {p.name}'s INFO"
    for i in infos():
        if i.probe is not None:  # the probe a parser names is declared, and feeds it
            assert any(p.member == f"probes/{i.probe}.json" and p.name == i.source for p in live.PROBES), i


def test_prolog_mode_runs_the_prolog_probes_only():
    chosen = live.selected(live.Options(prolog=True))
    assert [(s.name, s.member) for s in chosen] == [("nvml", "probes/nvml.json"),
                                                    ("sysfs_infiniband", "probes/sysfs.json"),
                                                    ("ib_counters", "probes/ib_counters.json"),
                                                    ("kernel_log", "probes/kernel_log.json"),
                                                    ("peermem", "probes/peermem.json"),
                                                    ("gpu_scope", "probes/gpu_scope.json")]
    assert chosen == [s for s in live.SOURCES if s.prolog]
    assert all(info(s.name).prolog_safe for s in chosen)


def test_prolog_mode_imports_no_parser():
    code = ("import sys, topodiag.live.collection as c; "
            "chosen = [s.member for s in c.selected(c.Options(prolog=True))]; "
            "print(' '.join(chosen)); print('SOURCES' in vars(c)); "
            "print(' '.join(m for m in sys.modules if m.startswith('topodiag.parsers')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    chosen, made, loaded = (out.stdout.split("\n") + ["", ""])[:3]
    assert chosen.split() == ["probes/nvml.json", "probes/sysfs.json", "probes/ib_counters.json",
                              "probes/kernel_log.json", "probes/peermem.json", "probes/gpu_scope.json"]
    assert made == "False"
    assert loaded.split() == []


def test_a_patched_source_list_is_what_runs(monkeypatch):
    only_commands = tuple(s for s in live.SOURCES if s.probe is None)
    monkeypatch.setattr(live, "SOURCES", only_commands)
    assert live.selected(live.Options()) == list(only_commands)
    assert live.selected(live.Options(prolog=True)) == []


def test_a_command_the_kernel_refuses_is_not_available_not_failed():
    """dmesg where kernel.dmesg_restrict=1: the kernel log is kept from a user who is not root."""
    from topodiag.live.commands import CommandResult

    src = live.LiveSource("kernel_log", "commands/kernel_log.txt", 10.0, False, ("dmesg",))  # as before the probe
    res = CommandResult(("dmesg",), 1, "", "dmesg: read kernel buffer failed: Operation not permitted\n", 0.01)
    rec = live._from_command(src, res)
    assert rec.status == "not_available" and rec.member is None
    assert "not permitted for this user" in rec.reason and "dmesg_restrict" in rec.reason
    # a file the host does not have (a container without /proc/modules) is not available either
    res = CommandResult(("cat", "/proc/modules"), 1, "", "cat: /proc/modules: No such file or directory\n", 0.01)
    assert live._from_command(src, res).status == "not_available"
    # any other failure stays a failure
    res = CommandResult(("dmesg",), 1, "", "dmesg: klogctl failed: Invalid argument\n", 0.01)
    assert live._from_command(src, res).status == "failed"


def test_progress_lines_never_share_a_line_and_name_the_probe(capsys):
    """Each source's progress line is printed whole (one at a time, from any thread) and a source fed
    by two probes names the probe (sysfs_infiniband (sysfs.json) / (pyverbs.json))."""
    import threading

    from topodiag.cli.check import progress_line

    calls = []

    def slow_source(opts):
        return {"ok": True}

    sources = [live.LiveSource("sysfs_infiniband", "probes/sysfs.json", 5.0, True, probe=slow_source),
               live.LiveSource("sysfs_infiniband", "probes/pyverbs.json", 5.0, True, probe=slow_source)]
    seen_threads = set()

    def progress(rec):
        seen_threads.add(threading.current_thread().name)
        calls.append(rec.where)
        progress_line(rec)

    live.collect(live.Options(deadline_s=10), sources=sources, progress=progress)
    err = capsys.readouterr().err.splitlines()
    assert sorted(calls) == ["probes/pyverbs.json", "probes/sysfs.json"]
    assert sorted(ln.split()[1] for ln in err) == ["(pyverbs.json)", "(sysfs.json)"]
    assert all(ln.count("sysfs_infiniband") == 1 for ln in err)
