"""Parser for NCCL_DEBUG=INFO logs (NCCL 2.4 .. 2.27, net plugins, Slurm/MPI line prefixes).

    n013:101855:101885 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_2:1/IB [RO]; OOB ibp209s0f0:10.128.3.13<0>
    n013:101855:101885 [0] NCCL INFO Using network IB
    NCCL version 2.16.5+cuda11.8
    gpu36:20775:20807 [0] NCCL INFO Channel 00/0 : 1[81000] -> 0[81000] [receive] via NET/IB/1/GDRDMA
    [155] crow-19:5330:5499 [3] NCCL INFO Ring 00 : 155[3d000] -> 157[b2000] via P2P/IPC
    H100-2:19989:20082 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer ... with error 4, ...
    n013:101855:101885 [0] NCCL INFO comm 0x72a6b00 rank 0 nranks 2 cudaDev 0 busId 81000 commId 0xb2 - Init COMPLETE

The log is read in chunks of about 4 MiB (`parse_lines` takes an open file or any iterable of
lines; `parse(text)` uses the same engine), so a multi-GB log parses in constant memory: every
list is capped (warnings/errors keep the first 200, with `warnings_total`/`errors_total`), every
dict and cache is bounded. Each chunk gets a few C-level passes: line/tag counts, one
`Counter(findall)` over connection lines (the bulk of a big log, so Python only sees each distinct
"8[0] -> 15[7] via P2P/IPC" text once), one regex for the INFO lines that carry facts (proxy,
topology-dump and tuning chatter is never looked at), and substring searches for WARN, GDR,
banner and watchdog lines. Facts are first-seen (comm/Init lines win for a rank's fields), so the
result does not depend on where chunks are cut.

`parse_binary(handle)` (a file opened "rb": what the CLI uses for big logs) is the fast path: an
ASCII chunk is scanned as bytes (one scan for fact lines and rare tags, one Counter(findall) for
connections, C counts), only the fact lines it finds are decoded, and every decision on them is
the code above, so its result is exactly `parse(data.decode("utf-8", "replace"))` for any bytes (a
chunk with non-ASCII bytes is decoded and read by the str engine). A regular file of 64 MiB or more
gets one forked worker that computes the state-free counts of each chunk while this process does
the rest; anything odd about the worker and this process does it all. `parse_lines` on a binary
file uses the same bytes engine, in one process.

PyTorch c10d watchdog logs (`ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective
operation timeout: WorkNCCL(...)`) are parsed, not refused: their timeout lines go to `errors`
(kind "watchdog_timeout" ...) and every other field stays empty/null, so the timeout reaches the
rules. ParseError only when no NCCL line at all was seen (line 0 for empty text, else the last line).

JSON: {source: "nccl_debug", nccl_version ("2.18.3", first banner), cuda_version (banner
"+cuda12.2", else from cudaDriverVersion), cuda_driver_version ("12.2" from "cudaDriverVersion
12020"), hosts (sorted host names from the "host:pid:tid [dev]" prefixes of the lines read:
banner/env/NET/Bootstrap/comm/Trees/WARN lines and the first line of each connection), cuda_devs
{host: [CUDA device numbers in the "[dev]" of those prefixes]} (a lower bound on how many GPUs
each host runs ranks on), nranks
(largest "nranks N" of comm lines, else largest rank seen + 1), nranks_from ("comm" | "max_rank" |
null), ranks [{rank, host, cuda_dev, bus_id, nranks}] (sorted, ranks >= nranks dropped; host only
for the rank that logged the line; a bracket "8[20000]" of two or fewer digits is a cudaDev (NCCL >=
2.19), longer a busId), network (first "Using network X"), networks (distinct, in order), net_plugin
("Loaded net plugin X", else "P2P plugin [vN] X", else "aws-ofi-nccl" when NET/OFI lines appear),
net_plugin_path, collnet_plugin, net_devices [{name, port, link_layer ("IB"|"RoCE"|null), index,
kind ("ib"|"socket"), address, sharp}] (from "NET/IB : Using" / "NET/Socket : Using", distinct by
kind+name+port), gid_index, gdr (true: "GPU Direct RDMA Enabled" or a GDRDMA transport; false: only
"Disabled" lines; null: no evidence), gdr_lines [{line_no, text}], transports {kind: count} (keys
"P2P/IPC", "P2P/CUMEM", "P2P/direct pointer" -- a "/read" suffix is dropped --, "SHM" (any SHM/...),
"NET/<name>" with "/GDRDMA" when the path says so (device number and "/Shared" dropped), "CollNet",
"NVLS" (one per "Connected NVLS" line)), connections_sample [{line_no, text}] (first line of each of
the first 20 distinct connection texts), env {NCCL_*: value} (first value printed; also
NCCL_TOPO_FILE set by aws-ofi-nccl), channels {coll, collnet, nvls, p2p, p2p_per_peer} (first
summary line), init_complete, warnings [{line_no, text}], warnings_total, errors [{line_no, text,
kind}] (kinds: ib_completion, remote_process_exited, unhandled_system_error, internal_error,
unhandled_cuda_error, cuda_failure, connection_closed, nccl_failure, nccl_error, watchdog_timeout,
watchdog_exception, watchdog_abort), errors_total, socket_fallback_reasons (only when a socket
transport is in evidence: "NET/IB : No device found", "NCCL_IB_DISABLE=1", "NCCL_NET=Socket"),
lines, nccl_lines (occurrences of "NCCL INFO"/"NCCL WARN"/"NCCL TRACE" plus untagged
banner/watchdog/failure lines)}.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass
from typing import BinaryIO, Iterable, Optional

from .base import ANSI_RE, ParseError

SOURCE = "nccl_debug"

MAX_LIST = 200
MAX_SAMPLE = 20
MAX_GDR_LINES = 8
MAX_HOSTS = 4096
MAX_DEVS_PER_HOST = 256
MAX_RANKS = 4096
MAX_NET_DEVICES = 64
MAX_ENV = 128
MAX_TRANSPORTS = 32
MAX_NETWORKS = 8
MAX_TEXT = 500
MAX_CACHE = 65536

NO_NCCL = "no NCCL log lines (NCCL INFO/WARN) found"


@dataclass(frozen=True)
class Rank:
    rank: int
    host: Optional[str]
    cuda_dev: Optional[int]
    bus_id: Optional[str]
    nranks: Optional[int]


@dataclass(frozen=True)
class NetDevice:
    name: str
    port: Optional[int]
    link_layer: Optional[str]
    index: Optional[int]
    kind: str
    address: Optional[str]
    sharp: bool


@dataclass(frozen=True)
class LogLine:
    line_no: int
    text: str


@dataclass(frozen=True)
class ErrorLine:
    line_no: int
    text: str
    kind: str


@dataclass(frozen=True)
class Result:
    source: str = SOURCE
    nccl_version: Optional[str] = None
    cuda_version: Optional[str] = None
    cuda_driver_version: Optional[str] = None
    hosts: tuple[str, ...] = ()
    cuda_devs: dict = None  # type: ignore[assignment]
    nranks: Optional[int] = None
    nranks_from: Optional[str] = None
    ranks: tuple[Rank, ...] = ()
    network: Optional[str] = None
    networks: tuple[str, ...] = ()
    net_plugin: Optional[str] = None
    net_plugin_path: Optional[str] = None
    collnet_plugin: Optional[str] = None
    net_devices: tuple[NetDevice, ...] = ()
    gid_index: Optional[int] = None
    gdr: Optional[bool] = None
    gdr_lines: tuple[LogLine, ...] = ()
    transports: dict = None  # type: ignore[assignment]
    connections_sample: tuple[LogLine, ...] = ()
    env: dict = None  # type: ignore[assignment]
    channels: dict = None  # type: ignore[assignment]
    init_complete: bool = False
    warnings: tuple[LogLine, ...] = ()
    warnings_total: int = 0
    errors: tuple[ErrorLine, ...] = ()
    errors_total: int = 0
    socket_fallback_reasons: tuple[str, ...] = ()
    lines: int = 0
    nccl_lines: int = 0


PREFIX_RE = re.compile(r"([^\s:\[\]]+):\d+:\d+\s+\[(\d+)\]")
VERSION_RE = re.compile(r"NCCL version (\d+\.\d+\.\d+)(?:[-+.][^\s]*?cuda(\d+\.\d+))?")
COMM_RE = re.compile(
    r"comm 0x[0-9a-fA-F]+ rank (\d+) n[Rr]anks (\d+)(?: cudaDev (\d+))?(?: nvmlDev \d+)?(?: busId ([0-9a-fA-F]+))?")
ENV_RE = re.compile(r"(NCCL_[A-Z0-9_]+) set (?:by environment )?to (.*)")
DEVICE_RE = re.compile(r"\[(\d+)\]([^\s:\[\]]+):(\S+)")
GID_RE = re.compile(r"GID index (\d+)|\bGID (\d+) \(")
CHANNELS_RE = re.compile(r"(\d+) (coll|collnet|nvls|p2p) channels(?: per peer)?")
DRIVER_RE = re.compile(r"(?:cudaDriverVersion|CUDA Driver version)\s*:?\s*(\d+)")
PLUGIN_RE = re.compile(r"Loaded net plugin (.+?)(?: \(v\d+\))?$")
COLLNET_PLUGIN_RE = re.compile(r"Loaded collnet plugin (.+?)(?: \(v\d+\))?$")
P2P_PLUGIN_RE = re.compile(r"P2P plugin (?:v\d+ )?(\S+)")
TOPO_FILE_RE = re.compile(r"Setting NCCL_TOPO_FILE environment variable to (\S+)")


def _driver_version(n: int) -> str:
    return f"{n // 1000}.{(n % 1000) // 10}"


def normalise_transport(path: str) -> str:
    """'NET/IB/0/GDRDMA' -> 'NET/IB/GDRDMA', 'P2P/IPC/read' -> 'P2P/IPC', 'SHM/direct/direct' -> 'SHM'."""
    parts = path.strip().split("/")
    top = parts[0]
    if top == "NET" and len(parts) > 1:
        key = "NET/" + parts[1]
        return key + "/GDRDMA" if "GDRDMA" in parts[2:] else key
    if top == "P2P" and len(parts) > 1:
        return "P2P/" + parts[1]
    if top == "SHM":
        return "SHM"
    if top.upper() == "COLLNET":
        return "CollNet"
    if top == "NVLS":
        return "NVLS"
    return top[:40]


def _end_point(tok: str) -> tuple[Optional[int], Optional[str]]:
    """'8[20000]' -> (8, '20000'); '35' -> (35, None)."""
    b = tok.find("[")
    if b < 0:
        return (int(tok), None) if tok.isdigit() else (None, None)
    num = tok[:b]
    inner = tok[b + 1 : -1] if tok.endswith("]") else tok[b + 1 :]
    return (int(num) if num.isdigit() else None), (inner or None)


def _classify_error(s: str) -> Optional[str]:
    if "Got completion from peer" in s:
        return "ib_completion"
    if "remote process exited" in s:
        return "remote_process_exited"
    if "unhandled system error" in s:
        return "unhandled_system_error"
    if "internal error" in s:
        return "internal_error"
    if "unhandled cuda error" in s:
        return "unhandled_cuda_error"
    if "Cuda failure" in s:
        return "cuda_failure"
    if "Connection closed by remote peer" in s:
        return "connection_closed"
    if "NCCL failure" in s:
        return "nccl_failure"
    return None


class _State:
    """Mutable accumulator for one log; `result()` freezes it."""

    def __init__(self) -> None:
        self.n = 0
        self.nccl = 0
        self.version: Optional[str] = None
        self.cuda: Optional[str] = None
        self.driver: Optional[str] = None
        self.hosts: set[str] = set()
        self.cuda_devs: dict[str, set[int]] = {}
        self.comm_nranks: Optional[int] = None
        self.max_rank = -1
        self.ranks: dict[int, list] = {}
        self.network: Optional[str] = None
        self.networks: list[str] = []
        self.plugin_loaded: Optional[str] = None
        self.plugin_p2p: Optional[str] = None
        self.plugin_ofi = False
        self.plugin_path: Optional[str] = None
        self.collnet_plugin: Optional[str] = None
        self.devices: dict[tuple, NetDevice] = {}
        self.gid: Optional[int] = None
        self.gdr_on = False
        self.gdr_off = False
        self.gdr_lines: list[LogLine] = []
        self.transports: dict[str, int] = {}
        self.sample: list[LogLine] = []
        self.env: dict[str, str] = {}
        self.channels: dict[str, int] = {}
        self.init_complete = False
        self.warnings: list[LogLine] = []
        self.warnings_total = 0
        self.errors: list[ErrorLine] = []
        self.errors_total = 0
        self.ib_no_device = False
        self.prefix_cache: dict[str, tuple] = {}
        self.prefix_seen_b: set[bytes] = set()  # bytes engine: raw prefixes whose text is in prefix_cache
        self.conn_cache: dict[tuple, str] = {}
        self.host_tried: set[int] = set()
        self.partial = False
        self.comm_seen: set[str] = set()
        self.comm_seen_b: set[bytes] = set()  # bytes engine: raw comm keys whose text is in comm_seen
        self.seen_msgs: set[str] = set()
        self.seen_msgs_b: set[bytes] = set()  # bytes engine: raw messages whose text is in seen_msgs
        self.pending: list[ErrorLine] = []
        self.transport_cache: dict[str, str] = {}

    # ---- helpers -------------------------------------------------------------------------
    def prefix(self, pre: str) -> tuple:
        got = self.prefix_cache.get(pre)
        if got is None:
            m = PREFIX_RE.search(pre)
            got = (m.group(1), int(m.group(2))) if m else (None, None)
            if len(self.prefix_cache) >= MAX_CACHE:
                self.prefix_cache.clear()
                self.prefix_seen_b.clear()
            self.prefix_cache[pre] = got
            if got[0] is not None and len(self.hosts) < MAX_HOSTS:
                self.hosts.add(got[0])
            if got[0] in self.hosts and len(self.cuda_devs.get(got[0], ())) < MAX_DEVS_PER_HOST:
                self.cuda_devs.setdefault(got[0], set()).add(got[1])
        return got

    def add_rank(self, rank: int, host, dev, bus, nranks, from_comm: bool = False) -> None:
        """Record what a line says about a rank: comm (Init) lines win, otherwise first value seen."""
        if rank > self.max_rank:
            self.max_rank = rank
        rec = self.ranks.get(rank)
        if rec is None:
            if len(self.ranks) >= MAX_RANKS:
                return
            self.ranks[rank] = [host, dev, bus, nranks, from_comm]
            return
        if from_comm and not rec[4]:
            for i, v in enumerate((host, dev, bus, nranks)):
                if v is not None:
                    rec[i] = v
            rec[4] = True
            return
        for i, v in enumerate((host, dev, bus, nranks)):
            if rec[i] is None and v is not None:
                rec[i] = v

    def count_transport(self, key: str) -> None:
        t = self.transports
        if key in t:
            t[key] += 1
        elif len(t) < MAX_TRANSPORTS:
            t[key] = 1

    def add_error(self, line_no: int, text: str, kind: str) -> None:
        """Errors of a chunk come from several scans: gathered here, put in line order by flush_errors."""
        self.errors_total += 1
        if len(self.errors) + len(self.pending) < MAX_LIST:
            self.pending.append(ErrorLine(line_no, text[:MAX_TEXT], kind))

    def flush_errors(self) -> None:
        if self.pending:
            self.pending.sort(key=lambda e: e.line_no)
            self.errors.extend(self.pending[: MAX_LIST - len(self.errors)])
            self.pending = []

    # ---- line kinds ----------------------------------------------------------------------
    def count_connections(self, chunk, base: int, word: str, tail: str, cnt: int) -> None:
        """Count `cnt` connection lines with this text; the first of each distinct text is read
        once (new_connection) and its transport key cached."""
        ck = (word == "CollNet", tail)
        key = self.conn_cache.get(ck)
        if key is None:
            key = self.new_connection(chunk, base, word, tail, cnt)
            if len(self.conn_cache) >= MAX_CACHE:
                self.conn_cache.clear()
            self.conn_cache[ck] = key
        if key:
            t = self.transports
            if key in t:
                t[key] += cnt
            elif len(t) < MAX_TRANSPORTS:
                t[key] = cnt

    def new_connection(self, chunk: str, base: int, word: str, tail: str, count: int) -> str:
        """First sight of a connection line's text after the channel number: classify, record ranks.

        The line's prefix (host, device) is looked up only while the sample is filling or the local
        rank has no host yet, so a huge log pays this once per rank, not once per line."""
        collnet = word == "CollNet"
        vi = tail.find(" via ")
        if vi < 0:
            return ""  # ring order line ("Channel 00/02 :    0   1", "Ring 00 : 1 -> 0 -> 1")
        path = tail[vi + 5 :].strip()
        key = self.transport_cache.get(path)
        if key is None:
            key = normalise_transport(path)
            if len(self.transport_cache) < MAX_CACHE:
                self.transport_cache[path] = key
        toks = tail[:vi].split()
        ends: list[tuple] = []  # (rank, bracket, local)
        if collnet:
            if toks:
                r, _ = _end_point(toks[0])
                if r is not None:
                    ends.append((r, None, True))
        elif len(toks) >= 3 and toks[1] == "->":
            a, ab = _end_point(toks[0])
            b, bb = _end_point(toks[2])
            local_is_b = len(toks) > 3 and toks[3] == "[receive]"
            if a is not None:
                ends.append((a, ab, not local_is_b))
            if b is not None:
                ends.append((b, bb, local_is_b))
        host = dev = None
        want_sample = len(self.sample) < MAX_SAMPLE
        local = next((e[0] for e in ends if e[2]), None)
        want_host = (local is not None and local not in self.host_tried and len(self.host_tried) < MAX_RANKS
                     and (local not in self.ranks or self.ranks[local][0] is None))
        if want_sample or want_host:
            if isinstance(chunk, bytes):  # an ASCII chunk of the bytes engine: same positions, same text
                needle_b = b": " + tail.encode("ascii")
                pos = chunk.find(needle_b + b"\n")
                if pos < 0:
                    pos = chunk.find(needle_b)
                if pos >= 0:
                    ls = chunk.rfind(b"\n", 0, pos) + 1
                    le = chunk.find(b"\n", pos)
                    line = chunk[ls : le if le >= 0 else len(chunk)].decode("ascii").strip()
                    ti = chunk.rfind(b"NCCL ", ls, pos)
                    host, dev = self.prefix(chunk[ls:ti].decode("ascii") if ti >= 0 else "")
                    if want_sample:
                        self.sample.append(LogLine(base + chunk.count(b"\n", 0, ls) + 1, line[:MAX_TEXT]))
            else:
                needle = ": " + tail
                pos = chunk.find(needle + "\n")
                if pos < 0:
                    pos = chunk.find(needle)
                if pos >= 0:
                    ls = chunk.rfind("\n", 0, pos) + 1
                    le = chunk.find("\n", pos)
                    line = chunk[ls : le if le >= 0 else len(chunk)].strip()
                    ti = chunk.rfind("NCCL ", ls, pos)
                    host, dev = self.prefix(chunk[ls:ti] if ti >= 0 else "")
                    if want_sample:
                        self.sample.append(LogLine(base + chunk.count("\n", 0, ls) + 1, line[:MAX_TEXT]))
            if local is not None:
                self.host_tried.add(local)
        for r, br, is_local in ends:
            cdev, bus = None, None
            if br is not None:
                if len(br) <= 2 and br.isdigit():
                    cdev = int(br)
                else:
                    bus = br
            if is_local:
                self.add_rank(r, host, cdev if cdev is not None else dev, bus, None)
            else:
                self.add_rank(r, None, cdev, bus, None)
        if "GDRDMA" in key:
            self.gdr_on = True
        return key

    def net_using(self, msg: str, kind: str) -> None:
        body = msg.split(":", 1)[1] if ":" in msg else msg
        body = body.split(";", 1)[0]
        for m in DEVICE_RE.finditer(body):
            idx, name, spec = int(m.group(1)), m.group(2), m.group(3)
            port = ll = addr = None
            sharp = False
            if kind == "ib":
                bits = spec.split("/")
                port = int(bits[0]) if bits[0].isdigit() else None
                for b in bits[1:]:
                    if b == "IB":
                        ll = "IB"
                    elif b == "RoCE":
                        ll = "RoCE"
                    elif b == "SHARP":
                        sharp = True
            else:
                addr = spec[:-3] if spec.endswith("<0>") else re.sub(r"<\d+>$", "", spec)
            dkey = (kind, name, port)
            if dkey not in self.devices and len(self.devices) < MAX_NET_DEVICES:
                self.devices[dkey] = NetDevice(name, port, ll, idx, kind, addr, sharp)

    def info(self, line_no: int, line: str, pre: str, msg: str) -> None:
        c = msg[:1]
        if c == "C" and msg.startswith("Connected NVLS"):
            self.prefix(pre)
            self.count_transport("NVLS")
            return
        self.prefix(pre)
        if c == "N":
            if msg.startswith("NCCL_"):
                m = ENV_RE.match(msg)
                if m:
                    val = m.group(2).strip()
                    if val.endswith("."):
                        val = val[:-1]
                    if m.group(1) not in self.env and len(self.env) < MAX_ENV:
                        self.env[m.group(1)] = val
                    if m.group(1) == "NCCL_IB_GID_INDEX" and self.gid is None and val.lstrip("-").isdigit():
                        self.gid = int(val)
                return
            if msg.startswith("NCCL version"):
                self.banner(msg)
                return
            if msg.startswith("NET/IB : Using") or msg.startswith("NET/IB: Using"):
                self.net_using(msg, "ib")
                return
            if msg.startswith("NET/Socket : Using") or msg.startswith("NET/Socket: Using"):
                self.net_using(msg, "socket")
                return
            if msg.startswith("NET/IB : No device found") or msg.startswith("NET/IB: No device found"):
                self.ib_no_device = True
                return
            if msg.startswith("NET/OFI"):
                self.plugin_ofi = True
                m = TOPO_FILE_RE.search(msg)
                if m and "NCCL_TOPO_FILE" not in self.env and len(self.env) < MAX_ENV:
                    self.env["NCCL_TOPO_FILE"] = m.group(1)
                return
            if msg.startswith("NET/Plugin"):
                m = PLUGIN_RE.search(msg)
                if m and self.plugin_loaded is None:
                    self.plugin_loaded = m.group(1).strip()
                m = COLLNET_PLUGIN_RE.search(msg)
                if m and self.collnet_plugin is None:
                    self.collnet_plugin = m.group(1).strip()
                return
        elif c == "U":
            if msg.startswith("Using network "):
                net = msg[14:].strip()
                if self.network is None:
                    self.network = net
                if net not in self.networks and len(self.networks) < MAX_NETWORKS:
                    self.networks.append(net)
                return
        elif c == "c":
            if msg.startswith("comm "):
                self.comm(msg, pre)
                return
            if msg.startswith("cudaDriverVersion"):
                self.driver_line(msg)
                return
        elif c == "n":
            if msg.startswith("ncclCommInitRank comm "):
                self.comm(msg[17:], pre)
                return
        elif c == "P":
            if msg.startswith("P2P plugin "):
                m = P2P_PLUGIN_RE.match(msg)
                if m and self.plugin_p2p is None:
                    self.plugin_p2p = m.group(1)
                return
            if msg.startswith("Plugin Path : "):
                if self.plugin_path is None:
                    self.plugin_path = msg[14:].strip()[:MAX_TEXT]
                return
        elif c.isdigit():
            if " coll channels" in msg:
                if not self.channels:
                    for m in CHANNELS_RE.finditer(msg):
                        k = m.group(2) + ("_per_peer" if m.group(0).endswith("per peer") else "")
                        self.channels.setdefault(k, int(m.group(1)))
                return
        elif c == "g" or c == "G" or c == "D":
            pass
        if "GID" in msg and self.gid is None:
            m = GID_RE.search(msg)
            if m:
                self.gid = int(m.group(1) or m.group(2))
            return
        if "CUDA Driver" in msg:
            self.driver_line(msg)
            return
        if "Init COMPLETE" in msg:
            self.init_complete = True

    def comm(self, msg: str, pre: str) -> None:
        # every communicator repeats "rank r nranks n cudaDev d ... busId b" with a new address: read it once
        r = msg.find(" rank ")
        c = msg.find(" commId", r)
        key = msg[r:c] if c > 0 else msg[r:]
        done = "Init COMPLETE" in msg
        if done:
            self.init_complete = True
        if key in self.comm_seen:
            return
        if len(self.comm_seen) >= MAX_CACHE:
            self.comm_seen.clear()
            self.comm_seen_b.clear()
        self.comm_seen.add(key)
        m = COMM_RE.match(msg)
        if not m:
            return
        rank, nranks = int(m.group(1)), int(m.group(2))
        dev = int(m.group(3)) if m.group(3) else None
        host, pdev = self.prefix(pre)
        self.add_rank(rank, host, dev if dev is not None else pdev, m.group(4), nranks)
        if self.comm_nranks is None or nranks > self.comm_nranks:
            self.comm_nranks = nranks
        if "Init COMPLETE" in msg:
            self.init_complete = True

    def driver_line(self, msg: str) -> None:
        m = DRIVER_RE.search(msg)
        if m and self.driver is None:
            self.driver = _driver_version(int(m.group(1)))

    def banner(self, s: str) -> None:
        m = VERSION_RE.search(s)
        if m and self.version is None:
            self.version = m.group(1)
            if m.group(2):
                self.cuda = m.group(2)

    def warn(self, line_no: int, line: str, pre: str) -> None:
        self.prefix(pre)
        self.warnings_total += 1
        if len(self.warnings) < MAX_LIST:
            self.warnings.append(LogLine(line_no, line[:MAX_TEXT]))
        kind = _classify_error(line)
        if kind:
            self.add_error(line_no, line, kind)

    def other(self, line_no: int, line: str) -> bool:
        """A line with "NCCL" but no INFO/WARN tag: banner, c10d watchdog, test failure. True if NCCL output."""
        if "ProcessGroupNCCL" in line:
            if "Watchdog caught collective operation timeout" in line or "Timeout at NCCL work" in line:
                self.add_error(line_no, line, "watchdog_timeout")
            elif "detected by watchdog" in line:
                self.add_error(line_no, line, "watchdog_exception")
            elif "Some NCCL operations have failed or timed out" in line:
                self.add_error(line_no, line, "watchdog_abort")
            else:
                kind = _classify_error(line)
                if kind:
                    self.add_error(line_no, line, kind)
            return True
        if "NCCL failure" in line or "NCCL error" in line:
            kind = _classify_error(line) or ("nccl_failure" if "NCCL failure" in line else "nccl_error")
            self.add_error(line_no, line, kind)
            return True
        i = line.find("NCCL version ")
        if i >= 0:
            before = line[:i].strip()
            if not before or (len(before) < 80 and before[-1] in ":]" and "error" not in before.lower()):
                self.banner(line[i:])
                return True
        return False

    # ---- freeze ---------------------------------------------------------------------------
    def result(self) -> Result:
        if self.nccl == 0:
            raise ParseError(NO_NCCL, self.n)
        if self.comm_nranks is not None:
            nranks, nfrom = self.comm_nranks, "comm"
        elif self.max_rank >= 0:
            nranks, nfrom = self.max_rank + 1, "max_rank"
        else:
            nranks, nfrom = None, None
        ranks = tuple(
            Rank(r, v[0], v[1], v[2], v[3])
            for r, v in sorted(self.ranks.items())
            if nranks is None or r < nranks
        )
        gdr = True if self.gdr_on else (False if self.gdr_off else None)
        plugin = self.plugin_loaded or self.plugin_p2p or ("aws-ofi-nccl" if self.plugin_ofi else None)
        socket_seen = (self.network == "Socket" or any(k.startswith("NET/Socket") for k in self.transports)
                       or any(d.kind == "socket" for d in self.devices.values()))
        reasons: list[str] = []
        if socket_seen:
            if self.ib_no_device:
                reasons.append("NET/IB : No device found")
            if self.env.get("NCCL_IB_DISABLE") == "1":
                reasons.append("NCCL_IB_DISABLE=1")
            if self.env.get("NCCL_NET", "").lower() == "socket":
                reasons.append("NCCL_NET=Socket")
        cuda = self.cuda or self.driver
        return Result(
            nccl_version=self.version,
            cuda_version=cuda,
            cuda_driver_version=self.driver,
            hosts=tuple(sorted(self.hosts)),
            cuda_devs={h: sorted(d) for h, d in sorted(self.cuda_devs.items())},
            nranks=nranks,
            nranks_from=nfrom,
            ranks=ranks,
            network=self.network,
            networks=tuple(self.networks),
            net_plugin=plugin,
            net_plugin_path=self.plugin_path,
            collnet_plugin=self.collnet_plugin,
            net_devices=tuple(self.devices.values()),
            gid_index=self.gid,
            gdr=gdr,
            gdr_lines=tuple(self.gdr_lines),
            transports=dict(sorted(self.transports.items())),
            connections_sample=tuple(self.sample),
            env=dict(sorted(self.env.items())),
            channels=dict(self.channels),
            init_complete=self.init_complete,
            warnings=tuple(self.warnings),
            warnings_total=self.warnings_total,
            errors=tuple(self.errors),
            errors_total=self.errors_total,
            socket_fallback_reasons=tuple(reasons),
            lines=self.n,
            nccl_lines=self.nccl,
        )


# connection lines, the bulk of a big log: counted per distinct text after the channel number
CONN_RE = re.compile(r"NCCL INFO (Channel|Ring|CollNet) [^:\n]*: ([^\n]*)")
# the other INFO/TRACE lines the parser reads (proxy, topology and tuning chatter is skipped)
_INFO_STARTS = (r"NCCL|Using network|comm 0x(?![0-9a-fA-F]+ rank \d+ nRanks)|ncclCommInitRank|cudaDriverVersion|"
                r"CUDA Driver|P2P plugin|Plugin Path|Connected NVLS|Bootstrap|Trees|\d+ coll channels")
INFO_RE = re.compile(r"NCCL (?:INFO|TRACE) ((?:NET/(?!IB: Dev )|" + _INFO_STARTS + r")[^\n]*)")
# once the GID index is known, the per-QP "NET/IB: IbDev 0 Port 1 qpn 123 mtu 5 GID 3 (...)" lines are skipped
INFO_NO_GID_RE = re.compile(r"NCCL (?:INFO|TRACE) ((?:NET/(?!IB: (?:Dev|IbDev) )|" + _INFO_STARTS + r")[^\n]*)")
OTHER_MARKS = ("ProcessGroupNCCL", "NCCL failure", "NCCL error", "NCCL version")
CHUNK = 1 << 22


class _LineNo:
    """Line numbers of increasing positions in a chunk (str or bytes), counted incrementally."""

    def __init__(self, chunk, base: int) -> None:
        self.chunk, self.pos, self.line = chunk, 0, base + 1
        self.nl = b"\n" if isinstance(chunk, bytes) else "\n"

    def at(self, pos: int) -> int:
        if pos < self.pos:
            self.pos, self.line = 0, self.line - self.chunk.count(self.nl, 0, self.pos)
        self.line += self.chunk.count(self.nl, self.pos, pos)
        self.pos = pos
        return self.line


def _line_at(chunk, pos: int) -> tuple[int, int]:
    nl = b"\n" if isinstance(chunk, bytes) else "\n"
    ls = chunk.rfind(nl, 0, pos) + 1
    le = chunk.find(nl, pos)
    return ls, (le if le >= 0 else len(chunk))


def _feed(st: _State, chunk: str) -> None:
    """Read one chunk of whole lines (the last chunk may end without a newline)."""
    if "\r" in chunk:
        chunk = chunk.replace("\r\n", "\n").replace("\r", "\n")
    if "\x1b" in chunk:
        chunk = ANSI_RE.sub("", chunk)
    if "\t" in chunk:
        chunk = chunk.replace("\t", " ")
    base = st.n
    st.n += chunk.count("\n")
    if not chunk.endswith("\n"):
        st.partial = True
    if "NCCL" not in chunk:
        return
    n_info = chunk.count("NCCL INFO")
    n_warn = chunk.count("NCCL WARN") if "NCCL WARN" in chunk else 0
    n_trace = chunk.count("NCCL TRACE") if "NCCL TRACE" in chunk else 0
    st.nccl += n_info + n_warn + n_trace
    # "NCCL" mentions that are neither a tag nor an NCCL_* variable: banner, watchdog, failures
    untagged = chunk.count("NCCL") - n_info - n_warn - n_trace - chunk.count("NCCL_")
    # connections: one Counter pass in C, Python work only per distinct text
    for (word, tail), cnt in Counter(CONN_RE.findall(chunk)).items():
        st.count_connections(chunk, base, word, tail, cnt)
    # GPU Direct RDMA evidence
    if "GPU Direct RDMA" in chunk:
        if "GPU Direct RDMA Enabled" in chunk:
            st.gdr_on = True
        if "GPU Direct RDMA Disabled" in chunk:
            st.gdr_off = True
        if len(st.gdr_lines) < MAX_GDR_LINES:
            ln = _LineNo(chunk, base)
            pos = chunk.find("GPU Direct RDMA")
            while pos >= 0 and len(st.gdr_lines) < MAX_GDR_LINES:
                ls, le = _line_at(chunk, pos)
                st.gdr_lines.append(LogLine(ln.at(ls), chunk[ls:le].strip()[:MAX_TEXT]))
                pos = chunk.find("GPU Direct RDMA", le)
    # the INFO lines that carry facts
    # the same message from many ranks has its effect once (all are first-wins), only the host is new
    seen = st.seen_msgs
    pcache = st.prefix_cache
    prefix = st.prefix
    info = st.info
    rfind = chunk.rfind
    for m in (INFO_RE if st.gid is None else INFO_NO_GID_RE).finditer(chunk):
        start = m.start()
        pre = chunk[rfind("\n", 0, start) + 1 : start]
        msg = m.group(1)
        if msg in seen:
            if pre not in pcache:
                prefix(pre)
            continue
        if len(seen) >= MAX_CACHE:
            seen.clear()
            st.seen_msgs_b.clear()
        if not msg.startswith("Connected NVLS"):
            seen.add(msg)
        info(0, "", pre, msg.strip())
    # WARN lines
    if "NCCL WARN" in chunk:
        ln = _LineNo(chunk, base)
        pos = chunk.find("NCCL WARN")
        while pos >= 0:
            ls, le = _line_at(chunk, pos)
            st.warn(ln.at(ls), chunk[ls:le].strip(), chunk[ls:pos])
            pos = chunk.find("NCCL WARN", le)
    # NCCL lines without a tag: bare banner, c10d watchdog, nccl-tests / PyTorch failures
    starts: set[int] = set()
    for mark in OTHER_MARKS if untagged > 0 else ():
        pos = chunk.find(mark)
        while pos >= 0:
            ls, le = _line_at(chunk, pos)
            starts.add(ls)
            pos = chunk.find(mark, le)
    if starts:
        ln = _LineNo(chunk, base)
        for ls in sorted(starts):
            _, le = _line_at(chunk, ls)
            line = chunk[ls:le]
            if "NCCL INFO" in line or "NCCL WARN" in line or "NCCL TRACE" in line:
                continue
            if st.other(ln.at(ls), line.strip()):
                st.nccl += 1
    st.flush_errors()


# ---- the bytes engine (parse_binary) ------------------------------------------------------------
# An ASCII chunk is scanned as bytes, with no decode: only the few lines that carry facts are
# decoded, and every decision on them is the str engine's own code, so the result is that of
# `_feed(st, chunk.decode())`. A chunk with any non-ASCII byte is decoded ("replace") and given to
# the str engine, since there text and byte positions differ.
B_ANSI_RE = re.compile(ANSI_RE.pattern.encode())
# connection lines, keyed with their channel number: one group, so no tuple per line
B_CONN_RE = re.compile(rb"NCCL INFO ((?:Channel|Ring|CollNet) [^:\n]*: [^\n]*)")
# one pass for the fact lines (group 1: INFO_RE's group, its starts nested by first letter, which
# the regex engine tries faster) and the rare tags: WARN (as "NCCL WAR" before an "N", so that no
# tag hides the "NCCL" of another), TRACE and the untagged marks failure/error/version (the
# ProcessGroupNCCL mark is looked for by `_digest`); all start at the literal "NCCL "
_B_STARTS = (rb"N(?:ET/(?!IB: %s )|CCL)|Using network|c(?:omm 0x(?![0-9a-fA-F]+ rank \d+ nRanks)|udaDriverVersion)|"
             rb"ncclCommInitRank|C(?:UDA Driver|onnected NVLS)|P(?:2P plugin|lugin Path)|Bootstrap|Trees|"
             rb"\d+ coll channels")
B_SCAN_RE = re.compile(rb"NCCL (?:(?:INFO |TRACE )((?:" + _B_STARTS % rb"Dev" + rb")[^\n]*)"
                       rb"|WAR(?=N)|TRACE|failure|error|version)")
B_SCAN_NO_GID_RE = re.compile(rb"NCCL (?:(?:INFO |TRACE )((?:" + _B_STARTS % rb"(?:Dev|IbDev)" + rb")[^\n]*)"
                              rb"|WAR(?=N)|TRACE|failure|error|version)")
B_OTHER_MARKS = tuple(m.encode() for m in OTHER_MARKS)
B_WARN = b"NCCL WARN"
B_TRACE = b"NCCL TRACE"
B_GDR = b"GPU Direct RDMA"


def _normalise_b(c: bytes) -> bytes:
    if b"\r" in c:
        c = c.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"\x1b" in c:
        c = B_ANSI_RE.sub(b"", c)
    if b"\t" in c:
        c = c.replace(b"\t", b" ")
    return c


def _digest(c: bytes) -> tuple:
    """The state-free bulk passes over a normalised ASCII chunk (also run in a worker process):
    (lines, has "NCCL", "NCCL INFO"/"NCCL WARN"/"NCCL TRACE" counts, the connection keys with their
    counts in order of first appearance, bits: GPU Direct RDMA 1 any / 2 Enabled / 4 Disabled,
    8 "ProcessGroupNCCL")."""
    if b"NCCL" not in c:
        return c.count(b"\n"), False, 0, 0, 0, [], 0
    gdr = 8 if b"ProcessGroupNCCL" in c else 0
    if B_GDR in c:
        gdr |= 1 | (2 if b"GPU Direct RDMA Enabled" in c else 0) | (4 if b"GPU Direct RDMA Disabled" in c else 0)
    return (c.count(b"\n"), True, c.count(b"NCCL INFO"), c.count(B_WARN), c.count(B_TRACE),
            list(Counter(B_CONN_RE.findall(c)).items()), gdr)


def _feed_bytes(st: _State, raw: bytes, digest: Optional[tuple] = None) -> None:
    """Read one chunk of whole lines as bytes; same effect on `st` as `_feed(st, raw.decode(...))`.

    `digest` is `_digest` of the normalised chunk when a worker already computed it."""
    if not raw.isascii():
        _feed(st, raw.decode("utf-8", "replace"))
        return
    c = _normalise_b(raw)
    n_lines, has_nccl, n_info, n_warn, n_trace, items, gdr = digest if digest is not None else _digest(c)
    base = st.n
    st.n += n_lines
    if not c.endswith(b"\n"):
        st.partial = True
    if not has_nccl:
        return
    st.nccl += n_info + n_warn + n_trace
    # connections
    for kb, cnt in items:
        k = kb.decode("ascii")
        st.count_connections(c, base, k[: k.index(" ")], k[k.index(":") + 2 :], cnt)
    # GPU Direct RDMA evidence
    if gdr & 1:
        if gdr & 2:
            st.gdr_on = True
        if gdr & 4:
            st.gdr_off = True
        if len(st.gdr_lines) < MAX_GDR_LINES:
            ln = _LineNo(c, base)
            pos = c.find(B_GDR)
            while pos >= 0 and len(st.gdr_lines) < MAX_GDR_LINES:
                ls, le = _line_at(c, pos)
                st.gdr_lines.append(LogLine(ln.at(ls), c[ls:le].decode("ascii").strip()[:MAX_TEXT]))
                pos = c.find(B_GDR, le)
    # fact lines, and the positions of the rare tags. Every effect of a fact line is idempotent, so
    # a line whose message is known (or a comm line whose rank record is known) only adds its
    # prefix's host; raw bytes known as text skip the decode. The scan finds exactly INFO_RE's
    # matches (a tag match cannot overlap the "NCCL" of another line's tag).
    seen, seen_b = st.seen_msgs, st.seen_msgs_b
    pcache, pseen_b = st.prefix_cache, st.prefix_seen_b
    comm_seen_b = st.comm_seen_b
    prefix = st.prefix
    info = st.info
    rfind = c.rfind
    warns: list[int] = []
    marks = bool(gdr & 8)
    for m in (B_SCAN_RE if st.gid is None else B_SCAN_NO_GID_RE).finditer(c):
        msg_b = m.group(1)
        start = m.start()
        if msg_b is None:  # a tag: "NCCL WAR(N)", TRACE (counted already), or a mark
            n = m.end() - start
            if n == 8:
                warns.append(start)
            elif n != 10 or c[start + 5] != 84:
                marks = True
            continue
        kb = None
        known = msg_b in seen_b
        if not known and msg_b[-1] > 32 and msg_b.startswith((b"comm ", b"ncclCommInitRank comm ")):
            # the key comm() reads (the message has nothing to strip): a known key only sets init_complete
            mm = msg_b[17:] if msg_b[0] == 110 else msg_b
            r = mm.find(b" rank ")
            e = mm.find(b" commId", r)
            kb = mm[r:e] if e > 0 else mm[r:]
            if kb in comm_seen_b:
                if b"Init COMPLETE" in msg_b:
                    st.init_complete = True
                known = True
        pre_b = c[rfind(b"\n", 0, start) + 1 : start]
        if known:
            if pre_b not in pseen_b:
                pre = pre_b.decode("ascii")
                if pre not in pcache:
                    prefix(pre)
                pseen_b.add(pre_b)
            continue
        msg = msg_b.decode("ascii")
        pre = pre_b.decode("ascii")
        if msg in seen:
            if pre not in pcache:
                prefix(pre)
            continue
        if len(seen) >= MAX_CACHE:
            seen.clear()
            seen_b.clear()
        if not msg.startswith("Connected NVLS"):
            seen.add(msg)
            seen_b.add(msg_b)
        info(0, "", pre, msg.strip())
        if kb is not None and kb.decode("ascii") in st.comm_seen:
            comm_seen_b.add(kb)
    # WARN lines: the first of each line. The tags found are all of them unless one sits inside a
    # fact line or two overlap ("NCCL WARNCCL WARN"); then search as the str engine does
    if n_warn:
        ln = _LineNo(c, base)
        if len(warns) != n_warn or any(c.startswith(b"NCCL", p + 8) for p in warns):
            warns = []
            pos = c.find(B_WARN)
            while pos >= 0:
                warns.append(pos)
                pos = c.find(B_WARN, _line_at(c, pos)[1])
        le = -1
        for pos in warns:
            if pos < le:
                continue
            ls, le = _line_at(c, pos)
            st.warn(ln.at(ls), c[ls:le].decode("ascii").strip(), c[ls:pos].decode("ascii"))
    # NCCL lines without a tag, only when the str engine would look (untagged "NCCL" mentions)
    if marks and c.count(b"NCCL") - n_info - n_warn - n_trace - c.count(b"NCCL_") > 0:
        starts: set[int] = set()
        for mark in B_OTHER_MARKS:
            pos = c.find(mark)
            while pos >= 0:
                ls, le = _line_at(c, pos)
                starts.add(ls)
                pos = c.find(mark, le)
        ln = _LineNo(c, base)
        for ls in sorted(starts):
            _, le = _line_at(c, ls)
            line = c[ls:le]
            if b"NCCL INFO" in line or B_WARN in line or B_TRACE in line:
                continue
            if st.other(ln.at(ls), line.decode("ascii").strip()):
                st.nccl += 1
    st.flush_errors()


# ---- a worker process for the state-free passes of a big regular file ------------------------
PARALLEL_MIN_BYTES = 64 << 20  # files from this size get a worker process (None: never)


def _pread_full(fd: int, n: int, off: int) -> bytes:
    parts = []
    got = 0
    while got < n:
        b = os.pread(fd, n - got, off + got)
        if not b:
            break
        parts.append(b)
        got += len(b)
    return b"".join(parts)


def _worker(fd: int, off: int, wfd: int) -> None:
    """Child: cut the file exactly as parse_binary does (read(CHUNK) + readline(CHUNK)) with pread, so
    the parent's file offset is untouched, and send (length, last bytes, digest) per chunk."""
    import pickle

    with os.fdopen(wfd, "wb") as out:
        chunk_size = CHUNK
        while True:
            data = _pread_full(fd, chunk_size, off)
            if not data:
                break
            if not data.endswith(b"\n"):
                extra = _pread_full(fd, chunk_size, off + len(data))
                i = extra.find(b"\n")
                data += extra[: i + 1] if i >= 0 else extra
            off += len(data)
            dg = _digest(_normalise_b(data)) if data.isascii() else None
            pickle.dump((len(data), data[-16:], dg), out, protocol=pickle.HIGHEST_PROTOCOL)
            out.flush()


