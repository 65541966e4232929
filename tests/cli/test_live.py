"""Live `check`, `collect` and `prolog` with no hardware: NVML replayed from a recorded probe by the
real pynvml over a fake libnvidia-ml, in the probe's child process (tests/fakes/nvml_child.py), sysfs from a recorded tree, nvidia-smi and ibstat as small scripts on PATH that
print recorded outputs (or hang, or fail as a lost GPU does). A bundle collected under the same
conditions must give the findings the live check gave."""

from __future__ import annotations

import json
import sys
import tarfile
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.exit_codes import ExitCode
from tests.fakes import nvml_child

ROOT = Path(__file__).resolve().parents[2]
FX = ROOT / "fixtures"
H100_PROBE = FX / "nvml" / "nvml-invented-h100-hgx-8gpu-nvswitch-01.json"
H100_SYSFS = FX / "sysfs" / "hgx-h100-cx7-ndr-8rail"
TOPO = FX / "nvidia_smi_topo_m" / "topo-h100-hgx-nv18-8nic-pix-gpunumaid-01.txt"
NVLINK = FX / "nvidia_smi_nvlink_s" / "nvlink-status-h100-elided-short-01.txt"
P2P = FX / "nvidia_smi_topo_p2p" / "topo-p2p-r-h100-8gpu-all-ok-01.txt"
NVLINK_E = FX / "nvidia_smi_nvlink_e" / "nvlink-e-h100-error-counters-elided-01.txt"
IBSTAT = FX / "ibstat" / "ibstat-cx7-ndr-400-ib-active-h20-01.txt"  # the source of the sysfs tree's HCA values


def body(path: Path) -> str:
    """A recorded output without its #@ provenance header: what the tool itself printed."""
    lines = path.read_text().splitlines(keepends=True)
    end = next(i for i, ln in enumerate(lines) if ln.startswith("#@ ---"))
    return "".join(lines[end + 1:])


def probe_json(path: Path) -> dict:
    return json.loads("".join(ln for ln in path.read_text().splitlines(keepends=True) if not ln.startswith("#@")))


@pytest.fixture
def node(tmp_path, monkeypatch):
    """An 8x H100 node: NVML replayed (fake libnvidia-ml), a recorded sysfs tree, nvidia-smi and ibstat printing recorded
    outputs, no ibv_devinfo or show_gids. Returns a function that swaps the nvidia-smi script."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    for name, src in (("topo_m", TOPO), ("nvlink_s", NVLINK), ("p2p", P2P), ("nvlink_e", NVLINK_E)):
        (outputs / name).write_text(body(src))

    def nvidia_smi(script: str) -> None:
        path = bin_dir / "nvidia-smi"
        path.write_text("#!/bin/sh\n" + script)
        path.chmod(0o755)

    (outputs / "ibstat").write_text(body(IBSTAT))
    ibstat = bin_dir / "ibstat"
    ibstat.write_text(f"#!/bin/sh\ncat {outputs}/ibstat\n")
    ibstat.chmod(0o755)
    nvidia_smi(f"""case "$1 $2" in
  "topo -m") cat {outputs}/topo_m ;;
  "nvlink -s") cat {outputs}/nvlink_s ;;
  "nvlink -e") cat {outputs}/nvlink_e ;;
  "topo -p2p") cat {outputs}/p2p ;;
  *) echo "unexpected: $*" >&2; exit 2 ;;
