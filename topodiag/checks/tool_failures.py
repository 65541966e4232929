"""What the node tools printed instead of their tables, read through the catalogues.

- GPU005: nvidia-smi (any subcommand) answered with a failure (NVML could not start, the driver is
  unreachable or of another version, a GPU is lost): each line a catalogue entry explains, with
  its class, meaning and fix, at the entry's severity.
- PERF008: nvbandwidth waived testcases (for device_to_device ones: no P2P path between the GPUs)
  or reported a testcase error.

Lines no entry explains are SYS004's (the engine reports a result's `unrecognised`).
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from .. import catalogues
from ..engine import Evidence, Severity, check, hit

NVSMI_SOURCES = ("nvidia_smi_q", "nvidia_smi_topo_m", "nvidia_smi_topo_p2p", "nvidia_smi_nvlink_s",
                 "nvidia_smi_nvlink_e", "nvidia_smi_nvlink_c", "nvidia_smi_nvlink_gt", "nvidia_smi_nvlink_info")
_SEVERITY = {"info": Severity.INFO, "warning": Severity.WARNING, "error": Severity.ERROR, "critical": Severity.CRITICAL}


def _entry(producer: str, ident: str | None):
    if not ident:
        return None
    return next((e for e in catalogues.load(producer).entries if e.id == ident), None)


def _failures(result: Any) -> tuple:
    return tuple(getattr(result, "errors", ()) or ())


@check("GPU005")
def gpu005(nvidia_smi_q=None, nvidia_smi_topo_m=None, nvidia_smi_topo_p2p=None, nvidia_smi_nvlink_s=None,
           nvidia_smi_nvlink_e=None, nvidia_smi_nvlink_c=None, nvidia_smi_nvlink_gt=None,
           nvidia_smi_nvlink_info=None) -> Iterator:
    """Each nvidia-smi failure a catalogue entry explains, once (one text read as several nvidia-smi
    sources names them all as evidence); a lost GPU is TOPO006's (its rule reads the same lines)."""
    given = dict(zip(NVSMI_SOURCES, (nvidia_smi_q, nvidia_smi_topo_m, nvidia_smi_topo_p2p, nvidia_smi_nvlink_s,
                                     nvidia_smi_nvlink_e, nvidia_smi_nvlink_c, nvidia_smi_nvlink_gt,
                                     nvidia_smi_nvlink_info)))
    found: dict[str, tuple[Any, list]] = {}
    for source, result in given.items():
        for e in _failures(result) if result is not None else ():
            if getattr(e, "class_", None) and e.class_ != "gpu-lost":
                found.setdefault(e.entry, (e, []))[1].append(Evidence(source, None, e.line_no))
    for e, evidence in found.values():
        yield _finding(e, evidence)


def _finding(e: Any, evidence: list):
    entry = _entry("nvidia-smi", e.entry)
    gpu = _gpu_of(e.text)
    return hit([f"pci:{gpu}" if gpu else "host:local"], evidence=evidence,
               severity=_SEVERITY.get(e.severity or "", Severity.ERROR), expectation="nvidia-smi answers with its table",
               tool=evidence[0].source, line_no=e.line_no, text=e.text[:200], cls=e.class_, entry=e.entry,
               meaning=(entry.meaning if entry else "").rstrip("."), fix=entry.fix if entry else "")


def _gpu_of(text: str) -> str | None:
    """The PCI address in 'Unable to determine the device handle for GPU 0000:02:00.0: ...'."""
    m = re.search(r"(?:GPU|gpu) ?((?:[0-9A-Fa-f]{4,8}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-7])?:", text)
    if not m:
        return None
    bus = m.group(1).lower()
    return bus if bus.count(":") == 2 else f"0000:{bus}"


@check("PERF008")
def perf008(nvbandwidth) -> Iterator:
    """Waived testcases (device-to-device: no P2P between the GPUs) and testcase errors of nvbandwidth."""
    lines = [e for e in getattr(nvbandwidth, "errors", ()) or () if e.class_]
    found = _waived(nvbandwidth, lines)
    if found is not None:
        yield found
    for e in lines:
        if e.class_ != "p2p-unavailable":
            yield _failed(e)


def _waived(nvbandwidth, lines: list):
    """One finding for the waived testcases: a warning when a device_to_device one is among them."""
    waived = [t for t in nvbandwidth.testcases if t.waived]
    unnamed = [e for e in lines if e.entry == "nvbandwidth.waived"]  # v0.6+: "Waived: " names none
    d2d = [t.name for t in waived if t.name.startswith("device_to_device")]
    if d2d:
        return hit(["host:local"], evidence=[Evidence("nvbandwidth", None, waived[0].line_no)],
                   expectation="nvbandwidth runs its GPU-to-GPU testcases", variant="d2d_waived",
                   count=len(d2d), tests=", ".join(d2d[:6]))
    if not (waived or unnamed):
        return None
    first = waived[0].line_no if waived else unnamed[0].line_no
    return hit(["host:local"], evidence=[Evidence("nvbandwidth", None, first)], severity=Severity.INFO,
               expectation="nvbandwidth runs every testcase it was asked for", variant="waived",
               count=len(waived) + len(unnamed), tests=", ".join(t.name for t in waived[:6]) or "unnamed")


def _failed(e: Any):
    entry = _entry("nvbandwidth", e.entry)
    return hit(["host:local"], evidence=[Evidence("nvbandwidth", None, e.line_no)],
               severity=_SEVERITY.get(e.severity or "", Severity.ERROR), variant="failed",
               expectation="nvbandwidth's testcases run without errors", line_no=e.line_no, text=e.text[:200],
               cls=e.class_, meaning=(entry.meaning if entry else "").rstrip("."))