class _Helper:
    """The parent's end of the worker: `get(chunk)` gives the chunk's digest, or None once anything
    is off (then the parent computes every digest itself)."""

    def __init__(self, pid: int, rfd: int) -> None:
        import pickle

        self.pid = pid
        self.load = pickle.load
        self.f = os.fdopen(rfd, "rb")

    def get(self, chunk: bytes) -> Optional[tuple]:
        if self.f is None:
            return None
        try:
            n, tail, dg = self.load(self.f)
            if n == len(chunk) and tail == chunk[-16:]:
                return dg
        except Exception:
            pass
        self.close()
        return None

    def close(self) -> None:
        if self.f is not None:
            try:
                self.f.close()
            except OSError:
                pass
            self.f = None
        if self.pid:
            import signal

            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            self.pid = 0


def _start_helper(handle) -> Optional[_Helper]:
    """A worker for a big regular file read through a plain buffered binary file object, when fork
    exists, two CPUs are usable and no other thread runs; else None (one process does everything)."""
    if PARALLEL_MIN_BYTES is None or not hasattr(os, "fork") or not hasattr(os, "pread"):
        return None
    if type(handle) is not io.BufferedReader or type(getattr(handle, "raw", None)) is not io.FileIO:
        return None
    try:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        if cpus < 2:
            return None
        import threading

        if threading.active_count() > 1:
            return None
        fd = handle.fileno()
        off = handle.tell()
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size - off < PARALLEL_MIN_BYTES:
            return None
        rfd, wfd = os.pipe()
    except (OSError, ValueError, AttributeError):
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(rfd)
        os.close(wfd)
        return None
    if pid == 0:  # the worker: never returns
        code = 0
        try:
            os.close(rfd)
            _worker(fd, off, wfd)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(wfd)
    return _Helper(pid, rfd)


