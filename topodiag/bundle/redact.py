"""Redaction of bundle members (`topodiag collect --redact`): identifiers -> consistent tokens.

One `Redactor` holds the maps for a whole bundle, so a value gets the same token in every member
(an IP in the NCCL log and in show_gids, a GUID in ibstat and in iblinkinfo) and two values never
share one. Tokens keep the shape of what they replace, so topodiag's own parsers read a redacted
bundle and reach the same findings:

    hostname      node017 -> host-0001 (FQDN node017.cluster.local -> host-0001.domain-01.invalid)
                  wherever it is a whole token, message bodies included, in any case (NODE017 is
                  the same host): not inside a longer identifier (no letter, digit or '_' on either
                  side, not a later label of a dotted name; '-' is a boundary: node017-ib0 ->
                  host-0001-ib0); a registered domain also after another label
                  (node017-ib.cluster.local). A host name that is also an ordinary word (letters
                  only and in _COMMON_WORDS: master, node, gpu, user, ubuntu, tesla...) is
                  replaced only where it is used as a host, so that the word stays a word
                  elsewhere: an NCCL or MPI prefix (master:pid:tid [dev], [master:1234]),
                  host:port, user@master, //master, a line that is only the name (hostname files),
                  the FQDN form with a registered domain, after host / hostname / nodename /
                  server / peer / ssh / on / ..._ADDR (with ':', '=' or quotes between; "on master
                  3" is text), an IB node description ("master HCA-1", MF0;master:), the host
                  column of a syslog line. Host names are found by `hostnames_in` (and, for large
                  members, redact_stream.scan), including peers NCCL names in a message body
                  ("remote peer node018.cluster<53735>").
    IPv4          10.20.0.119 -> 198.18.0.1, 198.18.0.2, ... (benchmark range 198.18.0.0/15), in
                  order of first sight; 127/8, 0.0.0.0, broadcast, netmasks and multicast are kept,
                  169.254/16 stays link-local (169.254.0.N)
    IPv6          the form printed is kept (full, compressed, ::ffff:a.b.c.d, %zone); fe80::/64 and
                  the ::ffff:0:0/96 IPv4-mapped prefix are kept (the IPv4 goes through the IPv4
                  map, also when printed in hex), another /64 prefix keeps its first 16 bits; the
                  interface id goes through the GUID map (an IB GID's id is the port GUID)
    MAC           02:00:00:00:00:01 (locally administered), separators and case kept; aabb.ccdd.eeff
                  form too; 00:00:00:00:00:00 and ff:ff:ff:ff:ff:ff kept
    IB GUID       a 64-bit map shared by every printed form (0x + 16 hex, 5aa2:e1ff:feda:e626,
                  "H-0008f10403961354", "(8f10403961355)", EUI-64 colon bytes); the token has the
                  same number of significant hex digits (a..., then a counter) and is printed at
                  the original's width and case
    LID           1, 2, 3 ... in order of first sight, decimal or hex as printed; 0 and 65535 kept
                  (they mean "no LID"); right-aligned columns (iblinkinfo) keep their alignment
    GPU UUID      GPU-/MIG- + 00000001-0000-0000-0000-000000000001 shape (any 8-4-4-4-12 UUID)
    serial        same number of digits: 0000000000001
    user          /home/alice77 -> /home/user-0001, alice77@example.com -> user-0001@domain-02.invalid
                  (root and system users kept; an address whose domain starts with a known host
                  is the host pass's)
    node list     SLURM_JOB_NODELIST=gpu[01-04],login7 -> SLURM_JOB_NODELIST=nodelist-01

Left alone on purpose: rates, bandwidths, sizes, PCI bus ids (topology, not identity), CPU
affinity, GID indexes, port numbers, pids, dotted versions (2.18.3, 28.39.1002, and any dotted run
longer than 4 numbers), netdev names, NCCL host_hash (not reversible to a host name).

A host name followed by dotted labels takes them as its domain only when that domain is registered
or ends in a DNS or site top-level domain, never a file suffix (nccl-node12.log keeps ".log"); a
host named as a GPU model (h100) is a word host; a private-use character in a member (the
placeholders' planes) is replaced with U+FFFD.

Passes run in a fixed order (users and node lists, host names, UUIDs, serials, IPoIB/EUI-64 byte strings, IPv6, GUIDs,
MACs, IPv4, LIDs) and each replaces what it recognises by a placeholder no later pass can match,
so nothing is redacted twice (the 198.18.x.y inside a redacted ::ffff:198.18.x.y is not read again).
`mapping()` (original -> token) is for the collector to keep *outside* the bundle.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
import stat
import time
from typing import Callable, Iterable, Mapping, Optional

from ..errors import RedactionError
from ..parsers.base import ANSI_RE
from .manifest import open_regular
from .redact_names import (EMAIL_RE, HOME_RE, KEEP_USERS, NODELIST_RE, PEER_PORT_RE, is_domain_tail,
                           is_model)
from .shown import PATH_SHOWN, shown

__all__ = ["Redactor", "RedactionError", "hostnames_in", "redact_tree", "redact_bundle_dir"]


# -- placeholders: two private-use characters, which no pattern below matches -------------------

_PH_HI, _PH_LO, _PH_SPAN = 0xF0000, 0x100000, 0xFFFE
_PH = "[\U000F0000-\U000FFFFD][\U00100000-\U0010FFFD]"
_PH_RE = re.compile(_PH)
_PUA_RE = re.compile("[\U000F0000-\U0010FFFF]")

_HEX = "0-9A-Fa-f"
_GUID_SLOT = rf"(?:0x[{_HEX}]{{1,16}}|(?:0x)?{_PH})"  # a GUID, printed or already held

# -- what is kept -------------------------------------------------------------------------------

_NO_LID = (0, 0xFFFF)
_KEEP_HOSTS = {"localhost", "localhost.localdomain", "ip6-localhost"}
# Words of the tools' own formats: never taken for a host name (a parser bug must not make the
# redactor rewrite the format).
_NOT_HOSTS = {"ca", "sw", "rt", "switch", "router", "hca", "port", "lid", "nccl", "info", "warn", "trace",
              "root", "none", "null", "unknown", "mlx5", "ib", "roce", "eth", "lo", "hostname", "host", "name"}


def _ipv4_kept(v: int) -> bool:
    """Addresses that identify nothing: unspecified, loopback, broadcast, multicast, netmasks."""
    if v == 0 or v == 0xFFFFFFFF or (v >> 24) == 127 or 0xE0000000 <= v <= 0xEFFFFFFF:
        return True
    inv = (~v) & 0xFFFFFFFF
    return v >> 24 == 255 and (inv & (inv + 1)) == 0  # 255.255.240.0: a contiguous netmask


def _case(original: str, token: str) -> str:
    """The token in upper case when the original's hex letters were."""
    letters = [c for c in original if c in "abcdefABCDEF"]
    return token.upper() if letters and all(c.isupper() for c in letters) else token


def _mixed(hexdigits: str) -> bool:
    """Hex letters and digits both (an all-f mask or a 16-digit number is no GUID)."""
    return any(c.isdigit() for c in hexdigits) and any(not c.isdigit() for c in hexdigits)


def _sub_group(rx: re.Pattern, text: str, group: int, fn: Callable[[str], str]) -> str:
    """Replace only `group` of every match of rx by fn(its text); the rest of the match stays."""

    def repl(m: re.Match) -> str:
        a, b = m.start(group) - m.start(), m.end(group) - m.start()
        return m[0][:a] + fn(m[group]) + m[0][b:]

    return rx.sub(repl, text)


