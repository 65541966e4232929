"""Loading nccl-tests runs for `topodiag compare`: each file through the nccl_tests parser (every run
a file holds is one run here), its busbw by size (the better of out-of-place and in-place, as PERF001
counts it), and a label: `--label` when given for that position, else the NCCL_* settings the output
carries (an echoed command `NCCL_ALGO=Ring ./all_reduce_perf`, `-x NCCL_PROTO=LL128`, or an INFO line
`NCCL_ALGO set by environment to Tree`) that differ between the runs, else what the header says that
differs (nodes x GPUs, NCCL version), else the file name."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from ..errors import InputError, UsageError

_ENV_ASSIGN = re.compile(r"(?<![A-Za-z0-9_])(NCCL_[A-Z0-9_]+)=([^\s\\'\"]+)")
_ENV_INFO = re.compile(r"\b(NCCL_[A-Z0-9_]+) set by environment to ([^\s.]+(?:\.[^\s.]+)*)")
LABEL_KEYS_FIRST = ("NCCL_ALGO", "NCCL_PROTO", "NCCL_BUFFSIZE", "NCCL_NVLS_ENABLE", "NCCL_MIN_NCHANNELS",
                    "NCCL_MAX_NCHANNELS", "NCCL_COLLNET_ENABLE", "NCCL_P2P_LEVEL", "NCCL_NET_GDR_LEVEL")
LABEL_KEYS = 2  # a label names at most this many settings (the run's JSON lists them all)
_NOT_SETTINGS = {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_SOCKET_IFNAME", "NCCL_IB_HCA",
                 "NCCL_TOPO_DUMP_FILE"}


@dataclass
class Run:
    label: str
    path: str
    run: int                                  # index of the run in its file (0-based)
    points: dict[int, float]                  # size_bytes -> busbw GB/s (best of oop / ip)
    spread: dict[int, float]                  # size_bytes -> |oop - ip| / max: the run's own noise
    collective: Optional[str]
    hosts: list[str]
    per_host: dict[str, int]
    names: list[str]
    nranks: Optional[int]
    nccl_version: Optional[str]
    env: dict[str, str] = field(default_factory=dict)
    data: Any = None                          # the parser's JSON form (for the expectation)
    label_from: str = "file name"
    note: str = ""                            # what of its file was left out (said in the summary)

    def to_json(self) -> dict:
        return {"label": self.label, "label_from": self.label_from, "path": self.path, "run": self.run + 1,
                "collective": self.collective, "hosts": len(self.hosts), "gpus_per_node": max(self.per_host.values())
                if self.per_host else None, "nranks": self.nranks, "nccl_version": self.nccl_version, "env": self.env,
                "busbw": {str(k): v for k, v in sorted(self.points.items())}}


def settings(text: str) -> dict[str, str]:
    """NCCL_* settings the output shows (last value wins), without the ones that do not change speed."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        for m in _ENV_ASSIGN.finditer(line):
            found[m.group(1)] = m.group(2).rstrip(",;")
        for m in _ENV_INFO.finditer(line):
            found[m.group(1)] = m.group(2)
    return {k: v for k, v in found.items() if k not in _NOT_SETTINGS}


def _read(path: str) -> tuple[str, Any]:
    from ..load.files import open_text
    from ..parsers import nccl_tests
    from ..parsers.base import ParseError, blank_provenance_header, to_jsonable

    opened = open_text(path)
    try:
        text = blank_provenance_header(opened.read())
    finally:
        opened.close()
    try:
        result = nccl_tests.parse(text)
    except ParseError as exc:
        raise InputError(path, f"not nccl-tests output: {exc}") from None
    return text, to_jsonable(result)


def _runs_of(path: str, text: str, data: dict) -> list[Run]:
    from ..checks import perf

    env = settings(text)
    out = []
    for run, rows in sorted(perf.rows_by_run(data).items()):
        points, spread = {}, {}
        for r in rows:
            bw = perf.best_busbw(r)
            if r.get("size_bytes") and bw is not None:
                points[r["size_bytes"]] = max(bw, points.get(r["size_bytes"], 0.0))
                o, i = r.get("oop_busbw_gbps"), r.get("ip_busbw_gbps")
                if isinstance(o, (int, float)) and isinstance(i, (int, float)) and max(o, i) > 0:
                    spread[r["size_bytes"]] = abs(o - i) / max(o, i)
        if not points:
            continue
        hosts, per_host, names = perf.rank_layout(data, run)
        out.append(Run("", path, run, points, spread, perf.collective_of(data, rows), hosts, per_host, names,
                       data.get("nranks") or (sum(per_host.values()) or None), data.get("nccl_version"), env, data))
    if not out:
        raise InputError(path, "no nccl-tests result rows (size, busbw) to compare")
    total = data.get("runs") or 0
    if isinstance(total, int) and total > len(out):  # the parser keeps a bounded number of runs' rows
        out[0].note = (f"{os.path.basename(path)} holds {total} runs; {len(out)} are compared, the other "
                       f"{total - len(out)} (past the rows the reader keeps, or without result rows) are not")
    return out


