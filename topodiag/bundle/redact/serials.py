"""Serial numbers: the same number of digits, 0000000000001, 0000000000002 ..., where a tool labels
one (dmidecode's "Serial Number:", nvidia-smi's "Serial Number", a JSON "serial" key, lspci -vvv's
VPD "[SN]" and PCIe Device Serial Number), and a sysfs file named for one (board_serial, serial)
whole. "N/A", "Unknown", "None" and "0" are kept."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .text import Hold, sub_group

if TYPE_CHECKING:
    from .core import Redactor

SERIAL_RES = (
    re.compile(r"(?im)^([ \t]*(?:Board |Baseboard |Base Board |System |Module |GPU |Product |Chassis )?Serial(?: Number)?"
               r"[ \t]*:[ \t]*)([A-Za-z0-9-]+)[ \t]*$"),
    re.compile(r"(?i)(\"(?:\w+_)?serial(?:_number|_no)?\"[ \t]*:[ \t]*\"?)([A-Za-z0-9-]+)(?=\"|[ \t]*[,}\n])"),
    # lspci -vvv: the VPD serial ("[SN] Serial number: MT2233X01234") and the PCIe Device Serial Number
    re.compile(r"(?im)^([ \t]*\[SN\] Serial number:[ \t]*)([A-Za-z0-9-]+)[ \t]*$"),
    re.compile(r"(?i)(Device Serial Number[ \t]+)([0-9a-f]{2}(?:-[0-9a-f]{2}){7})(?![0-9a-f-])"),
)
_WHOLE_RE = re.compile(r"\A(\s*)(\S+)(?=\s*\Z)")
SYSFS_SERIAL_MEMBER = re.compile(r"(?:^|/)(?:\w*serial\w*)$")
_NO_SERIAL = ("N/A", "NA", "UNKNOWN", "NONE", "0")


class SerialMap:
    """serial (as printed) -> its token, for a whole bundle."""

    def __init__(self) -> None:
        self.map: dict[str, str] = {}

    def text(self, raw: str) -> str:
        if raw.upper() in _NO_SERIAL:
            return raw
        if raw not in self.map:
            self.map[raw] = str(len(self.map) + 1).zfill(len(raw))
        return self.map[raw]

    def mapping(self) -> dict[str, str]:
        return {f"serial {k}": f"serial {v}" for k, v in self.map.items()}


def redact_serials(r: Redactor, text: str, hold: Hold) -> str:
    for rx in SERIAL_RES:
        text = sub_group(rx, text, 2, lambda raw: hold(r.serials.text(raw)))
    return text


def redact_serial_member(r: Redactor, text: str, hold: Hold) -> str:
    """A sysfs file named for a serial: its one value."""
    return _WHOLE_RE.sub(lambda m: m[1] + hold(r.serials.text(m[2])), text)
