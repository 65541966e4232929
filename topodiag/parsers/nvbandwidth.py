"""Parser for NVIDIA's `nvbandwidth`: copy-engine and SM copy bandwidth between host and GPUs and
between GPUs, one block per testcase.

    nvbandwidth Version: v0.8
    Device 0: NVIDIA A100-SXM4-40GB (00000000:99:00)
    Running host_to_device_memcpy_ce.
    memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)
               0         1
     0     25.13     24.90
    SUM host_to_device_memcpy_ce 50.03
    Waiving device_to_device_memcpy_write_ce.

A block is the "Running <testcase>." line (a block pasted without it is named by its SUM line, else
"unnamed"), its title line ("memcpy CE GPU(row) -> GPU(column) bandwidth
(GB/s)"), a header of column numbers, rows "<row> v v ..." (N/A for a pair not measured), and SUM.

JSON: {source: "nvbandwidth", version, driver_version, cuda_runtime_version, devices [{index, model
(the GPU's product name), bus_id}], testcases [{name, line_no, title, engine ("CE" | "SM" | null), row_kind / col_kind ("CPU" |
"GPU" | null: from "CPU(row)", "GPU(column)"), direction ("->" | "<-" | "<->" | null), columns [int],
rows [{label, values [float or null], line_no}], sum, waived}]}. ParseError when neither the version
banner, a Device line nor a testcase block is found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ._matrix import cell
from . import _tool_failures
from .base import ParseError, ParserInfo, clean_lines
from .ib_records import ToolError
from .sniff.nvbandwidth import sniff

INFO = ParserInfo(
    source="nvbandwidth",
    tool="nvbandwidth",
    description="host<->GPU and GPU<->GPU copy bandwidth per testcase (not run live: it loads the GPUs)",
)
SOURCE = INFO.source

MAX_TESTCASES = 128
MAX_DEVICES = 256
_VERSION_RE = re.compile(r"^\s*nvbandwidth Version:\s*(\S+)")
_DRIVER_RE = re.compile(r"^\s*Driver Version:\s*(\S+)")
_RUNTIME_RE = re.compile(r"^\s*CUDA Runtime Version:\s*(\d+)")
# "Device 0: NVIDIA A100-SXM4-40GB (00000000:07:00)": the name read greedily, its bus id split off
# the end after (a lazy name before `\s*$` is quadratic on widened blanks)
_DEVICE_RE = re.compile(r"^\s*Device ([0-9]+):[ \t]*(.*)$")
_DEVICE_BUS_RE = re.compile(r"\(([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-9])?)\)$")
_RUNNING_RE = re.compile(r"^\s*(?:>\s*)?Running\s+([A-Za-z0-9_]+)\.?\s*$")  # never two blank runs side by side
_WAIVING_RE = re.compile(r"^\s*Waiving\s+([A-Za-z0-9_]+)\.?\s*$")
_TITLE_RE = re.compile(r"^\s*(?:memcpy|memory)\b.*\bbandwidth\b.*$|^\s*memcpy local GPU", re.I)
_KINDS_RE = re.compile(r"(CPU|GPU)\s*\(row\)\s*(<->|->|<-)\s*(CPU|GPU)\s*\(column\)", re.I)
_ENGINE_RE = re.compile(r"\b(CE|SM)\b")
_HEADER_RE = re.compile(r"^\s*(\d+(?:\s+\d+)*)\s*$")
_ROW_RE = re.compile(r"^\s*(\d+)((?:\s+(?:-?\d+(?:\.\d*)?|N/A|nan))+)\s*$", re.I)
_SUM_RE = re.compile(r"^\s*SUM\s+([A-Za-z0-9_]+)\s+(-?\d+(?:\.\d+)?)")


@dataclass(frozen=True)
class Device:
    index: int
    model: str  # the GPU's product name ("Device 0: NVIDIA A100-SXM4-40GB (00000000:07:00)")
    bus_id: Optional[str]


@dataclass(frozen=True)
class Row:
    label: int
    values: tuple[Optional[float], ...]
    line_no: int


@dataclass(frozen=True)
class Testcase:
    name: str
    line_no: int
    title: Optional[str]
    engine: Optional[str]
    row_kind: Optional[str]
    col_kind: Optional[str]
    direction: Optional[str]
    columns: tuple[int, ...]
    rows: tuple[Row, ...]
    sum: Optional[float]
    waived: bool

    def value(self, row: int, col: int) -> Optional[float]:
        return cell(self.columns, self.rows, row, col, lambda r: r.label)


@dataclass(frozen=True)
class NvBandwidth:
    source: str
    version: Optional[str]
    driver_version: Optional[str]
    cuda_runtime_version: Optional[str]
    devices: tuple[Device, ...]
    testcases: tuple[Testcase, ...]
    errors: tuple[ToolError, ...] = ()  # waive / failure lines (topodiag/catalogues: nvbandwidth)
    unrecognised: tuple[ToolError, ...] = ()  # failure lines no catalogue entry explains (SYS004)

    def testcase(self, name: str) -> Optional[Testcase]:
        return next((t for t in self.testcases if t.name == name and t.rows), None)


def _number(tok: str) -> Optional[float]:
    try:
        v = float(tok)
    except ValueError:
        return None
    return v if v == v and v not in (float("inf"), float("-inf")) else None


class _Block:
    def __init__(self, name: Optional[str], line_no: int) -> None:
        self.name, self.line_no = name, line_no
        self.title: Optional[str] = None
        self.columns: tuple[int, ...] = ()
        self.rows: list[Row] = []
        self.sum: Optional[float] = None

    def add(self, line: str, n: int) -> None:
        if self.title is None and _TITLE_RE.match(line):
            self.title = line.strip()
            return
        m = _ROW_RE.match(line)
        if m and self.columns:
            values = tuple(_number(t) for t in m.group(2).split())[: len(self.columns)]
            if len(values) < len(self.columns):  # a row cut by the paste: its last number may be cut too
                values = values[:-1] + (None,)
            self.rows.append(Row(int(m.group(1)), values, n))
            return
        m = _HEADER_RE.match(line)
        if m and self.title is not None and not self.columns:
            self.columns = tuple(int(x) for x in m.group(1).split())

    def done(self, waived: bool = False) -> Testcase:
        kinds = _KINDS_RE.search(self.title or "")
        engine = _ENGINE_RE.search(self.title or "")
        return Testcase(self.name or "unnamed", self.line_no, self.title, engine.group(1) if engine else None,
                        kinds.group(1).upper() if kinds else None, kinds.group(3).upper() if kinds else None,
                        kinds.group(2) if kinds else None, self.columns, tuple(self.rows), self.sum, waived)


class _State:
    def __init__(self) -> None:
        self.version = self.driver = self.runtime = None
        self.devices: list[Device] = []
        self.cases: list[Testcase] = []
        self.block: Optional[_Block] = None

    def close(self) -> None:
        if self.block is not None and len(self.cases) < MAX_TESTCASES:
            self.cases.append(self.block.done())
        self.block = None

    def banner(self, line: str) -> bool:
        for rx, attr in ((_VERSION_RE, "version"), (_DRIVER_RE, "driver"), (_RUNTIME_RE, "runtime")):
            m = rx.match(line)
            if m:
                if getattr(self, attr) is None:
                    setattr(self, attr, m.group(1))
                return True
        m = _DEVICE_RE.match(line)
        if m and self.block is None and len(self.devices) < MAX_DEVICES:
            name = m.group(2).strip()
            bus = _DEVICE_BUS_RE.search(name)
            self.devices.append(Device(int(m.group(1)), name[: bus.start()].strip() if bus else name,
                                       bus.group(1) if bus else None))
            return True
        return False

    def line(self, line: str, n: int) -> None:
        m = _RUNNING_RE.match(line)
        if m:
            self.close()
            self.block = _Block(m.group(1), n)
            return
        m = _WAIVING_RE.match(line)
        if m:
            self.close()
            if len(self.cases) < MAX_TESTCASES:
                self.cases.append(_Block(m.group(1), n).done(waived=True))
            return
        m = _SUM_RE.match(line)
        if m and self.block is not None:
            self.block.sum = _number(m.group(2))
            self.block.name = self.block.name or m.group(1)
            self.close()
            return
        if self.block is None and _TITLE_RE.match(line):  # a block pasted without its "Running" line
            self.block = _Block(None, n)
        if self.block is not None:
            self.block.add(line, n)
        else:
            self.banner(line)


def parse(text: str) -> NvBandwidth:
    st = _State()
    lines = clean_lines(text)
    for n, line in enumerate(lines, 1):
        if st.block is None and st.banner(line):
            continue
        st.line(line, n)
    st.close()
    if not (st.version or st.devices or st.cases):
        raise ParseError("expected nvbandwidth output: 'nvbandwidth Version:', 'Device N: <name>' or 'Running "
                         "<testcase>.' blocks; found none", len(lines))
    failed = _tool_failures.scan(lines, SOURCE, _FAILURE_RE)
    return NvBandwidth(SOURCE, st.version, st.driver, st.runtime, tuple(st.devices), tuple(st.cases),
                       errors=tuple(failed), unrecognised=_tool_failures.unrecognised(failed))


# what starts an nvbandwidth failure line (kept as unrecognised when no catalogue entry explains it)
_FAILURE_RE = re.compile(r"^(?:ERROR|Error:|ASSERT|NVML_ERROR|Waived|Waiving|\[CUDA_ERROR|\[cuda[A-Z])")
