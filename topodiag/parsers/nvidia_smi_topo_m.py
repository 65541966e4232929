"""Parser for `nvidia-smi topo -m` (`topo --matrix`): the GPU/NIC path matrix and CPU/NUMA affinity.

            GPU0    GPU1    NIC0    NIC1    CPU Affinity    NUMA Affinity   GPU NUMA ID
    GPU0     X      NV18    PIX     NODE    0-47,96-143     0               N/A
    GPU1    NV18     X      NODE    PIX     0-47,96-143     0               N/A
    NIC0    PIX     NODE     X      NODE
    NIC1    NODE    PIX     NODE     X

    Legend:
      X    = Self
      SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
      ...
      NV#  = Connection traversing a bonded set of # NVLinks

    NIC Legend:
      NIC0: mlx5_0
      NIC1: mlx5_1

Also read: tab- or space-separated output (tabs expanded to 8 columns, as a terminal shows them), an
ANSI-underlined header, CRLF, leading indentation, older drivers (`SOC` for SYS, NICs named `mlx5_0`
directly as columns, only `CPU Affinity`), columns in any order (cells are mapped by header name),
the CPU affinity glued to the NUMA affinity ('0-45,92-1370' = '0-45,92-137' + '0', split using the
other rows), and terminal-truncated pastes where the header lost its right-hand columns (devices that
only appear as rows are kept, their links taken from their own rows, and a note says the columns and
the CPU affinity are incomplete). The "Legend:" block is not part of the matrix. Refused: text with
no header row followed by a matrix row, rows whose cells cannot be placed under the header (too many
path cells or values, an 'X' off the diagonal, a repeated row), and `topo -p2p` matrices (OK/NS...).

JSON: {source: "nvidia_smi_topo_m", devices: [Device], links: [Link], affinity_columns: [str],
notes: [str]}.
Device: name ("GPU0", "NIC0", or "mlx5_0" where the column is named so), kind ("gpu" | "nic"),
device (RDMA device name for NICs from the NIC Legend or the column name; null for GPUs or when
unknown), cpu_affinity ("0-47,96-143" as printed; null when absent, N/A or unreadable), numa_affinity
("0", "0-1" as printed; null when absent or N/A), numa_node (int when numa_affinity is one node,
else null), gpu_numa_id (string or null), line_no (line of the device's row; null without a row).
Devices come in header order, then devices that only have a row (truncated header).
Link: a, b (device names; a is the earlier device), type (exactly as printed: "NV18", "PIX", "SOC"),
line_no (line of the row the cell was read from). One link per unordered pair, ordered by the
device order of (a, b); a pair with no readable cell has no link (and a note).
affinity_columns: the affinity columns the header names, as printed ("CPU Affinity", ...).
notes: what a reader must know (truncated header, missing cells, mirror disagreements, a repaired
glued affinity, NIC Legend gaps); empty when nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations

from . import _tool_failures
from .ib_records import ToolError
from ._matrix import find_header
from ._nvidia_smi_records import TopoDevice as Device, TopoLink as Link, smi_note
from .base import is_digits, ParseError, ParserInfo, clean_lines, listing
from .sniff.nvidia_smi_topo_m import sniff

INFO = ParserInfo(
    source="nvidia_smi_topo_m",
    tool="nvidia-smi topo -m",
    description="the GPU/NIC path matrix and CPU/NUMA affinity",
    argv=("nvidia-smi", "topo", "-m"),
    timeout_s=30.0,
)
SOURCE = INFO.source

AFFINITY_COLUMNS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
KNOWN_TYPES = {"X", "SYS", "SOC", "NODE", "PHB", "PXB", "PIX"}  # plus NV<n>
# `nvidia-smi topo -p2p` status words: a matrix of these is not a topo -m matrix.
P2P_WORDS = {"OK", "CNS", "GNS", "TNS", "NS", "DR", "U"}
NOT_CELLS = {"CPU", "GPU", "NUMA", "NIC", "ID"}  # header words

CELL_RE = re.compile(r"^(?:X|NV[0-9]{1,3}|[A-Z][A-Z0-9]{1,4})$")
GPU_RE = re.compile(r"^GPU[0-9]{1,4}$")
NIC_RE = re.compile(r"^NIC[0-9]{1,4}$")
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]{0,63}$")
HEADER_TOKEN_RE = re.compile(r"CPU Affinity|NUMA Affinity|GPU NUMA ID|\S+")
TOKEN_RE = re.compile(r"\S+")
NIC_LEGEND_RE = re.compile(r"^(NIC[0-9]{1,4}):\s*(\S+)$")
LEGEND_ENTRY_RE = re.compile(r"^(\S{1,6})\s*=\s")
LIST_RE = re.compile(r"^[0-9]{1,9}(?:-[0-9]{1,9})?(?:,[0-9]{1,9}(?:-[0-9]{1,9})?)*$")
ELISION_RE = re.compile(r"^(?:\.{3,}|…+|\[\.\.\.\])$")


@dataclass(frozen=True)
class TopoMatrix:
    source: str = SOURCE
    devices: tuple[Device, ...] = ()
    links: tuple[Link, ...] = ()
    affinity_columns: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    errors: tuple[ToolError, ...] = ()  # the tool's failure lines (topodiag/catalogues: nvidia-smi)
    unrecognised: tuple[ToolError, ...] = ()  # failure lines no catalogue entry explains (SYS004)


@dataclass(frozen=True)
class _Row:
    name: str
    cells: tuple[str, ...]  # path cells, by header column index
    raw: tuple[tuple[int, str], ...]  # (position, value) of the tokens after the path cells
    line_no: int


# -- small readers ------------------------------------------------------------------------------


def _tokens(line: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group()) for m in TOKEN_RE.finditer(line.expandtabs(8))]


def _is_cell(token: str) -> bool:
    return (bool(CELL_RE.match(token)) and token not in P2P_WORDS and token not in NOT_CELLS
            and not GPU_RE.match(token) and not NIC_RE.match(token))


def _ranges(text: str) -> list[tuple[int, int]] | None:
    """'0-45,92-137' -> [(0, 45), (92, 137)]; None unless a valid list of ascending ranges."""
    if not LIST_RE.match(text):
        return None
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        a, b = int(lo), int(hi or lo)
        if a > b or (out and a <= out[-1][1]):
            return None
        out.append((a, b))
    return out


def _count(ranges: list[tuple[int, int]]) -> int:
    return sum(b - a + 1 for a, b in ranges)


def _kind(name: str) -> str:
    return "gpu" if GPU_RE.match(name) else "nic"


# -- the matrix ---------------------------------------------------------------------------------


def _looks_like_row(line: str) -> bool:
    toks = line.split()
    return len(toks) >= 2 and bool(NAME_RE.match(toks[0])) and _is_cell(toks[1])


def _is_header(line: str, toks: list[str]) -> bool:
    if not GPU_RE.match(toks[0]) or (len(toks) > 1 and _is_cell(toks[1])):
        return False
    return all(NAME_RE.match(t) or t in AFFINITY_COLUMNS for t in (m.group() for m in HEADER_TOKEN_RE.finditer(line)))


def _find_header(lines: list[str]) -> int:
    """Index of the 'GPU0 GPU1 ... CPU Affinity' header row (one followed by a matrix row);
    ParseError when there is none."""
    return find_header(lines, _is_header, _looks_like_row,
                       lambda line: not line.strip() or bool(ELISION_RE.match(line.strip())),
                       "a 'GPU0 GPU1 ... CPU Affinity' matrix header row (nvidia-smi topo -m)",
                       "found the matrix header row but no 'GPU0  X  ...' rows after it")


def _read_header(line: str, line_no: int, notes: list[str]) -> tuple[list[str], list[tuple[str, int]]]:
    """Header -> (device column names, [(affinity column name, start position)])."""
    devices: list[str] = []
    affinity: list[tuple[str, int]] = []
    for m in HEADER_TOKEN_RE.finditer(line.expandtabs(8)):
        tok = m.group()
        if tok in AFFINITY_COLUMNS:
            if any(tok == name for name, _ in affinity):
                raise ParseError(f"header names the column '{tok}' twice", line_no)
            affinity.append((tok, m.start()))
        elif affinity or not NAME_RE.match(tok):
            notes.append(smi_note("topo-header-column-ignored", column=tok[:30], line=line_no))
        elif tok in devices:
            raise ParseError(f"header names the device '{tok}' twice: cells cannot be assigned", line_no)
        else:
            devices.append(tok)
    return devices, affinity


def _fits(col: str, val: str) -> bool:
    if val == "N/A":
        return True
    if col == "GPU NUMA ID":
        return is_digits(val)
    return _ranges(val) is not None


def _assign_affinity(row: _Row, columns: list[tuple[str, int]], seen: dict[str, set[str]]) -> dict:
    """Affinity tokens of one row -> {column: raw value}. When some are missing (or two ran together),
    the columns are chosen by what the other rows print there, then by position."""
    values = row.raw
    out: dict = {c: None for c, _ in columns}
    if not values:
        return out
    if len(values) > len(columns):
        raise ParseError(f"row {row.name} has {len(values)} values after its path cells but the header names "
                         f"{len(columns)} affinity column(s): {listing(c for c, _ in columns) or 'none'}",
                         row.line_no)
    if len(values) == len(columns):
        for (col, _), (_, val) in zip(columns, values):
            out[col] = val
        return out
    best: tuple[float, tuple[int, ...]] | None = None
    for combo in combinations(range(len(columns)), len(values)):
        score = 0.0
        for j, (pos, val) in zip(combo, values):
            col, start = columns[j]
            score += 2 * (val in seen.get(col, ())) + _fits(col, val) - abs(start - pos) / 1000
        if best is None or score > best[0]:
            best = (score, combo)
    for j, (_, val) in zip(best[1], values):
        out[columns[j][0]] = val
    return out


def _row(toks: list[tuple[int, str]], line_no: int, header: list[str], columns: list[tuple[str, int]],
         seen: set[str], notes: list[str]) -> _Row:
    """One matrix row, its path cells checked against the header (ParseError when they cannot be placed)."""
    label, n_cols = toks[0][1], len(header)
    k = 1
    while k < len(toks) and _is_cell(toks[k][1]):
        k += 1
    cells, values = [t for _, t in toks[1:k]], toks[k:]
    p2p = next((v for _, v in values if v in P2P_WORDS), None)
    if p2p:
        raise ParseError(f"'{p2p}' in row {label} is an `nvidia-smi topo -p2p` status, not a topo -m path type",
                         line_no)
    if label in seen:
        raise ParseError(f"a second row for {label}: which one holds its cells is unclear", line_no)
    if len(cells) > n_cols:
        raise ParseError(f"row {label} has {len(cells)} path cells but the header names {n_cols} devices",
                         line_no)
    if values and len(cells) < n_cols:
        raise ParseError(f"row {label} has {len(cells)} path cells for {n_cols} device columns and then "
                         f"values ('{values[0][1][:20]}'): the cells cannot be assigned to columns", line_no)
    own = header.index(label) if label in header else None
    _check_diagonal(label, cells, header, own, line_no)
    if own is not None and len(cells) < n_cols:
        notes.append(smi_note("topo-row-cut", label=label, line=line_no, n=len(cells), total=n_cols,
                          rest=" and no affinity values" if columns else ""))
    return _Row(label, tuple(cells), tuple(values), line_no)


def _check_diagonal(label: str, cells: list[str], header: list[str], own: int | None, line_no: int) -> None:
    """ParseError unless the row's 'X' (self) stands under its own column and nowhere else."""
    for j, cell in enumerate(cells):
        if (cell == "X") != (j == own):
            where = header[j]
            if cell == "X":
                raise ParseError(f"row {label} has its 'X' (self) under {where}: rows and columns disagree",
                                 line_no)
            raise ParseError(f"row {label} has '{cell}' under its own column {where}, expected 'X'", line_no)


