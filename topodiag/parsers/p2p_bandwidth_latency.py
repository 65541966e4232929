"""Parser for the CUDA samples' `p2pBandwidthLatencyTest`: GPU-to-GPU bandwidth and latency with peer
access enabled and disabled.

    [P2P (Peer-to-Peer) GPU Bandwidth Latency Test]
    Device: 0, GeForce GTX 1080 Ti, pciBusID: 2, pciDeviceID: 0, pciDomainID:0
    Device=0 CANNOT Access Peer Device=2
    P2P Connectivity Matrix
         D\\D     0     1
         0       1     1
    Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
       D\\D     0      1
         0 911.08  20.10
    Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
    Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)
    P2P=Disabled Latency Matrix (us)
       GPU     0      1
         0   2.07  13.08
       CPU     0      1
         0   3.51   9.80

A matrix is a title line, a header row of device numbers (`D\\D`, `GPU` or `CPU` first) and one row per
device; a latency matrix holds a GPU table and a CPU table. A row cut short by a paste keeps the values
it has but its last (which may be cut mid-number: null); a matrix whose title is the last line is kept empty.

JSON: {source: "p2p_bandwidth_latency", devices [{index, model (the GPU's product name), pci_bus, pci_device, pci_domain}],
access [{src, dst, can}] ("Device=a CAN/CANNOT Access Peer Device=b"), matrices [{kind ("connectivity"
| "bandwidth" | "latency"), direction ("uni" | "bi" | null), p2p ("enabled" | "disabled" | null), mode
("writes" | "reads" | null: the newer samples print both for P2P=Enabled), side ("gpu" | "cpu"), unit
("GB/s" | "us" | null), title, line_no, devices [column device numbers], rows [{device, values [float
or null], line_no}]}]}. ParseError when neither a Device line, a peer-access line nor a matrix is found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ._matrix import cell
from .base import ParseError, ParserInfo, clean_lines, search_after
from .sniff.p2p_bandwidth_latency import _ACCESS_RE, sniff

INFO = ParserInfo(
    source="p2p_bandwidth_latency",
    tool="p2pBandwidthLatencyTest (CUDA samples)",
    description="GPU-to-GPU bandwidth/latency matrices with P2P enabled and disabled (not run live: it loads the GPUs)",
)
SOURCE = INFO.source

MAX_DEVICES = 256
MAX_MATRICES = 64
# "Device: 0, NAME, pciBusID: 3, pciDeviceID: 0, pciDomainID:0", read as its head then its PCI
# fields (base.search_after; the name is what lies between): one regex with a lazy name was
# quadratic on a line repeating "Device: 1, x"
_DEVICE_HEAD_RE = re.compile(r"Device:\s*(\d+),")
_DEVICE_PCI_RE = re.compile(r",\s*pciBusID:\s*([0-9a-fA-Fx]+),\s*pciDeviceID:\s*([0-9a-fA-Fx]+),"
                            r"\s*pciDomainID:\s*([0-9a-fA-Fx]+)")
_TITLE_RE = re.compile(r"^\s*(?:(Unidirectional|Bidirectional)\s+)?P2P\s*=\s*(Enabled|Disabled)\s+(Bandwidth|Latency)"
                       r"(?:\s*\(P2P\s+(Writes|Reads)\))?\s+Matrix\s*\(([^)]*)\)", re.I)
_CONN_RE = re.compile(r"^\s*P2P\s+Connectivity\s+Matrix", re.I)
_HEADER_RE = re.compile(r"^\s*(D\\D|GPU|CPU)((?:\s+\d+)+)\s*$")
_ROW_RE = re.compile(r"^\s*(\d+)((?:\s+(?:-?\d+(?:\.\d*)?|nan|inf|N/A))+)\s*$", re.I)


@dataclass(frozen=True)
class Device:
    index: int
    model: str  # the GPU's product name ("Device: 0, NVIDIA A100-SXM4-80GB, pciBusID ...")
    pci_bus: str
    pci_device: str
    pci_domain: str


@dataclass(frozen=True)
class Access:
    src: int
    dst: int
    can: bool


@dataclass(frozen=True)
class Row:
    device: int
    values: tuple[Optional[float], ...]
    line_no: int


@dataclass(frozen=True)
class Matrix:
    kind: str
    direction: Optional[str]
    p2p: Optional[str]
    mode: Optional[str]
    side: str
    unit: Optional[str]
    title: str
    line_no: int
    devices: tuple[int, ...]
    rows: tuple[Row, ...]

    def value(self, src: int, dst: int) -> Optional[float]:
        """The value of row `src`, column `dst` (None when not measured or not shown)."""
        return cell(self.devices, self.rows, src, dst, lambda r: r.device)


@dataclass(frozen=True)
class P2pTest:
    source: str
    devices: tuple[Device, ...]
    access: tuple[Access, ...]
    matrices: tuple[Matrix, ...]

    def matrix(self, kind: str, direction: Optional[str] = None, p2p: Optional[str] = None,
               side: str = "gpu") -> Optional[Matrix]:
        """The first matrix of that kind (for P2P=Enabled: the plain or the Writes one) with rows."""
        for m in self.matrices:
            if (m.kind, m.direction, m.p2p, m.side) == (kind, direction, p2p, side) and m.mode != "reads" and m.rows:
                return m
        return None


def _number(tok: str) -> Optional[float]:
    try:
        v = float(tok)
    except ValueError:
        return None
    return v if v == v and v not in (float("inf"), float("-inf")) else None


class _Builder:
    def __init__(self) -> None:
        self.matrices: list[Matrix] = []
        self.open: Optional[dict] = None

    def start(self, title: str, line_no: int, **facts) -> None:
        self.close()
        self.open = {"title": title, "line_no": line_no, "devices": (), "rows": [], **facts}

    def header(self, first: str, numbers: str, line_no: int) -> None:
        if self.open is None:
            return
        side = "cpu" if first == "CPU" else "gpu"
        if self.open["rows"]:  # the CPU table of a latency matrix follows its GPU table
            facts = {k: v for k, v in self.open.items() if k not in ("devices", "rows", "side", "line_no")}
            self.start(facts.pop("title"), line_no, **facts)
        self.open["side"] = side
        self.open["devices"] = tuple(int(x) for x in numbers.split())

    def row(self, device: int, numbers: str, line_no: int) -> bool:
        if self.open is None or not self.open["devices"]:
            return False
        values = tuple(_number(t) for t in numbers.split())[: len(self.open["devices"])]
        if len(values) < len(self.open["devices"]):  # a row cut by the paste: its last number may be cut too
            values = values[:-1] + (None,)
        self.open["rows"].append(Row(device, values, line_no))
        return True

    def close(self) -> None:
        o, self.open = self.open, None
        if o is not None and len(self.matrices) < MAX_MATRICES:
            self.matrices.append(Matrix(o["kind"], o["direction"], o["p2p"], o["mode"], o.get("side", "gpu"), o["unit"],
                                        o["title"], o["line_no"], o["devices"], tuple(o["rows"])))


def _title(line: str, n: int, b: _Builder) -> bool:
    m = _TITLE_RE.match(line)
    if m:
        kind = m.group(3).lower()
        b.start(line.strip(), n, kind=kind, direction={"u": "uni", "b": "bi"}.get((m.group(1) or " ")[0].lower()),
                p2p=m.group(2).lower(), mode=(m.group(4) or "").lower() or None, unit=m.group(5).strip() or None)
        return True
    if _CONN_RE.match(line):
        b.start(line.strip(), n, kind="connectivity", direction=None, p2p=None, mode=None, unit=None)
        return True
    return False


def parse(text: str) -> P2pTest:
    devices: list[Device] = []
    access: list[Access] = []
    b = _Builder()
    lines = clean_lines(text)
    for n, line in enumerate(lines, 1):
        if _title(line, n, b):
            continue
        m = _HEADER_RE.match(line)
        if m:
            b.header(m.group(1), m.group(2), n)
            continue
        m = _ROW_RE.match(line)
        if m and b.row(int(m.group(1)), m.group(2), n):
            continue
        m = search_after(line, _DEVICE_HEAD_RE, _DEVICE_PCI_RE)
        if m and len(devices) < MAX_DEVICES:
            head, pci = m
            devices.append(Device(int(head.group(1)), line[head.end():pci.start()].strip(), pci.group(1),
                                  pci.group(2), pci.group(3)))
            continue
        m = _ACCESS_RE.search(line)
        if m and len(access) < MAX_DEVICES * 4:
            access.append(Access(int(m.group(1)), int(m.group(3)), m.group(2).upper() == "CAN"))
            continue
        if line.strip() and b.open is not None and b.open["rows"]:
            b.close()  # prose after a matrix ends it
    b.close()
    if not (devices or access or b.matrices):
        raise ParseError("expected p2pBandwidthLatencyTest output: 'Device: N, <name>, pciBusID: ...' lines, "
                         "'Device=a CAN Access Peer Device=b' lines or P2P bandwidth/latency matrices; found none",
                         len(lines))
    return P2pTest(SOURCE, tuple(devices), tuple(access), tuple(b.matrices))
