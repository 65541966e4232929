"""IPv6 addresses and IB GIDs, and the IPoIB hardware address that holds a GID. The form printed is
kept (full, compressed, ::ffff:a.b.c.d, %zone); fe80::/64 and the ::ffff:0:0/96 IPv4-mapped prefix
are kept (the IPv4 goes through the IPv4 map, also when printed in hex), another /64 prefix keeps its
first 16 bits; the interface id goes through the 64-bit id map (an IB GID's id is the port GUID).
"std::abs" and eight 1-2 digit groups are not addresses."""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING, Optional

from .text import HEX, Hold, case

if TYPE_CHECKING:
    from .core import Redactor

_G = rf"[{HEX}]{{1,4}}"
_V4 = r"(?:\d{1,3}\.){3}\d{1,3}"
IPV6_RE = re.compile(
    rf"(?<![{HEX}:.])("
    rf"(?:(?:{_G}:){{6}}|(?:{_G}(?::{_G}){{0,5}})?::(?:{_G}:){{0,5}}){_V4}"  # with a dotted tail
    rf"|(?:{_G}:){{7}}{_G}"  # eight groups
    rf"|(?:{_G}(?::{_G}){{0,6}})?::(?:{_G}(?::{_G}){{0,6}})?"  # compressed
    rf")(%[\w.-]+)?(?![{HEX}:]|\.\d)"
)
IPOIB_RE = re.compile(  # 4 bytes of QPN and flags, then the 16-byte GID
    rf"(?<![{HEX}:])((?:[{HEX}]{{2}}:){{3}}[{HEX}]{{2}}):((?:[{HEX}]{{2}}:){{15}}[{HEX}]{{2}})(?![{HEX}:])")


class PrefixMap:
    """IPv6 upper 64 bits -> the token's (the first 16 bits kept)."""

    def __init__(self) -> None:
        self.map: dict[int, int] = {}

    def token(self, hi: int) -> int:
        if hi in (0, 0xFE80 << 48):
            return hi
        if hi not in self.map:
            self.map[hi] = (hi & (0xFFFF << 48)) | (len(self.map) + 1)
        return self.map[hi]

    def mapping(self) -> dict[str, str]:
        return {f"ipv6 prefix {ipaddress.IPv6Address(k << 64)}/64": f"{ipaddress.IPv6Address(v << 64)}/64"
                for k, v in self.map.items()}


def ipv6_text(r: Redactor, raw: str, zone: str) -> Optional[str]:
    """The redacted form of an address as printed (raw, then its %zone); None: not an address."""
    try:
        addr = ipaddress.IPv6Address(raw)
    except ValueError:
        return None
    v = int(addr)
    if addr.is_unspecified or addr.is_loopback or addr.is_multicast:
        return raw + zone
    hi, lo = v >> 64, v & 0xFFFFFFFFFFFFFFFF
    if hi == 0 and (lo >> 32) == 0xFFFF:  # IPv4-mapped: the IPv4 map decides
        new = (0xFFFF << 32) | r.ipv4.token(lo & 0xFFFFFFFF)
    else:
        new = (r.ipv6.token(hi) << 64) | r.id64.token(lo)
    return case(raw, _printed_as(raw, new)) + zone


def _printed_as(raw: str, new: int) -> str:
    """The address `new` in the form `raw` was printed in."""
    if "." in raw and (new >> 32) == 0xFFFF and "::" in raw:
        return f"::ffff:{ipaddress.IPv4Address(new & 0xFFFFFFFF)}"
    if "." in raw and (new >> 32) == 0xFFFF:
        return f"0:0:0:0:0:ffff:{ipaddress.IPv4Address(new & 0xFFFFFFFF)}"
    return hex_text(new, "::" not in raw and "." not in raw and all(len(g) == 4 for g in raw.split(":")))


def hex_text(n: int, exploded: bool = False) -> str:
    """The address `n` in hex groups: all eight of four digits (`exploded`), or RFC 5952's form (no
    leading zeros, the longest run of two or more zero groups, the first of equal ones, as "::") --
    what `ipaddress` printed before Python 3.13, which prints an IPv4-mapped address with its last 32
    bits dotted ("::ffff:198.18.0.1") in both forms: a redacted GID keeps the hex form its tool printed."""
    groups = [(n >> (112 - 16 * i)) & 0xFFFF for i in range(8)]
    if exploded:
        return ":".join(f"{g:04x}" for g in groups)
    start, length, i = -1, 1, 0
    while i < 8:
        if groups[i]:
            i += 1
            continue
        j = i
        while j < 8 and not groups[j]:
            j += 1
        if j - i > length:
            start, length = i, j - i
        i = j
    if start < 0:
        return ":".join(f"{g:x}" for g in groups)
    return (":".join(f"{g:x}" for g in groups[:start]) + "::"
            + ":".join(f"{g:x}" for g in groups[start + length:]))


def _not_an_address(raw: str) -> bool:
    """"std::abs", "d::ab": too few or too short groups to be an address anyone printed; eight 1-2
    digit groups: bytes, not an address (the EUI-64 pass had them)."""
    groups = [g for g in re.split(r":+", raw) if g]
    if "." in raw:
        return False
    if "::" in raw:
        return len(groups) < 2 or (len(groups) == 2 and max(len(g) for g in groups) < 3)
    return max(len(g) for g in groups) < 3


def redact_ipv6(r: Redactor, text: str, hold: Hold) -> str:
    def repl(m: re.Match) -> str:
        if _not_an_address(m[1]):
            return m[0]
        new = ipv6_text(r, m[1], m[2] or "")
        return m[0] if new is None else hold(new)

    return IPV6_RE.sub(repl, text)


def redact_ipoib(r: Redactor, text: str, hold: Hold) -> str:
    """IPoIB hardware addresses (4 bytes QPN + 16 bytes GID, colon-separated): the GID as an IPv6
    address is."""

    def ipoib(m: re.Match) -> str:
        gid = int(m[2].replace(":", ""), 16)
        digits = ipv6_text(r, str(ipaddress.IPv6Address(gid)), "")
        new = int(ipaddress.IPv6Address(digits)) if digits else gid
        hexs = f"{new:032x}"
        return m[1] + ":" + hold(case(m[2], ":".join(hexs[i:i + 2] for i in range(0, 32, 2))))

    return IPOIB_RE.sub(ipoib, text)
