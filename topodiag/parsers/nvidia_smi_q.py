"""Parser for `nvidia-smi -q` (the whole report or pasted sections of it): per GPU its name, bus id,
UUID and serial, the PCIe "GPU Link Info" (generation and width, max and current) and the NVLink
"Fabric" block (State, Status, CliqueId, ClusterUUID, Health).

    Driver Version                            : 580.159.04
    GPU 00000000:18:00.0
        Product Name                          : NVIDIA H100 80GB HBM3
        Serial Number                         : 1652923456789
        GPU UUID                              : GPU-6328b923-c487-281a-fd27-291f5d278893
        PCI
            Bus Id                            : 00000000:18:00.0
            GPU Link Info
                PCIe Generation
                    Max                       : 5
                    Current                   : 5
                Link Width
                    Max                       : 16x
                    Current                   : 16x
        Fabric
            State                             : Completed
            Status                            : Success
            CliqueId                          : 2
            ClusterUUID                       : dc6e40c4-d722-4357-9ba6-5291dd461278
            Health
                Summary                       : Unhealthy
                Bandwidth                     : Full

The report is read by indentation: a line without " : " opens a section, deeper lines belong to it.
A paste without any "GPU <bus id>" line (a `grep -A` of one block) is one GPU with no bus id. Values
are kept as printed ("N/A", "Not Supported" too); numbers where they are numbers.

JSON: {source: "nvidia_smi_q", driver_version, cuda_version, attached_gpus, gpus [{index (order in the
report), bus_id ("00000000:18:00.0" or null), model (its Product Name), uuid, serial, line_no (its GPU line),
pcie {max_gen, current_gen, max_width, current_width, line_no}, fabric {state, status, clique_id
(string as printed), cluster_uuid, health {field: value}, line_no} or null when the block is absent}]}.
ParseError when no GPU field and no Fabric block is in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from . import _tool_failures
from .ib_records import ToolError
from .base import is_digits, ParseError, ParserInfo, clean_lines, first_body_line
from ._nvidia_smi_records import Fabric, PcieLink, SmiGpu
from .sniff.nvidia_smi_q import sniff

INFO = ParserInfo(
    source="nvidia_smi_q",
    tool="nvidia-smi -q",
    description="nvidia-smi -q: per GPU bus id, UUID, serial, PCIe link (gen/width max and current), NVLink fabric state/status/clique/health",
)  # live: NVML's fabric info comes with the NVML probe; `nvidia-smi -q` stays a file source (argv=())
# until a failed or absent nvidia-smi -q reads as "not available" rather than as an incomplete check
SOURCE = INFO.source

_GPU_RE = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$")
# The key runs to the first ':' and is stripped where it is read: `(\S[^:]*?)\s*:` let two runs share
# the blanks of a line without a colon (quadratic).
_KV_RE = re.compile(r"^(\s*)(\S[^:]*):\s?(.*)$")
_BUS_RE = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")
_WIDTH_RE = re.compile(r"^([0-9]+)x$", re.I)
_MAX_GPUS = 256


@dataclass(frozen=True)
class NvidiaSmiQ:
    source: str
    driver_version: Optional[str]
    cuda_version: Optional[str]
    attached_gpus: Optional[int]
    gpus: tuple[SmiGpu, ...]
    errors: tuple[ToolError, ...] = ()  # the tool's failure lines (topodiag/catalogues: nvidia-smi)
    unrecognised: tuple[ToolError, ...] = ()  # failure lines no catalogue entry explains (SYS004)


def _int(value: Optional[str]) -> Optional[int]:
    if value is None:
        return None
    v = value.strip()
    m = _WIDTH_RE.match(v)
    if m:
        return int(m[1])
    return int(v) if is_digits(v) else None


class _Gpu:
    """One GPU's fields while reading: {section path: value} and where they were."""

    def __init__(self, bus_id: Optional[str], line_no: Optional[int]):
        self.bus_id = bus_id
        self.line_no = line_no
        self.fields: dict[tuple[str, ...], str] = {}
        self.lines: dict[tuple[str, ...], int] = {}
        self.sections: dict[tuple[str, ...], int] = {}

    def get(self, *path: str) -> Optional[str]:
        return self.fields.get(tuple(p.lower() for p in path))

    def find(self, section: str, key: str) -> tuple[Optional[str], Optional[int]]:
        """A key under the innermost section named `section` wherever that section sits (a paste may
        drop the sections above it)."""
        for path, value in self.fields.items():
            if len(path) >= 2 and path[-2] == section and path[-1] == key:
                return value, self.lines[path]
        return None, None

    def build(self, index: int) -> SmiGpu:
        bus = self.bus_id or self._first("bus id")
        return SmiGpu(index=index, bus_id=bus if bus and _BUS_RE.match(bus) else None,
                      model=self._first("product name"), uuid=self._first("gpu uuid"),
                      serial=self._first("serial number"), line_no=self.line_no,
                      pcie=self._pcie(), fabric=self._fabric())

    def _first(self, key: str) -> Optional[str]:
        """The key at the GPU's top level, else under PCI (Bus Id)."""
        for path, value in self.fields.items():
            if path[-1] == key and (len(path) == 1 or path[:-1] == ("pci",)):
                return value
        return None

    def _pcie(self) -> PcieLink:
        max_gen, line = self.find("pcie generation", "max")
        cur_gen, _ = self.find("pcie generation", "current")
        max_w, wline = self.find("link width", "max")
        cur_w, _ = self.find("link width", "current")
        return PcieLink(_int(max_gen), _int(cur_gen), _int(max_w), _int(cur_w), line or wline)

    def _fabric(self) -> Optional[Fabric]:
        keys = {path: v for path, v in self.fields.items() if "fabric" in path[:-1]}
        if not keys and ("fabric",) not in self.sections:
            return None
        def at(key: str) -> Optional[str]:
            return next((v for p, v in keys.items() if p[-2] == "fabric" and p[-1] == key), None)
        health = {p[-1]: v for p, v in keys.items() if len(p) >= 2 and p[-2] == "health"}
        return Fabric(state=at("state"), status=at("status"), clique_id=at("cliqueid"),
                      cluster_uuid=at("clusteruuid"), health=health, line_no=self.sections.get(("fabric",), 0))