def load_runs(paths: Sequence[str], labels: Sequence[str] = ()) -> list[Run]:
    """Every run of every file, labelled. InputError for a file that cannot be read or holds no
    result rows; UsageError for fewer than two runs, more labels than runs, or mixed collectives."""
    runs: list[Run] = []
    for path in paths:
        text, data = _read(path)
        runs.extend(_runs_of(path, text, data))
    if len(runs) < 2:
        raise UsageError(f"compare needs two or more nccl-tests runs; {', '.join(paths) or 'none'} "
                         f"hold{'s' if len(paths) == 1 else ''} {len(runs)}")
    if len(labels) > len(runs):
        raise UsageError(f"--label given {len(labels)} times for {len(runs)} runs")
    _refuse_mixed(runs)
    _label(runs, labels)
    return runs


def _refuse_mixed(runs: list[Run]) -> None:
    kinds: dict[str, list[str]] = {}
    for r in runs:
        if r.collective:
            kinds.setdefault(r.collective, []).append(os.path.basename(r.path))
    if len(kinds) > 1:
        each = "; ".join(f"{k}: {', '.join(v[:3])}" for k, v in kinds.items())
        raise UsageError(f"the runs are of different collectives ({each}): compare one collective at a time")


def _differing(runs: list[Run]) -> list[str]:
    keys = sorted({k for r in runs for k in r.env})
    varying = [k for k in keys if len({r.env.get(k) for r in runs}) > 1]
    return sorted(varying, key=lambda k: (LABEL_KEYS_FIRST.index(k) if k in LABEL_KEYS_FIRST else 99, k))


def _header_label(r: Run, runs: list[Run]) -> Optional[str]:
    parts = []
    shapes = {(len(x.hosts), max(x.per_host.values()) if x.per_host else None) for x in runs}
    if len(shapes) > 1 and r.per_host:
        parts.append(f"{len(r.hosts)}x{max(r.per_host.values())} GPUs")
    versions = {x.nccl_version for x in runs}
    if len(versions) > 1 and None not in versions:  # a version one output does not print tells nothing
        parts.append(f"NCCL {r.nccl_version}")
    return " ".join(parts) or None


def _auto_label(r: Run, runs: list[Run], keys: list[str]) -> Optional[tuple[str, str]]:
    """What the outputs say that tells the runs apart: the header (nodes x GPUs, NCCL version) and
    the NCCL settings, in that order; None when they say nothing that differs."""
    head = _header_label(r, runs)
    env = " ".join(f"{k.removeprefix('NCCL_')}={r.env.get(k, 'default')}" for k in keys[:LABEL_KEYS])
    parts = [(head, "header"), (env, "NCCL settings in the output")]
    found = [(text, where) for text, where in parts if text]
    if not found:
        return None
    return " ".join(t for t, _ in found), " and ".join(w for _, w in found)


def _label(runs: list[Run], labels: Sequence[str]) -> None:
    keys = _differing(runs)
    stems = [os.path.splitext(os.path.basename(r.path))[0] for r in runs]
    many = {p for p in (r.path for r in runs) if sum(1 for x in runs if x.path == p) > 1}
    for i, r in enumerate(runs):
        if i < len(labels) and labels[i]:
            r.label, r.label_from = labels[i], "--label"
        elif (auto := _auto_label(r, runs, keys)) is not None:
            r.label, r.label_from = auto
        else:
            r.label = stems[i] + (f"#{r.run + 1}" if r.path in many else "")
            r.label_from = "file name"
    seen: dict[str, int] = {}
    for r in runs:  # labels stay unique
        n = seen.get(r.label, 0)
        seen[r.label] = n + 1
        if n:
            r.label = f"{r.label} ({n + 1})"