esac
""")
    # the host's own kernel log and command line stay out of the test: dmesg prints a healthy boot,
    # `cat /proc/cmdline` a bare-metal GPU node's (every other cat is the real one)
    dmesg = bin_dir / "dmesg"
    dmesg.write_text("#!/bin/sh\necho '[    9.870] mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE'\n"
                     "echo '[   10.001] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024'\n")
    dmesg.chmod(0o755)
    cat = bin_dir / "cat"
    cat.write_text('#!/bin/sh\nif [ "$1" = /proc/cmdline ]; then echo "BOOT_IMAGE=/vmlinuz-6.8.0 root=UUID=0b1 ro iommu=pt"; '
                   'else exec /bin/cat "$@"; fi\n')
    cat.chmod(0o755)
    # the Fabric Manager unit of an NVSwitch node, running (tests that stop it write their own)
    fabric_manager(bin_dir, 0, "* nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
                   "     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled)\n"
                   "     Active: active (running) since Mon 2024-07-01 10:00:00 UTC; 2h ago\n")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")  # sleep; no IB tool is there
    nvml_child.use(monkeypatch, H100_PROBE)
    monkeypatch.setitem(sys.modules, "pyverbs", None)  # rdma-core's bindings are not there
    return nvidia_smi


def fabric_manager(bin_dir: Path, rc: int, stdout: str = "", stderr: str = "") -> None:
    """A `systemctl` that answers `systemctl status nvidia-fabricmanager` as given."""
    path = bin_dir / "systemctl"
    path.write_text("#!/bin/sh\ncat <<'EOF'\n" + stdout + "EOF\n" + ("cat >&2 <<'EOF'\n" + stderr + "\nEOF\n" if stderr else "") + f"exit {rc}\n")
    path.chmod(0o755)


def run(*args: str):
    res = CliRunner().invoke(app, list(args))
    data = json.loads(res.stdout) if res.stdout.strip().startswith("{") else None
    return res, data


def findings(report: dict) -> list[tuple]:
    return sorted((f["code"], f["severity"], f["message"]) for f in report["findings"])


def test_live_check_of_a_healthy_node(node):
    res, report = run("check", "--sysfs-root", str(H100_SYSFS), "--format", "json")
    assert res.exit_code == ExitCode.OK, res.output
    status = {(i["source"], i["path"]): i["status"] for i in report["inputs"]}
    assert status[("nvml", "live/probes/nvml.json")] == "parsed"
    assert status[("sysfs_infiniband", "live/probes/sysfs.json")] == "parsed"
    assert status[("nvidia_smi_topo_m", "live/commands/nvidia_smi_topo_m.txt")] == "parsed"
    assert status[("ibstat", "live/commands/ibstat.txt")] == "parsed"
    assert status[("ibv_devinfo", "live: ibv_devinfo")] == "absent"
    assert (report["profile"], report["profile_reason"]) == ("dgx-h100", "detected from NVIDIA H100 80GB HBM3")
    assert not [f for f in report["findings"] if f["severity"] in ("warning", "error", "critical")], report["findings"]
    assert "IB001" in [c for c in json.loads(json.dumps(report["summary"]))] or report["summary"]["rules_run"] >= 15


def test_collect_then_check_the_bundle_gives_the_live_findings(node, tmp_path):
    res, live = run("check", "--sysfs-root", str(H100_SYSFS), "--format", "json")
    out = tmp_path / "node.tar.gz"
    res = CliRunner().invoke(app, ["collect", "--sysfs-root", str(H100_SYSFS), "-o", str(out)])
    assert res.exit_code == ExitCode.OK, res.output
    assert res.stdout.strip() == str(out)
    with tarfile.open(out) as tar:
        names = set(tar.getnames())
        manifest = json.loads(tar.extractfile("node/manifest.json").read())
    assert {"node/manifest.json", "node/probes/nvml.json", "node/probes/sysfs.json",
            "node/commands/nvidia_smi_topo_m.txt"} <= names
    assert any(n.startswith("node/sysfs/sys/class/infiniband/mlx5_0") for n in names)
    by_source = {e["member"] or e["source"]: e for e in manifest["sources"]}
    topo = by_source["commands/nvidia_smi_topo_m.txt"]
    assert topo["argv"] == ["nvidia-smi", "topo", "-m"] and topo["rc"] == 0 and topo["status"] == "ok"
    assert topo["timed_out"] is False and len(topo["sha256"]) == 64 and topo["duration_s"] >= 0
    assert by_source["ibv_devinfo"]["status"] == "not_available"
    assert manifest["tool"]["name"] == "topodiag" and manifest["facts"]["kernel"]
    res, bundled = run("check", "--from", str(out), "--format", "json")
    assert findings(bundled) == findings(live)
    assert bundled["summary"]["exit_code"] == live["summary"]["exit_code"]


def test_a_hanging_nvidia_smi_ends_within_the_deadline(node):
    node("sleep 60\n")
    start = time.monotonic()
    res, report = run("check", "--sysfs-root", str(H100_SYSFS), "--deadline", "3", "--format", "json")
    took = time.monotonic() - start
    assert took < 30, took  # nvidia-smi sleeps 60 s: well under it means it was not waited for
    assert res.exit_code == ExitCode.INCOMPLETE, res.output
    sys001 = [f for f in report["findings"] if f["code"] == "SYS001"]
    assert {f["subjects"][0] for f in sys001} == {"source:nvidia_smi_topo_m", "source:nvidia_smi_nvlink_s",
                                                 "source:nvidia_smi_nvlink_e", "source:nvidia_smi_topo_p2p"}
    assert all("timeout" in f["message"] or "deadline" in f["message"] for f in sys001)
    # NVML and sysfs still answered: the rules that need them ran
    assert report["summary"]["rules_run"] >= 10


def test_a_gpu_that_fell_off_the_bus(node):
    node('echo "Unable to determine the device handle for GPU0000:4E:00.0: GPU is lost.  Reboot the system '
         'to recover this GPU" >&2; exit 15\n')
    res, report = run("check", "--sysfs-root", str(H100_SYSFS), "--format", "json")
    assert res.exit_code == ExitCode.FINDINGS, res.output
    codes = {(f["code"], f["severity"]) for f in report["findings"]}
    assert ("TOPO006", "critical") in codes
    reasons = [f["message"] for f in report["findings"] if f["code"] == "SYS001"]
    assert reasons and all("exit 15: a GPU has fallen off the bus" in r for r in reasons)


def test_prolog_one_line_and_exit_codes(node, monkeypatch):
    res = CliRunner().invoke(app, ["prolog", "--sysfs-root", str(H100_SYSFS)])
    # 19 prolog rules since GPU003, IB017 and GDR001 (wt-k12); GPU003 and IB017 are skipped here: the
    # recorded root has no dev/kmsg ("not readable"); GDR001 runs on the peermem probe (an info: no
    # /proc/modules under the root, "not visible")
    assert res.exit_code == ExitCode.OK and res.stdout == "topodiag: ok (17 of 19 checks ran)\n"
    # NVML reports GPU 3 lost: a critical finding, the node drains
    nvml_child.use(monkeypatch, H100_PROBE, lost=[3])
    res = CliRunner().invoke(app, ["prolog", "--sysfs-root", str(H100_SYSFS)])
    assert res.exit_code == ExitCode.FINDINGS
    assert res.stdout.startswith("topodiag: TOPO006 gpu-missing gpu:3") and len(res.stdout) <= 201


def test_prolog_does_not_drain_when_it_cannot_see(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    nvml_child.use(monkeypatch, H100_PROBE, init_error="NVML_ERROR_TIMEOUT")
    res = CliRunner().invoke(app, ["prolog", "--sysfs-root", str(H100_SYSFS)])
    assert res.exit_code == ExitCode.OK and res.stdout.startswith("topodiag: incomplete: SYS001 source-failed source:nvml")
    res = CliRunner().invoke(app, ["prolog", "--sysfs-root", str(H100_SYSFS), "--strict"])
    assert res.exit_code == ExitCode.INCOMPLETE


def test_a_host_without_gpu_or_hca(tmp_path, monkeypatch):
    """No NVIDIA library, no tools, a sysfs tree with nothing under class/infiniband: a clean run."""
    monkeypatch.setenv("PATH", str(tmp_path))
    nvml_child.use(monkeypatch, H100_PROBE, init_error="NVML_ERROR_LIBRARY_NOT_FOUND")
    monkeypatch.setitem(sys.modules, "pyverbs", None)
    (tmp_path / "root" / "sys" / "class").mkdir(parents=True)
    res, report = run("check", "--sysfs-root", str(tmp_path / "root"), "--format", "json")
    assert res.exit_code == ExitCode.OK, res.output
    assert report["findings"] == []
    absent = {i["source"] for i in report["inputs"] if i["status"] == "absent"}
    assert {"nvml", "nvidia_smi_topo_m", "ibstat", "ibv_devinfo"} <= absent
    res = CliRunner().invoke(app, ["check", "--sysfs-root", str(tmp_path / "root"), "--format", "text", "--verbose"])
    assert "Not on this host" in res.stdout and "nvidia-smi is not installed" in res.stdout
    out = tmp_path / "b"
    res = CliRunner().invoke(app, ["collect", "--sysfs-root", str(tmp_path / "root"), "-o", str(out)])
    assert res.exit_code == ExitCode.OK and (out / "manifest.json").is_file()
    assert "topodiag: collected" in res.stderr


def test_collect_takes_the_users_logs(node, tmp_path):
    log = FX / "nccl_debug" / "nccl-ib-roce-mixed-gdr-2.16-gather-01.log"  # also holds gather_perf results
    out = tmp_path / "b"
    res = CliRunner().invoke(app, ["collect", "--sysfs-root", str(H100_SYSFS), "--nccl-log", str(log), "-o", str(out)])
    assert res.exit_code == ExitCode.OK, res.output
    manifest = json.loads((out / "manifest.json").read_text())
    logs = [e for e in manifest["sources"] if e["member"] and e["member"].startswith("logs/")]
    assert {e["source"] for e in logs} == {"nccl_debug", "nccl_tests"} and len({e["member"] for e in logs}) == 1
    assert (out / logs[0]["member"]).read_bytes() == log.read_bytes()
    res = CliRunner().invoke(app, ["collect", "--nccl-log", str(tmp_path / "missing.log"), "-o", str(tmp_path / "c")])
    assert res.exit_code == ExitCode.INCOMPLETE and "missing.log: no such file" in res.stderr


@pytest.mark.parametrize("error, drains", [("NVML_ERROR_DRIVER_NOT_LOADED", True),
                                           ("NVML_ERROR_LIB_RM_VERSION_MISMATCH", True),
                                           ("NVML_ERROR_TIMEOUT", False), ("NVML_ERROR_NO_PERMISSION", False)])
def test_nvml_failing_on_a_host_whose_pci_bus_shows_gpus(tmp_path, monkeypatch, error, drains):
    """8 H100 on the PCI bus (sysfs) and NVML failing: a broken driver stack drains (TOPO006); a slow or
    unprivileged NVML is the diagnostic's problem (SYS001 only, no drain)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    nvml_child.use(monkeypatch, H100_PROBE, init_error=error)
    monkeypatch.setitem(sys.modules, "pyverbs", None)
    res = CliRunner().invoke(app, ["prolog", "--sysfs-root", str(H100_SYSFS)])
    assert (res.exit_code == ExitCode.FINDINGS) is drains, res.stdout
    assert res.stdout.startswith("topodiag: TOPO006") is drains


