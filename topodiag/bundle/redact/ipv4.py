"""IPv4 addresses: 10.20.0.119 -> 198.18.0.1, 198.18.0.2, ... (the benchmark range 198.18.0.0/15),
in order of first sight. 127/8, 0.0.0.0, broadcast, netmasks and multicast are kept; 169.254/16
stays link-local (169.254.0.N). Dotted versions are not addresses: four octets inside a longer
dotted run (1.2.3.4.5) or after a 'v' are left alone."""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING

from ...errors import RedactionError
from .text import Hold

if TYPE_CHECKING:
    from .core import Redactor

_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
# four octets, not part of a longer dotted run (versions: 2.18.3, 1.2.3.4.5) nor after a 'v'
IPV4_RE = re.compile(rf"(?<![\d.])(?<![vV])({_OCTET}(?:\.{_OCTET}){{3}})(?![\d]|\.\d)")


def kept(v: int) -> bool:
    """Addresses that identify nothing: unspecified, loopback, broadcast, multicast, netmasks."""
    if v == 0 or v == 0xFFFFFFFF or (v >> 24) == 127 or 0xE0000000 <= v <= 0xEFFFFFFF:
        return True
    inv = (~v) & 0xFFFFFFFF
    return v >> 24 == 255 and (inv & (inv + 1)) == 0  # 255.255.240.0: a contiguous netmask


class Ipv4Map:
    """address (as an int) -> its token, for a whole bundle."""

    def __init__(self) -> None:
        self.map: dict[int, int] = {}
        self._next = 0
        self._ll_next = 0

    def token(self, v: int) -> int:
        if kept(v):
            return v
        if v not in self.map:
            self.map[v] = self._link_local() if (v >> 16) == 0xA9FE else self._benchmark(v)
        return self.map[v]

    def _link_local(self) -> int:  # 169.254/16 stays link-local
        self._ll_next += 1
        if self._ll_next > 0xFEFF:
            raise RedactionError("more link-local IPv4 addresses than 169.254/16 holds")
        return 0xA9FE0000 + self._ll_next

    def _benchmark(self, v: int) -> int:
        while True:
            self._next += 1
            token = 0xC6120000 + self._next  # 198.18.0.0/15
            if token > 0xC613FFFF:
                raise RedactionError("more IPv4 addresses than 198.18.0.0/15 holds")
            if token & 0xFF not in (0, 0xFF) and token != v:  # never an address's own value
                return token

    def mapping(self) -> dict[str, str]:
        return {str(ipaddress.IPv4Address(k)): str(ipaddress.IPv4Address(v)) for k, v in self.map.items()}


def redact_ipv4(r: Redactor, text: str, hold: Hold) -> str:
    token = r.ipv4.token
    return IPV4_RE.sub(lambda m: hold(str(ipaddress.IPv4Address(token(int(ipaddress.IPv4Address(m[1])))))), text)
