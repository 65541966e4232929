"""What the lines of an NCCL_DEBUG log say, accumulated: `Facts` takes the decoded text of the lines
the scanner (reader.py) picks out -- fact lines, WARN lines, untagged banner / watchdog / failure
lines, the first line of each distinct connection text -- and `result()` freezes it into a Result.

Every fact is first-seen (comm/Init lines win for a rank's fields) and every effect of a line is
idempotent, so the reader may skip a line whose message it has already given here: the result does
not depend on where chunks are cut. Every list, dict and cache is bounded (records.py)."""

from __future__ import annotations

import re
from typing import Iterable, Optional

from ..base import is_digits
from . import classify
from .kinds import dispatch
from .connections import _bracket, _ends, normalise_transport  # noqa: F401  (normalise_transport: the package's API)
from .records import (IB_MTU_BYTES, MAX_CACHE, MAX_DEVS_PER_HOST, MAX_ENV, MAX_HOSTS, MAX_LIST, MAX_NET_DEVICES,
                      MAX_NETWORKS, MAX_QP_MTUS, MAX_RANKS, MAX_SAMPLE, MAX_TEXT, MAX_TRANSPORTS, ErrorLine, LogLine,
                      NetDevice, QpMtu, Result, add_name as _add_name)

PREFIX_RE = re.compile(r"([^\s:\[\]`'\"]+):[0-9]+:[0-9]+\s+\[([0-9]+)\]")  # a pasted `host:pid:tid [dev]` keeps no quote
from .prefix import find_prefix  # noqa: E402  (after PREFIX_RE, which it mirrors)
NODES_RE = re.compile(r" nNodes ([0-9]+)")
VERSION_RE = re.compile(r"NCCL version ([0-9]+\.[0-9]+\.[0-9]+)(?:[-+.][^\s]*?cuda([0-9]+\.[0-9]+))?")
COMM_RE = re.compile(
    r"comm 0x[0-9a-fA-F]+ rank ([0-9]+) n[Rr]anks ([0-9]+)(?: cudaDev ([0-9]+))?(?: nvmlDev [0-9]+)?(?: busId ([0-9a-fA-F]+))?")
ENV_RE = re.compile(r"(NCCL_[A-Z0-9_]+) set (?:by environment )?to (.*)")
DEVICE_RE = re.compile(r"\[([0-9]+)\]([^\s:\[\]]+):(\S+)")
GID_RE = re.compile(r"GID index ([0-9]+)|\bGID ([0-9]+) \(")
CHANNELS_RE = re.compile(r"([0-9]+) (coll|collnet|nvls|p2p) channels(?: per peer)?")
DRIVER_RE = re.compile(r"(?:cudaDriverVersion|CUDA Driver version)\s*(?::\s*)?([0-9]+)")  # not `\s*:?\s*`: quadratic on blanks
PLUGIN_RE = re.compile(r"Loaded net plugin (.+?)(?: \(v[0-9]+\))?$")
COLLNET_PLUGIN_RE = re.compile(r"Loaded coll(?:net)? plugin (.+?)(?: \(v[0-9]+\))?$")  # 2.19 prints "Loaded coll plugin SHARP (v6)"
P2P_PLUGIN_RE = re.compile(r"P2P plugin (?:v[0-9]+ )?(\S+)")
TOPO_FILE_RE = re.compile(r"Setting NCCL_TOPO_FILE environment variable to (\S+)")
RANK_LINE_RE = re.compile(r"rank ([0-9]+) nranks ([0-9]+)")  # NCCL 2.3: "NCCL INFO rank 0 nranks 4"
# A net plugin that reports its own initialisation failure in a WARN line ("NET/OFI aws-ofi-nccl
# initialization failed", "NET/OFI Initializing plugin failed"); NCCL's internal NET/IB and NET/Socket
# failures are NCCL001's, not a plugin's.
PLUGIN_WARN_RE = re.compile(r"NCCL WARN (NET/(?!IB\b|Socket\b)[A-Za-z]+|NET/Plugin)\b.*?"
                            r"(?:initiali[sz]\w* (?:\w+ )?failed|failed to (?:initiali[sz]e|load))", re.I)