def parse_binary(handle: BinaryIO) -> Result:
    """Parse an NCCL_DEBUG log from a file opened in binary mode (or any object with read/readline
    giving bytes), in constant memory; the same result as `parse(data.decode("utf-8", "replace"))`
    (and as `parse_lines` on the same file). Chunks are cut as parse_lines cuts them. A regular file
    of PARALLEL_MIN_BYTES or more gets a worker process for the line/connection counts."""
    st = _State()
    try:
        read = handle.read
        readline = handle.readline
    except AttributeError:
        raise ParseError("not a readable file") from None
    helper = _start_helper(handle)
    try:
        while True:
            try:
                chunk = read(CHUNK)
                if not chunk:
                    break
                if isinstance(chunk, str):  # a text-mode file after all
                    if not chunk.endswith("\n"):
                        chunk += readline(CHUNK)
                    if helper is not None:
                        helper.close()
                        helper = None
                    _feed(st, chunk)
                    continue
                chunk = bytes(chunk)
                if not chunk.endswith(b"\n"):
                    chunk += bytes(readline(CHUNK))
            except (OSError, ValueError, TypeError) as e:
                raise ParseError(f"cannot read the log: {e}", st.n) from None
            _feed_bytes(st, chunk, helper.get(chunk) if helper is not None else None)
    finally:
        if helper is not None:
            helper.close()
    if st.partial:
        st.n += 1
    return st.result()


