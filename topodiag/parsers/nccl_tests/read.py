"""Reading one line of nccl-tests output: the launcher prefixes, the banner, rank, header and summary
patterns, and the cells of a results row (the column layout, a header's or one inferred from a row; the
"plain row" fast path and its bytes forms for the chunk engine). State-free: assemble.py holds the state."""

from __future__ import annotations

import math
import re
from typing import Any

from .. import nccl_tests_failures as _failures
from .._possessive import possessive
from .records import Layout

# Line prefixes a launcher adds: srun "-l" (" 0: "), OpenMPI --tag-output ("[1,0]<stdout>:"), "[0]".
_SRUN_RE = re.compile(r"^[0-9]+:(?:\s+|$)")
_TAG_RE = re.compile(r"\[[0-9]+(?:,[0-9]+)*\](?:<std(?:out|err)>:?)?")
_LEAD_TAG_RE = re.compile(r"^\[[0-9]+(?:,[0-9]+)*\](?:<std(?:out|err)>)?:?\s*")

_NCCL_LOG_RE = re.compile(r"\bNCCL (INFO|WARN|TRACE)\b")
_NCCL_VERSION_RE = re.compile(r"\bNCCL version ([0-9]+\.[0-9]+\.[0-9]+)")
_NRANKS_RE = re.compile(r"\bnranks ([0-9]+)\b")

_TESTS_VERSION_RE = re.compile(r"^#\s*(?:nccl|rccl)-tests version (\S+)")
_HEADERS_RE = re.compile(r"\bnccl-headers=([0-9]+)")
_LIBRARY_RE = re.compile(r"\bnccl-library=([0-9]+)")
_STARTING_RE = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_NTHREAD_RE = re.compile(r"^#\s*nThread\s+[0-9]+")
_USING_RE = re.compile(r"^#\s*Using devices\b")
_DEVICE_RE = re.compile(
    r"^#\s*Rank\s+([0-9]+)\s+(?:Group\s+([0-9]+)\s+)?Pid\s+([0-9]+)\s+on\s+(\S+)\s+device\s+([0-9]+)\s+\[([^\]]*)\]\s*(.*)$")
_OOB_RE = re.compile(r"^#\s*Out of bounds values\s*:\s*([0-9]+)\s*(\w+)?")
_AVG_RE = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_REDUCED_RE = re.compile(r"^#\s*Reducing maxBytes to ([0-9]+)")
_ERROR_RE = re.compile(r"^#\s*error:\s*(.+)$")
_PERF_RE = re.compile(r"(?:^|[\s/])([a-z][a-z0-9_]*?)_perf(?:_mpi)?(?=\s|$)")
_HOST_TAIL_RE = re.compile(r"(\S+:\s*)$")  # "node0: " before the failure mark on a row cut short

_FAIL_RE = _failures.FAIL_RE  # a failure mark ("Test CUDA failure", FAILED, aborts...)
_FAIL_WORDS = _failures.FAIL_WORDS  # a literal of each of its alternatives (searched in bytes)

_INT_RE = re.compile(r"^-?[0-9]+$")
_NUM_RE = re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")  # the dot leads: linear
_WORD_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

# header column name -> the row field it fills (None: a column this parser does not report)
_HALF_NAMES = {"time": "time", "cputime": "time", "algbw": "algbw", "busbw": "busbw", "#wrong": "wrong",
               "error": "error"}
_PARAM_KEYS = {"nThread": "nthread", "nGpus": "ngpus", "minBytes": "min_bytes", "maxBytes": "max_bytes",
               "warmup iters": "warmup_iters", "agg iters": "agg_iters"}


def version_from_code(code: int) -> str:
    """NCCL_VERSION_CODE -> dotted version: 23102 -> "2.31.2" (>= 2.9), 2708 -> "2.7.8" (older)."""
    if code >= 10000:
        return f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    return f"{code // 1000}.{code % 1000 // 100}.{code % 100}"


