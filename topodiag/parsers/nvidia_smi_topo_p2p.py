"""Parser for `nvidia-smi topo -p2p r|w|n|a|p`: the GPU-to-GPU peer-to-peer capability matrix.

            GPU0    GPU1    GPU2
     GPU0   X       OK      OK
     GPU1   OK      X       GNS
     GPU2   OK      GNS     X

    Legend:

      X    = Self
      OK   = Status Ok
      CNS  = Chipset not supported
      GNS  = GPU not supported
      TNS  = Topology not supported
      NS   = Not supported
      DR   = Disabled by regkey
      U    = Unknown

Also read: tab- or space-separated output, rows with a leading space or trailing tab, irregular
indentation from pastes, CRLF, ANSI codes, the older legend without `DR`, a shell prompt line before
it (`$ nvidia-smi topo -p2p r` gives `mode`), and a `topo -m` matrix printed before it (skipped).
The cell in row i, column j is the status from GPUi to GPUj; both directions are kept.

JSON: {source: "nvidia_smi_topo_p2p", mode ("r", "w", "n", "a", "p", "rw" as on the prompt line;
null when the text does not show the command), gpus: [str] in header order, cells: [{src, dst,
status ("OK", "CNS", "GNS", "TNS", "NS", "DR", "U" as printed), ok (status == "OK"), line_no}] for
every ordered pair src != dst with a readable cell, ordered by (src, dst) header index, legend:
[{code, meaning}] as printed, notes: [str] (asymmetric pairs, cut rows, unknown codes)].
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import _tool_failures
from .ib_records import ToolError
from ._matrix import find_header
from ._nvidia_smi_records import LegendEntry, P2PCell as Cell, smi_note
from .base import ParseError, ParserInfo, clean_lines, listing
from .sniff.nvidia_smi_topo_p2p import sniff

INFO = ParserInfo(
    source="nvidia_smi_topo_p2p",
    tool="nvidia-smi topo -p2p r",
    description="the GPU-to-GPU peer-to-peer capability matrix (r, w, n, a or p)",
    argv=("nvidia-smi", "topo", "-p2p", "r"),
    timeout_s=30.0,
)
SOURCE = INFO.source

STATUSES = {"OK", "CNS", "GNS", "TNS", "NS", "DR", "U"}
CODE_RE = re.compile(r"^(?:X|[A-Z]{1,4})$")
GPU_RE = re.compile(r"^GPU[0-9]{1,4}$")
TOPO_TYPES_RE = re.compile(r"^(?:SYS|SOC|NODE|PHB|PXB|PIX|NV[0-9]+)$")
PROMPT_RE = re.compile(r"nvidia-smi\s+topo\s+(?:-p2p|--p2pstatus)\s+([rwnap]{1,5})\b")
LEGEND_RE = re.compile(r"^(X|[A-Z]{1,4})\s+=\s+(.+)$")


@dataclass(frozen=True)
class P2PMatrix:
    source: str = SOURCE
    mode: str | None = None
    gpus: tuple[str, ...] = ()
    cells: tuple[Cell, ...] = ()
    legend: tuple[LegendEntry, ...] = ()
    notes: tuple[str, ...] = ()
    errors: tuple[ToolError, ...] = ()  # the tool's failure lines (topodiag/catalogues: nvidia-smi)
    unrecognised: tuple[ToolError, ...] = ()  # failure lines no catalogue entry explains (SYS004)


def _is_row(toks: list[str]) -> bool:
    """A matrix row, or what is meant as one: topo -m path types in it are refused, not skipped."""
    return len(toks) >= 2 and bool(GPU_RE.match(toks[0])) and (toks[1] in STATUSES | {"X"}
                                                                or bool(TOPO_TYPES_RE.match(toks[1])))


def _row_after_header(line: str) -> bool | None:
    """Whether the line under a 'GPU0 GPU1 ...' header is a P2P row; None under a topo -m matrix printed
    without affinity columns (that header is not this matrix's)."""
    nxt = line.split()
    if len(nxt) >= 2 and GPU_RE.match(nxt[0]) and any(TOPO_TYPES_RE.match(t) for t in nxt[1:]):
        return None
    return _is_row(nxt)


def _find_header(lines: list[str]) -> int:
    return find_header(lines, lambda _, toks: all(GPU_RE.match(t) for t in toks), _row_after_header,
                       lambda line: not line.strip(),
                       "a 'GPU0 GPU1 ...' P2P matrix header row (nvidia-smi topo -p2p)",
                       "found a 'GPU0 GPU1 ...' header but no 'GPU0  X  OK ...' rows after it")


def _check_row(label: str, cells: list[str], gpus: list[str], rows: dict, line_no: int) -> None:
    """ParseError for a row whose cells cannot be placed under the header."""
    bad = next((c for c in cells if not CODE_RE.match(c) or TOPO_TYPES_RE.match(c)), None)
    if bad is not None:
        hint = " (a topo -m path type)" if TOPO_TYPES_RE.match(bad) else ""
        raise ParseError(f"row {label} has '{bad[:20]}'{hint}, expected a P2P status (OK, NS, CNS, GNS, TNS, DR, "
                         "U) or X", line_no)
    if label in rows:
        raise ParseError(f"a second row for {label}: which one holds its cells is unclear", line_no)
    if len(cells) > len(gpus):
        raise ParseError(f"row {label} has {len(cells)} cells but the header names {len(gpus)} GPUs", line_no)
    own = gpus.index(label) if label in gpus else None
    for j, c in enumerate(cells):
        if (c == "X") != (j == own):
            raise ParseError(f"row {label} has '{c}' under {gpus[j]}: the 'X' (self) must be under its own "
                             "column", line_no)


def _read_rows(lines: list[str], h: int, gpus: list[str],
               notes: list[str]) -> tuple[dict[str, tuple[list[str], int]], int]:
    """The matrix rows under the header at index h: {label: (cells, line_no)} and the index after them."""
    rows: dict[str, tuple[list[str], int]] = {}
    i = h + 1
    while i < len(lines):
        toks = lines[i].split()
        line_no = i + 1
        if not toks and not rows:
            i += 1
            continue
        if not toks or not _is_row(toks):
            break
        label, cells = toks[0], toks[1:]
        _check_row(label, cells, gpus, rows, line_no)
        if len(cells) < len(gpus):
            notes.append(smi_note("p2p-row-cut", label=label, line=line_no, n=len(cells), total=len(gpus)))
        rows[label] = (cells, line_no)
        i += 1
    return rows, i


def _cells(names: list[str], gpus: list[str], rows: dict[str, tuple[list[str], int]]) -> list[Cell]:
    """Every ordered pair with a readable cell, by (src, dst) header index."""
    out: list[Cell] = []
    for src in names:
        if src not in rows:
            continue
        cells, line_no = rows[src]
        out.extend(Cell(src, gpus[j], status, status == "OK", line_no)
                   for j, status in enumerate(cells) if gpus[j] != src)
    index = {n: k for k, n in enumerate(names)}
    out.sort(key=lambda c: (index[c.src], index[c.dst]))
    return out


def _validate(names: list[str], cells: list[Cell], notes: list[str]) -> None:
    """Notes on pairs whose two directions disagree and on codes the legend does not know."""
    index = {n: k for k, n in enumerate(names)}
    status = {(c.src, c.dst): c.status for c in cells}
    odd = [f"{a}->{b} {status[(a, b)]} / {b}->{a} {status[(b, a)]}" for (a, b) in status
           if (b, a) in status and index[a] < index[b] and status[(a, b)] != status[(b, a)]]
    if odd:
        notes.append(smi_note("p2p-asymmetric", pairs=listing(odd)))
    unknown_codes = {c.status for c in cells if c.status not in STATUSES}
    if unknown_codes:
        notes.append(smi_note("p2p-unknown-codes", codes=listing(sorted(unknown_codes))))


def _legend(lines: list[str]) -> list[LegendEntry]:
    legend: list[LegendEntry] = []
    in_legend = False
    for line in lines:
        text = line.strip()
        if text == "Legend:":
            in_legend = True
            continue
        m = LEGEND_RE.match(text)
        if in_legend and m:
            legend.append(LegendEntry(m.group(1), m.group(2)))
        elif in_legend and text and legend:
            break
    return legend


def _mode(lines: list[str]) -> str | None:
    """The mode letters of the last `nvidia-smi topo -p2p <mode>` prompt line before the matrix."""
    mode = None
    for line in lines:
        m = PROMPT_RE.search(line)
        if m:
            mode = m.group(1)
    return mode


def _parse(lines: list[str]) -> P2PMatrix:
    notes: list[str] = []
    h = _find_header(lines)
    gpus = lines[h].split()
    if len(set(gpus)) != len(gpus):
        raise ParseError("header names a GPU twice: cells cannot be assigned", h + 1)
    rows, end = _read_rows(lines, h, gpus, notes)
    extra = [r for r in rows if r not in gpus]
    if extra:
        notes.append(smi_note("p2p-rows-without-column", rows=listing(extra)))
    names = gpus + extra
    missing = [g for g in gpus if g not in rows]
    if missing:
        notes.append(smi_note("p2p-no-row", gpus=listing(missing)))
    cells = _cells(names, gpus, rows)
    _validate(names, cells, notes)
    return P2PMatrix(mode=_mode(lines[:h]), gpus=tuple(names), cells=tuple(cells), legend=tuple(_legend(lines[end:])),
                     notes=tuple(notes))


def parse(text: str) -> P2PMatrix:
    """`nvidia-smi topo -p2p` output -> P2PMatrix; ParseError when there is no P2P matrix."""
    return _tool_failures.read(clean_lines(text), SOURCE, _parse, P2PMatrix)
