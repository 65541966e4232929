"""Bundle = live: every recorded host of fixtures/hosts/ replayed both ways gives the same report.

Each scenario's manifest entries become live sources: a command is a fake tool on PATH (the entry's
argv, or the parser's) that prints the member, exits with the entry's code, sleeps past its
timeout or is not installed, as the entry says; a probe (probes/*.json) is a fake probe returning the
member's JSON. Then the live `check` (collecting in memory) and `check --from` the bundle that
`collect` wrote from the same sources must give the same exit code, findings and inputs (paths
aside). A tool that exits 0 and prints nothing (lspci in a container) is one more scenario: `collect`
wrote a bundle that `check --from` refused (exit 3) while the live check passed.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.host_fixture import HOSTS
from topodiag.cli import app
from topodiag.exit_codes import ExitCode

SCENARIOS = sorted(p.name for p in HOSTS.iterdir() if p.is_dir())
TIMED_OUT_S = 0.3  # the timeout a replayed "timed_out" entry's tool is given (it sleeps 5 s)


def _json_of(path: Path) -> dict:
    text = "".join(ln for ln in path.read_text().splitlines(keepends=True) if not ln.startswith("#@"))
    return json.loads(text)


class Replay:
    """Fake tools in one folder (the only PATH) and the LiveSources that run them."""

    def __init__(self, bin_dir: Path):
        self.bin = bin_dir
        self.bin.mkdir()
        self.cases: dict[str, list[str]] = {}  # tool -> its `case` arms
        self.sources: list = []
        self.used: set[tuple[str, ...]] = set()

    def _tool(self, argv: tuple[str, ...]) -> tuple[str, ...]:
        """argv, or argv with a tool of its own when that argv is replayed already (two dmesg members)."""
        name, n = argv[0], 1
        while (name, *argv[1:]) in self.used:
            n += 1
            name = f"{argv[0]}-{n}"
        self.used.add((name, *argv[1:]))
        return (name, *argv[1:])

    def command(self, source: str, member: str, argv: tuple[str, ...], body: str, timeout_s: float = 10.0,
                answer_rcs: tuple[int, ...] = ()) -> None:
        from topodiag.live.collection import LiveSource

        argv = self._tool(argv)
        self.cases.setdefault(argv[0], []).append(f"{shlex.quote(' '.join(argv[1:]))}) {body} ;;")
        self.sources.append(LiveSource(source, member, timeout_s, False, argv, answer_rcs=answer_rcs))

    def missing(self, source: str, member: str) -> None:
        from topodiag.live.collection import LiveSource

        self.sources.append(LiveSource(source, member, 5.0, False, (f"not-installed-{source}",)))

    def probe(self, source: str, member: str, data: dict) -> None:
        from topodiag.live.collection import LiveSource

        self.sources.append(LiveSource(source, member, 5.0, False, probe=lambda opts, d=data: json.loads(json.dumps(d))))

    def write(self) -> None:
        for tool, arms in self.cases.items():
            path = self.bin / tool
            path.write_text("#!/bin/sh\ncase \"$*\" in\n" + "\n".join(arms) + "\nesac\nexit 1\n")
            path.chmod(0o755)


def replay_of(name: str, bin_dir: Path) -> Replay:
    from topodiag.parsers import SOURCES, info

    manifest = json.loads((HOSTS / name / "manifest.json").read_text())
    rp = Replay(bin_dir)
    for e in manifest["sources"]:
        source, status, member = e["source"], e["status"], e.get("member")
        known = info(source) if source in SOURCES else None
        argv = tuple(e.get("argv") or (known.argv if known and known.argv else ()) or (f"replay-{source}",))
        answer_rcs = known.answer_rcs if known else ()
        target = member or f"commands/{source}.txt"
        if member and member.startswith("probes/"):
            rp.probe(source, member, _json_of(HOSTS / name / member))
        elif status == "not_available":
            rp.missing(source, target)
        elif status == "timed_out":
            rp.command(source, target, argv, "exec /bin/sleep 5", timeout_s=TIMED_OUT_S)
        else:
            rc = e.get("rc") if status == "failed" or e.get("rc") in answer_rcs else 0
            cat = f"/bin/cat {shlex.quote(str(HOSTS / name / member))}; " if member else ""
            rp.command(source, target, argv, f"{cat}exit {rc if rc is not None else 1}", answer_rcs=answer_rcs)
    rp.write()
    return rp


def _normal(report: dict, root: str) -> dict:
    """The parts of a report that must agree, with the bundle's paths written as the live run's."""
    text = json.dumps({k: report[k] for k in ("findings", "inputs", "skipped", "summary", "host", "profile")
                       if k in report})
    # a timed-out tool's measured time differs between the two collections (live, then collect)
    text = re.sub(r"(timed out after|within the) \d+(\.\d+)? s", r"\1 N s", text)
    return json.loads(text.replace(root, "live"))


def both_ways(sources: list, tmp_path: Path, monkeypatch) -> tuple:
    """(live exit code, live report, bundle exit code, bundle report), both normalised."""
    from topodiag.live import collection

    monkeypatch.setattr(collection, "selected", lambda opts: list(sources))
    runner = CliRunner()
    live = runner.invoke(app, ["check", "--format", "json"])
    assert live.stdout.startswith("{"), live.output
    bundle = tmp_path / "bundle"
    made = runner.invoke(app, ["collect", "--output", str(bundle)])
    assert made.exit_code == 0, made.output
    offline = runner.invoke(app, ["check", "--from", str(bundle), "--format", "json"])
    assert offline.stdout.startswith("{"), offline.output
    return (live.exit_code, _normal(json.loads(live.stdout), "live"),
            offline.exit_code, _normal(json.loads(offline.stdout), str(bundle)))


@pytest.fixture
def fake_path(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    monkeypatch.setenv("PATH", str(bin_dir))  # the fakes only: no real tool of this machine answers
    return bin_dir


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_recorded_host_gives_the_same_report_live_and_from_its_bundle(name, tmp_path, fake_path, monkeypatch):
    rp = replay_of(name, fake_path)
    live_rc, live, bundle_rc, offline = both_ways(rp.sources, tmp_path, monkeypatch)
    assert bundle_rc == live_rc
    assert offline["findings"] == live["findings"]
    assert offline["inputs"] == live["inputs"]
    assert offline == live
    # the replay read what the scenario holds: each member that parses from the fixture parses live
    expected = json.loads((HOSTS / f"{name}.expected.json").read_text())
    if expected["exit_code"] == ExitCode.OK:
        assert live_rc == ExitCode.OK, live["findings"]


def test_an_empty_answer_is_recorded_and_read_back_as_such(tmp_path, fake_path, monkeypatch):
    """lspci in a container: exit 0, nothing printed. The bundle keeps the empty member (its sha256
    the empty string's) and both ways it is an absent input with the reason, no finding, exit 0."""
    topo = HOSTS / "dgx1-v100-one-hca" / "commands" / "nvidia_smi_topo_m.txt"
    rp = Replay(fake_path)
    rp.command("nvidia_smi_topo_m", "commands/nvidia_smi_topo_m.txt", ("nvidia-smi", "topo", "-m"),
               f"/bin/cat {shlex.quote(str(topo))}; exit 0")
    rp.command("lspci_tree", "commands/lspci_tree.txt", ("lspci", "-tv"), "exit 0")
    rp.command("lspci_vvv", "commands/lspci_vvv.txt", ("lspci", "-vvv"), "echo; echo '  '; exit 0")
    rp.write()
    live_rc, live, bundle_rc, offline = both_ways(rp.sources, tmp_path, monkeypatch)
    assert live_rc == bundle_rc == ExitCode.OK
    assert offline == live
    rows = {r["source"]: r for r in live["inputs"]}
    assert rows["lspci_tree"] == {"path": "live/commands/lspci_tree.txt", "source": "lspci_tree", "status": "absent",
                                  "reason": "lspci -tv exited 0 and printed nothing"}
    assert rows["lspci_vvv"]["status"] == "absent" and rows["nvidia_smi_topo_m"]["status"] == "parsed"
    manifest = json.loads((tmp_path / "bundle" / "manifest.json").read_text())
    [entry] = [e for e in manifest["sources"] if e["source"] == "lspci_tree"]
    assert (entry["status"], entry["member"], entry["rc"]) == ("ok", "commands/lspci_tree.txt", 0)
    assert entry["sha256"] == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # sha256 of b""
    assert (tmp_path / "bundle" / "commands" / "lspci_tree.txt").read_bytes() == b""


def test_an_empty_answer_from_an_earlier_collect_is_read(tmp_path):
    """An earlier collect wrote an empty answer as an "ok" entry without a member (rc 0): read as
    printed nothing, not refused (exit 3)."""
    root = tmp_path / "b"
    (root / "commands").mkdir(parents=True)
    topo = (HOSTS / "dgx1-v100-one-hca" / "commands" / "nvidia_smi_topo_m.txt").read_text()
    (root / "commands" / "t.txt").write_text(topo)
    (root / "manifest.json").write_text(json.dumps({"schema_version": 1, "host": "n1", "sources": [
        {"source": "nvidia_smi_topo_m", "status": "ok", "member": "commands/t.txt"},
        {"source": "lspci_tree", "status": "ok", "member": None, "argv": ["lspci", "-tv"], "rc": 0}]}))
    res = CliRunner().invoke(app, ["check", "--from", str(root), "--format", "json"])
    assert res.exit_code == ExitCode.OK, res.output
    rows = {r["source"]: r for r in json.loads(res.stdout)["inputs"]}
    assert rows["lspci_tree"]["status"] == "absent"
    assert rows["lspci_tree"]["reason"] == "lspci -tv exited 0 and printed nothing"


def test_a_reason_of_several_lines_reads_the_same_both_ways(tmp_path, fake_path, monkeypatch):
    """systemctl in a container (found by benchmarks/device_check.sh on a machine without systemd):
    its two stderr lines made a reason with a newline live, escaped (\\x0a) from the bundle."""
    rp = Replay(fake_path)
    rp.command("fabricmanager", "commands/fabricmanager.txt",
               ("systemctl", "status", "nvidia-fabricmanager", "--no-pager", "--lines=20"),
               "echo 'System has not been booted with systemd as init system (PID 1). Can'\\''t operate.' >&2; "
               "echo 'Failed to connect to bus: Host is down' >&2; exit 1")
    rp.write()
    live_rc, live, bundle_rc, offline = both_ways(rp.sources, tmp_path, monkeypatch)
    assert live_rc == bundle_rc == ExitCode.OK
    assert offline["inputs"] == live["inputs"]
    [row] = live["inputs"]
    assert row["status"] == "absent" and "Can't operate.\\x0aFailed to connect to bus: Host is down" in row["reason"]