def parse(text: str) -> NvidiaSmiQ:
    """nvidia-smi -q output -> NvidiaSmiQ; a text that is only nvidia-smi's failure gives no GPUs and
    its `errors`."""
    return _tool_failures.read(clean_lines(text), SOURCE, _parse, lambda: NvidiaSmiQ(SOURCE, None, None, None, ()))


class _Reader:
    """Reads the report line by line: the top-level keys, and per GPU its fields by section path."""

    def __init__(self) -> None:
        self.top: dict[str, str] = {}
        self.gpus: list[_Gpu] = []
        self.cur: Optional[_Gpu] = None
        self.stack: list[tuple[int, str]] = []  # (indent, section name); "" for a GPU line

    def line(self, n: int, raw: str) -> bool:
        """Read one line; False when the report holds more GPUs than are read."""
        body = raw.strip()
        if not body or body.startswith(_NOISE):
            return True
        indent = len(raw) - len(raw.lstrip())
        m_gpu = _GPU_RE.match(body)
        if m_gpu:
            if len(self.gpus) >= _MAX_GPUS:
                return False
            self.cur = _Gpu(m_gpu[1], n)
            self.gpus.append(self.cur)
            self.stack = [(indent, "")]
            return True
        path = self._path(indent)
        if ":" not in body:
            self._section(body.lower(), path, indent, n)
        else:
            self._field(raw, path, n)
        return True

    def _path(self, indent: int) -> tuple[str, ...]:
        """Leave the sections this line is not inside; the names of those it is."""
        stack = self.stack
        while stack and stack[-1][0] >= indent and stack[-1][1]:
            stack.pop()
        if stack and not stack[-1][1] and stack[-1][0] >= indent:
            self.stack = stack = []  # back at the GPU line's level
        return tuple(name for _, name in stack if name)

    def _section(self, name: str, path: tuple[str, ...], indent: int, n: int) -> None:
        self.stack.append((indent, name))
        self.cur = _anonymous(self.cur, self.gpus, path + (name,), name in _GPU_SECTIONS)
        if self.cur is not None:
            self.cur.sections.setdefault(path + (name,), n)

    def _field(self, raw: str, path: tuple[str, ...], n: int) -> None:
        m = _KV_RE.match(raw)
        if m is None:
            return
        key, value = m[2].strip().lower(), m[3].strip()
        cur = self.cur
        if not path and key in _TOP_KEYS and (cur is None or cur.line_no is None or not self.stack):
            self.top.setdefault(key, value)
            return
        cur = self.cur = _anonymous(cur, self.gpus, path + (key,), key in _GPU_KEYS or bool(path))
        if cur is None or path + (key,) in cur.fields:
            return
        cur.fields[path + (key,)] = value
        cur.lines[path + (key,)] = n


def _parse(lines: list[str]) -> NvidiaSmiQ:
    reader = _Reader()
    for n, raw in enumerate(lines, 1):
        if not reader.line(n, raw):
            break
    built = [g.build(i) for i, g in enumerate(reader.gpus)]
    useful = [g for g in built if g.fabric or g.bus_id or g.model or g.uuid
              or g.pcie.max_width is not None or g.pcie.current_gen is not None]
    if not useful:
        raise ParseError("no GPU section, PCIe link info or Fabric block of nvidia-smi -q in the text",
                         _first_text_line(lines))
    top = reader.top
    return NvidiaSmiQ(source=SOURCE, driver_version=top.get("driver version"), cuda_version=top.get("cuda version"),
                      attached_gpus=_int(top.get("attached gpus")), gpus=tuple(useful[:_MAX_GPUS]))


_NOISE = ("```", "$ ", "#", "--", "=====")
_TOP_KEYS = ("driver version", "cuda version", "attached gpus")
_GPU_KEYS = ("product name", "gpu uuid", "serial number", "bus id")
_GPU_SECTIONS = ("fabric", "pci", "gpu link info")


def _anonymous(cur: Optional[_Gpu], gpus: list[_Gpu], path: tuple[str, ...], starts: bool) -> Optional[_Gpu]:
    """A paste without "GPU <bus id>" lines (`nvidia-smi -q | grep -A8 Fabric`): a GPU starts at its
    first section or field, and again wherever a field or section repeats."""
    if cur is not None and cur.line_no is not None:
        return cur
    if cur is not None and path not in cur.fields and path not in cur.sections:
        return cur
    if not starts or len(gpus) >= _MAX_GPUS:
        return cur if cur is not None and not starts else None
    new = _Gpu(None, None)
    gpus.append(new)
    return new


def _first_text_line(lines: list[str]) -> int:
    return first_body_line(lines)  # the loader blanked any provenance header
