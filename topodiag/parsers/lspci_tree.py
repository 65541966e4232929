"""Parser for `lspci -t` and `lspci -tv`: the PCIe tree, which device sits below which bridge.

    -+-[0000:00]-+-00.0  Intel Corporation Device 09a2
     |           +-02.1-[04-10]----00.0-[05-10]--+-00.0-[06]----00.0  NVIDIA Corporation Device 2b85
     |           |                               \\-02.0-[07]----00.0  Mellanox Technologies MT2910 Family [ConnectX-7]
     \\-[0000:60]-+-00.0

A root `[DDDD:BB]` opens a root bus; a device `DD.F` hangs off the bus open at its connector's column
(`+-` or `\\-`, continued below by `|`), or right after a bridge's bus range (`-[SS-EE]----DD.F`, one
child); a bridge's `-[SS-EE]` (or `-[SS]`) is its secondary..subordinate bus range, and `--+-` opens
its secondary bus at the `+`'s column for the lines below. With -v the text after the last device of
a line (two spaces on) is its name. With a single domain, lspci prints `-[0000:00]-+-...` and no `-+-`.

This is what lspci -vvv's "Bus: primary=.., secondary=.., subordinate=.." lines say, for every bridge,
also where a -vvv paste was cut or grepped (PCI001, PCI002 read both).

JSON: {source: "lspci_tree", devices [{bdf, parent (the bdf of the bridge above, null on a root bus),
secondary, subordinate (bus numbers of a bridge's range, else null), name (with -v, else null),
line_no}], roots ["0000:00", ...]}. ParseError when no line is a tree line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .base import ParseError, ParserInfo, clean_lines
from .sniff.lspci_tree import sniff

INFO = ParserInfo(
    source="lspci_tree",
    tool="lspci -tv",
    description="the PCIe tree (lspci -t / -tv): which bridge each GPU and NIC sits below, bridges' bus ranges",
    argv=("lspci", "-tv"),  # no root needed, reads sysfs: fast
    timeout_s=10.0,
)
SOURCE = INFO.source

MAX_DEVICES = 4096
MAX_NAME = 200

# one token at a position: a root "[dddd:bb]", a device "dd.f" with an optional bus range "-[ss-ee]"
_ROOT_RE = re.compile(r"\[([0-9a-fA-F]{4}):([0-9a-fA-F]{2})\]")
_DEV_RE = re.compile(r"([0-9a-fA-F]{2})\.([0-7])(?:-\[([0-9a-fA-F]{2})(?:-([0-9a-fA-F]{2}))?\])?")
_TREE_LINE_RE = re.compile(r"^[ |\\+-]*(?:-\[[0-9a-fA-F]{4}:[0-9a-fA-F]{2}\]|[+\\]-[0-9a-fA-F]{2}\.[0-7])")


@dataclass(frozen=True)
class TreeDevice:
    bdf: str
    parent: Optional[str]
    secondary: Optional[int]
    subordinate: Optional[int]
    name: Optional[str]
    line_no: int


@dataclass(frozen=True)
class LspciTree:
    source: str
    devices: tuple[TreeDevice, ...]
    roots: tuple[str, ...]


class _Walk:
    """The buses open at each column, and the devices found so far."""

    def __init__(self) -> None:
        self.domain = "0000"
        self.at: dict[int, tuple[int, Optional[str]]] = {}  # column -> (bus, the bridge above it)
        self.devices: list[TreeDevice] = []
        self.roots: list[str] = []

    def device(self, m: "re.Match[str]", bus: int, parent: Optional[str], line_no: int) -> TreeDevice:
        bdf = f"{self.domain}:{bus:02x}:{m[1].lower()}.{m[2]}"
        sec = int(m[3], 16) if m[3] else None
        sub = int(m[4], 16) if m[4] else sec
        dev = TreeDevice(bdf, parent, sec, sub, None, line_no)
        if len(self.devices) < MAX_DEVICES:
            self.devices.append(dev)
        return dev

    def line(self, line: str, n: int) -> bool:
        """Read one line; False when it holds no tree token."""
        pos, bus, parent, last, found = 0, None, None, None, False
        while pos < len(line):
            ch = line[pos]
            if ch == "[" and bus is None:
                r = _ROOT_RE.match(line, pos)
                if r is None:
                    break
                self.domain, bus, parent = r[1].lower(), int(r[2], 16), None
                self.roots.append(f"{self.domain}:{r[2].lower()}")
                pos, found = r.end(), True
                continue
            if ch in "+\\" and line.startswith("-", pos + 1):
                if ch == "+":  # a fork: its column carries the bus open here to the lines below
                    if bus is not None:
                        self.at[pos] = (bus, parent)
                    elif pos in self.at:
                        bus, parent = self.at[pos]
                elif bus is None and pos in self.at:  # "\-": the last child of the bus open at this column
                    bus, parent = self.at.pop(pos)
                pos += 2
                continue
            m = _DEV_RE.match(line, pos) if ch not in " |-" else None
            if m is not None and bus is not None:
                dev = self.device(m, bus, parent, n)
                last, found = dev, True
                pos = m.end()
                if dev.secondary is None:  # an endpoint: nothing hangs off it on this line
                    bus = None
                else:
                    bus, parent = dev.secondary, dev.bdf
                continue
            if ch in " |-":
                if ch == " " and line.startswith("  ", pos) and last is not None and pos + 2 < len(line) \
                        and line[pos + 2] not in " |+\\":
                    self._name(last, line[pos + 2 :].strip())
                    break
                pos += 1
                continue
            break
        return found

    def _name(self, dev: TreeDevice, name: str) -> None:
        """Name the line's last device: the last one kept, unless MAX_DEVICES was reached before it
        (then it is not kept; searching the list for it, line after line, was quadratic)."""
        if self.devices and self.devices[-1] is dev:
            self.devices[-1] = TreeDevice(dev.bdf, dev.parent, dev.secondary, dev.subordinate,
                                          name[:MAX_NAME] or None, dev.line_no)


def parse(text: str) -> LspciTree:
    walk = _Walk()
    seen = 0
    for n, line in enumerate(clean_lines(text), 1):
        if not _TREE_LINE_RE.match(line) or not walk.line(line.rstrip(), n):
            continue
        seen += 1
    if not seen or not walk.devices:
        raise ParseError("no lspci -t tree line (\"-[0000:00]-+-00.0\", \" +-01.0-[01]----00.0\")", 1)
    return LspciTree(SOURCE, tuple(walk.devices), tuple(walk.roots))