def _fit(ws: str, original: str, token: str) -> str:
    """Whitespace + token, keeping a right-aligned column's end where the original's was."""
    if len(token) < len(original):
        return ws + token.rjust(len(original))
    extra = len(token) - len(original)
    if extra and ws.strip(" ") == "" and len(ws) > extra:
        return ws[: len(ws) - extra] + token
    return ws + token


# -- regular expressions ----------------------------------------------------------------------

_UUID_RE = re.compile(
    rf"(?<![{_HEX}])([{_HEX}]{{8}}-[{_HEX}]{{4}}-[{_HEX}]{{4}}-[{_HEX}]{{4}}-[{_HEX}]{{12}})(?![{_HEX}])")
_SERIAL_RES = (
    re.compile(r"(?im)^([ \t]*(?:Board |Baseboard |Base Board |System |Module |GPU |Product |Chassis )?Serial(?: Number)?"
               r"[ \t]*:[ \t]*)([A-Za-z0-9-]+)[ \t]*$"),
    re.compile(r"(?i)(\"(?:\w+_)?serial(?:_number|_no)?\"[ \t]*:[ \t]*\"?)([A-Za-z0-9-]+)(?=\"|[ \t]*[,}\n])"),
    # lspci -vvv: the VPD serial ("[SN] Serial number: MT2233X01234") and the PCIe Device Serial Number
    re.compile(r"(?im)^([ \t]*\[SN\] Serial number:[ \t]*)([A-Za-z0-9-]+)[ \t]*$"),
    re.compile(r"(?i)(Device Serial Number[ \t]+)([0-9a-f]{2}(?:-[0-9a-f]{2}){7})(?![0-9a-f-])"),
)
_IPOIB_RE = re.compile(  # 4 bytes of QPN and flags, then the 16-byte GID
    rf"(?<![{_HEX}:])((?:[{_HEX}]{{2}}:){{3}}[{_HEX}]{{2}}):((?:[{_HEX}]{{2}}:){{15}}[{_HEX}]{{2}})(?![{_HEX}:])")
_EUI64_RE = re.compile(rf"(?<![{_HEX}:])((?:[{_HEX}]{{2}}:){{7}}[{_HEX}]{{2}})(?![{_HEX}:])")
_G = rf"[{_HEX}]{{1,4}}"
_V4 = r"(?:\d{1,3}\.){3}\d{1,3}"
_IPV6_RE = re.compile(
    rf"(?<![{_HEX}:.])("
    rf"(?:(?:{_G}:){{6}}|(?:{_G}(?::{_G}){{0,5}})?::(?:{_G}:){{0,5}}){_V4}"  # with a dotted tail
    rf"|(?:{_G}:){{7}}{_G}"  # eight groups
    rf"|(?:{_G}(?::{_G}){{0,6}})?::(?:{_G}(?::{_G}){{0,6}})?"  # compressed
    rf")(%[\w.-]+)?(?![{_HEX}:]|\.\d)"
)
_MAC_RE = re.compile(
    rf"(?<![{_HEX}:-])([{_HEX}]{{2}}([:-])(?:[{_HEX}]{{2}}\2){{4}}[{_HEX}]{{2}})(?![{_HEX}:]|-[{_HEX}])")
_MAC_DOT_RE = re.compile(rf"(?<![\w.])([{_HEX}]{{4}}\.[{_HEX}]{{4}}\.[{_HEX}]{{4}})(?![\w.])")
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
# four octets, not part of a longer dotted run (versions: 2.18.3, 1.2.3.4.5) nor after a 'v'
_IPV4_RE = re.compile(rf"(?<![\d.])(?<![vV])({_OCTET}(?:\.{_OCTET}){{3}})(?![\d]|\.\d)")

# GUIDs, in the contexts the tools print them. Each: (regex, group of the GUID's hex digits).
_GUID_RES = (
    # ibnetdiscover: "[1](8f10403961355)" and "switchguid=0x5442ba00003080(5442ba00003080)"
    (re.compile(rf"(\]|guid=(?:0x)?[{_HEX}]{{1,16}})\(([{_HEX}]{{1,16}})\)"), 2),
    # "Node GUID: 0x...", node_guid: 0x..., sysimgguid=0x..., guid="0x...", "port_guid": "0x..."
    (re.compile(rf"(?i)(guid\"?[ \t]*[:=][ \t]*\"?(?:0x)?)([{_HEX}]{{1,16}})(?![{_HEX}:\w])"), 2),
    # "(guid 0x2c90200401e90)" (ibnetdiscover chassis), "port GUIDs 0x..." in prose, iblinkinfo -S/-G
    (re.compile(rf"(?i)(\bguids?[ \t]+(?:0x)?|(?<![\w-])-[SG][ \t]+0x)((?=[{_HEX}]*\d)[{_HEX}]{{4,16}})\b"), 2),
    # "Initiated from node 0008f10403960558 port 0008f10403960559"
    (re.compile(rf"(Initiated from node[ \t]+)([{_HEX}]{{1,16}})\b"), 2),
    (re.compile(rf"(Initiated from node[ \t]+{_PH}[ \t]+port[ \t]+)([{_HEX}]{{1,16}})\b"), 2),
    # ibnetdiscover node names: "H-0008f10403961354" / "S-..." / "R-..." (quoted: any width)
    (re.compile(rf"(\"[HSR]-)([{_HEX}]{{1,16}})(?=\")"), 2),
    (re.compile(rf"((?<![\w-])[HSR]-)([{_HEX}]{{16}})(?!\w)"), 2),
    # iblinkinfo: port GUID at the start of a line, after "==>" (-l), in a node header; ibhosts
    (re.compile(rf"(?m)(^[ \t]*0x)([{_HEX}]{{16}})(?=[ \t])"), 2),
    (re.compile(rf"(==>[ \t]*0x)([{_HEX}]{{16}})(?=[ \t])"), 2),
    (re.compile(rf"(?m)(^[ \t]*(?:CA|Ca|Switch|Router|Rt|\?\?)[ \t]*:[ \t]*0x)([{_HEX}]{{1,16}})\b"), 2),
    # ibnetdiscover -p: "CA   134  1 0x7cfe9003003b4bde 4x EDR - SW  1719 10 0x7cfe9003009ce5b0"
    (re.compile(rf"(?m)((?:^|-)[ \t]*(?:CA|SW|RT)[ \t]+\d+[ \t]+\d+[ \t]+0x)([{_HEX}]{{1,16}})\b"), 2),
    # anywhere else, a word of exactly 16 hex digits (letters and digits both): a GUID in prose
    (re.compile(rf"((?<![\w.:-]))([{_HEX}]{{16}})(?![\w:-])"), 2),
)
# Anywhere else, 0x and exactly 16 hex digits (ibstat's width) is a GUID, unless the key before it
# on the line names a mask, capability, flag, size, hash or id.
_GUID_0X16_RE = re.compile(rf"((?<![\w.:-])0[xX])([{_HEX}]{{16}})(?![\w:-])")
_NOT_GUID_KEY_RE = re.compile(r"(?i)(?:mask|cap|flag|size|hash|comm|id|addr|ptr|pointer)\w*[\"'=:\s]*$")
# ibv_devinfo / sysfs node_guid "5aa2:e1ff:feda:e626": four groups of four, alone
_GUID_COLON_RE = re.compile(rf"(?<![{_HEX}:])([{_HEX}]{{4}}:[{_HEX}]{{4}}:[{_HEX}]{{4}}:[{_HEX}]{{4}})(?![{_HEX}:])")

