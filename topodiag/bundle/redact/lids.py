"""IB LIDs: 1, 2, 3 ... in order of first sight, decimal or hex as printed; 0 and 65535 are kept
(they mean "no LID"). Right-aligned columns (iblinkinfo, ibnetdiscover -p) keep their alignment; a
sysfs file that holds only a LID (ports/1/lid, sm_lid) is redacted whole by its name."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ...errors import RedactionError
from .text import GUID_SLOT, Hold, case, fit, sub_group

if TYPE_CHECKING:
    from .core import Redactor

NO_LID = (0, 0xFFFF)
_LID_VALUE = r"(0x[0-9A-Fa-f]{1,4}|\d{1,5})\b"
LID_RES = (
    # ibstat "Base lid: 50" / "SM lid: 1", ibstatus "base lid:\t 0x3", ibv_devinfo "port_lid:", "sm_lid:"
    re.compile(r"(?i)(\b(?:(?:base|sm|port|master_sm)[ _])?lid[ \t]*[:=][ \t]*)" + _LID_VALUE),
    # ibnetdiscover "# lid 16 lmc 1", NCCL "LID 37", rdma link "lid 12 sm_lid 1"
    re.compile(r"(?i)(\b(?:sm_)?lid[ \t]+)" + _LID_VALUE),
    # probe JSON "lid": 50, "sm_lid": "0x1"
    re.compile(r"(?i)(\"(?:\w+_)?lid\"[ \t]*:[ \t]*\"?)" + _LID_VALUE),
)
# iblinkinfo port line: [guid ["desc"]] LID PORT[ext] ==( ... )==> [guid] LID PORT[ext] "desc"
_IBLINK_LOCAL_RE = re.compile(
    rf"(?m)^([ \t]*(?:{GUID_SLOT}[ \t]+(?:\"[^\"\n]*\"[ \t]+)?)?)(\d{{1,5}})"
    rf"(?=[ \t]+\d{{1,5}}\[[ \t]*\d*[ \t]*\][ \t]*==\()")
_IBLINK_REMOTE_RE = re.compile(rf"(==>[ \t]*(?:{GUID_SLOT}[ \t]+)?)(\d{{1,5}})(?=[ \t]+\d{{1,5}}\[)")
# ibnetdiscover -p: "CA   134  1 0x..." and "- SW  1719 10 0x..."
_PORTS_LID_RE = re.compile(rf"(?m)((?:^|-)[ \t]*(?:CA|SW|RT)[ \t]+)(\d{{1,5}})(?=[ \t]+\d{{1,5}}[ \t]+{GUID_SLOT})")
COLUMN_RES = (_IBLINK_LOCAL_RE, _IBLINK_REMOTE_RE, _PORTS_LID_RE)
# A sysfs file that holds only a LID ("0x32\n")
_WHOLE_LID_RE = re.compile(r"\A([ \t\r\n]*)(0x[0-9A-Fa-f]{1,4}|\d{1,5})(?=[ \t\r\n]*\Z)")
SYSFS_LID_MEMBER = re.compile(r"(?:^|/)(?:lid|sm_lid)$")


class LidMap:
    """LID -> its token, for a whole bundle."""

    def __init__(self) -> None:
        self.map: dict[int, int] = {}
        self._next = 0

    def token(self, v: int) -> int:
        if v in NO_LID:
            return v
        if v not in self.map:
            n = self._next + 1
            while n in NO_LID or n == v:  # never a LID's own value
                n += 1
            if n > 0xBFFF:
                raise RedactionError("more LIDs than the unicast range holds")
            self._next = n
            self.map[v] = n
        return self.map[v]

    def text(self, raw: str) -> str:
        """A LID as printed (decimal, or 0x and hex in the original's case) -> its token, printed so."""
        if raw[:2].lower() == "0x":
            return raw[:2] + case(raw[2:], f"{self.token(int(raw, 16)):x}")
        return str(self.token(int(raw)))

    def mapping(self) -> dict[str, str]:
        return {f"lid {k}": f"lid {v}" for k, v in self.map.items()}


def redact_lids(r: Redactor, text: str, hold: Hold) -> str:
    lid_text = r.lids.text
    for rx in LID_RES:
        text = sub_group(rx, text, 2, lambda raw: hold(lid_text(raw)))

    def column(m: re.Match) -> str:
        pre, raw = m[1], m[2]
        ws = re.search(r"[ \t]*$", pre)[0]
        return pre[: len(pre) - len(ws)] + hold(fit(ws, raw, lid_text(raw)))

    for rx in COLUMN_RES:
        text = rx.sub(column, text)
    return text


def redact_lid_member(r: Redactor, text: str, hold: Hold) -> str:
    """A sysfs lid / sm_lid file: its one value."""
    return _WHOLE_LID_RE.sub(lambda m: m[1] + hold(r.lids.text(m[2])), text)
