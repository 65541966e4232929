"""Parser for `lspci -vvv` (and the grepped pastes people post, `lspci -vvv | grep -i acsctl`): per
PCI function its class and name, the bridge's bus range, ACS control flags and PCIe link capability
and status.

    0000:02:08.0 PCI bridge: PLX Technology, Inc. PEX 8725 24-Lane ... (rev ca) (prog-if 00 [Normal decode])
            Bus: primary=02, secondary=82, subordinate=82, sec-latency=0
                    LnkCap: Port #8, Speed 8GT/s, Width x4, ASPM L1, Exit Latency L1 <4us
                    LnkSta: Speed 2.5GT/s (downgraded), Width x4 (ok)
                    ACSCap: SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+
                    ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-

A device line starts with a BDF ("0000:02:08.0" or "02:08.0") and a class; the lines under it belong
to it. ACSCtl lines with no device line above them (a grepped paste) are kept in `loose_acs`. Tabs
or spaces, CRLF, prompts and fences are tolerated; lspci needs root for the capability lines (without
it they read "Capabilities: <access denied>", counted in `access_denied`).

JSON: {source: "lspci_vvv", devices: [{bdf, bus, cls, name, secondary, subordinate, acs {flag: bool},
link_cap {speed_gts, width}, link_sta {speed_gts, width, downgraded}, line_no}], loose_acs: [{acs,
line_no}], access_denied}. ParseError when neither a device line nor an ACSCtl/LnkSta line is found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .base import ParseError, ParserInfo

INFO = ParserInfo(
    source="lspci_vvv",
    tool="lspci -vvv",
    description="PCI functions: bridge bus ranges, ACS control flags, PCIe link capability and status (needs root)",
)
SOURCE = INFO.source

DEV_RE = re.compile(r"^\s*(?:[$#>]\s*)?((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+([^:]+?):\s+(.*)$")
BUS_RE = re.compile(r"Bus: primary=([0-9a-fA-F]{2}), secondary=([0-9a-fA-F]{2}), subordinate=([0-9a-fA-F]{2})")
ACS_RE = re.compile(r"ACSCtl:\s+(.*)$")
FLAG_RE = re.compile(r"(SrcValid|TransBlk|ReqRedir|CmpltRedir|UpstreamFwd|EgressCtrl|DirectTrans)([+-])")
LNK_RE = re.compile(r"(LnkCap|LnkSta):.*?Speed\s+([\d.]+)GT/s(\s*\(downgraded\))?.*?Width\s+x(\d+)(\s*\(downgraded\))?")
MAX_DEVICES = 4096


@dataclass(frozen=True)
class Link:
    speed_gts: float
    width: int
    downgraded: bool = False


@dataclass(frozen=True)
class Device:
    bdf: str
    bus: str
    cls: str
    name: str
    line_no: int
    secondary: Optional[str] = None
    subordinate: Optional[str] = None
    acs: dict = field(default_factory=dict)
    link_cap: Optional[Link] = None
    link_sta: Optional[Link] = None


@dataclass(frozen=True)
class LooseAcs:
    acs: dict
    line_no: int


@dataclass(frozen=True)
class LspciVvv:
    source: str
    devices: tuple[Device, ...]
    loose_acs: tuple[LooseAcs, ...]
    access_denied: int


def sniff(text: str) -> float:
    try:
        head = text[:200000]
        if "ACSCtl:" in head or ("LnkSta:" in head and "LnkCap:" in head):
            return 0.9
        lines = head.splitlines()[:300]
        devs = sum(1 for ln in lines if DEV_RE.match(ln) and "Control:" not in ln)
        return 0.5 if devs >= 2 and ("Capabilities:" in head or "Kernel driver in use" in head) else 0.0
    except Exception:
        return 0.0


def _flags(text: str) -> dict:
    return {m[1]: m[2] == "+" for m in FLAG_RE.finditer(text)}


def _domain(bdf: str) -> str:
    return bdf.lower() if bdf.count(":") == 2 else "0000:" + bdf.lower()


def parse(text: str) -> LspciVvv:
    devices: list[dict] = []
    loose: list[LooseAcs] = []
    denied = 0
    cur: Optional[dict] = None
    for n, line in enumerate(text.splitlines(), 1):
        m = DEV_RE.match(line)
        if m and not line[:1].isspace() and len(devices) < MAX_DEVICES:
            bdf = _domain(m[1])
            cur = {"bdf": bdf, "bus": bdf.split(":")[1], "cls": m[2].strip(), "name": m[3].strip()[:200],
                   "line_no": n, "acs": {}}
            devices.append(cur)
            continue
        if "access denied" in line:
            denied += 1
        if "ACSCtl:" in line:
            m = ACS_RE.search(line)
            flags = _flags(m[1]) if m else {}
            if cur is None:
                loose.append(LooseAcs(flags, n))
            else:
                cur["acs"] = flags
            continue
        if cur is None:
            continue
        m = BUS_RE.search(line)
        if m:
            cur["secondary"], cur["subordinate"] = m[2].lower(), m[3].lower()
            continue
        m = LNK_RE.search(line)
        if m:
            cur["link_cap" if m[1] == "LnkCap" else "link_sta"] = Link(float(m[2]), int(m[4]),
                                                                     bool(m[3] or m[5]) and m[1] == "LnkSta")
    if not devices and not loose:
        raise ParseError("expected lspci -vvv output: device lines ('0000:17:00.0 PCI bridge: ...') or "
                         "ACSCtl/LnkSta lines", len(text.splitlines()))
    return LspciVvv(SOURCE, tuple(Device(**d) for d in devices), tuple(loose), denied)