_LID_VALUE = r"(0x[0-9A-Fa-f]{1,4}|\d{1,5})\b"
_LID_RES = (
    # ibstat "Base lid: 50" / "SM lid: 1", ibstatus "base lid:\t 0x3", ibv_devinfo "port_lid:", "sm_lid:"
    re.compile(r"(?i)(\b(?:(?:base|sm|port|master_sm)[ _])?lid[ \t]*[:=][ \t]*)" + _LID_VALUE),
    # ibnetdiscover "# lid 16 lmc 1", NCCL "LID 37", rdma link "lid 12 sm_lid 1"
    re.compile(r"(?i)(\b(?:sm_)?lid[ \t]+)" + _LID_VALUE),
    # probe JSON "lid": 50, "sm_lid": "0x1"
    re.compile(r"(?i)(\"(?:\w+_)?lid\"[ \t]*:[ \t]*\"?)" + _LID_VALUE),
)
# iblinkinfo port line: [guid ["desc"]] LID PORT[ext] ==( ... )==> [guid] LID PORT[ext] "desc"
_IBLINK_LOCAL_RE = re.compile(
    rf"(?m)^([ \t]*(?:{_GUID_SLOT}[ \t]+(?:\"[^\"\n]*\"[ \t]+)?)?)(\d{{1,5}})"
    rf"(?=[ \t]+\d{{1,5}}\[[ \t]*\d*[ \t]*\][ \t]*==\()")
_IBLINK_REMOTE_RE = re.compile(rf"(==>[ \t]*(?:{_GUID_SLOT}[ \t]+)?)(\d{{1,5}})(?=[ \t]+\d{{1,5}}\[)")
# ibnetdiscover -p: "CA   134  1 0x..." and "- SW  1719 10 0x..."
_PORTS_LID_RE = re.compile(rf"(?m)((?:^|-)[ \t]*(?:CA|SW|RT)[ \t]+)(\d{{1,5}})(?=[ \t]+\d{{1,5}}[ \t]+{_GUID_SLOT})")
# A sysfs file that holds only a LID ("0x32\n")
_WHOLE_LID_RE = re.compile(r"\A([ \t\r\n]*)(0x[0-9A-Fa-f]{1,4}|\d{1,5})(?=[ \t\r\n]*\Z)")
_SYSFS_LID_MEMBER = re.compile(r"(?:^|/)(?:lid|sm_lid)$")
_SYSFS_SERIAL_MEMBER = re.compile(r"(?:^|/)(?:\w*serial\w*)$")


