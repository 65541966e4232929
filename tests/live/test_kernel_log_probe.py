"""The kernel-log probe: /dev/kmsg read without blocking (a recorded kmsg under --sysfs-root here),
"not readable" instead of a failure, --kernel-log-since's durations, and the prolog picks it."""

from __future__ import annotations

import json

import pytest

import topodiag.live.collection as live
from topodiag.live import kernel_log_probe as probe
from topodiag.parsers import kernel_log


def test_reads_kmsg_records_under_a_root(tmp_path):
    (tmp_path / "dev").mkdir()
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "uptime").write_text("93000.25 180000.00\n")
    (tmp_path / "dev" / "kmsg").write_text(
        "6,1,12103215,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
        "4,2,90001843308,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.\n"
        " SUBSYSTEM=pci\n")
    out = probe.probe(str(tmp_path), since_s=7200.0)
    assert out["ok"] and out["via"] == "/dev/kmsg" and out["now_s"] == 93000.25 and out["since_s"] == 7200.0
    assert len(out["records"]) == 2 and list(out)[-1] == "records"
    log = kernel_log.parse(json.dumps(out, indent=1))
    assert [x.xid for x in log.xids] == [79] and log.since_s == 7200.0


def test_not_readable_is_said_and_is_not_available(tmp_path):
    out = probe.probe(str(tmp_path))
    assert out["ok"] is False and out["error"].startswith("not readable:") and out["records"] == []
    rec = live._from_probe(next(s for s in live.PROBES if s.name == "kernel_log"), out, 0.01)
    assert rec.status == "not_available" and "not readable" in rec.reason


def test_durations():
    assert probe.parse_duration("7200") == 7200 and probe.parse_duration("2h") == 7200
    assert probe.parse_duration("90s") == 90 and probe.parse_duration("30m") == 1800
    assert probe.parse_duration("1d") == 86400 and probe.parse_duration("1.5h") == 5400
    for bad in ("", "0", "-5", "2 weeks", "h", None):
        with pytest.raises(ValueError):
            probe.parse_duration(bad)


def test_the_prolog_reads_the_kernel_log_live():
    chosen = live.selected(live.Options(prolog=True))
    assert ("kernel_log", "probes/kernel_log.json") in [(s.name, s.member) for s in chosen]


def test_prolog_refuses_a_bad_since():
    from typer.testing import CliRunner

    from topodiag.cli.app import app

    res = CliRunner().invoke(app, ["prolog", "--kernel-log-since", "soon"])
    assert res.exit_code == 2 and "--kernel-log-since" in res.output


def test_falls_back_to_syslog2_as_dmesg_does(monkeypatch):
    def refused(path):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(probe, "read_kmsg", refused)
    monkeypatch.setattr(probe, "read_syslog", lambda: [
        "<4>[90001.843308] NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus."])
    out = probe.probe("/")
    assert out["ok"] and out["via"] == "syslog(2)"
    log = kernel_log.parse(json.dumps(out, indent=1))
    assert [(x.xid, x.time_s) for x in log.xids] == [(79, 90001.843308)] and log.via == "syslog(2)"

    def no_syslog():
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(probe, "read_syslog", no_syslog)
    out = probe.probe("/")
    assert out["ok"] is False and out["error"] == ("not readable: /dev/kmsg: Permission denied; "
                                                   "syslog(2): Operation not permitted")


def test_a_kmsg_that_leads_out_of_the_root_is_not_read(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("6,1,100,-;NVRM: Xid (PCI:0000:1b:00): 79, GPU has fallen off the bus.\n")
    root = tmp_path / "root"
    (root / "dev").mkdir(parents=True)
    (root / "dev" / "kmsg").symlink_to(outside)
    got = probe.probe(str(root))
    assert got["ok"] is False and got["records"] == [] and "not readable" in got["error"]


def test_records_of_the_wrong_type_are_refused_not_called_unreadable():
    with pytest.raises(kernel_log.ParseError) as exc:
        kernel_log.parse('{"probe": "kernel_log", "schema_version": 1, "ok": true,\n "records": [1, 2]}')
    assert exc.value.line_no == 2 and "records: expected a list of strings" in exc.value.message
    with pytest.raises(kernel_log.ParseError) as exc:
        kernel_log.parse('{"probe": "kernel_log", "ok": false, "error": "not readable: /dev/kmsg"}')
    assert "could not read the kernel log: not readable: /dev/kmsg" in exc.value.message