def parse_lines(lines: Iterable[str]) -> Result:
    """Parse an iterable of log lines (an open text file, a list, a generator) in constant memory.

    Lines are gathered into chunks of about 4 MiB that are scanned with a few C-level passes; an
    open file is read in chunks directly."""
    st = _State()
    read = getattr(lines, "read", None)
    if callable(read):
        readline = lines.readline  # type: ignore[attr-defined]
        while True:
            chunk = read(CHUNK)
            if not chunk:
                break
            if isinstance(chunk, bytes):  # a file opened in binary mode: the bytes engine, same result
                chunk += readline(CHUNK) if not chunk.endswith(b"\n") else b""
                _feed_bytes(st, chunk)
                continue
            if not chunk.endswith("\n"):
                chunk += readline(CHUNK)  # bounded: a giant line is cut rather than held whole
            _feed(st, chunk)
    else:
        buf: list[str] = []
        size = 0
        for line in lines:
            if not isinstance(line, str):
                line = line.decode("utf-8", "replace") if isinstance(line, (bytes, bytearray)) else str(line)
            if not line.endswith("\n"):
                line += "\n"
            buf.append(line)
            size += len(line)
            if size >= CHUNK:
                _feed(st, "".join(buf))
                buf, size = [], 0
        if buf:
            _feed(st, "".join(buf))
    if st.partial:
        st.n += 1
    return st.result()


def parse(text: str) -> Result:
    """Parse a whole NCCL_DEBUG log held in memory (same engine as parse_lines)."""
    st = _State()
    start = 0
    end = len(text)
    while start < end:
        cut = start + CHUNK
        if cut >= end:
            cut = end
        else:
            nl = text.find("\n", cut)
            cut = end if nl < 0 else nl + 1
        _feed(st, text[start:cut])
        start = cut
    if st.partial:
        st.n += 1
    return st.result()


def sniff(text: str) -> float:
    """0.8 when NCCL INFO/WARN lines or c10d watchdog NCCL lines appear, else 0."""
    try:
        if "NCCL INFO" in text or "NCCL WARN" in text:
            return 0.8
        if "ProcessGroupNCCL" in text and ("Watchdog" in text or "NCCL work" in text):
            return 0.8
        if re.search(r"(?m)^\s*NCCL version \d+\.\d+\.\d+", text):
            return 0.5
    except Exception:
        return 0.0
    return 0.0