class Redactor:
    """Consistent, format-preserving replacement of identifiers, for every member of a bundle."""

    def __init__(self, hostnames: Iterable[str] = (), deadline: Optional[float] = None):
        # time.monotonic() past which redact() refuses to go on (collect --deadline): a RedactionError,
        # never a partly redacted bundle; None: no bound
        self.deadline = deadline
        self._hosts: dict[str, str] = {}  # lower-case short name -> token
        self._domains: dict[str, str] = {}  # lower-case domain -> token
        self._spelled: dict[str, str] = {}  # lower-case name -> as first seen (for mapping())
        self._ipv4: dict[int, int] = {}
        self._ipv4_next = 0
        self._ipv4_ll_next = 0
        self._prefix: dict[int, int] = {}  # IPv6 upper 64 bits
        self._id64: dict[int, int] = {}  # GUIDs, EUI-64, IPv6 interface ids
        self._id64_next: dict[int, int] = {}  # per significant width
        self._mac: dict[int, int] = {}
        self._mac_next = 0
        self._lid: dict[int, int] = {}
        self._lid_next = 0
        self._uuid: dict[str, str] = {}
        self._serial: dict[str, str] = {}
        self._users: dict[str, str] = {}  # user name (as printed) -> user-NNNN
        self._nodelists: dict[str, str] = {}  # a Slurm node list -> nodelist-NN
        self.add_hostnames(hostnames)

    # -- host names ----------------------------------------------------------------------------

    def add_hostnames(self, names: Iterable[str]) -> None:
        """Register host names to replace everywhere (in the order given: tokens follow it)."""
        for name in names:
            self.add_hostname(name)

    def add_hostname(self, name: str) -> None:
        name = (name or "").strip().rstrip(".")
        if not _plausible_host(name):
            return
        short, _, domain = name.partition(".")  # DNS names: one host whatever the case
        if short.lower() not in self._hosts:
            self._hosts[short.lower()] = f"host-{len(self._hosts) + 1:04d}"
            self._spelled[short.lower()] = short
        if domain:
            self._domain(domain)

    def _domain(self, domain: str) -> str:
        spelled, domain = domain, domain.lower()
        if domain not in self._domains:
            self._spelled[domain] = spelled
            self._domains[domain] = f"domain-{len(self._domains) + 1:02d}.invalid"
        return self._domains[domain]

    # -- token makers ---------------------------------------------------------------------------

    def _ipv4_token(self, v: int) -> int:
        if _ipv4_kept(v):
            return v
        if v not in self._ipv4:
            if (v >> 16) == 0xA9FE:  # 169.254/16 stays link-local
                self._ipv4_ll_next += 1
                n = self._ipv4_ll_next
                if n > 0xFEFF:
                    raise RedactionError("more link-local IPv4 addresses than 169.254/16 holds")
                self._ipv4[v] = 0xA9FE0000 + n
            else:
                while True:
                    self._ipv4_next += 1
                    token = 0xC6120000 + self._ipv4_next  # 198.18.0.0/15
                    if token > 0xC613FFFF:
                        raise RedactionError("more IPv4 addresses than 198.18.0.0/15 holds")
                    if token & 0xFF not in (0, 0xFF) and token != v:  # never an address's own value
                        break
                self._ipv4[v] = token
        return self._ipv4[v]

    def _id64_token(self, v: int) -> int:
        """A 64-bit identifier -> one with the same number of significant hex digits."""
        if v == 0 or v == 0xFFFFFFFFFFFFFFFF:
            return v
        if v not in self._id64 and (v >> 24) & 0xFFFF == 0xFFFE:
            # A MAC-derived (EUI-64) id keeps its ff:fe middle, so a RoCE port still reads as one.
            self._eui_next = getattr(self, "_eui_next", 0) + 1
            self._id64[v] = 0x020000FFFE000000 + self._eui_next
        if v not in self._id64:
            width = max(1, (v.bit_length() + 3) // 4)
            n = self._id64_next.get(width, 0) + 1
            self._id64_next[width] = n
            if width == 1:
                token = n if n < 16 else None
            else:
                token = (0xA << (4 * (width - 1))) + n if n < 16 ** (width - 1) else None
            if token is None:  # more values of this width than it can hold: take a wider token
                token = (0xA << 60) + (width << 40) + n
            self._id64[v] = token
        return self._id64[v]

    def _guid_text(self, digits: str) -> str:
        token = self._id64_token(int(digits, 16))
        return _case(digits, format(token, "x").zfill(len(digits)))

    def _mac_token(self, v: int) -> int:
        if v == 0 or v == 0xFFFFFFFFFFFF:
            return v
        if v not in self._mac:
            self._mac_next += 1 + (0x020000000000 + self._mac_next + 1 == v)
            if self._mac_next > 0xFFFFFF:
                raise RedactionError("more MAC addresses than 02:00:00:xx:xx:xx holds")
            self._mac[v] = 0x020000000000 + self._mac_next
        return self._mac[v]

    def _lid_token(self, v: int) -> int:
        if v in _NO_LID:
            return v
        if v not in self._lid:
            n = self._lid_next + 1
            while n in _NO_LID or n == v:  # never a LID's own value
                n += 1
            if n > 0xBFFF:
                raise RedactionError("more LIDs than the unicast range holds")
            self._lid_next = n
            self._lid[v] = n
        return self._lid[v]

    def _lid_text(self, raw: str) -> str:
        if raw[:2].lower() == "0x":
            return raw[:2] + _case(raw[2:], f"{self._lid_token(int(raw, 16)):x}")
        return str(self._lid_token(int(raw)))

    def _uuid_text(self, raw: str) -> str:
        key = raw.lower()
        if key not in self._uuid:
            n = len(self._uuid) + 1
            self._uuid[key] = f"{n:08x}-0000-0000-0000-{n:012x}"
        return _case(raw, self._uuid[key])

    def _serial_text(self, raw: str) -> str:
        if raw.upper() in ("N/A", "NA", "UNKNOWN", "NONE", "0"):
            return raw
        if raw not in self._serial:
            n = len(self._serial) + 1
            self._serial[raw] = str(n).zfill(len(raw))
        return self._serial[raw]

    def _ipv6_text(self, raw: str, zone: str) -> Optional[str]:
        try:
            addr = ipaddress.IPv6Address(raw)
        except ValueError:
            return None
        v = int(addr)
        if addr.is_unspecified or addr.is_loopback or addr.is_multicast:
            return raw + zone
        hi, lo = v >> 64, v & 0xFFFFFFFFFFFFFFFF
        if hi == 0 and (lo >> 32) == 0xFFFF:  # IPv4-mapped: the IPv4 map decides
            new = (0xFFFF << 32) | self._ipv4_token(lo & 0xFFFFFFFF)
        else:
            if hi not in (0, 0xFE80 << 48):
                if hi not in self._prefix:
                    self._prefix[hi] = (hi & (0xFFFF << 48)) | (len(self._prefix) + 1)
                hi = self._prefix[hi]
            new = (hi << 64) | self._id64_token(lo)
        out = ipaddress.IPv6Address(new)
        if "." in raw and (new >> 32) == 0xFFFF and "::" in raw:
            text = f"::ffff:{ipaddress.IPv4Address(new & 0xFFFFFFFF)}"
        elif "." in raw and (new >> 32) == 0xFFFF:
            text = f"0:0:0:0:0:ffff:{ipaddress.IPv4Address(new & 0xFFFFFFFF)}"
        elif "::" not in raw and "." not in raw and all(len(g) == 4 for g in raw.split(":")):
            text = out.exploded
        else:
            text = out.compressed
        return _case(raw, text) + zone

    # -- passes ---------------------------------------------------------------------------------

    def redact(self, text: str, member: Optional[str] = None) -> str:
        """The text with every identifier replaced. `member` (the bundle path, e.g.
        "sysfs/class/infiniband/mlx5_0/ports/1/lid") lets a file whose name says what it holds
        be redacted whole."""
        if self.deadline is not None and time.monotonic() > self.deadline:  # checked per member and per streamed block
            raise RedactionError("redaction did not finish before the --deadline: nothing was written "
                                 "(give a larger --deadline for big logs)")
        if _PUA_RE.search(text):  # the placeholders' planes: such a character (an icon font's glyph
            text = _PUA_RE.sub("\ufffd", text)  # in a job name) is replaced, never a reason to refuse
        held: list[str] = []

        def hold(token: str) -> str:
            i = len(held)
            held.append(token)
            return chr(_PH_HI + i // _PH_SPAN) + chr(_PH_LO + i % _PH_SPAN)

        for step in (self._pass_people, self._pass_hosts, self._pass_uuids, self._pass_serials, self._pass_bytes,
                     self._pass_ipv6, self._pass_guids, self._pass_macs, self._pass_ipv4, self._pass_lids):
            text = step(text, hold)
        if member:
            path = member.replace("\\", "/")
            if _SYSFS_LID_MEMBER.search(path):
                text = _WHOLE_LID_RE.sub(lambda m: m[1] + hold(self._lid_text(m[2])), text)
            elif _SYSFS_SERIAL_MEMBER.search(path):
                text = re.sub(r"\A(\s*)(\S+)(?=\s*\Z)", lambda m: m[1] + hold(self._serial_text(m[2])), text)
        return _PH_RE.sub(lambda m: held[(ord(m[0][0]) - _PH_HI) * _PH_SPAN + ord(m[0][1]) - _PH_LO], text)

    def _host_regexes(self) -> tuple[Optional[re.Pattern], Optional[re.Pattern], Optional[re.Pattern]]:
        """(names anywhere, domains after a dotted label, word hosts in host positions), compiled
        once per set of names (each a trie: a big fabric's thousand names cost one pass)."""
        key = (len(self._hosts), len(self._domains))
        if getattr(self, "_host_re_key", None) != key:
            words = [h for h in self._hosts if _is_word(h)]
            anywhere = [h for h in self._hosts if not _is_word(h)]
            anywhere += [d for d in self._domains if not _is_word(d)]
            # The names are lower case and matched in the lower-cased text (str.lower, in C: twice
            # as fast as re.IGNORECASE over a big trie); IGNORECASE only where lower() would move
            # positions (a character whose lower case is longer, as U+0130).
            self._host_re = re.compile(
                rf"(?<!\w)(?<!\w\.)({_trie_pattern(anywhere)})((?:\.[A-Za-z][\w-]*)*)(?!\w)") if anywhere else None
            self._domain_re = re.compile(
                rf"(?<=[\w-]\.)({_trie_pattern(list(self._domains))})(?![\w-]|\.[A-Za-z])") if self._domains else None
            # A word host: each of its occurrences as a whole token, judged by its context (_word_host_at)
            doms = rf"(\.(?:{_trie_pattern(list(self._domains))}))?" if self._domains else "()"
            self._word_re = re.compile(rf"(?<![\w.-])({_trie_pattern(words)}){doms}(?![\w-])") if words else None
            self._host_re_key = key
        return self._host_re, self._domain_re, self._word_re

    def _pass_hosts(self, text: str, hold: Callable[[str], str]) -> str:
        """Host names (see `_is_word` for the rule): a name that is not an ordinary word is
        replaced wherever it is a whole token (not inside a longer identifier: no letter, digit or
        '_' on either side, not a later label of a dotted name; '-' is a boundary, so
        node017-ib0 -> host-0001-ib0), in any case (NODE017 is node017), with the domain that
        follows it; a registered domain is replaced after any dotted label too
        (node017-ib.cluster.local). A host name that is also an ordinary word (`master`, `node`,
        `gpu`...) is replaced only where it is used as a host (_word_host_at), so the
        word stays a word everywhere else."""
        if not self._hosts and not self._domains:
            return text
        anywhere, domains, words = self._host_regexes()

        if words is not None:
            def word(m: re.Match) -> Optional[str]:
                if m[2]:  # the FQDN form with a registered domain: a host, domain and all
                    return hold(self._hosts[m[1].lower()] + "." + self._domain(m[2][1:]))
                if not _word_host_at(m.string, m.start(), m.end()):
                    return None  # an ordinary word here
                return hold(self._hosts[m[1].lower()])

            text = _sub_any_case(words, text, word)

        def repl(m: re.Match) -> Optional[str]:
            name, dom = m[1].lower(), m[2].lower()
            s, i, j = m.string, m.start(), m.end()
            if s[i - 1:i] == '"' and re.match(r'"[ \t]*:', s[j:j + 3]):
                return None  # a JSON key ("hostname": ...), never a value to redact
            if dom and not self._is_domain(dom[1:]):  # node12.log: a file's suffix, not a domain
                keep = m.string[m.start(2):m.end(2)]
                if name in self._hosts:
                    return hold(self._hosts[name]) + keep
                return hold(self._domain(name)) + keep  # a registered domain's own label
            if name in self._domains and name not in self._hosts:
                return hold(self._domain(name + dom))
            if dom:
                return hold(self._hosts[name] + "." + self._domain(dom[1:]))
            if name in self._hosts and s[j:j + 1] == "-":  # node017-ib.cluster.local: the host's domain
                tail = _LABEL_DOMAIN_RE.match(s, j)
                if tail:
                    self._domain(tail[1][1:])  # replaced by the domain pass below
            return hold(self._hosts[name])

        if anywhere is not None:
            text = _sub_any_case(anywhere, text, repl)
            domains = self._host_regexes()[1]  # with the domains just met
        if domains is not None:
            text = _sub_any_case(domains, text, lambda m: hold(self._domain(m[1].lower())))
        return text

    def _is_domain(self, dom: str) -> bool:
        """Whether the dotted labels after a host name are a domain: one seen as such (a host name
        given or found as an FQDN registered it), or one ending in a top-level domain of DNS or of
        a site (local, cluster, internal...) that is not a file suffix (log, txt, json, gz...)."""
        dom = dom.lower()
        if dom in self._domains:
            return True
        return is_domain_tail(dom)

    def _user(self, name: str) -> str:
        return self._users.setdefault(name, f"user-{len(self._users) + 1:04d}")

    def _pass_people(self, text: str, hold: Callable[[str], str]) -> str:
        """Slurm node lists (one token for the value), e-mail addresses (user and domain) and the
        user of a home directory (/home/alice77 -> /home/user-0001), before the host names: an
        address whose domain starts with a known host is left to the host pass."""
        if "NODE" in text:
            text = NODELIST_RE.sub(lambda m: m[1] + m[2] + hold(self._nodelists.setdefault(
                m[3], f"nodelist-{len(self._nodelists) + 1:02d}")), text)

        def email(m: re.Match) -> Optional[str]:
            if m[2].split(".")[0].lower() in self._hosts:
                return m[0]
            user = m[1] if m[1].lower() in KEEP_USERS else hold(self._user(m[1]))
            return f"{user}@{hold(self._domain(m[2]))}"

        if "@" in text:
            text = EMAIL_RE.sub(email, text)
        if "/" in text:
            text = HOME_RE.sub(lambda m: m[0] if m[2] in KEEP_USERS else m[1] + hold(self._user(m[2])), text)
        return text

    def _pass_uuids(self, text: str, hold: Callable[[str], str]) -> str:
        return _UUID_RE.sub(lambda m: hold(self._uuid_text(m[1])), text)

    def _pass_serials(self, text: str, hold: Callable[[str], str]) -> str:
        for rx in _SERIAL_RES:
            text = _sub_group(rx, text, 2, lambda raw: hold(self._serial_text(raw)))
        return text

    def _pass_bytes(self, text: str, hold: Callable[[str], str]) -> str:
        """Colon-separated byte strings: IPoIB hardware addresses (4 bytes QPN + 16 bytes GID) and
        EUI-64 (8 bytes)."""

        def ipoib(m: re.Match) -> str:
            gid = int(m[2].replace(":", ""), 16)
            digits = self._ipv6_text(str(ipaddress.IPv6Address(gid)), "")
            new = int(ipaddress.IPv6Address(digits)) if digits else gid
            hexs = f"{new:032x}"
            return m[1] + ":" + hold(_case(m[2], ":".join(hexs[i:i + 2] for i in range(0, 32, 2))))

        def eui64(m: re.Match) -> str:
            new = self._id64_token(int(m[1].replace(":", ""), 16))
            hexs = f"{new:016x}"
            return hold(_case(m[1], ":".join(hexs[i:i + 2] for i in range(0, 16, 2))))

        return _EUI64_RE.sub(eui64, _IPOIB_RE.sub(ipoib, text))

    def _pass_ipv6(self, text: str, hold: Callable[[str], str]) -> str:
        def repl(m: re.Match) -> str:
            raw = m[1]
            groups = [g for g in re.split(r":+", raw) if g]
            if "::" in raw:
                # "std::abs", "d::ab": too few or too short groups to be an address anyone printed
                if len(groups) < 2 and "." not in raw:
                    return m[0]
                if len(groups) == 2 and "." not in raw and max(len(g) for g in groups) < 3:
                    return m[0]
            elif "." not in raw and max(len(g) for g in groups) < 3:
                return m[0]  # eight 1-2 digit groups: bytes, not an address (EUI-64 pass had them)
            new = self._ipv6_text(raw, m[2] or "")
            return m[0] if new is None else hold(new)

        return _IPV6_RE.sub(repl, text)

    def _pass_guids(self, text: str, hold: Callable[[str], str]) -> str:
        def guid(raw: str) -> str:
            return hold(self._guid_text(raw))

        for rx, group in _GUID_RES[:-1]:
            text = _sub_group(rx, text, group, guid)
        # a bare 16-hex word is a GUID when it mixes letters and digits (not 1234567890123456)
        text = _sub_group(_GUID_RES[-1][0], text, 2, lambda raw: guid(raw) if _mixed(raw) else raw)

        def colon(m: re.Match) -> str:
            raw = m[1]
            new = f"{self._id64_token(int(raw.replace(':', ''), 16)):016x}"
            return hold(_case(raw, ":".join(new[i:i + 4] for i in range(0, 16, 4))))

        def wide(m: re.Match) -> str:
            line = m.string[m.string.rfind("\n", 0, m.start()) + 1:m.start()]
            if not _mixed(m[2]) or _NOT_GUID_KEY_RE.search(line):
                return m[0]  # page_size_cap, device_cap_flags_ex, timestamp_mask, host_hash, commId ...
            return m[1] + hold(self._guid_text(m[2]))

        return _GUID_0X16_RE.sub(wide, _GUID_COLON_RE.sub(colon, text))

    def _pass_macs(self, text: str, hold: Callable[[str], str]) -> str:
        def colon(m: re.Match) -> str:
            raw, sep = m[1], m[2]
            new = f"{self._mac_token(int(re.sub('[:-]', '', raw), 16)):012x}"
            return hold(_case(raw, sep.join(new[i:i + 2] for i in range(0, 12, 2))))

        def dotted(m: re.Match) -> str:
            raw = m[1]
            if raw.replace(".", "").isdigit():
                return raw  # 1234.5678.9012: a version or a count, not a MAC
            new = f"{self._mac_token(int(raw.replace('.', ''), 16)):012x}"
            return hold(_case(raw, ".".join(new[i:i + 4] for i in range(0, 12, 4))))

        return _MAC_DOT_RE.sub(dotted, _MAC_RE.sub(colon, text))

    def _pass_ipv4(self, text: str, hold: Callable[[str], str]) -> str:
        return _IPV4_RE.sub(lambda m: hold(str(ipaddress.IPv4Address(
            self._ipv4_token(int(ipaddress.IPv4Address(m[1])))))), text)

    def _pass_lids(self, text: str, hold: Callable[[str], str]) -> str:
        for rx in _LID_RES:
            text = _sub_group(rx, text, 2, lambda raw: hold(self._lid_text(raw)))

        def column(m: re.Match) -> str:
            pre, raw = m[1], m[2]
            ws = re.search(r"[ \t]*$", pre)[0]
            return pre[: len(pre) - len(ws)] + hold(_fit(ws, raw, self._lid_text(raw)))

        for rx in (_IBLINK_LOCAL_RE, _IBLINK_REMOTE_RE, _PORTS_LID_RE):
            text = rx.sub(column, text)
        return text

    # -- the map --------------------------------------------------------------------------------

    def mapping(self) -> dict[str, str]:
        """original -> token for everything replaced so far (for the collector to keep outside the
        bundle: writing it into the bundle would undo the redaction)."""
        out: dict[str, str] = {}
        out.update((self._spelled.get(k, k), v) for k, v in self._hosts.items())
        out.update((self._spelled.get(k, k), v) for k, v in self._domains.items())
        out.update({str(ipaddress.IPv4Address(k)): str(ipaddress.IPv4Address(v))
                    for k, v in self._ipv4.items()})
        out.update({f"0x{k:016x}": f"0x{v:016x}" for k, v in self._id64.items()})
        out.update({f"ipv6 prefix {ipaddress.IPv6Address(k << 64)}/64": f"{ipaddress.IPv6Address(v << 64)}/64"
                    for k, v in self._prefix.items()})
        out.update({":".join(f"{k:012x}"[i:i + 2] for i in range(0, 12, 2)):
                    ":".join(f"{v:012x}"[i:i + 2] for i in range(0, 12, 2)) for k, v in self._mac.items()})
        out.update({f"lid {k}": f"lid {v}" for k, v in self._lid.items()})
        out.update(self._uuid)
        out.update({f"serial {k}": f"serial {v}" for k, v in self._serial.items()})
        out.update({f"user {k}": v for k, v in self._users.items()})
        out.update({f"node list {k}": v for k, v in self._nodelists.items()})
        return out


def _sub_any_case(rx: re.Pattern, text: str, fn: Callable[[re.Match], Optional[str]]) -> str:
    """rx (lower-case literals) matched in any case: over text.lower() when it keeps every position
    (each character's lower case is one character: then the lengths are equal), else with
    IGNORECASE; fn(match) gives the replacement, or None to keep the text as it is."""
    low = text.lower()
    if len(low) != len(text):
        ci = re.compile(rx.pattern, rx.flags | re.IGNORECASE)
        return ci.sub(lambda m: (lambda r: m[0] if r is None else r)(fn(m)), text)
    if low == text:
        return rx.sub(lambda m: (lambda r: m[0] if r is None else r)(fn(m)), text)
    out: list[str] = []
    last = 0
    for m in rx.finditer(low):
        new = fn(m)
        if new is not None:
            out.append(text[last:m.start()])
            out.append(new)
            last = m.end()
    out.append(text[last:])
    return "".join(out)


def _trie_pattern(words: list[str]) -> str:
    """A regex matching any of `words`, longest first, built as a trie (shared prefixes once)."""
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        alts = [re.escape(ch) + build(node[ch]) for ch in sorted(k for k in node if k)]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:  # a word ends here: the longer ones are tried first
            return f"(?:{body})?"
        return body

    return build(trie) or "(?!)"


def _plausible_host(name: str) -> bool:
    if not (2 <= len(name) <= 253) or name.lower() in _KEEP_HOSTS or name.lower() in _NOT_HOSTS:
        return False
    # No ':' passes the pattern (no IPv6 address), and a dotted IPv4 address is all digits and dots.
    return _HOST_WORD_RE.fullmatch(name) is not None and not name.replace(".", "").isdigit()


_HOST_WORD_RE = re.compile(r"[A-Za-z0-9][\w.-]*")

# Host names that are also ordinary words (in English, in the tools' own output, vendor and
# distribution names, default host names): a host named so is replaced only where it is used as a
# host, never in ordinary text ("the master rank", "NVIDIA Tesla V100", "Ubuntu 22.04").
_COMMON_WORDS = frozenset("""
    admin agent all alpha any auto backup bad bastion beta blue box build bus cache client close cluster
    compute container controller core cpu cpus data database db debug default delta dev device devices
    docker done down driver edge engine enabled disabled error failed fabric fatal gamma gateway good
    gpu gpus graph green guest head home instance job jobs jump kernel kube kvm launcher leaf link links
    local login machine main manager master mgmt mgt monitor net network nfs no node nodes off ok omega
    on open peer pod primary prod proxy qemu rank ranks ready red remote ring run running runtime
    scheduler scratch secondary server servers service services sigma slave slurm socket spine staging
    start stop storage system test testing train training tree true false up user users vm web work
    worker workers yes
    tesla titan quadro volta turing ampere hopper blackwell grace pascal kepler maxwell lovelace rubin
    orin xavier jetson dgx hgx nvlink nvswitch mellanox connectx bluefield infiniband ethernet nvidia
    intel amd dell hpe lenovo supermicro cisco arista juniper broadcom gigabyte asus inspur quanta
    ubuntu debian centos rocky fedora linux redhat rhel suse alma
""".split())

# Where a host that is an ordinary word is used as a host (judged at each of its occurrences as a
# whole token, by the text around it on its line):
#   user@master, root@master:~#, ssh://master, http://master:8080      after '@' or '//'
#   master:29500, master:4242:4242 [0] (NCCL), [master:852715] (MPI)   followed by ':' and digits
#   master (a line that is only the name: hostname files, a prefix's host column as streamed)
#   master.cluster.local                                               a registered domain follows
#   host: master, hostname=master, "hostname": "master", on master device 0, peer master<41234>,
#   MASTER_ADDR=master, ssh master                                     after such a key ("on master 3": text)
#   "master HCA-1", "master mlx5_0", MF0;master:                       IB node descriptions
#   Nov 05 13:55:26 master kernel: ...                                 the host column of syslog
_PORT_AFTER_RE = re.compile(r":\d+(?::\d+[ \t]+\[|\b)")
_EOL_AFTER_RE = re.compile(r"[ \t]*(?:\r?\n|\Z)")
_HCA_AFTER_RE = re.compile(r"(?i)[ \t]+(?:hca-?\d+|mlx\d+_\d+)\b")
_WORD_KEY_RE = re.compile(r"(?i)\b(?:host|hostname|hostnames|host_name|nodename|node_name|nodelist|nodes|server"
                          r"|peer|ssh|on|[a-z_]*addr(?:ess)?)[\"']?[ \t]*(?:[:=][ \t]*)?[\"']?\Z")
_DIGIT_AFTER_RE = re.compile(r"[ \t]+\d")
_SYSLOG_BEFORE_RE = re.compile(r"(?i)(?:[a-z]{3} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dt\d\d:\d\d:\d\d\S*) ")


def _word_host_at(s: str, i: int, j: int) -> bool:
    """Whether the word s[i:j] (a host name that is also an ordinary word) is used as a host there
    (the contexts listed above; the FQDN form is judged by the caller). `s` may be lower-cased."""
    before = s[max(s.rfind("\n", 0, i) + 1, i - 80):i]
    if before.endswith(("@", "//")) or _PORT_AFTER_RE.match(s, j) or _HCA_AFTER_RE.match(s, j):
        return True
    if before.strip(" \t") == "" and _EOL_AFTER_RE.match(s, j):
        return True
    if s[j:j + 1] == ":" and before.lower().endswith("mf0;"):
        return True
    if s[j:j + 1] == " " and _SYSLOG_BEFORE_RE.fullmatch(before):
        return True
    return _WORD_KEY_RE.search(before) is not None and not _DIGIT_AFTER_RE.match(s, j)


# After a host name: "-label" parts, then a domain (node017-ib0.cluster.local)
_LABEL_DOMAIN_RE = re.compile(r"(?:-[A-Za-z0-9]+)+((?:\.[A-Za-z][\w-]*)+)(?![\w-])")


def _is_word(name: str) -> bool:
    """A host name (or single-label domain) that is also an ordinary word: letters only, and in
    _COMMON_WORDS; or a product's model token (h100, a100, gb200, l40s: a GPU model knowledge.py
    knows, the whole name). Such a name is redacted only where it is used as a host
    (_word_host_at), so "NVIDIA H100 80GB HBM3" stays itself on a host named h100; every other name
    (node017, gpu-a100-01, a letters-only name no text uses: selene) is redacted wherever it stands
    as a whole token."""
    if name.isalpha() and name.lower() in _COMMON_WORDS:
        return True
    return is_model(name)



# -- finding host names -------------------------------------------------------------------------

_HOST_SOURCES = ("nccl_debug", "nccl_tests", "iblinkinfo", "ibnetdiscover", "busbw_pairs", "nccl_diag")
_ANSI_RE = ANSI_RE  # one pattern for the escape sequences tools print (parsers/base.py)
_PROMPT_RE = re.compile(  # "root@node017:~# ", "[admin@ws01 ~]$ ": a shell prompt pasted with an output
    r"^[ \t]*\[?[A-Za-z_][\w.-]*@([A-Za-z0-9][\w-]*(?:\.[\w-]+)*)(?=[:\s\]])[^\n]*?[#$%>\u279c]", re.M)
# syslog / journal lines: "Nov 05 13:55:26 node1 systemd[1]: ..." and "2024-11-05T13:55:26+0000 node1 kernel: ..."
_SYSLOG_HOST_RE = re.compile(r"^(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\S*) "
                             r"([A-Za-z0-9][\w.-]*) [\w.@/-]+(?:\[\d+\])?:", re.M)
# NCCL names a peer by its resolved host name in message bodies: "socketProgress: Connection closed
# by remote peer node018.cluster<53735>" (a name, not an address: it starts with a letter).
PEER_HOST_RE = re.compile(r"\b(?:peer|connect(?:ing)? to)[ \t]+([A-Za-z][\w-]*(?:\.[A-Za-z0-9][\w-]*)*)<\d{1,5}>")
_JSON_HOST_RE = re.compile(r"\"(?:hostname|host|nodename|node_name|host_name)\"[ \t]*:[ \t]*\"([^\"\n]+)\"")
_HCA_WORD_RE = re.compile(r"(?i)(?:HCA-?\d+|mlx\d+_\d+|[a-z]+\d*_\d+|hfi\d+_\d+|qib\d+|mthca\d+|bnxt_re\d+|irdma\d+|"
                          r"rocep\w+|ibp\w+|ib\d+)")
_VENDOR_DEFAULT_RE = re.compile(r"MT\d+$")  # "MT25408 ConnectX Mellanox Technologies"
_MF0_RE = re.compile(r"^MF0;([^:;\s]+):")


def _desc_host(desc: Optional[str]) -> Optional[str]:
    """The host part of an IB node description: "node017 HCA-1" -> node017, "MF0;leaf01:MQM8700/U1"
    -> leaf01, "ibrouter01" -> ibrouter01; None for a vendor default ("MT4129 ConnectX7 ...")."""
    if not desc:
        return None
    d = desc.strip().strip('"').strip()
    m = _MF0_RE.match(d)
    if m:
        return m[1]
    parts = d.split()
    if not parts or _VENDOR_DEFAULT_RE.match(parts[0]):
        return None
    if len(parts) == 2 and _HCA_WORD_RE.fullmatch(parts[1]):
        return parts[0]
    if len(parts) == 1 and re.search(r"\d", parts[0]) and re.search(r"[A-Za-z]", parts[0]):
        return parts[0]
    return None


def _sources_for(name: str, text: str) -> list[str]:
    from ..parsers import SOURCES, detect_all

    stem = os.path.basename(name.replace("\\", "/")).split(".", 1)[0]
    stem = re.sub(r"-\d+$", "", stem)
    out = [stem] if stem in SOURCES else []
    try:
        out += [s for s, _ in detect_all(text) if s not in out]
    except Exception:  # detection must not stop redaction
        pass
    return [s for s in out if s in _HOST_SOURCES]


def _hosts_of(source: str, result) -> set[str]:
    hosts: set[Optional[str]] = set()
    if source == "nccl_debug":
        hosts.update(result.hosts)
        hosts.update(r.host for r in result.ranks)
        hosts.update((result.cuda_devs or {}).keys())
    elif source == "nccl_tests":
        hosts.update(d.host for d in result.devices)
    elif source in ("busbw_pairs", "nccl_diag"):  # nccl_diag: the "<host>:<pid> NCCL DIAG" prefixes
        hosts.update(result.hosts)
    elif source == "iblinkinfo":
        for node in result.nodes:
            hosts.add(_desc_host(node.description))
            hosts.update(_desc_host(ln.peer.description) for ln in node.links if ln.peer is not None)
    elif source == "ibnetdiscover":
        for node in result.nodes:
            hosts.add(_desc_host(node.description))
            hosts.update(_desc_host(c.peer_description) for c in node.connections)
        for p in result.ports:
            hosts.update((_desc_host(p.description), _desc_host(p.peer_description)))
    return {h for h in hosts if h}


def _prompt_hosts(text: str) -> list[str]:
    """The host names of shell prompts pasted with an output ("root@node017:~# ")."""
    return [m[1] for m in _PROMPT_RE.finditer(_ANSI_RE.sub("", text))]


def hostnames_in(members: Mapping[str, str]) -> set[str]:
    """Host names the members name, found with topodiag's parsers: NCCL log line prefixes, NCCL
    messages naming a peer by name ("remote peer node018.cluster<53735>"), nccl-tests device lines, IB node descriptions (iblinkinfo, ibnetdiscover), plus shell prompts pasted with
    an output, the host column of syslog / journal lines (kernel log, fabric manager journal), a
    manifest's `host`, probe JSON `hostname` keys and sysfs node_desc files. The NCCL
    XML host_hash is a hash, not a name, and is not returned."""
    from ..parsers import ParseError, blank_provenance_header, get

    found: set[str] = set()
    for name, text in members.items():
        path = name.replace("\\", "/")
        found.update(_prompt_hosts(text))
        found.update(m[1] for m in _SYSLOG_HOST_RE.finditer(text))
        if "<" in text:
            found.update(m[1] for m in PEER_HOST_RE.finditer(text))
        found.update(m[1] for m in PEER_PORT_RE.finditer(text))
        if path.endswith(".json"):
            found.update(m[1] for m in _JSON_HOST_RE.finditer(text))
            continue
        if path.endswith(("kernel/hostname", "/etc/hostname")) or path == "hostname":
            found.add(text.strip())
            continue
        if path.endswith("node_desc"):
            host = _desc_host(text.strip())
            found.update([host] if host else [])
            continue
        body = blank_provenance_header(text)
        for source in _sources_for(path, body):
            try:
                result = get(source).parse(body)
            except (ParseError, RecursionError):
                continue
            found |= _hosts_of(source, result)
    return {h.rstrip(".") for h in found if _plausible_host(h.rstrip("."))}


# -- trees and bundles ----------------------------------------------------------------------------

def _read_tree(src_dir: str, deadline: Optional[float] = None) -> tuple[dict[str, str], dict[str, str], dict[str, set]]:
    """Every file under src_dir as text (relative '/'-separated path -> text), every link that
    stays inside the tree (path -> its relative target, as a sysfs snapshot records them), and the
    large members, which are not read whole (path -> the host names their first streaming pass
    found, topodiag/bundle/redact_stream.py). RedactionError naming every member that is binary
    (not UTF-8 text, or with NUL bytes), not a regular file, or a link that is absolute or leaves the
    tree. `deadline` (monotonic) is checked per member and per block of a large member's scan."""
    from . import redact_stream

    members: dict[str, str] = {}
    links: dict[str, str] = {}
    large: dict[str, set] = {}
    refused: list[str] = []
    top = os.path.realpath(src_dir)
    for root, dirs, files in os.walk(src_dir):
        dirs.sort()
        for name in sorted(dirs + files):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, src_dir).replace(os.sep, "/")
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(full)
                inside = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(full)), target))
                if os.path.isabs(target) or not (inside + os.sep).startswith(os.path.abspath(src_dir) + os.sep) or (
                        not os.path.realpath(full).startswith(top + os.sep) and os.path.exists(full)):
                    refused.append(f"{shown(rel)} (a link out of the tree: {shown(target)})")
                else:
                    links[rel] = target.replace(os.sep, "/")
                continue
            if not stat.S_ISREG(st.st_mode):
                refused += [] if stat.S_ISDIR(st.st_mode) else [f"{shown(rel)} (not a regular file)"]
                continue
            if st.st_size >= redact_stream.LARGE_MEMBER_BYTES and _streamable(rel, full):
                try:
                    large[rel] = redact_stream.scan(full, _prompt_hosts, deadline)
                except redact_stream.DeadlinePassed:
                    raise
                except RedactionError:
                    refused.append(f"{shown(rel)} (binary: not UTF-8 text)")
                continue
            redact_stream.check_deadline(deadline)
            with open_regular(full) as fh:  # no FIFO put there in between: never blocks
                data = fh.read()
            try:
                if b"\0" in data:
                    raise UnicodeDecodeError("utf-8", data, 0, 1, "NUL byte")
                members[rel] = data.decode("utf-8")
            except UnicodeDecodeError:
                refused.append(f"{shown(rel)} (binary: not UTF-8 text)")
    if refused:
        shown_list = ", ".join(refused[:20]) + (f" and {len(refused) - 20} more" if len(refused) > 20 else "")
        raise RedactionError(f"{shown(src_dir, PATH_SHOWN)}: cannot redact {len(refused)} member(s), and will not "
                             f"copy them unredacted: {shown_list}")
    return members, links, large


