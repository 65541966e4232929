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

Also `cat /proc/driver/nvidia/version` ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01
..."), `uname -r` / `uname -a` output after its prompt and "Linux version ..." (/proc/version), which say
whether the DMA-BUF path exists; and the live probe's JSON.

JSON: {source: "peermem", full_list (a whole module list was given), modules [names seen loaded, at
most 400], peer_module ("nvidia_peermem" / "nv_peer_mem" / null), peer_line, grepped [patterns of
`lsmod | grep P` / `grep P /proc/modules`], peer_absent (true: the list or a grep shows no peer-memory
module; false: loaded; null: the text cannot tell), memory_peers [entries such as "nv_mem"], memory_peers_missing
(ls/cat said No such file), nvidia_loaded, ib_core_loaded, driver_version, open_modules, kernel_release,
modules_visible (the probe: false where /proc/modules is not visible), dmabuf_possible (open modules and kernel
>= 5.12; null when a fact is missing), dmabuf_facts, probe}. ParseError when nothing in the text is a
module line, a module grep, a memory_peers line or the driver's version file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from .base import ParseError, ParserInfo, clean_lines, first_body_line, probe_object
from .sniff.peermem import _PROC_RE, sniff

INFO = ParserInfo(
    source="peermem",
    tool="cat /proc/modules (or lsmod); ls /sys/kernel/mm/memory_peers; cat /proc/driver/nvidia/version; uname -r",
    description="GPUDirect RDMA peer memory: nvidia_peermem / nv_peer_mem loaded, /sys/kernel/mm/memory_peers, "
                "the DMA-BUF path (open GPU kernel modules, kernel >= 5.12)",
    # Live: the peermem probe reads /proc/modules, /sys/kernel/mm/memory_peers, /proc/driver/nvidia/version
    # and the kernel release (files only: prolog-safe). A container without /proc/modules is "not
    # visible" in its JSON, never a failed source.
    prolog_safe=True,
    probe="peermem",
    timeout_s=2.0,
    schema_version=2,  # 2: driver_version, open_modules, kernel_release, modules_visible, dmabuf_possible
)
SOURCE = INFO.source

PEER_MODULES = ("nvidia_peermem", "nv_peer_mem")
MAX_MODULES = 400
_LSMOD_RE = re.compile(r"^([A-Za-z0-9_]+)\s+([0-9]+)\s+([0-9]+)(?:\s+(\S+))?\s*$")
_GREP_RE = re.compile(r"(?:lsmod|cat /proc/modules)\s*\|\s*grep\s+(?:-\w+\s+)*['\"]?([\w|\\-]+)['\"]?"
                      r"|grep\s+(?:-\w+\s+)*['\"]?([\w|\\-]+)['\"]?\s+/proc/modules")