PLUGIN_NAMES = {"net/ofi": "aws-ofi-nccl"}
MAX_REFUSALS = 8


def _driver_version(n: int) -> str:
    return f"{n // 1000}.{(n % 1000) // 10}"


def _address(spec: str) -> str:
    """'10.149.0.32<0>' -> '10.149.0.32': a NET/Socket or Bootstrap device's address without its index."""
    return spec[:-3] if spec.endswith("<0>") else re.sub(r"<[0-9]+>$", "", spec)


SLACK = 4  # a chunk's error/unrecognised lines gathered up to this many times MAX_LIST before the first by line are kept


def _line_of(e) -> int:
    return e.line_no


class Facts:
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
        self.nnodes: Optional[int] = None
        self.plugins_initialized: list[str] = []
        self.plugins_failed: list[str] = []
        self.plugin_assigned: Optional[str] = None
        self.refusals: list[str] = []
        self.bootstrap: dict[tuple, NetDevice] = {}
        self.ring_nranks = 0
        self.net_keys_by_rank: dict[int, set[str]] = {}
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
        self.prefix_seen_b: set[bytes] = set()  # the reader: raw prefixes whose text is in prefix_cache
        self.host_devs_b: set[tuple] = set()  # the reader: (raw host, device) pairs recorded (`host_dev`)
        self.conn_cache: dict[tuple, str] = {}
        self.host_tried: set[int] = set()
        self.partial = False
        self.comm_seen: set[str] = set()
        self.comm_seen_b: set[bytes] = set()  # the reader: raw comm keys whose text is in comm_seen
        self.seen_msgs: set[str] = set()
        self.seen_msgs_b: set[bytes] = set()  # the reader: raw messages whose text is in seen_msgs
        self.tag_texts_b: set[bytes] = set()  # the reader: tag texts read whose reading again does nothing
        self.banners_b: set[bytes] = set()  # the reader: bare "NCCL version" lines read (`other`)
        # A chunk's error and unrecognised lines come from several scans (its tag texts, WARN lines,
        # untagged marks), not in line order: each list takes them while it had room when the chunk
        # began, up to SLACK times MAX_LIST (then the first by line are kept), and `flush_errors` keeps
        # the first by line: what the lists hold does not depend on where the chunks end.
        self.pending: list[ErrorLine] = []
        self.unrecognised: list[tuple[int, str]] = []  # (line, text) of failure lines no entry explains
        self.unrecognised_room = True  # the list had room when this chunk began
        # the reader: an "NCCL error in:" line whose "Last error:" detail may be in the next chunk (its line
        # number and the bytes after it), and where in this chunk a "Last error:" was read for it
        self.last_error_carry: Optional[tuple[int, bytes]] = None
        self.last_error_done = -1
        self.unrecognised_total = 0
        self.transport_cache: dict[str, str] = {}
        self.qp_mtus: dict[tuple, list] = {}  # (host, net_dev, ib_dev, port, link_layer, mtu) -> [qps, line_no]
        self.qp_seen_b: dict[tuple, tuple] = {}  # the reader: (raw prefix, raw fields) -> the key above

    # ---- helpers -------------------------------------------------------------------------
    def prefix(self, pre: str) -> tuple:
        got = self.prefix_cache.get(pre)
        if got is None:
            m = find_prefix(pre)
            got = (m[0], int(m[1])) if m else (None, None)
            if len(self.prefix_cache) >= MAX_CACHE:
                self.prefix_cache.clear()
                self.prefix_seen_b.clear()
            self.prefix_cache[pre] = got
            if got[0] is not None:
                self.host_dev(*got)
        return got

    def host_dev(self, host: str, dev: int) -> None:
        """A line prefix named this host and CUDA device (the first MAX_HOSTS hosts are kept, and
        MAX_DEVS_PER_HOST devices of each)."""
        if len(self.hosts) < MAX_HOSTS:
            self.hosts.add(host)
        if host in self.hosts and len(self.cuda_devs.get(host, ())) < MAX_DEVS_PER_HOST:
            self.cuda_devs.setdefault(host, set()).add(dev)

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

    def add_error(self, line_no: int, text: str, kind: str, hit=None) -> None:
        """Errors of a chunk come from several scans: gathered here, put in line order by flush_errors.
        `hit`: the catalogue match that explains the line (classify.match), if any."""
        self.errors_total += 1
        if len(self.errors) < MAX_LIST:
            f = classify.fields(hit)
            self._pend(ErrorLine(line_no, text[:MAX_TEXT], kind, f["cls"], f["entry"], f["severity"], f["consequence"]))

    def _pend(self, e: ErrorLine) -> None:
        self.pending.append(e)
        if len(self.pending) > SLACK * MAX_LIST:
            self.pending.sort(key=_line_of)
            del self.pending[MAX_LIST - len(self.errors):]

    def failure(self, line_no: int, line: str, message: str, kind: Optional[str] = None) -> None:
        """A failure line (WARN, old-form WARN, "Last error" detail): classified by its message through
        the catalogues; an error unless its entry is informational; unrecognised when none explains it."""
        hit, mkind, f = classify.reading(message)
        kind = mkind or kind
        if hit is None:
            self.unrecognised_total += 1
            if self.unrecognised_room:
                self.unrecognised.append((line_no, line[:MAX_TEXT]))
                if len(self.unrecognised) > SLACK * MAX_LIST:
                    self.unrecognised.sort()
                    del self.unrecognised[MAX_LIST:]
        if kind is not None and f[0] != "informational":
            self.errors_total += 1
            if len(self.errors) < MAX_LIST:
                self._pend(ErrorLine(line_no, line[:MAX_TEXT], kind, *f))

    def fault_info(self, line_no: int, line: str, message: str) -> None:
        """An INFO line whose wording signals a fault: an error when its catalogue entry says error or
        critical and that NCCL prints at INFO (the INFO messages that are failures, not NCCL's retries,
        probes and fallbacks; a message some release printed as WARN is not one when printed at INFO)."""
        hit = classify.match(message)
        if hit is not None and hit.entry.level == "INFO" and hit.entry.severity in ("error", "critical") \
                and hit.entry.cls != "informational":
            self.add_error(line_no, line, classify.kind_of(line, hit) or "nccl_error", hit)

    def flush_errors(self) -> None:
        if self.pending:
            self.pending.sort(key=_line_of)
            self.errors.extend(self.pending[: MAX_LIST - len(self.errors)])
            self.pending = []
        if len(self.unrecognised) > 1:
            self.unrecognised.sort()
            del self.unrecognised[MAX_LIST:]
        self.unrecognised_room = len(self.unrecognised) < MAX_LIST

    # ---- line kinds ----------------------------------------------------------------------
    def count_connections(self, chunk: bytes, base: int, conn: bytes, cnt: int) -> None:
        """Count `cnt` connection lines whose text after "NCCL INFO " is `conn` ("Channel 00/0 : 0[0]
        -> 1[1] via P2P/IPC"); the first of each distinct text after the channel number is read once
        (new_connection) and its transport key cached."""
        text = conn.decode("utf-8", "replace")
        if text[:1].isdigit():  # "9[1a000] -> 2[6b000] ... via ...": the line without its channel head
            word, tail, tail_b = "Channel", text, conn
        else:
            word = text[: text.index(" ")]
            tail = text[text.index(":") + 2 :]
            tail_b = conn[conn.index(b":") + 2 :]
        ck = (word == "CollNet", tail)
        key = self.conn_cache.get(ck)
        if key is None:
            key = self.new_connection(chunk, base, word, tail, tail_b)
            if len(self.conn_cache) >= MAX_CACHE:
                self.conn_cache.clear()
            self.conn_cache[ck] = key
        if key:
            t = self.transports
            if key in t:
                t[key] += cnt
            elif len(t) < MAX_TRANSPORTS:
                t[key] = cnt

    def new_connection(self, chunk: bytes, base: int, word: str, tail: str, tail_b: bytes) -> str:
        """First sight of a connection line's text after the channel number: classify, record ranks.

        The line's prefix (host, device) is looked up only while the sample is filling or the local
        rank has no host yet, so a huge log pays this once per rank, not once per line."""
        vi = tail.find(" via ")
        if vi < 0:  # ring order line ("Channel 00/02 :    0   1"): every rank of the communicator, once
            toks = tail.split()
            if toks and len(toks) > self.ring_nranks and all(is_digits(t) for t in toks):
                self.ring_nranks = len(toks)
            return ""
        key = self.transport_key(tail[vi + 5 :].strip().rstrip("`'\""))  # a pasted line keeps no quote
        ends = _ends(word == "CollNet", tail[:vi].split())
        host = dev = None
        want_sample = len(self.sample) < MAX_SAMPLE
        local = next((e[0] for e in ends if e[2]), None)
        if want_sample or self.host_wanted(local):
            host, dev = self.locate(chunk, base, tail_b, want_sample)
            if local is not None:
                self.host_tried.add(local)
        for r, br, is_local in ends:
            cdev, bus = _bracket(br)
            if is_local:
                self.add_rank(r, host, cdev if cdev is not None else dev, bus, None)
            else:
                self.add_rank(r, None, cdev, bus, None)
        if key.startswith("NET/") and local is not None:
            keys = self.net_keys_by_rank.get(local)
            if keys is None and len(self.net_keys_by_rank) < MAX_RANKS:
                keys = self.net_keys_by_rank[local] = set()
            if keys is not None and len(keys) < MAX_TRANSPORTS:
                keys.add(key)
        self.gdr_on = self.gdr_on or "GDRDMA" in key
        return key

    def transport_key(self, path: str) -> str:
        """The transport key of a connection's path (normalise_transport), cached."""
        key = self.transport_cache.get(path)
        if key is None:
            key = normalise_transport(path)
            if len(self.transport_cache) < MAX_CACHE:
                self.transport_cache[path] = key
        return key

    def host_wanted(self, local) -> bool:
        """Whether the host of the local rank of a connection line is still to be looked up."""
        return (local is not None and local not in self.host_tried and len(self.host_tried) < MAX_RANKS
                and (local not in self.ranks or self.ranks[local][0] is None))

    def locate(self, chunk: bytes, base: int, tail_b: bytes, sample: bool) -> tuple:
        """Find the first line of the chunk that ends in this connection text: its prefix's (host,
        device), and the line itself into the sample when `sample`."""
        needle = b": " + tail_b
        pos = chunk.find(needle + b"\n")
        if pos < 0:
            pos = chunk.find(needle)
        if pos < 0:  # a line without its channel head: the text follows the tag or starts the line
            pos = chunk.find(tail_b)
        if pos < 0:
            return None, None
        ls = chunk.rfind(b"\n", 0, pos) + 1
        le = chunk.find(b"\n", pos)
        ti = chunk.rfind(b"NCCL ", ls, pos)
        got = self.prefix(chunk[ls:ti].decode("utf-8", "replace") if ti >= 0 else "")
        if sample:
            line = chunk[ls : le if le >= 0 else len(chunk)].decode("utf-8", "replace").strip()
            self.sample.append(LogLine(base + chunk.count(b"\n", 0, ls) + 1, line[:MAX_TEXT]))
        return got

    def net_using(self, msg: str, kind: str) -> None:
        body = msg.split(":", 1)[1] if ":" in msg else msg
        body = body.split(";", 1)[0]
        for m in DEVICE_RE.finditer(body):
            idx, name, spec = int(m.group(1)), m.group(2), m.group(3)
            port = ll = addr = None
            sharp = False
            if kind == "ib":
                bits = spec.split("/")
                port = int(bits[0]) if is_digits(bits[0]) else None
                for b in bits[1:]:
                    if b == "IB":
                        ll = "IB"
                    elif b == "RoCE":
                        ll = "RoCE"
                    elif b == "SHARP":
                        sharp = True
            else:
                addr = _address(spec)
            dkey = (kind, name, port)
            if dkey not in self.devices and len(self.devices) < MAX_NET_DEVICES:
                self.devices[dkey] = NetDevice(name, port, ll, idx, kind, addr, sharp)

    def qp_key(self, pre: str, net_dev: Optional[int], ib_dev: Optional[int], port: int, link_layer: str,
               mtu: int, line_no) -> Optional[tuple]:
        """First sight of a per-QP line's fields on a line with prefix `pre`: its key (None when the
        table is full); `line_no()` gives the line's number, asked only for a new entry. The reader
        counts the lines of each key."""
        host = self.prefix(pre)[0]
        key = (host, net_dev, ib_dev, port, link_layer, mtu)
        if key not in self.qp_mtus:
            if len(self.qp_mtus) >= MAX_QP_MTUS:
                return None
            self.qp_mtus[key] = [0, line_no()]
        return key

    def qp_result(self) -> tuple[QpMtu, ...]:
        """The per-QP MTUs, with the device name of the "NET/IB : Using [i]name:port" list where its
        index names one IB device only."""
        names: dict[int, set[str]] = {}
        for d in self.devices.values():
            if d.kind == "ib" and d.index is not None:
                names.setdefault(d.index, set()).add(d.name)
        out = []
        for (host, net_dev, ib_dev, port, ll, mtu), (qps, line_no) in self.qp_mtus.items():
            named = names.get(net_dev, set()) if net_dev is not None else set()
            out.append(QpMtu(host, next(iter(named)) if len(named) == 1 else None, net_dev, ib_dev, port, ll, mtu,
                             IB_MTU_BYTES.get(mtu), qps, line_no))
        return tuple(sorted(out, key=lambda q: (q.host or "", q.net_dev if q.net_dev is not None else -1,
                                                q.ib_dev if q.ib_dev is not None else -1, q.port, q.mtu)))

    def info(self, pre: str, msg: str) -> None:
        """A new INFO/TRACE fact message (its line's prefix `pre` names the host): the first reader in
        STARTS whose prefix it has takes it; other messages may still carry a GID index, the CUDA
        driver version or Init COMPLETE."""
        self.prefix(pre)
        for start, read in STARTS:
            if msg.startswith(start):
                read(self, msg, pre)
                return
        if is_digits(msg[:1]) and " coll channels" in msg:
            if not self.channels:
                for m in CHANNELS_RE.finditer(msg):
                    k = m.group(2) + ("_per_peer" if m.group(0).endswith("per peer") else "")
                    self.channels.setdefault(k, int(m.group(1)))
            return
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

    # ---- readers of one kind of fact message (msg, pre): see STARTS -------------------------
    def nvls(self, msg: str, pre: str) -> None:
        self.count_transport("NVLS")  # one per "Connected NVLS" line: never deduplicated

    def env_line(self, msg: str, pre: str) -> None:
        m = ENV_RE.match(msg)
        if not m:
            return
        val = m.group(2).strip()
        if val.endswith("."):
            val = val[:-1]
        if m.group(1) not in self.env and len(self.env) < MAX_ENV:
            self.env[m.group(1)] = val
        if m.group(1) == "NCCL_IB_GID_INDEX" and self.gid is None and is_digits(val.lstrip("-")):
            self.gid = int(val)

    def ib_using(self, msg: str, pre: str) -> None:
        self.net_using(msg, "ib")

    def socket_using(self, msg: str, pre: str) -> None:
        self.net_using(msg, "socket")

    def ib_none(self, msg: str, pre: str) -> None:
        self.ib_no_device = True

    def ofi(self, msg: str, pre: str) -> None:
        self.plugin_ofi = True
        m = TOPO_FILE_RE.search(msg)
        if m and "NCCL_TOPO_FILE" not in self.env and len(self.env) < MAX_ENV:
            self.env["NCCL_TOPO_FILE"] = m.group(1)

    def net_plugin(self, msg: str, pre: str) -> None:
        m = PLUGIN_RE.search(msg)
        if m and self.plugin_loaded is None:
            self.plugin_loaded = m.group(1).strip()
        m = COLLNET_PLUGIN_RE.search(msg)
        if m and self.collnet_plugin is None:
            self.collnet_plugin = m.group(1).strip()

    def using_network(self, msg: str, pre: str) -> None:
        net = msg[14:].strip()
        if self.network is None:
            self.network = net
        if net not in self.networks and len(self.networks) < MAX_NETWORKS:
            self.networks.append(net)

    def plugin_initialized(self, msg: str, pre: str) -> None:
        _add_name(self.plugins_initialized, msg[len("Initialized NET plugin "):])

    def plugin_failed(self, msg: str, pre: str) -> None:
        _add_name(self.plugins_failed, msg[len("Failed to initialize NET plugin "):])

    def plugin_assigned_line(self, msg: str, pre: str) -> None:
        if self.plugin_assigned is None:
            name = msg[len("Assigned NET plugin "):]
            self.plugin_assigned = (name[: -len(" to comm")] if name.endswith(" to comm") else name).strip()[:MAX_TEXT]

    def refusal(self, msg: str, pre: str) -> None:
        """NCCL's error trace from its plugin loader ("net.cc:79 -> 3") before any network was chosen:
        the net plugin it tried (IBext, a loaded plugin) refused to initialise."""
        text = msg.strip()[:MAX_TEXT]
        if self.network is None and text not in self.refusals and len(self.refusals) < MAX_REFUSALS:
            self.refusals.append(text)

    def bootstrap_line(self, msg: str, pre: str) -> None:
        """"Bootstrap : Using ibp12s0:10.149.0.32<0>": the interface of NCCL's out-of-band socket, which
        its socket transport chooses the same way (NCCL_SOCKET_IFNAME). The first interface is kept."""
        if "Using" not in msg:
            return
        m = DEVICE_RE.search("[0]" + msg.split("Using", 1)[1].strip())
        if m is None:
            return
        key = (m.group(2), _address(m.group(3)))
        if key not in self.bootstrap and len(self.bootstrap) < MAX_NET_DEVICES:
            self.bootstrap[key] = NetDevice(key[0], None, None, 0, "bootstrap", key[1], False)

    def rank_line(self, msg: str, pre: str) -> None:
        m = RANK_LINE_RE.match(msg)
        if m:
            host, pdev = self.prefix(pre)
            nranks = int(m.group(2))
            self.add_rank(int(m.group(1)), host, pdev, None, nranks)
            if self.comm_nranks is None or nranks > self.comm_nranks:
                self.comm_nranks = nranks

    def internal_network(self, msg: str, pre: str) -> None:
        self.using_network("Using network " + msg[len("Using internal Network "):], pre)  # NCCL 2.3

    def init_rank(self, msg: str, pre: str) -> None:
        """'<function> comm 0x.. rank r nranks n ...': NCCL prints the function that made the
        communicator (ncclCommInitRank, ncclCommInitRankConfig, ncclCommInitRankScalable,
        ncclCommSplit, ncclCommInitAll...) before the same fields as a bare comm line."""
        i = msg.find(" comm ")
        if i > 0 and msg[:i].isidentifier():
            self.comm(msg[i + 1:], pre)

    def driver(self, msg: str, pre: str) -> None:
        self.driver_line(msg)

    def p2p_plugin(self, msg: str, pre: str) -> None:
        m = P2P_PLUGIN_RE.match(msg)
        if m and self.plugin_p2p is None:
            self.plugin_p2p = m.group(1)

    def plugin_dir(self, msg: str, pre: str) -> None:
        if self.plugin_path is None:
            self.plugin_path = msg[14:].strip()[:MAX_TEXT]

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
        if " nNodes " in msg:  # "comm 0x.. rank 8 nRanks 16 nNodes 2 localRanks 8 ..." (NCCL >= 2.19)
            n = NODES_RE.search(msg)
            if n and (self.nnodes is None or int(n.group(1)) > self.nnodes):
                self.nnodes = int(n.group(1))
            return
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

    def banner_line(self, msg: str, pre: str) -> None:
        self.banner(msg)

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
        self.failure(line_no, line, classify.warn_message(line))
        self._plugin_warn(line)

    def warns_counted(self, texts: Iterable[tuple[str, int]]) -> bool:
        """A chunk's WARN lines read by their distinct texts (each from its first "NCCL WARN" on, with
        its count of lines), when no list they would join has room (`warn` then only counts them and
        names failed plugins; their hosts are the reader's to record). False, with nothing done, when
        one may still join a list: the reader reads them line by line (`warn`)."""
        if len(self.warnings) < MAX_LIST:
            return False
        read = []
        for text, cnt in texts:
            hit, kind, f = classify.reading(classify.warn_message(text))
            error = kind is not None and f[0] != "informational"
            if (hit is None and self.unrecognised_room) or (error and len(self.errors) < MAX_LIST):
                return False
            read.append((text, cnt, hit is None, error))
        for text, cnt, unrecognised, error in read:  # (in order of first appearance: plugin names too)
            self.warnings_total += cnt
            self.unrecognised_total += cnt if unrecognised else 0
            self.errors_total += cnt if error else 0
            self._plugin_warn(text)
        return True

    def _plugin_warn(self, line: str) -> None:
        """A WARN of an external network plugin names it among the failed ones."""
        at = line.find("NCCL WARN NET/") if "NET/" in line else -1
        if at >= 0:
            # matched from the line's first plugin WARN tag only: a search tried every repeat of the tag
            # with a lazy run to the end of the line (quadratic on a line of repeated tags)
            m = PLUGIN_WARN_RE.match(line, at)
            if m:
                tag = m.group(1)
                name = PLUGIN_NAMES.get(tag.lower()) or (self.plugin_loaded if tag == "NET/Plugin" else tag[4:])
                _add_name(self.plugins_failed, name or "external net plugin")

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
                kind = classify.legacy_kind(line) or ("nccl_error" if "NCCL error in" in line else None)
                if kind:
                    self.add_error(line_no, line, kind, self.result_hit(line))
            return True
        if "NCCL failure" in line or "NCCL error" in line:
            kind = classify.legacy_kind(line) or ("nccl_failure" if "NCCL failure" in line else "nccl_error")
            self.add_error(line_no, line, kind, self.result_hit(line))
            return True
        i = line.find("NCCL version ")
        if i >= 0:
            before = line[:i].strip()
            if not before or (len(before) < 80 and before[-1] in ":]" and "error" not in before.lower()):
                self.banner(line[i:])
                return True
        return False

    @staticmethod
    def result_hit(line: str):
        """The entry of the ncclGetErrorString text an "NCCL error in: ..." line carries, if any."""
        msg = classify.result_message(line)
        return classify.match(msg) if msg else None

    def net_by_rank(self) -> dict[str, list[str]]:
        """{rank: the NET transports of its connection lines} for the ranks whose host is not known
        (a log without host prefixes, or bare connection lines): keys are strings, for JSON."""
        out = {}
        for rank, keys in sorted(self.net_keys_by_rank.items()):
            rec = self.ranks.get(rank)
            if rec is None or rec[0] is None:
                out[str(rank)] = sorted(keys)
        return out

    def net_by_host(self) -> dict[str, list[str]]:
        """{host: the NET transports its ranks' connection lines used}, for the ranks whose host is known."""
        out: dict[str, set[str]] = {}
        for rank, keys in self.net_keys_by_rank.items():
            rec = self.ranks.get(rank)
            if rec is not None and rec[0] is not None:
                out.setdefault(rec[0], set()).update(keys)
        return {h: sorted(k) for h, k in sorted(out.items())}

    def refused_plugin(self, plugin: Optional[str]) -> Optional[str]:
        """The external plugin a loader trace ("net.cc:79 -> 3") says refused, when the network NCCL
        then used is not that plugin: the loaded one, else IBext when NCCL_IBEXT_DISABLE is set (a trace with
        no plugin named is left alone: it may be the internal IB transport's)."""
        if not self.refusals:
            return None
        name = plugin or ("IBext" if "NCCL_IBEXT_DISABLE" in self.env else None)
        if name is None:  # no plugin named: the trace may be the internal IB transport's
            return None
        used = (self.plugin_assigned or self.network or "").lower()
        if used and (used == name.lower() or used not in ("ib", "socket")):
            return None
        return name

    # ---- freeze ---------------------------------------------------------------------------
    def result(self) -> Result:
        """The Result (freeze.py); ParseError when no NCCL line was seen."""
        from .freeze import result  # noqa: PLC0415  (freeze.py reads this module's helpers)

        return result(self)


# The fact messages Facts reads by their start: kinds.py's table, which the scanner's SCAN_RE is built
# from too (reader.py).
STARTS = tuple((start, getattr(Facts, reader)) for start, reader in dispatch())