# The sources whose every place for a host name the streaming scan knows (NCCL prefixes, peers named
# in a message, nccl-tests device lines, shell prompts): only their members are streamed.
_STREAMED_SOURCES = ("nccl_debug", "nccl_tests")
_FABRIC_SOURCES = ("iblinkinfo", "ibnetdiscover")  # host names in node descriptions: read whole


def _streamable(rel: str, full: str) -> bool:
    """A large member that may be redacted as a stream: an NCCL log or nccl-tests output (detected
    from its head), whose host names the streaming scan finds. Anything else (a probe's JSON with its
    "hostname", a journal's host column, fabric listings with host names in node descriptions that only
    their parsers read, the manifest) is read whole, so that `hostnames_in` reads its hosts the way its
    parser does: a large probe JSON streamed kept a hostname other than the manifest's."""
    if rel == "manifest.json" or _SYSFS_LID_MEMBER.search(rel) or _SYSFS_SERIAL_MEMBER.search(rel):
        return False  # redacted whole by its name
    with open(full, "rb") as fh:
        head = fh.read(1 << 16).decode("utf-8", "replace")
    return _log_stream(head) and not _fabric_listing(rel, head)


def _sniffed_as(head: str, sources: tuple[str, ...]) -> bool:
    """Whether one of `sources`' sniffers takes the head of a member for its tool's output, as
    detect_all scores them, without importing every other parser; a sniffer that fails says no."""
    from ..parsers import DETECT_THRESHOLD, SNIFF_CHARS, get

    for source in sources:
        try:
            if float(get(source).sniff(head[:SNIFF_CHARS])) >= DETECT_THRESHOLD:
                return True
        except Exception:  # a sniffer bug must not stop redaction (the member is then read whole)
            pass
    return False