# a virtualenv/conda name in parentheses holds no ')': `\(\S+\)` tried every ')' of a run of them (quadratic)
_PROMPT_RE = re.compile(r"^(?:\([^\s)]+\)\s*)?(?:\[[^\]]*\][#$]|\S*[#$]|[#$])\s+")
_MEMPEERS_MISSING_RE = re.compile(r"/sys/kernel/mm/memory_peers\S*: No such file or directory")
# "ls ... /sys/kernel/mm/memory_peers": the path at the end first, then an `ls` word before it (one
# `\bls\b.*?path$` ran its lazy scan to the end of the line from every 'ls' of it: quadratic)
_MEMPEERS_PATH_RE = re.compile(r"/sys/kernel/mm/memory_peers/?\s*$")
_LS_RE = re.compile(r"\bls\b")
# /proc/driver/nvidia/version: "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  565.57.01  Release
# Build ..." (the open modules) or "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.135  ..." (proprietary)
_NVRM_RE = re.compile(r"NVRM version: NVIDIA UNIX (Open )?.{0,40}?Kernel Module(?: for \S{1,20})? +([0-9]{2,4}(?:\.[0-9]{1,4}){1,2})")
_LINUX_VERSION_RE = re.compile(r"\bLinux version ([0-9]{1,2}\.[0-9]{1,3}[\w.+~-]{0,60})")
_RELEASE_RE = re.compile(r"^([0-9]{1,2}\.[0-9]{1,3}(?:\.[0-9]{1,4})?[\w.+~-]{0,60})$")
_UNAME_RE = re.compile(r"\buname\s+-(r|a)\b")
DMABUF_KERNEL = (5, 12)  # dma-buf for peer devices (the RDMA core's dma-buf MRs) landed in Linux 5.12


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
    driver_version: Optional[str] = None  # from /proc/driver/nvidia/version
    open_modules: Optional[bool] = None  # "Open Kernel Module" in it (None: no version file given)
    kernel_release: Optional[str] = None  # uname -r, "Linux version ...", or the probe's
    modules_visible: Optional[bool] = None  # the probe: False where /proc/modules is not there (a container)
    dmabuf_possible: Optional[bool] = None  # open modules and kernel >= 5.12 (None: a fact is missing)
    dmabuf_facts: tuple[str, ...] = ()  # what that judgement relied on, as a person reads it
    probe: Optional[str] = None  # "peermem" for the live probe's JSON


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
        self.driver: Optional[str] = None
        self.open: Optional[bool] = None
        self.kernel: Optional[str] = None
        self.uname: Optional[str] = None  # "r" / "a": the next output line is uname's

    def module(self, name: str, n: int, whole: bool) -> None:
        self.seen += 1
        self.full = self.full or whole
        if len(self.modules) < MAX_MODULES and name not in self.modules:
            self.modules.append(name)
        if name in PEER_MODULES and self.peer is None:
            self.peer, self.peer_line = name, n


def _facts(st: _State, body: str) -> bool:
    """The driver's version file, the kernel release (uname, /proc/version): True when the line was one."""
    m = _NVRM_RE.search(body)
    if m:
        st.driver, st.open = m[2], bool(m[1])
        st.seen += 1
        return True
    m = _LINUX_VERSION_RE.search(body)
    if m:
        st.kernel = st.kernel or m[1]
        return True
    if st.uname is not None:
        words = body.split()
        word = words[0] if st.uname == "r" else (words[2] if len(words) > 2 and words[0] == "Linux" else "")
        st.uname = None
        if _RELEASE_RE.match(word):
            st.kernel = word
            return True
    return body.startswith("GCC version:")


def _line(st: _State, body: str, n: int) -> None:
    cmd = _PROMPT_RE.sub("", body, count=1) if _PROMPT_RE.match(body) else None
    if cmd is not None:
        u = _UNAME_RE.search(cmd)
        st.uname = u[1] if u else None
        g = _GREP_RE.search(cmd)
        if g:
            st.grepped.append(g[1] or g[2])
            st.seen += 1
        path = _MEMPEERS_PATH_RE.search(cmd)
        st.in_ls = path is not None and _LS_RE.search(cmd, 0, path.start()) is not None
        return
    if _facts(st, body):
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


def _release(text: Optional[str]) -> Optional[tuple[int, int]]:
    m = re.match(r"([0-9]{1,2})\.([0-9]{1,3})", text or "")
    return (int(m[1]), int(m[2])) if m else None


def dmabuf(open_modules: Optional[bool], kernel: Optional[str]) -> tuple[Optional[bool], tuple[str, ...]]:
    """Whether GPUDirect RDMA can go through DMA-BUF instead of a peer-memory module: the open GPU kernel
    modules (the proprietary ones export no dma-buf for RDMA) and Linux 5.12 or newer; with the facts
    it relied on. None when one is not known and the other does not already say no."""
    facts = []
    if open_modules is not None:
        facts.append("the open GPU kernel modules" if open_modules else "the proprietary GPU kernel modules")
    rel = _release(kernel)
    if rel is not None:
        facts.append(f"kernel {kernel} ({'>=' if rel >= DMABUF_KERNEL else '<'} 5.12)")
    if open_modules is False or (rel is not None and rel < DMABUF_KERNEL):
        return False, tuple(facts)
    if open_modules and rel is not None:
        return True, tuple(facts)
    return None, tuple(facts)


