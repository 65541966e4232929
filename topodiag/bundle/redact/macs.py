"""MAC addresses: 02:00:00:00:00:01, 02:00:00:00:00:02 ... (locally administered), separators and
case kept; the Cisco aabb.ccdd.eeff form too (1234.5678.9012, all digits, is a version or a count).
00:00:00:00:00:00 and ff:ff:ff:ff:ff:ff are kept."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ...errors import RedactionError
from .text import HEX, Hold, case

if TYPE_CHECKING:
    from .core import Redactor

MAC_RE = re.compile(
    rf"(?<![{HEX}:-])([{HEX}]{{2}}([:-])(?:[{HEX}]{{2}}\2){{4}}[{HEX}]{{2}})(?![{HEX}:]|-[{HEX}])")
MAC_DOT_RE = re.compile(rf"(?<![\w.])([{HEX}]{{4}}\.[{HEX}]{{4}}\.[{HEX}]{{4}})(?![\w.])")


class MacMap:
    """MAC (as an int) -> its token, for a whole bundle."""

    def __init__(self) -> None:
        self.map: dict[int, int] = {}
        self._next = 0

    def token(self, v: int) -> int:
        if v == 0 or v == 0xFFFFFFFFFFFF:
            return v
        if v not in self.map:
            self._next += 1 + (0x020000000000 + self._next + 1 == v)  # never a MAC's own value
            if self._next > 0xFFFFFF:
                raise RedactionError("more MAC addresses than 02:00:00:xx:xx:xx holds")
            self.map[v] = 0x020000000000 + self._next
        return self.map[v]

    def mapping(self) -> dict[str, str]:
        return {":".join(f"{k:012x}"[i:i + 2] for i in range(0, 12, 2)):
                ":".join(f"{v:012x}"[i:i + 2] for i in range(0, 12, 2)) for k, v in self.map.items()}


def redact_macs(r: Redactor, text: str, hold: Hold) -> str:
    token = r.macs.token

    def colon(m: re.Match) -> str:
        raw, sep = m[1], m[2]
        new = f"{token(int(re.sub('[:-]', '', raw), 16)):012x}"
        return hold(case(raw, sep.join(new[i:i + 2] for i in range(0, 12, 2))))

    def dotted(m: re.Match) -> str:
        raw = m[1]
        if raw.replace(".", "").isdigit():
            return raw  # 1234.5678.9012: a version or a count, not a MAC
        new = f"{token(int(raw.replace('.', ''), 16)):012x}"
        return hold(case(raw, ".".join(new[i:i + 4] for i in range(0, 12, 4))))

    return MAC_DOT_RE.sub(dotted, MAC_RE.sub(colon, text))
