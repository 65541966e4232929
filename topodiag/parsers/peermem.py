"""Parser for the GPUDirect RDMA peer-memory evidence of a host: `/proc/modules` or `lsmod` (whole, or
pasted `lsmod | grep peer` lines with their prompts), and `ls /sys/kernel/mm/memory_peers` /
`cat /sys/kernel/mm/memory_peers/nv_mem/version`.

    nvidia_peermem 16384 0 - Live 0xffffffffc0c5e000 (POE)          (/proc/modules)
    nvidia_peermem         12288  0                                   (lsmod)
    ib_core               491520  9 rdma_cm,ib_ipoib,nvidia_peermem,iw_cm,ib_umad,rdma_ucm,ib_uverbs
    [root@gpu3 ~]# lsmod | grep nv_peer_mem                           (a grep that printed nothing)
    cat: /sys/kernel/mm/memory_peers/nv_mem/version: No such file or directory

A module counts as absent only where the text could have shown it: a whole module list (the lsmod
header, or /proc/modules lines), or a `grep` for it whose output is empty.

JSON: {source: "peermem", full_list (a whole module list was given), modules [names seen loaded, at
most 400], peer_module ("nvidia_peermem" / "nv_peer_mem" / null), peer_line, grepped [patterns of
`lsmod | grep P` / `grep P /proc/modules`], peer_absent (true: the list or a grep shows no peer-memory
module; false: loaded; null: the text cannot tell), memory_peers [entries such as "nv_mem"], memory_peers_missing
(ls/cat said No such file), nvidia_loaded, ib_core_loaded}. ParseError when nothing in the text is a
module line, a module grep or a memory_peers line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .base import ParseError, ParserInfo, clean_lines

INFO = ParserInfo(
    source="peermem",
    tool="cat /proc/modules (or lsmod); ls /sys/kernel/mm/memory_peers",
    description="GPUDirect RDMA peer memory: nvidia_peermem / nv_peer_mem loaded, /sys/kernel/mm/memory_peers",
)  # argv=() for now: a container without /proc/modules would make a live check incomplete (exit 3)
SOURCE = INFO.source

PEER_MODULES = ("nvidia_peermem", "nv_peer_mem")
MAX_MODULES = 400
_PROC_RE = re.compile(r"^([A-Za-z0-9_]+) ([0-9]+) ([0-9]+) (\S+) (Live|Loading|Unloading) 0x[0-9a-f]+")
_LSMOD_RE = re.compile(r"^([A-Za-z0-9_]+)\s+([0-9]+)\s+([0-9]+)(?:\s+(\S+))?\s*$")
_GREP_RE = re.compile(r"(?:lsmod|cat /proc/modules)\s*\|\s*grep\s+(?:-\w+\s+)*['\"]?([\w|\\-]+)['\"]?"
                      r"|grep\s+(?:-\w+\s+)*['\"]?([\w|\\-]+)['\"]?\s+/proc/modules")
_PROMPT_RE = re.compile(r"^(?:\(\S+\)\s*)?(?:\[[^\]]*\][#$]|\S*[#$]|[#$])\s+")
_MEMPEERS_MISSING_RE = re.compile(r"/sys/kernel/mm/memory_peers\S*: No such file or directory")
_MEMPEERS_CMD_RE = re.compile(r"\bls\b.*?/sys/kernel/mm/memory_peers/?\s*$")


@dataclass(frozen=True)
class PeerMem:
    source: str
    full_list: bool
    modules: tuple[str, ...]
    peer_module: Optional[str]
    peer_line: Optional[int]
    grepped: tuple[str, ...]
    peer_absent: Optional[bool]
    memory_peers: tuple[str, ...]
    memory_peers_missing: bool
    nvidia_loaded: bool
    ib_core_loaded: bool


def sniff(text: str) -> float:
    try:
        head = text[:20000]
        if "memory_peers" in head or "nvidia_peermem" in head or "nv_peer_mem" in head:
            return 0.7
        if re.search(r"^Module[ \t]+Size[ \t]+Used by", head, re.M):
            return 0.6
        lines = [ln for ln in head.splitlines()[:50] if ln.strip() and not ln.startswith("#@")]
        if len(lines) >= 3 and all(_PROC_RE.match(ln) for ln in lines):
            return 0.6
    except Exception:
        return 0.0
    return 0.0


def _grep_covers(patterns: list[str]) -> bool:
    """A grep whose pattern would have shown a peer-memory module (peer, peermem, nv_peer, nvidia...)."""
    return any(any(re.search(alt.replace("\\", ""), mod) for mod in PEER_MODULES)
               for p in patterns for alt in p.split("|") if alt)


class _State:
    def __init__(self) -> None:
        self.full = False
        self.modules: list[str] = []
        self.peer: Optional[str] = None
        self.peer_line: Optional[int] = None
        self.grepped: list[str] = []
        self.peers: list[str] = []
        self.peers_missing = False
        self.in_ls = False
        self.seen = 0

    def module(self, name: str, n: int, whole: bool) -> None:
        self.seen += 1
        self.full = self.full or whole
        if len(self.modules) < MAX_MODULES and name not in self.modules:
            self.modules.append(name)
        if name in PEER_MODULES and self.peer is None:
            self.peer, self.peer_line = name, n


def _line(st: _State, body: str, n: int) -> None:
    cmd = _PROMPT_RE.sub("", body, count=1) if _PROMPT_RE.match(body) else None
    if cmd is not None:
        g = _GREP_RE.search(cmd)
        if g:
            st.grepped.append(g[1] or g[2])
            st.seen += 1
        st.in_ls = bool(_MEMPEERS_CMD_RE.search(cmd))
        return
    if body.startswith("Module") and "Used by" in body:
        st.full = True
        st.seen += 1
        return
    if _MEMPEERS_MISSING_RE.search(body):
        st.peers_missing = True
        st.seen += 1
        return
    m = _PROC_RE.match(body)
    if m:
        st.module(m[1], n, True)
        return
    m = _LSMOD_RE.match(body)
    if m:
        st.module(m[1], n, False)
        return
    if st.in_ls and re.fullmatch(r"[\w.-]+(?:\s+[\w.-]+)*", body):
        st.peers.extend(body.split())
        st.seen += 1


def parse(text: str) -> PeerMem:
    st = _State()
    lines = clean_lines(text)
    for n, raw in enumerate(lines, 1):
        body = raw.strip()
        if body and not body.startswith(("#@", "```")):
            _line(st, body, n)
    if not st.seen:
        raise ParseError("no kernel module line (/proc/modules, lsmod), module grep or memory_peers line in the text",
                         next((i for i, x in enumerate(lines, 1) if x.strip() and not x.startswith("#@")), 1))
    listed_peers = any(p.startswith("nv_mem") for p in st.peers)
    if st.peer is not None or listed_peers:
        absent: Optional[bool] = False
    elif st.full or _grep_covers(st.grepped) or st.peers_missing:
        absent = True
    else:
        absent = None
    return PeerMem(source=SOURCE, full_list=st.full, modules=tuple(st.modules), peer_module=st.peer,
                   peer_line=st.peer_line, grepped=tuple(st.grepped), peer_absent=absent,
                   memory_peers=tuple(st.peers), memory_peers_missing=st.peers_missing,
                   nvidia_loaded="nvidia" in st.modules, ib_core_loaded="ib_core" in st.modules)