def _read_rows(lines: list[str], start: int, header: list[str], columns: list[tuple[str, int]],
               notes: list[str]) -> tuple[list[_Row], int]:
    """Matrix rows after the header; returns them and the index of the first line after the matrix."""
    rows: list[_Row] = []
    seen: set[str] = set()
    i = start
    elided = []
    while i < len(lines):
        toks = _tokens(lines[i])
        if not toks and not rows:
            i += 1
            continue
        if len(toks) == 1 and ELISION_RE.match(toks[0][1]):
            elided.append(i + 1)
            i += 1
            continue
        if len(toks) < 2 or not _is_cell(toks[1][1]) or not NAME_RE.match(toks[0][1]):
            break
        row = _row(toks, i + 1, header, columns, seen, notes)
        seen.add(row.name)
        rows.append(row)
        i += 1
    if elided:
        notes.append(smi_note("topo-elided-rows", lines=listing(map(str, elided))))
    return rows, i


# -- affinity -----------------------------------------------------------------------------------


def _split_glued(raw: str, counts: set[int], numas: set[str]) -> tuple[str, str] | None:
    """'0-45,92-1370' -> ('0-45,92-137', '0'): the one split into a valid CPU list and NUMA list,
    preferring CPU counts and NUMA ids other rows show; None when no split or no single best one."""
    scored = []
    for k in range(1, len(raw)):
        cpu, numa = raw[:k], raw[k:]
        cpu_r, numa_r = _ranges(cpu), _ranges(numa)
        if cpu_r is None or numa_r is None or (len(numa) > 1 and numa.startswith("0")):
            continue
        score = (_count(cpu_r) in counts) + (numa in numas)
        scored.append((score, cpu, numa))
    if not scored:
        return None
    top = max(s for s, _, _ in scored)
    best = [(c, n) for s, c, n in scored if s == top]
    return best[0] if len(best) == 1 else None