def _log_stream(head: str) -> bool:
    """Whether the head of a member is an NCCL log or nccl-tests output."""
    return _sniffed_as(head, _STREAMED_SOURCES)


def _fabric_listing(rel: str, head: str) -> bool:
    """Whether a member is iblinkinfo or ibnetdiscover output (by its name, or by those two parsers'
    sniffers)."""
    stem = re.sub(r"-\d+$", "", os.path.basename(rel.replace("\\", "/")).split(".", 1)[0])
    return stem in _FABRIC_SOURCES or _sniffed_as(head, _FABRIC_SOURCES)


def _redact_json_strings(value, redactor: Redactor):
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, list):
        return [_redact_json_strings(v, redactor) for v in value]
    if isinstance(value, dict):
        return {k: _redact_json_strings(v, redactor) for k, v in value.items()}
    return value


def redact_tree(src_dir: str, dst_dir: str, redactor: Redactor) -> dict[str, str]:
    """Write a redacted copy of the tree under src_dir into dst_dir (new or empty), with the host
    names hostnames_in finds added to `redactor` first. Every file must be text; paths and link
    targets are redacted too. A bundle's manifest.json is rewritten: its strings redacted, each
    member's sha256 recomputed, "redacted": true. Binary files, special files and links that leave
    the tree are refused (RedactionError naming them all) before anything is written: nothing is
    ever copied unredacted. Returns old relative path -> new relative path."""
    from . import redact_stream

    if os.path.exists(dst_dir) and (not os.path.isdir(dst_dir) or os.listdir(dst_dir)):
        raise RedactionError(f"{shown(dst_dir, PATH_SHOWN)}: exists and is not an empty directory")
    members, links, large = _read_tree(src_dir, redactor.deadline)
    found = hostnames_in(members)
    for hosts in large.values():
        found |= {h.rstrip(".") for h in hosts if _plausible_host(h.rstrip("."))}
    redactor.add_hostnames(sorted(found))
    renamed: dict[str, str] = {}
    for rel in list(members) + list(large) + list(links):
        new_rel = rel if rel == "manifest.json" else redactor.redact(rel)
        if new_rel in renamed.values() or ".." in new_rel.split("/") or new_rel.startswith("/"):
            raise RedactionError(f"{shown(rel)}: its redacted name '{shown(new_rel)}' is not usable")
        renamed[rel] = new_rel
    os.makedirs(dst_dir, exist_ok=True)
    for rel, text in members.items():
        if rel == "manifest.json":
            continue
        out = os.path.join(dst_dir, *renamed[rel].split("/"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as fh:
            fh.write(redactor.redact(text, member=rel).encode("utf-8"))
    for rel in large:  # streamed: memory flat in the member's size
        out = os.path.join(dst_dir, *renamed[rel].split("/"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        redact_stream.redact_file(os.path.join(src_dir, *rel.split("/")), out,
                                  lambda text, rel=rel: redactor.redact(text, member=rel))
    for rel, target in links.items():
        out = os.path.join(dst_dir, *renamed[rel].split("/"))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        os.symlink(redactor.redact(target), out)
    if "manifest.json" in members:
        _write_manifest(members["manifest.json"], dst_dir, redactor, renamed)
    return renamed


def _write_manifest(text: str, dst_dir: str, redactor: Redactor, renamed: dict[str, str]) -> None:
    try:
        manifest = json.loads(text)
    except ValueError as exc:
        raise RedactionError(f"manifest.json: not valid JSON ({shown(exc)}); a bundle cannot be redacted without it") from None
    if not isinstance(manifest, dict):
        raise RedactionError("manifest.json: expected a JSON object")
    sources = manifest.get("sources") if isinstance(manifest.get("sources"), list) else []
    members = [e.get("member") if isinstance(e, dict) else None for e in sources]
    manifest = _redact_json_strings(manifest, redactor)
    for entry, member in zip(manifest.get("sources") or [], members):
        if not isinstance(entry, dict) or not isinstance(member, str):
            continue
        new = renamed.get(member.replace("\\", "/"))
        if new is None:
            continue  # listed but absent: reading the bundle reports it
        entry["member"] = new
        if entry.get("sha256") is not None or entry.get("status") == "ok":
            with open(os.path.join(dst_dir, *new.split("/")), "rb") as fh:
                entry["sha256"] = hashlib.sha256(fh.read()).hexdigest()
    manifest["redacted"] = True
    with open(os.path.join(dst_dir, "manifest.json"), "w", encoding="utf-8") as fh:
        fh.write(json.dumps(manifest, indent=1) + "\n")


def redact_bundle_dir(src_dir: str, dst_dir: str, redactor: Optional[Redactor] = None) -> Redactor:
    """Redact a bundle directory into dst_dir (see redact_tree); returns the Redactor, whose
    mapping() the caller keeps outside the bundle."""
    redactor = redactor if redactor is not None else Redactor()
    redact_tree(src_dir, dst_dir, redactor)
    return redactor
