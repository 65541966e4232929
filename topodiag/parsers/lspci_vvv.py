"""Parser for `lspci -vvv` (as root: ACS is shown only to root), also the grepped pastes people post
(`lspci -vvv | grep -i acsctl`, `lspci -vvv -s <bdf> | grep -E 'LnkCap|LnkSta'`), with or without the
device lines:

    17:00.0 PCI bridge: PLX Technology, Inc. PEX 8747 48-Lane, 5-Port PCI Express Gen 3 (8.0 GT/s) Switch (rev ca) (prog-if 00 [Normal decode])
            Bus: primary=16, secondary=17, subordinate=1a, sec-latency=0
            Capabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00
                    LnkCap: Port #8, Speed 8GT/s, Width x16, ASPM L1, Exit Latency L1 <4us
                    LnkSta: Speed 8GT/s (ok), Width x8 (downgraded)
            Capabilities: [148 v1] Access Control Services
                    ACSCap: SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+
                    ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-

A device starts at a line `[dddd:]bb:dd.f <class>: <name>`; a prompt or comment line naming one device
(`# lspci -vvv -s 0000:01:00.0 ...`, `$ sudo lspci -s 0c:00.0 -vvv`) starts that device too, and
"upstream bridge of <bdf>" in such a line places the bridge above that device (and the words
after the BDF, "bridge", "GPU", "NIC", give its kind). Without device lines
(a grepped paste) each ACSCtl / LnkCap / LnkSta line that a record already has starts a new record,
with no BDF. "Capabilities: <access denied>" (lspci run without root) is counted: ACS and the link
are then unknown, not off.

JSON: {source: "lspci_vvv", lines, devices [{bdf ("0000:17:00.0" or null), class_name, name, kind
(gpu | nic | bridge | other | unknown), port_type ("Downstream Port", "Root Port", "Endpoint" ...),
secondary, subordinate (bus numbers as ints, bridges only), upstream_of (the bdf a comment names it
the upstream bridge of), acs_cap, acs_ctl ({SrcValid: bool, ...}: the flags printed), link_cap
{speed_gts, width}, link_sta {speed_gts, width, speed_downgraded, width_downgraded}, access_denied,
line_no}], acsctl_lines, with_bdf (devices with a BDF), access_denied (devices)}.
ParseError when no line of lspci's (a device line with its class, LnkCap/LnkSta, ACSCap/ACSCtl).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .base import ParseError, ParserInfo, clean_lines
from .sniff.lspci_vvv import _BDF, _HEADER_RE, sniff

INFO = ParserInfo(
    source="lspci_vvv",
    tool="lspci -vvv",
    description="PCI devices: ACS control per bridge, PCIe link capability and status, bridge bus ranges (ACS needs root)",
    argv=("lspci", "-vvv"),
    timeout_s=20.0,
)
SOURCE = INFO.source

MAX_DEVICES = 4096
ACS_FLAGS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")

_BDF_RE = re.compile(r"(?<![0-9a-fA-F:])" + _BDF + r"(?![0-9a-fA-F])")
_PROMPT_RE = re.compile(r"^(?:#|\$|\S*[#$>]\s|sudo\s|lspci\s)")
_UPSTREAM_RE = re.compile(r"upstream (?:bridge|port) of\s+" + _BDF)
_FIELD_RE = re.compile(r"^(ACSCap|ACSCtl|LnkCap|LnkSta):\s*(.*)$")
_FLAG_RE = re.compile(r"\b(" + "|".join(ACS_FLAGS) + r")([+-])")
_SPEED_RE = re.compile(r"Speed\s+([0-9.]+)\s*GT/s(\s*\((?:downgraded|ok)\))?", re.I)
_WIDTH_RE = re.compile(r"Width\s+x([0-9]+)(\s*\((?:downgraded|ok|strange)\))?", re.I)
_BUS_RE = re.compile(r"Bus: primary=([0-9a-fA-F]{2}), secondary=([0-9a-fA-F]{2}), subordinate=([0-9a-fA-F]{2})")
_EXPRESS_RE = re.compile(r"Capabilities: \[[0-9a-fA-F]+(?: v[0-9]+)?\] Express \([^)]*\) ([A-Za-z ]+?)(?:,| \(|$)")

GPU_CLASSES = ("VGA compatible controller", "3D controller", "Display controller")
NIC_CLASSES = ("Infiniband controller", "Ethernet controller", "Network controller")


@dataclass(frozen=True)
class Link:
    speed_gts: Optional[float]
    width: Optional[int]
    speed_downgraded: Optional[bool] = None
    width_downgraded: Optional[bool] = None


@dataclass(frozen=True)
class PciDevice:
    bdf: Optional[str]
    class_name: Optional[str]
    name: Optional[str]
    kind: str
    port_type: Optional[str]
    secondary: Optional[int]
    subordinate: Optional[int]
    upstream_of: Optional[str]
    acs_cap: Optional[dict]
    acs_ctl: Optional[dict]
    link_cap: Optional[Link]
    link_sta: Optional[Link]
    access_denied: bool
    line_no: int


@dataclass(frozen=True)
class Lspci:
    source: str
    lines: int
    devices: tuple[PciDevice, ...]
    acsctl_lines: int
    with_bdf: int
    access_denied: int


def bdf(m: re.Match) -> str:
    """'0000:17:00.0' from the groups of _BDF (domain 0000 when not printed)."""
    return f"{(m[1] or '0000').lower()}:{m[2].lower()}:{m[3].lower()}.{m[4]}"


def _kind(class_name: Optional[str]) -> str:
    if class_name is None:
        return "unknown"
    if class_name in GPU_CLASSES:
        return "gpu"
    if class_name in NIC_CLASSES:
        return "nic"
    if class_name == "PCI bridge":
        return "bridge"
    return "other"


def _flags(text: str) -> dict:
    return {f: sign == "+" for f, sign in _FLAG_RE.findall(text)}


def _link(text: str) -> Link:
    s = _SPEED_RE.search(text)
    w = _WIDTH_RE.search(text)
    speed = float(s[1]) if s else None
    width = int(w[1]) if w else None
    sd = ("downgraded" in s[2]) if s and s[2] else None
    wd = ("downgraded" in w[2]) if w and w[2] else None
    return Link(speed, width, sd, wd)


class _Builder:
    def __init__(self) -> None:
        self.devices: list[PciDevice] = []
        self.cur: Optional[dict] = None

    def start(self, line_no: int, bdf_: Optional[str] = None, class_name: Optional[str] = None,
              name: Optional[str] = None, upstream_of: Optional[str] = None) -> None:
        self.flush()
        self.cur = {"bdf": bdf_, "class_name": class_name, "name": name, "kind": _kind(class_name),
                    "port_type": None, "secondary": None, "subordinate": None, "upstream_of": upstream_of,
                    "acs_cap": None, "acs_ctl": None, "link_cap": None, "link_sta": None,
                    "access_denied": False, "line_no": line_no}

    def header_of_prompt(self, line_no: int, bdf_: Optional[str], class_name: str, name: str) -> bool:
        """The device line lspci prints after a `lspci -vvv -s <bdf>` prompt line: the same device the
        prompt opened (no field read yet), not a second one. True when taken as such."""
        cur = self.cur
        if cur is None or cur["class_name"] is not None or cur["bdf"] != bdf_ or any(
                cur[k] is not None for k in ("acs_cap", "acs_ctl", "link_cap", "link_sta", "secondary")):
            return False
        kind = _kind(class_name)
        cur.update(class_name=class_name, name=name, line_no=line_no,
                   kind=kind if kind != "unknown" else cur["kind"])
        return True

    def flush(self) -> None:
        if self.cur is not None and len(self.devices) < MAX_DEVICES:
            self.devices.append(PciDevice(**self.cur))
        self.cur = None

    def field(self, key: str, value, line_no: int) -> None:
        if self.cur is None or (self.cur[key] is not None and self.cur["bdf"] is None):
            self.start(line_no)
        if self.cur[key] is None:
            self.cur[key] = value


_KEYS = {"ACSCap": "acs_cap", "ACSCtl": "acs_ctl", "LnkCap": "link_cap", "LnkSta": "link_sta"}


_NOTE_KINDS = (("bridge", re.compile(r"\bbridge\b|\bswitch\b|\bport\b", re.I)),
               ("gpu", re.compile(r"\bGPU\b")), ("nic", re.compile(r"\bNIC\b|\bHCA\b|mlx5|ConnectX", re.I)))


def _prompt_device(line: str) -> Optional[tuple[str, Optional[str], str]]:
    """(bdf, upstream_of, kind) of a prompt or comment line that names one device for lspci (-s
    <bdf>); the kind from the words after the BDF ("upstream bridge of ...", "GPU function")."""
    if not _PROMPT_RE.match(line) or "lspci" not in line:
        return None
    m = _BDF_RE.search(line)
    if not m:
        return None
    up = _UPSTREAM_RE.search(line)
    rest = line[m.end():]
    kind = next((k for k, rx in _NOTE_KINDS if rx.search(rest)), "unknown")
    return bdf(m), (bdf(up) if up else None), kind


def parse(text: str) -> Lspci:
    lines = clean_lines(text)
    b = _Builder()
    seen = 0
    acs_lines = 0
    for n, raw in enumerate(lines, 1):
        line = raw.strip().strip("`").strip()
        if not line:
            continue
        m = _HEADER_RE.match(line)
        if m:
            if not b.header_of_prompt(n, bdf(m), m[5].strip(), m[6].strip()):
                b.start(n, bdf(m), m[5].strip(), m[6].strip())
            seen += 1
            continue
        prompt = _prompt_device(line)
        if prompt is not None:
            b.start(n, prompt[0], upstream_of=prompt[1])
            b.cur["kind"] = prompt[2]
            continue
        f = _FIELD_RE.match(line)
        if f:
            seen += 1
            key = _KEYS[f[1]]
            if key == "acs_ctl":
                acs_lines += 1
            value = _flags(f[2]) if key.startswith("acs") else _link(f[2])
            b.field(key, value, n)
            continue
        if b.cur is None:
            continue
        _device_line(b.cur, line)
    b.flush()
    if seen == 0:
        raise ParseError("no lspci line (a device line '<bus>:<dev>.<fn> <class>: <name>', LnkCap/LnkSta or "
                         "ACSCap/ACSCtl)", len(lines))
    devs = tuple(b.devices)
    return Lspci(SOURCE, len(lines), devs, acs_lines, sum(1 for d in devs if d.bdf),
                 sum(1 for d in devs if d.access_denied))


def _device_line(cur: dict, line: str) -> None:
    """Bus numbers, the Express port type and '<access denied>' of the device being read."""
    if line.startswith("Bus:"):
        m = _BUS_RE.match(line)
        if m:
            cur["secondary"], cur["subordinate"] = int(m[2], 16), int(m[3], 16)
    elif line.startswith("Capabilities:"):
        if "<access denied>" in line:
            cur["access_denied"] = True
            return
        m = _EXPRESS_RE.match(line)
        if m and cur["port_type"] is None:
            cur["port_type"] = m[1].strip()