def _group(found: dict, key: tuple, name: str) -> None:
    found.setdefault(key, []).append(name)


def _affinities(rows: list[_Row], columns: list[tuple[str, int]], truncated: bool,
                notes: list[str]) -> dict[str, dict]:
    """Per device name: {column: value or None}, N/A dropped, glued values split, unreadable ones left out."""
    names = [c for c, _ in columns]
    seen: dict[str, set[str]] = {c: set() for c in names}
    for r in rows:
        if len(r.raw) == len(columns):
            for c, (_, val) in zip(names, r.raw):
                seen[c].add(val)
    assigned = {r.name: _assign_affinity(r, columns, seen) for r in rows}
    out: dict[str, dict] = {n: {c: (None if a[c] in (None, "N/A") else a[c]) for c in names}
                            for n, a in assigned.items()}
    found: dict = {}  # (note kind, detail...) -> device names, so one note covers alike rows
    _repair_gaps(rows, names, assigned, out, found)
    _drop_unreadable(rows, out, found)
    if truncated:
        _drop_cut_tails(rows, out, found)
    notes.extend(_affinity_note(key, listing(who)) for key, who in found.items())
    return out


def _repair_gaps(rows: list[_Row], names: list[str], assigned: dict[str, dict], out: dict[str, dict],
                 found: dict) -> None:
    """Rows with a column left empty: a CPU list glued to its NUMA id is split; other gaps are noted."""
    counts = {_count(r) for v in out.values() if v.get("CPU Affinity") and v.get("NUMA Affinity")
              for r in [_ranges(v["CPU Affinity"])] if r}
    numas = {v["NUMA Affinity"] for v in out.values() if v.get("NUMA Affinity")}
    for row in rows:
        v, raw = out[row.name], assigned[row.name]
        printed = [c for c in names if raw.get(c) is not None]
        if not printed:
            continue  # NIC rows print no affinity
        last = names.index(printed[-1])
        absent = [c for c in names[:last] if raw.get(c) is None]
        if absent == ["NUMA Affinity"] and raw.get("CPU Affinity"):
            # the CPU list ran into the NUMA id ('0-45,92-1370'); something printed after it says the
            # NUMA column was not just cut off
            split = _split_glued(raw["CPU Affinity"], counts, numas)
            if split:
                v["CPU Affinity"], v["NUMA Affinity"] = split
                _group(found, ("glued", raw["CPU Affinity"], *split), row.name)
                continue
        for c in absent:
            _group(found, ("absent", c), row.name)
        cut = [c for c in names[last + 1:]]
        if cut:
            _group(found, ("cut", ", ".join(cut)), row.name)


