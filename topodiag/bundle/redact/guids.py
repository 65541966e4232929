"""IB GUIDs and other 64-bit ids (EUI-64, an IPv6 interface id, which for an IB GID is the port
GUID): one map shared by every printed form (0x + 16 hex, 5aa2:e1ff:feda:e626,
"H-0008f10403961354", "(8f10403961355)", EUI-64 colon bytes). The token has the same number of
significant hex digits (a..., then a counter) and is printed at the original's width and case; a
MAC-derived id keeps its ff:fe middle (02:00:00:ff:fe:00:00:NN), so a RoCE port still reads as one.
0 and all-ones are kept."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .text import HEX, PH, Hold, case, mixed, sub_group

if TYPE_CHECKING:
    from .core import Redactor

# GUIDs, in the contexts the tools print them. Each: (regex, group of the GUID's hex digits).
GUID_RES = (
    # ibnetdiscover: "[1](8f10403961355)" and "switchguid=0x5442ba00003080(5442ba00003080)"
    (re.compile(rf"(\]|guid=(?:0x)?[{HEX}]{{1,16}})\(([{HEX}]{{1,16}})\)"), 2),
    # "Node GUID: 0x...", node_guid: 0x..., sysimgguid=0x..., guid="0x...", "port_guid": "0x..."
    (re.compile(rf"(?i)(guid\"?[ \t]*[:=][ \t]*\"?(?:0x)?)([{HEX}]{{1,16}})(?![{HEX}:\w])"), 2),
    # "(guid 0x2c90200401e90)" (ibnetdiscover chassis), "port GUIDs 0x..." in prose, iblinkinfo -S/-G
    (re.compile(rf"(?i)(\bguids?[ \t]+(?:0x)?|(?<![\w-])-[SG][ \t]+0x)((?=[{HEX}]*\d)[{HEX}]{{4,16}})\b"), 2),
    # "Initiated from node 0008f10403960558 port 0008f10403960559"
    (re.compile(rf"(Initiated from node[ \t]+)([{HEX}]{{1,16}})\b"), 2),
    (re.compile(rf"(Initiated from node[ \t]+{PH}[ \t]+port[ \t]+)([{HEX}]{{1,16}})\b"), 2),
    # ibnetdiscover node names: "H-0008f10403961354" / "S-..." / "R-..." (quoted: any width)
    (re.compile(rf"(\"[HSR]-)([{HEX}]{{1,16}})(?=\")"), 2),
    (re.compile(rf"((?<![\w-])[HSR]-)([{HEX}]{{16}})(?!\w)"), 2),
    # iblinkinfo: port GUID at the start of a line, after "==>" (-l), in a node header; ibhosts
    (re.compile(rf"(?m)(^[ \t]*0x)([{HEX}]{{16}})(?=[ \t])"), 2),
    (re.compile(rf"(==>[ \t]*0x)([{HEX}]{{16}})(?=[ \t])"), 2),
    (re.compile(rf"(?m)(^[ \t]*(?:CA|Ca|Switch|Router|Rt|\?\?)[ \t]*:[ \t]*0x)([{HEX}]{{1,16}})\b"), 2),
    # ibnetdiscover -p: "CA   134  1 0x7cfe9003003b4bde 4x EDR - SW  1719 10 0x7cfe9003009ce5b0"
    (re.compile(rf"(?m)((?:^|-)[ \t]*(?:CA|SW|RT)[ \t]+\d+[ \t]+\d+[ \t]+0x)([{HEX}]{{1,16}})\b"), 2),
)
# anywhere else, a word of exactly 16 hex digits (letters and digits both): a GUID in prose
BARE_GUID_RE = re.compile(rf"((?<![\w.:-]))([{HEX}]{{16}})(?![\w:-])")
# Anywhere else, 0x and exactly 16 hex digits (ibstat's width) is a GUID, unless the key before it
# on the line names a mask, capability, flag, size, hash or id.
GUID_0X16_RE = re.compile(rf"((?<![\w.:-])0[xX])([{HEX}]{{16}})(?![\w:-])")
_NOT_GUID_KEY_RE = re.compile(r"(?i)(?:mask|cap|flag|size|hash|comm|id|addr|ptr|pointer)\w*[\"'=:\s]*$")
# ibv_devinfo / sysfs node_guid "5aa2:e1ff:feda:e626": four groups of four, alone
GUID_COLON_RE = re.compile(rf"(?<![{HEX}:])([{HEX}]{{4}}:[{HEX}]{{4}}:[{HEX}]{{4}}:[{HEX}]{{4}})(?![{HEX}:])")
# EUI-64 as colon bytes (8 bytes)
EUI64_RE = re.compile(rf"(?<![{HEX}:])((?:[{HEX}]{{2}}:){{7}}[{HEX}]{{2}})(?![{HEX}:])")


class Id64Map:
    """64-bit id -> its token, for a whole bundle."""

    def __init__(self) -> None:
        self.map: dict[int, int] = {}
        self._next: dict[int, int] = {}  # per significant width
        self._eui_next = 0

    def token(self, v: int) -> int:
        """A 64-bit identifier -> one with the same number of significant hex digits."""
        if v == 0 or v == 0xFFFFFFFFFFFFFFFF:
            return v
        if v not in self.map:
            self.map[v] = self._eui64() if (v >> 24) & 0xFFFF == 0xFFFE else self._same_width(v)
        return self.map[v]

    def _eui64(self) -> int:  # a MAC-derived (EUI-64) id keeps its ff:fe middle
        self._eui_next += 1
        return 0x020000FFFE000000 + self._eui_next

    def _same_width(self, v: int) -> int:
        width = max(1, (v.bit_length() + 3) // 4)
        n = self._next.get(width, 0) + 1
        self._next[width] = n
        if width == 1:
            token = n if n < 16 else None
        else:
            token = (0xA << (4 * (width - 1))) + n if n < 16 ** (width - 1) else None
        if token is None:  # more values of this width than it can hold: take a wider token
            token = (0xA << 60) + (width << 40) + n
        return token

    def text(self, digits: str) -> str:
        """Hex digits -> the token's, at the same width and case."""
        return case(digits, format(self.token(int(digits, 16)), "x").zfill(len(digits)))

    def mapping(self) -> dict[str, str]:
        return {f"0x{k:016x}": f"0x{v:016x}" for k, v in self.map.items()}


