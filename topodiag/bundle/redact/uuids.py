"""UUIDs (GPU-/MIG- UUIDs and any other 8-4-4-4-12 UUID): 00000001-0000-0000-0000-000000000001,
00000002-..., in order of first sight, in the original's case; the GPU- / MIG- prefix stays."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .text import HEX, Hold, case

if TYPE_CHECKING:
    from .core import Redactor

UUID_RE = re.compile(
    rf"(?<![{HEX}])([{HEX}]{{8}}-[{HEX}]{{4}}-[{HEX}]{{4}}-[{HEX}]{{4}}-[{HEX}]{{12}})(?![{HEX}])")


class UuidMap:
    """lower-case UUID -> its token, for a whole bundle."""

    def __init__(self) -> None:
        self.map: dict[str, str] = {}

    def text(self, raw: str) -> str:
        key = raw.lower()
        if key not in self.map:
            n = len(self.map) + 1
            self.map[key] = f"{n:08x}-0000-0000-0000-{n:012x}"
        return case(raw, self.map[key])

    def mapping(self) -> dict[str, str]:
        return dict(self.map)


def redact_uuids(r: Redactor, text: str, hold: Hold) -> str:
    return UUID_RE.sub(lambda m: hold(r.uuids.text(m[1])), text)
