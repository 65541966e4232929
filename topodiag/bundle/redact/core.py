"""The Redactor: one set of maps for a whole bundle, so a value gets the same token in every member
(an IP in the NCCL log and in show_gids, a GUID in ibstat and in iblinkinfo) and two values never
share one, and the passes that apply them, in a fixed order given as data (PASSES). Each pass
replaces what it recognises by a placeholder no later pass can match (text.py), so nothing is
redacted twice. `mapping()` (original -> token) is for the collector to keep *outside* the bundle."""

from __future__ import annotations

import re
import time
from typing import Callable, Iterable, Optional

from ...errors import RedactionError
from .guids import Id64Map, redact_eui64, redact_guids
from .hosts import HostNames, redact_hosts
from .ipv4 import Ipv4Map, redact_ipv4
from .ipv6 import PrefixMap, redact_ipoib, redact_ipv6
from .lids import SYSFS_LID_MEMBER, LidMap, redact_lid_member, redact_lids
from .macs import MacMap, redact_macs
from .people import People, redact_people
from .serials import SYSFS_SERIAL_MEMBER, SerialMap, redact_serial_member, redact_serials
from .text import PUA_RE, Hold, placeholders
from .uuids import UuidMap, redact_uuids

Pass = Callable[["Redactor", str, Hold], str]

# The order is part of the behaviour: users and node lists before host names (an e-mail address
# whose domain starts with a known host is left to the host pass); the IPoIB and EUI-64 byte strings
# before IPv6 (eight 1-2 digit groups are bytes, not an address); IPv6 before IPv4 (the IPv4 inside
# ::ffff:a.b.c.d goes through the IPv4 map once, and the redacted one is not read again); LIDs last
# (their iblinkinfo and ibnetdiscover columns come after a GUID printed or already held).
PASSES: tuple[Pass, ...] = (redact_people, redact_hosts, redact_uuids, redact_serials, redact_ipoib, redact_eui64,
                            redact_ipv6, redact_guids, redact_macs, redact_ipv4, redact_lids)
# A member whose name says what it holds is redacted whole after the passes (sysfs lid, board_serial).
MEMBER_PASSES: tuple[tuple[re.Pattern, Pass], ...] = ((SYSFS_LID_MEMBER, redact_lid_member),
                                                      (SYSFS_SERIAL_MEMBER, redact_serial_member))
DEADLINE_MESSAGE = ("redaction did not finish before the --deadline: nothing was written "
                    "(give a larger --deadline for big logs)")


class Redactor:
    """Consistent, format-preserving replacement of identifiers, for every member of a bundle."""

    def __init__(self, hostnames: Iterable[str] = (), deadline: Optional[float] = None):
        # time.monotonic() past which redact() refuses to go on (collect --deadline): a RedactionError,
        # never a partly redacted bundle; None: no bound
        self.deadline = deadline
        self.hosts = HostNames()
        self.people = People()
        self.ipv4 = Ipv4Map()
        self.ipv6 = PrefixMap()
        self.id64 = Id64Map()  # GUIDs, EUI-64, IPv6 interface ids
        self.macs = MacMap()
        self.lids = LidMap()
        self.uuids = UuidMap()
        self.serials = SerialMap()
        self.add_hostnames(hostnames)

    def add_hostnames(self, names: Iterable[str]) -> None:
        """Register host names to replace everywhere (in the order given: tokens follow it)."""
        for name in names:
            self.hosts.add(name)

    def add_hostname(self, name: str) -> None:
        self.hosts.add(name)

    def redact(self, text: str, member: Optional[str] = None) -> str:
        """The text with every identifier replaced. `member` (the bundle path, e.g.
        "sysfs/class/infiniband/mlx5_0/ports/1/lid") lets a file whose name says what it holds
        be redacted whole."""
        if self.deadline is not None and time.monotonic() > self.deadline:  # checked per member and per streamed block
            raise RedactionError(DEADLINE_MESSAGE)
        if PUA_RE.search(text):  # the placeholders' planes: such a character (an icon font's glyph
            text = PUA_RE.sub("\ufffd", text)  # in a job name) is replaced, never a reason to refuse
        hold, restore = placeholders()
        for step in PASSES:
            text = step(self, text, hold)
        if member:
            path = member.replace("\\", "/")
            for rx, step in MEMBER_PASSES:
                if rx.search(path):
                    text = step(self, text, hold)
                    break
        return restore(text)

    def mapping(self) -> dict[str, str]:
        """original -> token for everything replaced so far (for the collector to keep outside the
        bundle: writing it into the bundle would undo the redaction)."""
        out: dict[str, str] = {}
        for part in (self.hosts, self.ipv4, self.id64, self.ipv6, self.macs, self.lids, self.uuids, self.serials,
                     self.people):
            out.update(part.mapping())
        return out
