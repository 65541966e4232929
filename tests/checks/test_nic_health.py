"""IB017 (hca-firmware-error): the mlx5 health reporter's lines, one finding per card, named by its RDMA
device where the model knows the PCI address."""

from __future__ import annotations

from pathlib import Path

from topodiag.checks import nic_health
from topodiag.engine import Severity
from topodiag.parsers import blank_provenance_header, kernel_log

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "kernel_log"
REAL = FIX / "kernel-log-mlx5-health-miss-count-fw-internal-error-cx6dx-01.txt"


class _Topo:
    """The one model question the check asks: which node a PCI address names."""

    def __init__(self, aliases: dict) -> None:
        self.aliases = aliases

    def resolve(self, name: str) -> str:
        return self.aliases.get(name, name)


def test_one_finding_per_card_with_every_function():
    log = kernel_log.parse(blank_provenance_header(REAL.read_text()))
    hits = list(nic_health.ib017(log))
    assert len(hits) == 1
    h = hits[0]
    assert h.severity is None  # the rule's: error
    assert h.values["card"] == "0000:0d:00" and h.values["events"] == 10
    assert h.values["functions"] == "0000:0d:00.0, 0000:0d:00.1, 0000:0d:00.2, 0000:0d:00.3, 0000:0d:00.4, 0000:0d:00.5"
    assert "miss count" in h.values["what"] and "0x1" in h.values["what"] and "ERROR" in h.values["what"]


def test_joined_to_the_hca_the_model_knows():
    log = kernel_log.parse(blank_provenance_header(REAL.read_text()))
    h = next(nic_health.ib017(log, _Topo({"0000:0d:00.0": "nic:mlx5_2", "0000:0d:00.1": "nic:mlx5_3"})))
    assert list(h.subjects)[:2] == ["nic:mlx5_2", "nic:mlx5_3"] and "pci:0000:0d:00.2" in h.subjects
    assert h.notes[0] == "rdma" and h.values["nics"] == "mlx5_2, mlx5_3"


def test_forms_of_the_health_lines():
    text = ("[   17.982092] mlx5_core 0000:41:00.0: poll_health:852:(pid 0): device's health compromised - reached miss count\n"
            "[   17.982217] mlx5_core 0000:41:00.0: print_health_info:458:(pid 0): synd 0x8: unrecoverable hardware error\n"
            "[   18.0] mlx5_core 0000:42:00.0: Fatal error 1 detected\n"
            "[   19.0] mlx5_core 0000:43:00.0: print_health_info:431:(pid 0): Health issue observed, High temperature, severity(4) WARNING:\n")
    log = kernel_log.parse(text)
    assert [(e.device, e.kind, e.syndrome, e.severity) for e in log.nic_health] == [
        ("0000:41:00.0", "miss_count", None, None), ("0000:41:00.0", "syndrome", "0x8", None),
        ("0000:42:00.0", "fatal", "1", None), ("0000:43:00.0", "health_issue", "High temperature", "WARNING")]
    hits = {h.values["card"]: h for h in nic_health.ib017(log)}
    assert hits["0000:41:00"].severity is None and hits["0000:42:00"].severity is None
    assert "fatal sensor 1" in hits["0000:42:00"].values["what"]
    assert hits["0000:43:00"].severity == Severity.WARNING  # the firmware's own grade: a warning


def test_a_recovery_the_driver_reports_ends_the_finding():
    text = ("[   17.98] mlx5_core 0000:41:00.0: poll_health:852:(pid 0): device's health compromised - reached miss count\n"
            "[   18.10] mlx5_core 0000:41:00.0: mlx5_health_try_recover:335:(pid 5): starting health recovery flow\n"
            "[   21.00] mlx5_core 0000:41:00.0: mlx5_health_try_recover:341:(pid 5): health recovery succeeded\n"
            "[   30.00] mlx5_core 0000:42:00.0: poll_health:852:(pid 0): device's health compromised - reached miss count\n"
            "[   31.00] mlx5_core 0000:42:00.0: mlx5_health_try_recover:338:(pid 5): health recovery failed\n")
    log = kernel_log.parse(text)
    assert [e.kind for e in log.nic_health] == ["miss_count", "recovered", "miss_count", "recovery_failed"]
    hits = list(nic_health.ib017(log))
    assert [h.values["card"] for h in hits] == ["0000:42:00"]
    assert "recovery failed" in hits[0].values["what"]