def test_collect_redact_leaves_no_identifier_and_the_same_findings(node, tmp_path):
    """A redacted bundle of the H100 node: no hostname, GPU UUID or serial, HCA GUID, LID or address of
    the node survives in any member, and the bundle gives the findings of an unredacted one."""
    import socket

    log = FX / "nccl_debug" / "nccl-ib-gdrdma-p2p-direct-2node-01.log"
    plain, red = tmp_path / "plain.tar.gz", tmp_path / "red.tar.gz"
    for out, extra in ((plain, []), (red, ["--redact"])):
        res = CliRunner().invoke(app, ["collect", "--sysfs-root", str(H100_SYSFS), "--nccl-log", str(log),
                                       "-o", str(out), *extra])
        assert res.exit_code == ExitCode.OK, res.output
    probe = probe_json(H100_PROBE)
    originals = {socket.gethostname(), "nodea", "nodeb"}
    originals |= {g["uuid"] for g in probe["gpus"]} | {g["serial"] for g in probe["gpus"] if g["serial"] != "n/a"}
    sysfs = json.loads("".join(ln for ln in (FX / "sysfs_infiniband" / "hgx-h100-cx7-ndr-8rail.json")
                               .read_text().splitlines(keepends=True) if not ln.startswith("#@")))
    for dev in sysfs["infiniband"]:
        originals |= {dev["node_guid"], dev["sys_image_guid"]} - {None}
        originals |= {p["port_guid"] for p in dev["ports"] if p.get("port_guid")}
    with tarfile.open(red) as tar:
        texts = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
        manifest = json.loads(next(t for n, t in texts.items() if n.endswith("/manifest.json")))
    assert manifest["redacted"] is True and manifest["host"].startswith("host-")
    import re

    survivors = [(o, n) for o in originals for n, t in texts.items()
                 if o and re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", t)]
    assert not survivors, survivors[:5]
    _, a = run("check", "--from", str(plain), "--format", "json")
    _, b = run("check", "--from", str(red), "--format", "json")
    assert sorted((f["code"], f["severity"]) for f in a["findings"]) == \
        sorted((f["code"], f["severity"]) for f in b["findings"])


def test_fabric_manager_stopped_on_an_nvswitch_node(node, tmp_path):
    """`systemctl status` exits 3 for a unit that is not running: an answer, read as FAB002 on the
    8x H100 NVSwitch node."""
    fabric_manager(tmp_path / "bin", 3, "* nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
                   "     Active: failed (Result: exit-code) since Mon 2024-07-01 10:00:00 UTC; 2h ago\n")
    res, report = run("check", "--format", "json")
    fab = [f for f in report["findings"] if f["code"] == "FAB002"]
    assert len(fab) == 1 and fab[0]["severity"] == "error" and "not running (failed)" in fab[0]["message"]
    assert res.exit_code == ExitCode.FINDINGS


def test_fabric_manager_without_systemd_is_not_available(node, tmp_path):
    """In a container whose PID 1 is not systemd there is no unit to ask: not available, no finding."""
    fabric_manager(tmp_path / "bin", 1, "", "System has not been booted with systemd as init system (PID 1). Can't operate.")
    res, report = run("check", "--format", "json")
    assert not [f for f in report["findings"] if f["code"].startswith("FAB")]
    fm = [i for i in report["inputs"] if i["source"] == "fabricmanager"]
    assert fm and fm[0]["status"] == "absent" and "systemd is not PID 1" in fm[0]["reason"], fm


def test_collect_puts_the_html_report_in_the_bundle(node, tmp_path):
    """report.html beside the members: the bundle's own check as one page, paths relative to the
    bundle; readers ignore it (not a manifest member), so the bundle checks the same."""
    out = tmp_path / "b"
    res = CliRunner().invoke(app, ["collect", "--sysfs-root", str(H100_SYSFS), "-o", str(out)])
    assert res.exit_code == ExitCode.OK, res.output
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "topodiag-collect-" not in page and "Checklist" in page
    manifest = json.loads((out / "manifest.json").read_text())
    assert "report.html" not in [s.get("member") for s in manifest["sources"]]
    _, report = run("check", "--from", str(out), "--format", "json")
    assert report["summary"]["exit_code"] == 0


def test_collect_names_each_missing_source_by_its_probe_with_why():
    """The summary line groups what is missing by what happened, with the reason, and names the probe
    of a source fed by two (the sysfs probe ran; pyverbs is what is absent)."""
    from topodiag.cli.collect import collected_line
    from topodiag.live.collection import Record

    ok = Record("sysfs_infiniband", "ok", "probes/sysfs.json", "{}", where="probes/sysfs.json")
    absent = Record("sysfs_infiniband", "not_available", "probes/pyverbs.json", "{}",
                    reason="pyverbs not importable", where="probes/pyverbs.json")
    tool = Record("ibstat", "not_available", None, reason="ibstat is not installed (not on PATH)")
    text = collected_line([ok, absent, tool])
    assert text.splitlines()[0] == "topodiag: collected 1 of 3 sources"
    assert " ".join(text.split()[6:]) == ("not on this host: sysfs_infiniband (pyverbs.json): "
                                          "pyverbs not importable; ibstat: ibstat is not installed (not on PATH)")
    assert max(len(ln) for ln in text.splitlines()) <= 80 and text.splitlines()[1].startswith("  not on this host")