def redact_eui64(r: Redactor, text: str, hold: Hold) -> str:
    """EUI-64 printed as 8 colon-separated bytes."""

    def eui64(m: re.Match) -> str:
        hexs = f"{r.id64.token(int(m[1].replace(':', ''), 16)):016x}"
        return hold(case(m[1], ":".join(hexs[i:i + 2] for i in range(0, 16, 2))))

    return EUI64_RE.sub(eui64, text)


def redact_guids(r: Redactor, text: str, hold: Hold) -> str:
    """GUIDs in the contexts GUID_RES lists, a bare 16-hex word that mixes letters and digits (not
    1234567890123456), the 4x4 colon form and 0x + 16 hex digits after no mask/cap/flag/id key."""
    ids = r.id64

    def guid(raw: str) -> str:
        return hold(ids.text(raw))

    for rx, group in GUID_RES:
        text = sub_group(rx, text, group, guid)
    text = sub_group(BARE_GUID_RE, text, 2, lambda raw: guid(raw) if mixed(raw) else raw)

    def colon(m: re.Match) -> str:
        raw = m[1]
        new = f"{ids.token(int(raw.replace(':', ''), 16)):016x}"
        return hold(case(raw, ":".join(new[i:i + 4] for i in range(0, 16, 4))))

    def wide(m: re.Match) -> str:
        line = m.string[m.string.rfind("\n", 0, m.start()) + 1:m.start()]
        if not mixed(m[2]) or _NOT_GUID_KEY_RE.search(line):
            return m[0]  # page_size_cap, device_cap_flags_ex, timestamp_mask, host_hash, commId ...
        return m[1] + hold(ids.text(m[2]))

    return GUID_0X16_RE.sub(wide, GUID_COLON_RE.sub(colon, text))
