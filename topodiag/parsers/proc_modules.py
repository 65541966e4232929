"""Parser for the loaded kernel modules (`/proc/modules` or `lsmod`): whether a GPUDirect RDMA
peer-memory module is loaded (nvidia_peermem, or nv_peer_mem with older MLNX_OFED).

    nvidia_peermem 16384 0 - Live 0x0000000000000000
    Module                  Size  Used by
    nvidia_peermem         16384  0
    ib_core               491520  9 rdma_cm,ib_ipoib,nvidia_peermem,iw_cm,ib_umad,rdma_ucm,ib_uverbs,mlx5_ib

JSON: {source: "proc_modules", modules [str], peer_memory [the loaded peer-memory modules],
nvidia (the nvidia module is loaded), ib (ib_core is loaded)}. ParseError when no module line is found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import ParseError, ParserInfo

INFO = ParserInfo(
    source="proc_modules",
    tool="cat /proc/modules (or lsmod)",
    description="loaded kernel modules: the GPUDirect RDMA peer-memory module (nvidia_peermem, nv_peer_mem)",
)
SOURCE = INFO.source

LINE_RE = re.compile(r"^\s*([a-z_][a-z0-9_]*)\s+(\d+)\s+(\d+|-)(?:\s|$)")
PEER_MEMORY = ("nvidia_peermem", "nv_peer_mem")
MAX_MODULES = 10000


@dataclass(frozen=True)
class ProcModules:
    source: str
    modules: tuple[str, ...]
    peer_memory: tuple[str, ...]
    nvidia: bool
    ib: bool


def sniff(text: str) -> float:
    try:
        lines = [ln for ln in text.splitlines()[:300]
                 if ln.strip() and not ln.lstrip().startswith(("#", "$", "```", "Module "))]
        hits = sum(1 for ln in lines if LINE_RE.match(ln))
        header = any(ln.split() == ["Module", "Size", "Used", "by"] for ln in text.splitlines()[:5])
        return 0.6 if hits >= 2 and (header or hits * 10 >= len(lines) * 8) else 0.0
    except Exception:
        return 0.0


def parse(text: str) -> ProcModules:
    mods: list[str] = []
    for line in text.splitlines():
        m = LINE_RE.match(line)
        if m and len(mods) < MAX_MODULES:
            mods.append(m[1])
    if not mods:
        raise ParseError("expected /proc/modules or lsmod output: 'name size refcount ...' lines",
                         len(text.splitlines()))
    have = set(mods)
    return ProcModules(SOURCE, tuple(mods), tuple(m for m in PEER_MEMORY if m in have),
                       "nvidia" in have, "ib_core" in have)
