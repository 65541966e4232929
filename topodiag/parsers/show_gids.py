"""Parser for `show_gids` (MLNX_OFED / mlnx-tools script): the RoCE GID table of every port.

    DEV     PORT    INDEX   GID                                     IPv4            VER     DEV
    ---     ----    -----   ---                                     ------------    ---     ---
    mlx5_0  1       0       fe80:0000:0000:0000:ba59:9fff:fefe:4d50                 v1      ens4f0
    mlx5_0  1       3       0000:0000:0000:0000:0000:ffff:0a07:9f47 10.7.159.71     v2      ens4f0
    n_gids_found=4

Each header starts a table: a paste of the script run in two pods (or twice) gives two tables,
since GID indexes are per network namespace and must not be merged. Rows before any header
(a fragment) form a table of their own. Prose between tables is skipped; a row cut short by a
truncated paste (partial GID) is skipped too.

JSON: {source: "show_gids", tables: [{line_no, n_gids_found (int or null), rows: [{device, port,
index, gid (as printed, full form; null when redacted), ipv4 (or null, also when redacted: "10.x.x.x"), version ("v2" as printed), type ("RoCE v2",
the ibv_devinfo -v spelling, or null), netdev (or null), line_no}]}]}.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from .base import is_digits, ParseError, ParserInfo, clean_lines, iter_clean_lines
from .ib_records import is_redacted
from .sniff.show_gids import sniff

INFO = ParserInfo(
    source="show_gids",
    tool="show_gids",
    description="the RoCE GID table of every port: index, GID, IPv4, RoCE version, netdev",
    argv=("show_gids",),
    timeout_s=15.0,
)
SOURCE = INFO.source

HEADER_RE = re.compile(r"^DEV\s+PORT\s+INDEX\s+GID\b")
RULE_RE = re.compile(r"^---\s+----\s+-{3,5}\s+---")
COUNT_RE = re.compile(r"^n_gids_found=([0-9]{1,9})$")
GID_RE = re.compile(r"^[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}$")
IPV4_RE = re.compile(r"^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$")
VER_RE = re.compile(r"^[vV]([0-9])$")


@dataclass(frozen=True)
class GidRow:
    device: str
    port: int
    index: int
    gid: str | None  # None when redacted ("fe80::xxxx:xxxx", "<redacted>")
    ipv4: str | None  # None when absent or redacted ("10.x.x.x")
    version: str | None
    type: str | None
    netdev: str | None
    line_no: int


@dataclass(frozen=True)
class GidTable:
    line_no: int
    n_gids_found: int | None
    rows: tuple[GidRow, ...]


@dataclass(frozen=True)
class ShowGidsReport:
    source: str = SOURCE
    tables: tuple[GidTable, ...] = ()


def _row(tokens: list[str], line_no: int) -> GidRow | None:
    if len(tokens) < 4 or not is_digits(tokens[1]) or not is_digits(tokens[2]):
        return None
    if not GID_RE.match(tokens[3]) and not is_redacted(tokens[3]):
        return None
    if len(tokens[1]) > 9 or len(tokens[2]) > 9:
        return None
    gid = tokens[3] if GID_RE.match(tokens[3]) else None
    ipv4 = version = netdev = None
    ipv4_seen = False
    for tok in tokens[4:]:
        if not ipv4_seen and version is None and (IPV4_RE.match(tok) or is_redacted(tok)):
            ipv4, ipv4_seen = (tok if IPV4_RE.match(tok) else None), True
        elif version is None and VER_RE.match(tok):
            version = tok
        elif netdev is None:
            netdev = None if is_redacted(tok) else tok
    m = VER_RE.match(version) if version else None
    kind = f"RoCE v{m.group(1)}" if m else None
    return GidRow(tokens[0], int(tokens[1]), int(tokens[2]), gid, ipv4, version, kind, netdev, line_no)


def _parse(lines: Iterable[str]) -> ShowGidsReport:
    tables: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    first_text: tuple[int, str] | None = None
    for line_no, raw in enumerate(lines, 1):
        line = raw.strip().strip("`").lstrip("#").strip()
        if not line:
            continue
        if first_text is None:
            first_text = (line_no, line)
        if HEADER_RE.match(line):
            current = {"line_no": line_no, "n_gids_found": None, "rows": []}
            tables.append(current)
            continue
        if RULE_RE.match(line):
            continue
        m = COUNT_RE.match(line)
        if m:
            if current is None:
                current = {"line_no": line_no, "n_gids_found": None, "rows": []}
                tables.append(current)
            current["n_gids_found"] = int(m.group(1))
            current = None  # the script ends here; a later row belongs to another run
            continue
        row = _row(line.split(), line_no)
        if row is not None:
            if current is None:
                current = {"line_no": line_no, "n_gids_found": None, "rows": []}
                tables.append(current)
            current["rows"].append(row)
    if not tables:
        if first_text is None:
            raise ParseError("expected show_gids output (a 'DEV PORT INDEX GID ...' table), found no text", 0)
        line_no, line = first_text
        raise ParseError(f"expected a 'DEV PORT INDEX GID IPv4 VER DEV' header or GID row, found '{line[:60]}'", line_no)
    return ShowGidsReport(tables=tuple(GidTable(t["line_no"], t["n_gids_found"], tuple(t["rows"])) for t in tables))


def parse(text: str) -> ShowGidsReport:
    """show_gids output -> ShowGidsReport; ParseError when it holds no GID table."""
    return _parse(clean_lines(text))


def parse_lines(lines: Iterable[str]) -> ShowGidsReport:
    """Streaming form of parse for an iterable of raw lines."""
    return _parse(iter_clean_lines(lines))