def _drop_unreadable(rows: list[_Row], out: dict[str, dict], found: dict) -> None:
    for row in rows:
        v = out[row.name]
        for col, what in (("CPU Affinity", "a CPU list"), ("NUMA Affinity", "a NUMA node list")):
            val = v.get(col)
            if val is not None and _ranges(val) is None:
                _group(found, ("bad", col, val[:40], what), row.name)
                v[col] = None
        val = v.get("GPU NUMA ID")
        if val is not None and not re.match(r"^[0-9]{1,9}$", val):
            _group(found, ("bad", "GPU NUMA ID", val[:40], "a number"), row.name)
            v["GPU NUMA ID"] = None


def _drop_cut_tails(rows: list[_Row], out: dict[str, dict], found: dict) -> None:
    """A value cut at its left can still look like a CPU list: '2-63,96-127' for '32-63,96-127'."""
    for row in rows:
        v = out[row.name]
        cpu = v.get("CPU Affinity")
        longer = [o["CPU Affinity"] for o in out.values() if cpu and o.get("CPU Affinity")
                  and o["CPU Affinity"] != cpu and o["CPU Affinity"].endswith(cpu)
                  and o.get("NUMA Affinity") == v.get("NUMA Affinity")]
        if longer:
            _group(found, ("tail", cpu, longer[0]), row.name)
            v["CPU Affinity"] = None


