"""The kernel_log reader's catalogue side (topodiag/parsers/_kernel_log_events.py): every entry of the
catalogues it reads is recognised when rendered with the prefix the kernel prints before it; stamps,
hosts and device prefixes are taken off; AER lines are graded by the severity they print; lines that
no entry explains become `unrecognised`; only gated lines are classified; short pastes are detected;
`check --source` places a paste detection cannot."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from topodiag import catalogues
from topodiag.catalogues import fmt
from topodiag.cli import app
from topodiag.parsers import ParseError, detect, kernel_log
from topodiag.parsers import _kernel_log_block as kernel_log_block
from topodiag.parsers import _kernel_log_events as kev

# what the kernel prints before each producer's message (a dmesg stamp, then the driver's prefix)
PREFIX = {"nvrm": "[  115.083711] ", "peermem": "[Fri Aug 30 11:11:22 2024] ",
          "aer": "Sep 19 16:18:02 bubz kernel: [68183.615790] pcieport 0000:00:03.1: ",
          "mlx5": "[  445.937297] mlx5_core 0000:0d:00.0: print_health_info:445:(pid 0): ",
          "iommu": "[    0.938401] nvidia 0000:07:00.0: "}
KERNEL = ("nvrm", "peermem", "aer", "mlx5", "iommu")


def _example(e) -> str:
    if e.format is not None:
        return fmt.example(e.format)
    if e.id == "iommu.amd.event":
        return "AMD-Vi: Event logged [IOTLB_INV_TIMEOUT device=07:00.0 address=0x1000]"
    if e.id == "nvrm.rm.assert_failed_reset_required":
        return "NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062)"
    if e.id == "nvrm.rm.assert_failed":
        return "NVRM: nvAssertFailedNoLog: Assertion failed: 0 @ osapi.c:1688"
    raise AssertionError(f"{e.id}: a pattern entry with no example here")


def test_the_kernel_catalogues_are_read_by_the_kernel_log_reader():
    assert {c.producer for c in catalogues.for_reader("kernel_log")} >= set(KERNEL)


@pytest.mark.parametrize("producer", KERNEL)
def test_every_entry_is_recognised_with_the_real_prefix(producer):
    cat = catalogues.load(producer)
    missed = []
    for e in cat.entries:
        line = (PREFIX[producer] if "smmu" not in e.id else "[ 5.0] arm-smmu 15000000.iommu: ") + _example(e)
        ev = kev.Events()
        if e.consequence and producer == "aer":
            ev.aer_until = 5  # an AER report's head came just before
        if not ev.gated(1, line):
            missed.append((e.id, "not gated", line))
            continue
        _device, message = kev.split(line)
        hit = catalogues.classify_for("kernel_log", message)
        if hit is None or (hit.entry.id != e.id and hit.entry.specificity < e.specificity):
            missed.append((e.id, hit.entry.id if hit else None, line))
    assert not missed, f"{len(missed)} of {len(cat.entries)}: {missed[:5]}"


def test_the_rm_names_its_gpu_by_instance_and_old_drivers_drop_the_colon():
    for line in ("[  115.083711] NVRM: GPU6 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP",
                 "[  115.083711] NVRM _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP"):
        _device, message = kev.split(line)
        assert message.startswith("NVRM: _kgspBootGspRm: unexpected WPR2")
        assert catalogues.classify_for("kernel_log", message).entry.cls == "gpu-reset-required"


@pytest.mark.parametrize("line, device, message", [
    ("[  114.859956] NVRM: GPU 0000:a1:00.0: rm_init_adapter failed, device minor number 7", "0000:a1:00.0",
     "NVRM: GPU 0000:a1:00.0: rm_init_adapter failed, device minor number 7"),
    ("[Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: x", None, "NVRM: nvAssertOkFailedNoLog: x"),
    ("Feb  9 15:47:06 debian kernel: nvidia 0000:01:00.0: AER:    [ 0] RxErr", "0000:01:00.0", "AER:    [ 0] RxErr"),
    ("jan. 29 20:50:17 kevin kernel: pcieport 0000:00:1c.5: AER: Corrected error received: id=00e5", "0000:00:1c.5",
     "AER: Corrected error received: id=00e5"),
    ("2024-01-01T12:00:00+0000 node1 kernel: mlx5_core 0000:3b:00.0 mlx5_0: poll_health:800:(pid 0): "
     "device's health compromised - reached miss count", "0000:3b:00.0", "device's health compromised - reached miss count"),
    ("kern  :err   : [   12.5] DMAR: DRHD: handling fault status reg 3", None, "DMAR: DRHD: handling fault status reg 3"),
    ("[  +0.000012] xhci_hcd 0000:47:00.1: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0032]", "0000:47:00.1",
     "AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0032]"),
])
def test_split_takes_off_stamps_hosts_and_device_prefixes(line, device, message):
    assert kev.split(line) == (device, message)


@pytest.mark.parametrize("line, cls, severity", [
    ("pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0", "pcie-aer-fatal", "critical"),
    ("pcieport 0000:00:01.0: AER: Uncorrectable (Non-Fatal) error message received from 0000:01:00.0",
     "pcie-aer-uncorrected", "error"),
    ("nvidia 0000:01:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)",
     "pcie-aer-uncorrected", "error"),
    ("pcieport 0000:00:1c.5: PCIe Bus Error: severity=Corrected, type=Physical Layer, id=00e5(Receiver ID)",
     "pcie-aer-corrected", "warning"),
])
def test_aer_lines_are_graded_by_the_severity_they_print(line, cls, severity):
    ev = kev.Events()
    ev.line(1, "[ 1.000000] " + line)
    assert [(e.cls, e.severity, e.rule) for e in ev.events] == [(cls, severity, "GPU004")]


def test_an_aer_report_continuation_is_understood_and_not_an_event():
    log = kernel_log.parse("[ 1.0] pcieport 0000:00:1c.5: AER: Corrected error received: 0000:00:1c.5\n"
                           "[ 1.1] pcieport 0000:00:1c.5:   device [8086:9d15] error status/mask=00000001/00002000\n"
                           "[ 1.2] pcieport 0000:00:1c.5:    [ 0] Receiver Error         (First)\n")
    assert [e.line_no for e in log.events] == [1] and log.unrecognised == ()


def test_unexplained_driver_failures_are_unrecognised_other_drivers_are_not_read():
    log = kernel_log.parse("[ 1.0] NVRM: frobnicateGpu: the flux capacitor failed badly\n"
                           "[ 1.1] usb 1-1: device descriptor read/64, error -71\n"
                           "[ 1.2] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 2024\n")
    assert [u.line_no for u in log.unrecognised] == [1] and log.unrecognised_total == 1 and log.events == ()


def test_events_are_capped_and_counted():
    text = "".join(f"[ {i}.0] NVRM: GPU 0000:a1:00.0: RmInitAdapter failed! (0x62:0x40:2168)\n" for i in range(1, 260))
    log = kernel_log.parse(text)
    assert len(log.events) == kev.MAX_EVENTS and log.events_total == 259
    assert log.event_counts == {"gpu-init-failure": 259}


def test_only_gated_lines_are_classified(monkeypatch):
    seen = []
    real = catalogues.classify_for
    monkeypatch.setattr(catalogues, "classify_for", lambda source, text: seen.append(text) or real(source, text))
    monkeypatch.setattr(kev, "_classified", {})  # nothing remembered from other tests
    monkeypatch.setattr(kernel_log_block, "_memo", {})
    lines = [f"[ {i}.0] usb 1-{i}: new high-speed USB device number {i} using xhci_hcd" for i in range(1, 500)]
    lines.append("[ 600.0] NVRM: GPU 0000:a1:00.0: RmInitAdapter failed! (0x62:0x40:2168)")
    kernel_log.parse("\n".join(lines))
    assert len(seen) == 1


def test_a_message_is_classified_once_and_read_the_same_each_time(monkeypatch):
    """An AER report repeated (each line read in order, inside its window): the catalogues are asked once
    per distinct message, and every report is counted as the first."""
    seen = []
    real = catalogues.classify_for
    monkeypatch.setattr(catalogues, "classify_for", lambda source, text: seen.append(text) or real(source, text))
    monkeypatch.setattr(kev, "_classified", {})
    report = ["pcieport 0000:00:03.1: AER: Corrected error received: 0000:00:03.1",
              "pcieport 0000:00:03.1: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)"]
    ev = kev.Events()
    for k in range(50):
        for j, text in enumerate(report):
            ev.line(2 * k + j + 1, f"[ {k}.{j}] {text}")
    assert len(seen) == len(set(seen)) == 2
    assert ev.total == 100 and ev.counts == {"pcie-aer-corrected": 100} and len(ev.events) == 100
    assert {e.severity for e in ev.events} == {"warning"} and ev.aer_until == 100 + kev.AER_TAIL


def test_syslog_012_newlines_are_lines_of_their_own():
    log = kernel_log.parse("Jun 30 11:07:05 gpu-0 kernel: NVRM: API mismatch: the client has the version "
                           "535.54.03, but#012NVRM: this kernel module has the version 530.30.02.  Please#012"
                           "NVRM: make sure that this kernel module and all NVIDIA driver#012NVRM: components have the same version.")
    assert [(e.line_no, e.cls) for e in log.events] == [(1, "driver-version-mismatch")]
    assert log.unrecognised == ()


@pytest.mark.parametrize("text", [
    "NVRM: API mismatch: the client has the version 390.25, but\nNVRM: this kernel module has the version 390.12.  Please\n",
    "NVRM: GPU 0000:13:00.0: RmInitAdapter failed! (0x26:0x56:1463)\n",
    "[Sun Jan 11 09:52:01 2026] NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: status=0x00000062\n"
    "[Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required\n",
    "[    0.000000] Linux version 5.18.18\n[    ....    ]\n[   24.020433] NVRM cpuidInfoAMD: Unrecognized AMD processor\n",
    "Feb 09 15:47:06 debian kernel: NVRM: GPU 0000:13:00.0: RmInitAdapter failed! (0x26:0x56:1463)\n...\n"
    "Feb 09 15:47:06 debian kernel: NVRM: GPU 0000:13:00.0: rm_init_adapter failed, device minor number 0\n",
])
def test_short_real_pastes_are_detected_as_the_kernel_log(text):
    assert detect(text) == "kernel_log"


def test_a_single_unstamped_driver_line_is_no_kernel_log_to_detection_but_parses():
    text = "pcieport 0000:00:1c.5: AER: Corrected error received: id=00e5\n"
    assert detect(text) is None
    assert [e.cls for e in kernel_log.parse(text).events] == ["pcie-aer-corrected"]
    with pytest.raises(ParseError):
        kernel_log.parse("hello\n")


def test_check_source_reads_a_paste_detection_cannot_place(tmp_path):
    paste = tmp_path / "paste.txt"
    paste.write_text("pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0\n")
    refused = CliRunner().invoke(app, ["check", "--from", str(paste), "--format", "json"])
    assert refused.exit_code == 3
    result = CliRunner().invoke(app, ["check", "--from", str(paste), "--source", "kernel_log", "--format", "json"])
    report = json.loads(result.stdout)
    found = {(f["code"], f["severity"]) for f in report["findings"]}
    assert ("GPU004", "critical") in found
    bad = CliRunner().invoke(app, ["check", "--from", str(paste), "--source", "no_such_tool"])
    assert bad.exit_code == 2