def collective_name(program: str) -> str:
    """'all_reduce_perf' / 'all_reduce_perf_mpi' / './build/sendrecv_perf' -> 'all_reduce' / 'sendrecv'."""
    name = program.rsplit("/", 1)[-1]
    for suffix in ("_perf_mpi", "_perf"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _strip_prefix(line: str) -> str:
    """The line without indentation, an srun task prefix or a leading MPI rank tag."""
    s = line.strip()
    if not s or not (s[0] == "[" or s[0].isdigit()):  # neither prefix can start here
        return s
    for _ in range(2):
        m = _SRUN_RE.match(s) or _LEAD_TAG_RE.match(s)
        if not m:
            break
        s = s[m.end():].strip()
    return s


def _num(tok: str) -> float | None:
    """A table cell as a float; 'N/A', nan and inf as None."""
    if tok.isascii() and tok.replace(".", "", 1).isdigit():  # the usual cell, which _NUM_RE matches
        v = float(tok)
        return v if v != math.inf else None  # 400 digits overflow
    if not _NUM_RE.match(tok):
        return None
    v = float(tok)
    return v if math.isfinite(v) else None


def _wrong(tok) -> bool:
    """Whether a plain decimal #wrong cell (str or bytes) counts wrong results: as `row` reads it, an
    int of its finite value above 0."""
    v = float(tok)
    return v != math.inf and int(v) > 0


def _cell_ok(tok: str) -> bool:
    """Whether a token can be a time/bandwidth/#wrong/error cell."""
    if tok.isascii():
        if tok.replace(".", "", 1).isdigit():
            return True
        if tok.isalpha():
            return tok.lower() in ("nan", "inf")
    return tok == "N/A" or bool(_NUM_RE.match(tok)) or tok.lower() in ("nan", "-nan", "inf", "-inf")


def _is_int(tok: str) -> bool:
    """_INT_RE.match, with the usual case first."""
    return (tok.isascii() and tok.isdigit()) or bool(_INT_RE.match(tok))


def _parse_params(s: str) -> dict[str, Any]:
    """'# nThread 1 nGpus 1 minBytes 8 ... step: 2(factor) warmup iters: 5 ...' -> dict of numbers."""
    out: dict[str, Any] = {}
    label: list[str] = []
    for tok in s.lstrip("#").split():
        m = re.match(r"^(-?[0-9]+)\((\w+)\)$", tok)
        if m and label:
            out["step_factor" if m.group(2) == "factor" else "step_bytes"] = int(m.group(1))
            label = []
            continue
        if _NUM_RE.match(tok) and label:
            name = " ".join(label).rstrip(":").strip()
            key = _PARAM_KEYS.get(name)
            if key is None:
                key = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
                key = re.sub(r"[^A-Za-z0-9]+", "_", key).strip("_").lower()
            out[key] = int(tok) if _INT_RE.match(tok) else _num(tok)
            label = []
            continue
        label.append(tok)
    return out


def _header_layout(tokens: list[str]) -> Layout | None:
    """Column layout from the '#  size  count  type  redop  root  time ...' header tokens."""
    times = [i for i, t in enumerate(tokens) if t in ("time", "cputime")]
    if not times:
        return None
    lead = tuple(tokens[: times[0]])
    if not lead or lead[0] != "size":
        return None
    if len(times) >= 2:
        h1, h2 = tokens[times[0]: times[1]], tokens[times[1]:]
    else:
        h1 = tokens[times[0]:]
        h2 = h1
    oop = tuple(_HALF_NAMES.get(t) for t in h1)
    ip = tuple(_HALF_NAMES.get(t) for t in h2 if t != "timestamp")
    return Layout(lead, oop, ip)


def _lead_ok(name: str, tok: str) -> bool:
    """Whether a token fits a leading column (size, count, type, redop, root)."""
    if name in ("size", "count", "root"):
        return _is_int(tok)
    if name in ("type", "redop"):
        return (tok.isascii() and tok.isalpha()) or bool(_WORD_RE.match(tok))
    return True


def _infer_layout(tokens: list[str]) -> Layout | None:
    """Column layout of a row printed without a header in view (a fragment)."""
    if len(tokens) < 3 or not (_INT_RE.match(tokens[0]) and _INT_RE.match(tokens[1]) and _WORD_RE.match(tokens[2])):
        return None
    lead = ["size", "count", "type"]
    i = 3
    if i < len(tokens) and _WORD_RE.match(tokens[i]) and tokens[i] not in ("nan", "inf"):
        lead.append("redop")
        i += 1
    rest = len(tokens) - i
    if rest >= 1 and _INT_RE.match(tokens[i]) and (rest % 4 == 1 or rest < 4):
        lead.append("root")
        i += 1
    cells = tokens[i:]
    kinds = []
    for j in (3, 7):  # the 4th cell of each half: #wrong (an integer or N/A) or the old max error
        tok = cells[j] if j < len(cells) else "0"
        kinds.append("error" if ("e" in tok.lower() or "." in tok) and tok != "N/A" else "wrong")
    return Layout(tuple(lead), ("time", "algbw", "busbw", kinds[0]), ("time", "algbw", "busbw", kinds[1]))


_PLAIN: dict = {}  # layout -> how a plain row of it reads (_plain_shape)
_WS_S = r"[ \t\r\x0b\x0c]*"  # what bytes.strip takes off a line (no newline is left in one)
_PLAIN_LAST: list = [None, None]
_PLAIN_WRONG = r"(N/A|[0-9]+\.?[0-9]*|\.[0-9]+)"  # a #wrong cell: a plain decimal
_PLAIN_CELL = r"(N/A|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)"  # the others, "0e+00" too (old builds)


def _plain_shape(layout: Layout) -> tuple:
    """(regex of a plain row under `layout` or None, lead names, (index, name) of each half's named
    cells, indices of the #wrong cells). A plain row: ASCII, every column there, no tag, the lead
    columns as `_lead_ok` takes them and every cell a plain decimal or N/A."""
    if _PLAIN_LAST[0] is layout:
        return _PLAIN_LAST[1]
    shape = _PLAIN.get(layout)
    if shape is None:
        if len(_PLAIN) > 64:
            _PLAIN.clear()
        n, n_oop = len(layout.lead), len(layout.oop)
        parts = [r"(-?[0-9]+)" if name in ("size", "count", "root") else r"([A-Za-z][A-Za-z0-9_]*)"
                 if name in ("type", "redop") else r"(\S+)" for name in layout.lead]
        parts += [_PLAIN_WRONG if name == "wrong" else _PLAIN_CELL for name in layout.oop + layout.ip]
        usual = layout.lead[:3] == ("size", "count", "type")
        oop_at = [(n + i, name) for i, name in enumerate(layout.oop) if name is not None]
        ip_at = [(n + n_oop + i, name) for i, name in enumerate(layout.ip) if name is not None]
        parts_b = [p.replace(r"(\S+)", r"([!-~]+)") for p in parts]  # over printable ASCII: the same tokens
        wrong_at = [i for i, name in oop_at + ip_at if name == "wrong"]
        shape = _PLAIN[layout] = (re.compile(r"\s+".join(parts)) if usual else None, layout.lead, oop_at, ip_at,
                                  wrong_at, re.compile(r"[ \t]+".join(parts_b).encode()) if usual else None,
                                  _right_row_b(parts_b, wrong_at) if usual else None)
    _PLAIN_LAST[:] = [layout, shape]  # the same layout object row after row: no hashing
    return shape


# a cell of _PLAIN_CELL's, for `_right_row_b`: the number first (most cells), possessive runs (what
# follows each run cannot start inside it, so giving back a character could never match: they only
# save the engine the tries; the same for the runs of blanks between the cells; greedy before Python
# 3.11: parsers/_possessive.py)
_CELL_FAST = r"(?:[0-9]++(?:\.[0-9]*+)?(?:[eE][-+]?[0-9]++)?|\.[0-9]++(?:[eE][-+]?[0-9]++)?|N/A)"
_INT_FAST = r"(-?[0-9]++)"


def _right_row_b(parts_b: list[str], wrong_at: list[int]) -> re.Pattern:
    """A whole line (bytes) that `_counted` counts as a plain row with no wrong results: the plain row
    (indentation and trailing blanks as `strip` takes them), no "[" and no "NCCL" in it, a type that is
    not nan/inf, and every #wrong cell 0 or N/A (any other #wrong value is left to `_counted`)."""
    parts = []
    for i, part in enumerate(parts_b):
        if i in wrong_at:
            part = r"(?:0|N/A)"
        elif part == _PLAIN_CELL:
            part = _CELL_FAST
        elif part == r"(-?[0-9]+)":
            part = _INT_FAST
        elif part == r"([A-Za-z][A-Za-z0-9_]*)":  # a word: the only cells besides the next that can hold "NCCL"
            part = r"(?![A-Za-z0-9_]*NCCL)" + part
        elif part == r"([!-~]+)":  # any token: the only cell that can hold "["
            part = r"(?![!-~]*(?:NCCL|\[))" + part
        parts.append(part)
    parts[2] = r"(?!(?i:nan|inf)[ \t])" + parts[2]
    body = re.sub(r"\((?!\?)", "(?:", r"[ \t]++".join(parts))  # no groups: only whether it matches
    return re.compile(possessive((_WS_S + r"(?=[0-9])" + body + _WS_S).encode()))


def _plain_row(layout: Layout, s: str) -> tuple | None:
    """The tokens of a plain row under `layout` (see _plain_shape), which `row` reads the same way by
    its column checks and regexes; None for any other line (`row` reads it)."""
    regex = _plain_shape(layout)[0]
    if regex is None or not s.isascii():
        return None
    m = regex.fullmatch(s)
    if m is None:
        return None
    tokens = m.groups()
    if tokens[2].lower() in ("nan", "inf"):  # a type that is a cell: `row` decides
        return None
    return tokens


def _plain_halves(layout: Layout, tokens: tuple) -> tuple[dict, dict, dict]:
    """(lead, out-of-place, in-place) of a plain row's tokens."""
    _, lead_names, oop_at, ip_at, _, _, _ = _plain_shape(layout)
    halves = []
    for at in (oop_at, ip_at):
        half: dict[str, Any] = {}
        for i, name in at:
            tok = tokens[i]
            if name == "wrong":
                v = _num(tok)
                half[name] = None if v is None else int(v)
            else:
                half[name] = None if tok == "N/A" else _num(tok)
        halves.append(half)
    return dict(zip(lead_names, tokens)), halves[0], halves[1]


def _half(names: tuple[str | None, ...], cells: list[str]) -> dict[str, Any] | None:
    """One half (out-of-place or in-place) of a row by column name; None when cells are missing or bad."""
    if len(cells) < len(names):
        return None
    out: dict[str, Any] = {}
    for name, tok in zip(names, cells):
        if name is None:
            continue
        if not _cell_ok(tok):
            return None
        v = _num(tok)
        out[name] = (int(v) if v is not None else None) if name == "wrong" else v
    return out