def parse(text: str) -> PeerMem:
    if text.lstrip()[:1] == "{":
        return _parse_probe(text)
    return _parse_text(text)


def _parse_probe(text: str) -> PeerMem:
    """The peermem probe's JSON (topodiag/live/peermem_probe.py): /proc/modules as read (null where it
    is not visible), the memory_peers entries, the driver's version file, the kernel release."""
    data = probe_object(text, "peermem", "the peermem probe's JSON")

    def wrong(key: str, what: str) -> ParseError:
        at = next((n for n, line in enumerate(text.split("\n"), 1) if f'"{key}"' in line), 1)
        v = data[key]
        bad = next((x for x in v if not isinstance(x, str)), None) if isinstance(v, list) else v
        found = f"a list holding {type(bad).__name__}" if isinstance(v, list) else type(v).__name__
        return ParseError(f"the peermem probe's {key}: expected {what}, found {found}", at)

    def text_of(key: str) -> Optional[str]:
        v = data.get(key)
        if v is not None and not isinstance(v, str):
            raise wrong(key, "a string or null")
        return v

    modules, version, kernel = text_of("modules"), text_of("nvidia_version"), text_of("kernel_release")
    peers = data.get("memory_peers")
    if peers is not None and not (isinstance(peers, list) and all(isinstance(p, str) for p in peers)):
        raise wrong("memory_peers", "a list of names or null")
    peers = peers[:MAX_MODULES] if peers is not None else None
    parts = [modules or ""]
    if version:
        parts.append(version)
    st = _scan(clean_lines("\n".join(parts)))
    visible = modules is not None
    full = visible and st.full
    peer = st.peer
    if peer is None and peers and any(p.startswith("nv_mem") for p in peers):
        absent: Optional[bool] = False
    elif peer is not None:
        absent = False
    else:
        absent = True if full else None
    kernel = kernel or st.kernel
    possible, facts = dmabuf(st.open, kernel)
    return PeerMem(source=SOURCE, full_list=full, modules=tuple(st.modules), peer_module=peer, peer_line=None,
                   grepped=(), peer_absent=absent, memory_peers=tuple(peers or ()),
                   memory_peers_missing=peers is None and data.get("memory_peers_missing") is True,
                   nvidia_loaded="nvidia" in st.modules, ib_core_loaded="ib_core" in st.modules,
                   driver_version=st.driver, open_modules=st.open, kernel_release=kernel, modules_visible=visible,
                   dmabuf_possible=possible, dmabuf_facts=facts, probe="peermem")


def _scan(lines: list[str]) -> _State:
    st = _State()
    for n, raw in enumerate(lines, 1):
        body = raw.strip()
        if body and not body.startswith("```"):
            _line(st, body, n)
    return st


def _parse_text(text: str) -> PeerMem:
    st = _State()
    lines = clean_lines(text)
    for n, raw in enumerate(lines, 1):
        body = raw.strip()
        if body and not body.startswith("```"):
            _line(st, body, n)
    if not st.seen:
        raise ParseError("no kernel module line (/proc/modules, lsmod), module grep or memory_peers line in the text",
                         first_body_line(lines))
    listed_peers = any(p.startswith("nv_mem") for p in st.peers)
    if st.peer is not None or listed_peers:
        absent: Optional[bool] = False
    elif st.full or _grep_covers(st.grepped) or st.peers_missing:
        absent = True
    else:
        absent = None
    possible, facts = dmabuf(st.open, st.kernel)
    return PeerMem(source=SOURCE, full_list=st.full, modules=tuple(st.modules), peer_module=st.peer,
                   peer_line=st.peer_line, grepped=tuple(st.grepped), peer_absent=absent,
                   memory_peers=tuple(st.peers), memory_peers_missing=st.peers_missing,
                   nvidia_loaded="nvidia" in st.modules, ib_core_loaded="ib_core" in st.modules,
                   driver_version=st.driver, open_modules=st.open, kernel_release=st.kernel,
                   dmabuf_possible=possible, dmabuf_facts=facts)