def _affinity_note(key: tuple, names: str) -> str:
    kind = key[0]
    if kind == "glued":
        return smi_note("topo-affinity-glued", names=names, raw=key[1], cpu=key[2], numa=key[3])
    if kind == "absent":
        return smi_note("topo-affinity-absent", names=names, column=key[1])
    if kind == "cut":
        return smi_note("topo-affinity-cut", names=names, columns=key[1])
    if kind == "bad":
        return smi_note("topo-affinity-bad", names=names, column=key[1], value=key[2], what=key[3])
    return smi_note("topo-affinity-tail", names=names, cpu=key[1], longer=key[2])


# -- the whole output ---------------------------------------------------------------------------


def _nic_legend(lines: list[str], start: int, notes: list[str]) -> tuple[dict[str, str], bool]:
    legend: dict[str, str] = {}
    seen_block = False
    for i in range(start, len(lines)):
        text = lines[i].strip()
        if text == "NIC Legend:":
            seen_block = True
            continue
        m = NIC_LEGEND_RE.match(text)
        if m:
            nic, dev = m.group(1), m.group(2)
            if nic in legend and legend[nic] != dev:
                notes.append(smi_note("topo-nic-legend-twice", nic=nic, first=legend[nic], then=dev, line=i + 1))
                continue
            legend.setdefault(nic, dev)
    return legend, seen_block


def _legend_types(lines: list[str], start: int) -> set[str] | None:
    """Keys of the 'Legend:' block (X, SYS, ..., NV#), or None when there is none."""
    keys: set[str] | None = None
    for i in range(start, len(lines)):
        text = lines[i].strip()
        if text == "Legend:":
            keys = set()
            continue
        if keys is not None:
            if text == "NIC Legend:":
                break
            m = LEGEND_ENTRY_RE.match(text)
            if m:
                keys.add(m.group(1))
    return keys


def _after_matrix(lines: list[str], end: int, header: list[str], by_name: dict[str, _Row], header_no: int,
                  notes: list[str]) -> None:
    """A note when a second matrix, or a row of this one, follows the matrix (neither is read)."""
    for k in range(end, len(lines)):
        toks = lines[k].split()
        if toks and GPU_RE.match(toks[0]) and len(toks) > 1 and (toks[1] in header or toks[1] in AFFINITY_COLUMNS
                                                                   or toks[1] == "CPU"):
            notes.append(smi_note("topo-second-matrix", line=k + 1, header_line=header_no))
            break
        if toks and toks[0] in by_name and len(toks) > 1 and _is_cell(toks[1]):
            notes.append(smi_note("topo-row-after-matrix", line=k + 1))
            break


def _legend_notes(names: list[str], legend: dict[str, str], legend_block: bool, notes: list[str]) -> None:
    nic_cols = [n for n in names if NIC_RE.match(n)]
    if nic_cols and not legend:
        notes.append(smi_note("topo-no-nic-legend", nics=listing(nic_cols),
                          cut=" (output cut?)" if not legend_block else ""))
    elif nic_cols:
        unnamed = [n for n in nic_cols if n not in legend]
        if unnamed:
            notes.append(smi_note("topo-nic-unnamed", nics=listing(unnamed)))
        stray = [n for n in legend if n not in nic_cols]
        if stray:
            notes.append(smi_note("topo-nic-stray", nics=listing(stray)))


