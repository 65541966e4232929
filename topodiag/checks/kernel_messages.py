"""GPU004 kernel-driver-messages: what the kernel log's drivers said that a catalogue explains and no
other rule reports: NVIDIA driver initialisation, firmware, version and reset-required messages (NVRM),
PCIe AER errors, mlx5 command and port events, nvidia-peermem failures. One finding per device (the PCI
function the lines name; the log as a whole for lines that name none) and class, at the gravity of its
worst line, with the class's meaning and fix (topodiag/catalogues/classes.toml). Reads the `kernel_log`
parser's events (the catalogue side, topodiag/parsers/_kernel_log_events.py); mlx5 health lines are
IB017's, IOMMU faults PCI003's, Xids GPU001's."""

from __future__ import annotations

from typing import Any, Iterator

from .. import catalogues
from ..engine import Evidence, check, hit, when
from ._facts import listing

CODE = "GPU004"
ORDER = ("info", "warning", "error", "critical")


def groups(kernel_log) -> dict[tuple[str, str], dict[str, Any]]:
    """{(subject, class): {severity (the worst), lines, first (the first event), entries}} of the events
    GPU004 reports."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for e in getattr(kernel_log, "events", ()) or ():
        if e.rule != CODE:
            continue
        subject = f"pci:{e.device}" if e.device else "source:kernel_log"
        g = out.setdefault((subject, e.cls), {"severity": e.severity, "lines": [], "first": e, "entries": []})
        if ORDER.index(e.severity) > ORDER.index(g["severity"]):
            g["severity"], g["first"] = e.severity, e
        g["lines"].append(e.line_no)
        if e.entry not in g["entries"]:
            g["entries"].append(e.entry)
    return out


def _entry_text(entry_id: str) -> tuple[str, str]:
    """The meaning and fix of a catalogue entry (its own, else its class's)."""
    e = catalogues.entry_for("kernel_log", entry_id)
    return (e.meaning, e.fix) if e is not None else ("", "")


def _log_totals(kernel_log, found: dict) -> dict:
    """{class: its lines in the whole log} for the classes whose kept events are fewer than that (the
    reader keeps the first MAX_EVENTS events and counts every one by class: `event_counts`)."""
    kept: dict = {}
    for (_, cls), g in found.items():
        kept[cls] = kept.get(cls, 0) + len(g["lines"])
    counts = getattr(kernel_log, "event_counts", None) or {}
    return {cls: counts[cls] for cls, n in kept.items() if counts.get(cls, 0) > n}


@check("GPU004")
def gpu004(kernel_log) -> Iterator:
    vocab = catalogues.classes()
    found = groups(kernel_log)
    totals = _log_totals(kernel_log, found)
    kept = len(getattr(kernel_log, "events", ()) or ())
    for (subject, cls), g in sorted(found.items()):
        first = g["first"]
        meaning, fix = _entry_text(first.entry)
        yield hit([subject], variant=_variant(cls),
                  severity=g["severity"], notes=when(more=len(g["lines"]) > 1, sampled=cls in totals),
                  class_total=totals.get(cls, 0), kept=kept,
                  evidence=[Evidence("kernel_log", None, first.line_no)],
                  expectation="no driver message that signals a fault",
                  device=subject.split(":", 1)[1] if subject.startswith("pci:") else "the host",
                  what=vocab.get(cls, {}).get("title", cls), text=first.text[-200:], meaning=meaning, fix=fix,
                  events=len(g["lines"]), lines=listing([str(n) for n in g["lines"]], 5))


def _variant(cls: str) -> str:
    """The message of rules/gpu/GPU004-kernel-driver-messages.toml for a class (its own, else default)."""
    if cls == "gpu-init-failure":
        return "gpu_init_failure"
    if cls == "driver-version-mismatch":
        return "driver_version_mismatch"
    if cls == "gpu-firmware":
        return "gpu_firmware"
    if cls == "gpu-reset-required":
        return "gpu_reset_required"
    if cls == "pci-resource":
        return "pci_resource"
    if cls == "pcie-aer-corrected":
        return "pcie_aer_corrected"
    if cls == "pcie-aer-uncorrected":
        return "pcie_aer_uncorrected"
    if cls == "pcie-aer-fatal":
        return "pcie_aer_fatal"
    if cls == "peermem-failure":
        return "peermem_failure"
    return "default"
