"""What the kernel_log parser does with a line, said without doing it (`describe`): the description
by which its block reader (_kernel_log_block.py) counts a line's key, or reads its lines in order. It
mirrors kernel_log._line / _one / _known. A helper module, no parser."""

from __future__ import annotations

from . import _kernel_log_re as K
from ._kernel_log_events import classified, gate, split
from .base import search_after

ORDERED = ("ordered",)  # read in line order by the line-by-line code
NOTHING = ("nothing",)
BLANK = ("blank",)
KNOWN = ("known",)  # a line kernel_log._known takes that records nothing (counted, not read by the catalogues)


def describe(raw: str) -> tuple:
    """What kernel_log._one does with a line, without doing it: (1 when it counts as a kernel line, a
    description) where the description is ORDERED (read in order), NOTHING, BLANK, ("plain", has "]")
    (no driver named: read only inside an AER report's window), or a counter's kind (xid, sxid,
    health, link, limit, cmdline, fault, enabled, event, unrec) with its value."""
    if (raw[:1].isdigit() and "," in raw[:8] and K._KMSG_RE.match(raw)) or (raw[:1] == " " and K._KMSG_DICT_RE.match(raw)):
        return 0, ORDERED  # a kmsg record or its KEY=value line: _line reads them
    if "#012" in raw:
        return _lines_012(raw)
    line = raw.strip()
    if not line:
        return 0, BLANK
    kflag = 1 if (K._STAMP_RE.match(raw) or "NVRM:" in line or "kernel:" in line or "mlx5_core" in line
                  or "nvidia-nvswitch" in line or K._KERNELISH_RE.search(line)) else 0
    known = _known(line)
    if known is not None:
        return kflag, known
    if gate(line):
        return kflag, _event(raw)
    return kflag, ("plain", "]" in line)


def _lines_012(raw: str) -> tuple:
    """An rsyslog line of lines ("#012"), which kernel_log._line reads as its lines: ("multi", their
    descriptions) when each only counts or does nothing (its kernel count their sum), else ORDERED
    (a line whose effect depends on its place: an AER report, a line with a "]" that an AER window
    would have read, a driver load, a UUID)."""
    kflag, descs = 0, []
    for part in K.split_012(raw):
        if not part.strip():
            continue
        k, desc = describe(part)
        if desc[0] in ("ordered", "aer", "load", "uuid") or (desc[0] == "plain" and desc[1]):
            return 0, ORDERED
        kflag += k
        descs.append(desc)
    return kflag, ("multi", tuple(descs))


def _known(line: str):
    """kernel_log._known's decision for a line, or None when it does not record the line."""
    if "NVRM" in line:
        return _nvrm(line)
    if "SXid" in line:
        return ("sxid",) if K._SXID_RE.search(line) else None
    if "mlx5_core" in line:
        if ("health" in line or "synd 0x" in line or "Fatal error" in line) and K._MLX_HEALTH_RE.search(line):
            return ("health",)
        if "Link " in line and K._MLX_LINK_RE.search(line):
            return ("link",)
    if "limited by" in line or "GPU reset executed:" in line:
        if "limited by" in line and "available PCIe bandwidth" in line:
            m = K._LIMIT_RE.search(line)
            return ("limit", m[2].lower()) if m else None
        if "GPU reset executed:" in line:
            m = K._RESET_RE.search(line)
            return ("reset", m[2] == "true") if m else None
        return None
    if "DMAR" in line or "AMD-Vi" in line or "iommu" in line or "command line" in line:
        return _iommu(line)
    return None


def _iommu(line: str):
    if K._IOMMU_DOMAIN_RE.search(line):
        return ORDERED
    if K._CMDLINE_RE.search(line):
        return ("cmdline",)
    if K._FAULT_RE.search(line):
        return ("fault", "handling fault" in line)
    if K._IOMMU_ON_RE.search(line):
        return ("enabled",)
    return None


def _nvrm(line: str):
    """kernel_log._nvrm's decision: an Xid ("xid", number, bus); a GPU off the bus named in the line
    ("fallen", bus: nothing to do once that bus is recorded); a notice waiting for its "fallen off the
    bus" line, or that line (ORDERED: their pairing depends on their places); a driver load ("load",
    version: read by key, _loads); a GPU's UUID ("uuid", uuid, bus); "known" for a line read and
    recorded nowhere."""
    m = K._XID_RE.search(line)
    if m:
        return ("xid", int(m[2]), _bus(m[1]))
    fallen = "fallen off the bus" in line
    m = search_after(line, K._FALLEN_AT_RE, K._FALLEN_WORDS_RE) if fallen else None
    if m:
        return ("fallen", _bus(m[0][1]))
    m = K._GPU_NOTICE_RE.search(line) if "The NVIDIA GPU" in line else None
    if m:
        return ("fallen", _bus(m[1])) if fallen else ORDERED
    if fallen:
        return ORDERED
    if "loading NVIDIA" in line:
        m = search_after(line, K._DRIVER_HEAD_RE, K._DRIVER_RE)
        return ("load", m[1][1]) if m else KNOWN
    if "GPU at PCI:" in line:
        m = K._UUID_AT_RE.search(line)
        return ("uuid", m[2], m[1].lower()) if m else None
    return None


def _bus(pci: str) -> str:
    """kernel_log._bus: '0000:18:00.0' and '0000:18:00' name one GPU."""
    return pci.lower().split(".")[0]


def _event(raw: str) -> tuple:
    """What _kernel_log_events.Events.line does with a gated line."""
    _device, message = split(raw)
    if message is None:
        return NOTHING
    e, cls, _severity, _rule = classified(message)
    if e is None:
        return ("unrec",) if cls else NOTHING
    if e.id.startswith("aer."):  # an AER report's line: it opens the window of its continuation lines
        return ("aer", cls, bool(e.consequence))
    if e.consequence:
        return NOTHING
    return ("event", cls)