def _device(name: str, row: _Row | None, v: dict, legend: dict[str, str]) -> Device:
    numa = v.get("NUMA Affinity")
    kind = _kind(name)
    return Device(
        name=name,
        kind=kind,
        device=None if kind == "gpu" else (legend.get(name) if NIC_RE.match(name) else name),
        cpu_affinity=v.get("CPU Affinity"),
        numa_affinity=numa,
        numa_node=int(numa) if numa is not None and is_digits(numa) else None,
        gpu_numa_id=v.get("GPU NUMA ID"),
        line_no=row.line_no if row else None,
    )


def _links(names: list[str], header: list[str], by_name: dict[str, _Row],
           notes: list[str]) -> tuple[list[Link], set[str]]:
    """One link per pair of devices from its cell (or its mirror's), and the path types used."""
    col = {n: i for i, n in enumerate(header)}

    def cell(row_name: str, col_name: str) -> tuple[str, int] | None:
        row = by_name.get(row_name)
        j = col.get(col_name)
        if row is None or j is None or j >= len(row.cells):
            return None
        return row.cells[j], row.line_no

    links = []
    unknown_pairs = []
    used: set[str] = set()
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            mine, mirror = cell(a, b), cell(b, a)
            if mine and mirror and mine[0] != mirror[0]:
                notes.append(smi_note("topo-mirror-disagrees", a=a, b=b, mine=mine[0], mine_line=mine[1],
                                  mirror=mirror[0], mirror_line=mirror[1]))
            got = mine or mirror
            if got is None:
                unknown_pairs.append(f"{a}-{b}")
                continue
            links.append(Link(a, b, got[0], got[1]))
            used.add(got[0])
    if unknown_pairs:
        notes.append(smi_note("topo-no-cell", n=len(unknown_pairs), pairs=listing(unknown_pairs)))
    return links, used


def _type_notes(used: set[str], legend_keys: set[str] | None, notes: list[str]) -> None:
    """Notes on path types that nvidia-smi's legend, or the Legend block printed, does not name."""
    odd = sorted(t for t in used if t not in KNOWN_TYPES and not re.match(r"^NV[0-9]+$", t))
    if odd:
        notes.append(smi_note("topo-unknown-types", types=listing(odd)))
    if legend_keys and "NV#" in legend_keys:  # a legend that reached its last line
        unexplained = sorted(t for t in used if t not in legend_keys and not re.match(r"^NV[0-9]+$", t))
        if unexplained:
            notes.append(smi_note("topo-types-not-in-legend", types=listing(unexplained)))


def _parse(lines: list[str]) -> TopoMatrix:
    notes: list[str] = []
    h = _find_header(lines)
    header_no = h + 1
    header, columns = _read_header(lines[h], header_no, notes)
    rows, end = _read_rows(lines, h + 1, header, columns, notes)
    if not rows:
        raise ParseError("found the matrix header row but no 'GPU0  X  ...' rows after it", header_no)
    by_name = {r.name: r for r in rows}
    extra = [r.name for r in rows if r.name not in header]
    names = header + extra
    if not any(GPU_RE.match(n) for n in names):
        raise ParseError("the matrix has no GPU", header_no)
    if extra:
        notes.append(smi_note("topo-header-cut", line=header_no, n=len(header), extra=listing(extra)))
    missing_rows = [n for n in header if n not in by_name]
    if missing_rows:
        notes.append(smi_note("topo-no-row", devices=listing(missing_rows),
                          which="these devices" if len(missing_rows) > 1 else missing_rows[0]))
    _after_matrix(lines, end, header, by_name, header_no, notes)

    affinity = _affinities(rows, columns, bool(extra), notes)
    legend, legend_block = _nic_legend(lines, end, notes)
    _legend_notes(names, legend, legend_block, notes)
    devices = [_device(name, by_name.get(name), affinity.get(name, {}), legend) for name in names]
    links, used = _links(names, header, by_name, notes)
    _type_notes(used, _legend_types(lines, end), notes)
    return TopoMatrix(devices=tuple(devices), links=tuple(links),
                      affinity_columns=tuple(c for c, _ in columns), notes=tuple(notes))


def parse(text: str) -> TopoMatrix:
    """`nvidia-smi topo -m` output -> TopoMatrix; ParseError when there is no readable matrix."""
    return _tool_failures.read(clean_lines(text), SOURCE, _parse, TopoMatrix)
