"""NCCL rules (NCCL001-NCCL005): what an NCCL_DEBUG=INFO log says about transport selection and errors.

Every check reads the `nccl_debug` parser's fields (topodiag/parsers/nccl_debug.py): `network`,
`networks`, `transports` ({"NET/Socket": 8, "NET/IB/GDRDMA": 2, "SHM": 7, ...}), `gdr`, `env`,
`socket_fallback_reasons`, `warnings`, `errors`, `net_devices`, `connections_sample`. Line numbers
in evidence are the log's. NCCL003 and NCCL005 also read the topology (`nvidia-smi topo -m`): NCCL003
to tell NVLinked GPUs from PCIe-only ones, NCCL005 (required) for the GPU-NIC path class.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Mapping, Optional

from ..parsers.base import to_jsonable
from ..engine import Evidence, Severity, check, hit

SOURCE = "nccl_debug"

_IB_NET_RE = re.compile(r"^IB", re.I)  # IB, IBext, IBext_v8
_STATUS_RE = re.compile(r"with (?:status=|error )(\d+)")
_VENDOR_RE = re.compile(r"vendor err (\d+)")

# ibv_wc_status values NCCL prints as "error N" / "status=N" (verbs.h enum ibv_wc_status).
IBV_WC_STATUS = {
    1: "IBV_WC_LOC_LEN_ERR (local length error)",
    2: "IBV_WC_LOC_QP_OP_ERR (local QP operation error)",
    4: "IBV_WC_LOC_PROT_ERR (local protection error: memory registration / GPUDirect RDMA)",
    5: "IBV_WC_WR_FLUSH_ERR (work request flushed: the QP went to error state earlier)",
    10: "IBV_WC_REM_ACCESS_ERR (remote access error)",
    11: "IBV_WC_REM_OP_ERR (remote operation error)",
    12: "IBV_WC_RETRY_EXC_ERR (transport retry counter exceeded: peer unreachable or fabric drops)",
    13: "IBV_WC_RNR_RETRY_EXC_ERR (receiver not ready retry exceeded)",
}

_ERROR_KIND_TEXT = {
    "ib_completion": "IB completion error",
    "remote_process_exited": "remote process exited",
    "unhandled_system_error": "unhandled system error",
    "internal_error": "internal error",
    "unhandled_cuda_error": "unhandled CUDA error",
    "cuda_failure": "CUDA failure",
    "connection_closed": "connection closed by peer",
    "nccl_failure": "NCCL failure",
    "nccl_error": "NCCL error",
    "watchdog_timeout": "collective timeout (PyTorch watchdog)",
    "watchdog_exception": "watchdog exception",
    "watchdog_abort": "process aborted by the watchdog",
}


def _ev(file_line: Optional[int] = None) -> Evidence:
    return Evidence(SOURCE, None, file_line)


def _socket_transports(transports: Mapping[str, int]) -> int:
    return sum(n for k, n in transports.items() if k.startswith("NET/Socket"))


def _env_flag(env: Mapping[str, str], name: str) -> Optional[str]:
    value = env.get(name)
    return None if value is None else str(value).strip()


def _hosts_subject(nccl_debug: Mapping[str, Any]) -> list[str]:
    hosts = [h for h in nccl_debug.get("hosts") or [] if h]
    return [f"host:{h}" for h in hosts[:8]] or ["nccl"]


def _as_dict(value):
    """The parser's dataclass result as plain dicts and lists (the JSON form its docstring lists)."""
    return value if isinstance(value, dict) else to_jsonable(value)


def _active_ib_ports(topology) -> list[str]:
    """'mlx5_0 port 1' for every InfiniBand port an IB tool reported Active / LinkUp."""
    if topology is None:
        return []
    return [f"{nic.split(':', 1)[-1]} port {p['port']}" for nic, p in topology.ib_ports()
            if p.get("state") == "Active" and p.get("physical_state") in (None, "LinkUp")
            and p.get("link_layer") in (None, "InfiniBand")]


@check("NCCL001")
def nccl001(nccl_debug, topology=None):
    """NET/Socket carried the network traffic: say why NCCL chose it (a printed reason or the env),
    whether it bound a loopback address, and whether IB ports were up on the host all along."""
    nccl_debug = _as_dict(nccl_debug)
    transports = nccl_debug.get("transports") or {}
    networks = list(nccl_debug.get("networks") or [])
    socket_conns = _socket_transports(transports)
    socket_net = any(str(n).lower() == "socket" for n in networks)
    if not socket_conns and not socket_net:
        return None
    env = nccl_debug.get("env") or {}
    reasons = list(nccl_debug.get("socket_fallback_reasons") or [])
    forced = []
    if _env_flag(env, "NCCL_IB_DISABLE") == "1":
        forced.append("NCCL_IB_DISABLE=1")
    net = _env_flag(env, "NCCL_NET")
    if net is not None and net.lower() == "socket":
        forced.append("NCCL_NET=Socket")
    for f in forced:
        if f not in reasons:
            reasons.append(f)
    devices = nccl_debug.get("net_devices") or []
    tried_ib = any(d.get("kind") == "ib" for d in devices) or "NET/IB : No device found" in reasons
    if forced:
        reason = ", ".join(reasons) + " (set by the user: IB was switched off on purpose)"
        severity = Severity.WARNING
    elif reasons:
        reason = ", ".join(reasons)
        severity = None
    elif not tried_ib:
        reason = ("no NET/IB line in this log: NCCL did not try InfiniBand/RoCE (NCCL_NET=Socket, which NCCL "
                  "does not log, or an IB transport that failed to load), or the excerpt leaves those lines out; "
                  "a host without a usable HCA prints 'NET/IB : No device found'")
        severity = None
    else:
        reason = ("NCCL printed no reason (no usable IB/RoCE device found or loaded; "
                  "if NCCL_NET=Socket or NCCL_IB_DISABLE=1 was set, this is what was asked for)")
        severity = None
    notes = []
    loopback = [d for d in devices if d.get("kind") == "socket"
                and (d.get("name") == "lo" or str(d.get("address") or "").startswith(("127.", "::1")))]
    if loopback:
        d = loopback[0]
        hosts = [h for h in nccl_debug.get("hosts") or [] if h]
        notes.append(f"NET/Socket uses the loopback interface {d.get('name')} ({d.get('address') or 'no address'}): "
                     "other nodes cannot reach it, so a multi-node job cannot connect; set NCCL_SOCKET_IFNAME to the "
                     "node's data interface")
        severity = Severity.ERROR if len(hosts) > 1 else Severity.WARNING
    active = _active_ib_ports(topology)
    if active:
        notes.append(f"{len(active)} InfiniBand port(s) are Active on this host ({', '.join(active[:4])}"
                     f"{', ...' if len(active) > 4 else ''}): the fabric was there")
    if socket_conns:
        what = f"{socket_conns} connection line(s) via NET/Socket"
    else:
        what = '"Using network Socket"'
    evidence = [_ev(s["line_no"]) for s in nccl_debug.get("connections_sample") or []
                if "NET/Socket" in s.get("text", "")][:3]
    return hit(_hosts_subject(nccl_debug), what=what, reason=reason + "".join(f"; {n}" for n in notes),
               severity=severity, evidence=evidence or [_ev()],
               expectation="NET/IB (or a net plugin) for inter-node traffic")


def _xml_no_gdr(topology):
    """NCCL002 from NCCL's topology dump alone: its <net gdr="0"> NICs (NCCL found no GPUDirect RDMA
    support for them: nvidia-peermem / DMA-BUF missing)."""
    nics = [n for n in topology.nics() if topology.node(n).get("gdr") == 0]
    if not nics:
        return None
    names = ", ".join(n.split(":", 1)[-1] for n in nics)
    evidence = [ref for n in nics[:1] for ref in topology.node(n).get("sources", [])[:1]]
    return hit(nics, evidence=evidence, expectation="gdr=1 on the NICs of NCCL's topology",
               detail=(f"NCCL's topology dump marks {names} gdr=0: NCCL found no GPUDirect RDMA support for "
                       "them (nvidia-peermem not loaded and no DMA-BUF), so every inter-node message is staged "
                       "through host memory"))


@check("NCCL002")
def nccl002(nccl_debug=None, topology=None):
    """NET/IB (or IBext) in use but without GPUDirect RDMA: data bounces through host memory. From
    an NCCL log (its transports and GDR lines), else from NCCL's topology dump (net gdr=0)."""
    if nccl_debug is None:
        return _xml_no_gdr(topology) if topology is not None else None
    nccl_debug = _as_dict(nccl_debug)
    transports = nccl_debug.get("transports") or {}
    ib_plain = sum(n for k, n in transports.items()
                   if k.startswith("NET/") and not k.startswith("NET/Socket")
                   and _IB_NET_RE.match(k[4:]) and not k.endswith("/GDRDMA"))
    ib_gdr = sum(n for k, n in transports.items() if k.startswith("NET/IB") and k.endswith("/GDRDMA"))
    network = nccl_debug.get("network") or ""
    ib_net = bool(_IB_NET_RE.match(network)) or ib_plain > 0 or ib_gdr > 0
    if not ib_net:
        return None
    gdr = nccl_debug.get("gdr")
    if ib_plain == 0 and gdr is not False:
        return None  # GDRDMA on every IB connection, or no evidence either way
    gdr_lines = nccl_debug.get("gdr_lines") or []
    evidence = [_ev(g["line_no"]) for g in gdr_lines if "Disabled" in g.get("text", "")][:3]
    if ib_plain:
        detail = f"{ib_plain} connection line(s) via NET/IB without /GDRDMA"
        if ib_gdr:
            detail += f" ({ib_gdr} with GDRDMA: GPUDirect RDMA only on some GPU-NIC pairs)"
    else:
        detail = "NCCL printed 'GPU Direct RDMA Disabled'"
    env = nccl_debug.get("env") or {}
    level = _env_flag(env, "NCCL_NET_GDR_LEVEL")
    if level is not None:
        detail += f"; NCCL_NET_GDR_LEVEL={level}"
    return hit(_hosts_subject(nccl_debug), detail=detail, evidence=evidence or [_ev()],
               expectation="NET/IB/<n>/GDRDMA on every inter-node connection")


@check("NCCL003")
def nccl003(nccl_debug, topology=None):
    """Intra-node hops through host shared memory (SHM) instead of GPU P2P / NVLink."""
    nccl_debug = _as_dict(nccl_debug)
    transports = nccl_debug.get("transports") or {}
    shm = sum(n for k, n in transports.items() if k.startswith("SHM"))
    if not shm:
        return None
    env = nccl_debug.get("env") or {}
    p2p_off = _env_flag(env, "NCCL_P2P_DISABLE") == "1"
    severity = None
    nvlinked = []
    if topology is not None:
        for a, b, cls in topology.gpu_pairs():
            if cls and cls.startswith("NV"):
                nvlinked.append((a, b, cls))
        if nvlinked:
            a, b, cls = nvlinked[0]
            context = f"the GPUs are NVLinked ({a}-{b} {cls}, {len(nvlinked)} NVLink pair(s)): P2P should be used"
            severity = Severity.ERROR
        elif topology.gpu_pairs():
            context = "no NVLink between these GPUs; SHM is NCCL's choice across CPU sockets/PCIe without P2P"
            severity = Severity.INFO
        else:
            context = "GPU topology unknown: check `nvidia-smi topo -m` for NV#/PIX paths"
    else:
        context = "GPU topology not given: check `nvidia-smi topo -m` for NV#/PIX paths"
    if p2p_off:
        context += "; NCCL_P2P_DISABLE=1 is set"
    evidence = [_ev(s["line_no"]) for s in nccl_debug.get("connections_sample") or []
                if "SHM" in s.get("text", "")][:3]
    return hit(_hosts_subject(nccl_debug), count=shm, context=context, severity=severity,
               evidence=evidence or [_ev()], expectation="P2P/IPC, P2P/CUMEM or NVLS between GPUs of one node")


def _ib_detail(text: str) -> str:
    parts = []
    m = _STATUS_RE.search(text)
    if m:
        code = int(m.group(1))
        parts.append(f"status {code}" + (f" = {IBV_WC_STATUS[code]}" if code in IBV_WC_STATUS else ""))
    m = _VENDOR_RE.search(text)
    if m:
        parts.append(f"vendor err {m.group(1)}")
    return ", ".join(parts)


@check("NCCL004")
def nccl004(nccl_debug) -> Iterator:
    """Errors (one finding per kind) and the remaining WARN lines (one warning finding), with line numbers."""
    nccl_debug = _as_dict(nccl_debug)
    errors = list(nccl_debug.get("errors") or [])
    error_lines = {e["line_no"] for e in errors}
    by_kind: dict[str, list[dict]] = {}
    for e in errors:
        by_kind.setdefault(e.get("kind") or "nccl_error", []).append(e)
    subjects = _hosts_subject(nccl_debug)
    for kind, items in by_kind.items():
        lines = [e["line_no"] for e in items]
        detail = ""
        if kind == "ib_completion":
            details = sorted({d for e in items if (d := _ib_detail(e.get("text", "")))})
            detail = "; ".join(details[:3])
        first = items[0].get("text", "").strip()
        if len(first) > 160:
            first = first[:157] + "..."
        yield hit(subjects, what=_ERROR_KIND_TEXT.get(kind, kind.replace("_", " ")), count=len(items),
                  lines=_lines(lines), detail=(detail + ": " if detail else "") + first,
                  evidence=[_ev(n) for n in lines[:5]])
    warns = [w for w in nccl_debug.get("warnings") or [] if w["line_no"] not in error_lines]
    if warns:
        lines = [w["line_no"] for w in warns]
        first = warns[0].get("text", "").strip()
        if len(first) > 160:
            first = first[:157] + "..."
        total = max(len(warns), (nccl_debug.get("warnings_total") or 0) - len(error_lines))
        yield hit(subjects, what="NCCL WARN line", count=total, lines=_lines(lines), detail=first,
                  severity=Severity.WARNING, evidence=[_ev(n) for n in lines[:5]])


def _lines(nums: list[int]) -> str:
    shown = ", ".join(str(n) for n in nums[:8])
    return shown + (f" (+{len(nums) - 8} more)" if len(nums) > 8 else "")


_PREFIX_RE = re.compile(r"^\s*(?:\[\d+\]\s*)?(?P<host>[^\s:]+):\d+:\d+ \[(?P<dev>\d+)\]")
_NET_DEV_RE = re.compile(r"via NET/(?P<net>[A-Za-z][A-Za-z0-9_]*)/(?P<idx>\d+)")


def _nic_id(topology, name: str) -> Optional[str]:
    for candidate in (f"nic:{name}", name):
        node = topology.resolve(candidate)
        if node in topology.nics():
            return node
    return None


@check("NCCL005")
def nccl005(nccl_debug, topology, params) -> Iterator:
    """A GPU whose NCCL network connections use a NIC at a far path class (NODE/SYS by default).

    Pairs come from connection lines "host:pid:tid [cudaDev] ... via NET/IB/<n>": the logging rank's
    CUDA device and the n-th device of "NET/IB : Using [n]mlx5_x:1/IB". The GPU is matched by the
    rank's busId when NCCL printed one, else by index (CUDA and nvidia-smi order agree unless
    CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER remap). Only lines of the host the topology describes
    (or of the only host in the log) are used; without NET/IB device names nothing can be paired.
    """
    nccl_debug = _as_dict(nccl_debug)
    far = set(params.get("far_classes", ["NODE", "SYS"]))
    devices = {d.get("index"): d.get("name") for d in nccl_debug.get("net_devices") or []
               if d.get("kind") == "ib" and d.get("index") is not None and d.get("name")}
    if not devices:
        return
    topo_host = (topology.host() or "").split(":", 1)[-1]
    log_hosts = list(nccl_debug.get("hosts") or [])
    if topo_host not in log_hosts:
        if len(log_hosts) > 1:
            return  # the log spans hosts and the topology names none of them: no safe pairing
        topo_host = log_hosts[0] if log_hosts else topo_host
    bus_by_dev = {r.get("cuda_dev"): r.get("bus_id") for r in nccl_debug.get("ranks") or []
                  if r.get("host") in (None, topo_host) and r.get("bus_id")}
    seen: dict[tuple[str, str], int] = {}
    for sample in nccl_debug.get("connections_sample") or []:
        text = sample.get("text", "")
        m, n = _PREFIX_RE.match(text), _NET_DEV_RE.search(text)
        if not m or not n or n.group("net").lower() == "socket" or m.group("host") != topo_host:
            continue
        name = devices.get(int(n.group("idx")))
        if name is None:
            continue
        dev = int(m.group("dev"))
        gpu = topology.resolve(bus_by_dev[dev]) if dev in bus_by_dev else None
        if gpu not in topology.gpus():
            gpu = topology.resolve(f"gpu:{dev}")
        nic = _nic_id(topology, name)
        if gpu not in topology.gpus() or nic is None:
            continue
        seen.setdefault((gpu, nic), sample.get("line_no"))
    for (gpu, nic), line_no in seen.items():
        cls = topology.pair_class(gpu, nic)
        if cls not in far:
            continue
        nearest = topology.nearest_nic(gpu)
        better = ""
        if nearest is not None and nearest[0] != nic and nearest[1] not in far:
            better = f"; {nearest[0].split(':', 1)[-1]} is at {nearest[1]}"
        yield hit([gpu, nic], gpu=gpu, nic=nic.split(":", 1)[-1], path=cls, better=better,
                  evidence=[_ev(line_no)], expectation="GPU-NIC path PIX/PXB (same PCIe switch) for GPUDirect RDMA")


def _gpus_per_node(nccl_debug: Mapping[str, Any], topology) -> tuple[Optional[int], str]:
    """(GPUs a node runs ranks on, how that is known): the model's GPU count when it describes the
    log's host, else the [dev] numbers of the log's prefixes (device N means at least N+1 GPUs)."""
    hosts = [h for h in nccl_debug.get("hosts") or [] if h]
    if topology is not None and topology.gpus():
        topo_host = (topology.host() or "").split(":", 1)[-1]
        if topo_host in hosts or len(hosts) <= 1:
            return len(topology.gpus()), "GPUs in the topology"
    devs = nccl_debug.get("cuda_devs") or {}
    best = max(((max(d) + 1, h) for h, d in devs.items() if d), default=None)
    if best is None:
        return None, ""
    return best[0], f"the log shows CUDA device [{best[0] - 1}] on {best[1]}"


@check("NCCL006")
def nccl006(nccl_debug, params, topology=None, profile=None):
    """NCCL's NET/IB device list against the GPUs of a node: fewer NICs than GPUs caps what a node
    can send across the fabric (info, with the math); Active HCAs that NCCL leaves out (warning)."""
    nccl_debug = _as_dict(nccl_debug)
    used = []
    for d in nccl_debug.get("net_devices") or []:
        if d.get("kind") == "ib" and d.get("name") and d["name"] not in used:
            used.append(d["name"])
    if not used:
        return None
    gpus, gpus_how = _gpus_per_node(nccl_debug, topology)
    rates = {}
    active_ib = set()
    if topology is not None:
        for nic, p in topology.ib_ports():
            name = nic.split(":", 1)[-1]
            if p.get("state") == "Active" and p.get("rate_gbps"):
                rates.setdefault(name, p["rate_gbps"])
                active_ib.add(name)
    env = nccl_debug.get("env") or {}
    hca = _env_flag(env, "NCCL_IB_HCA")
    left_out = sorted(active_ib - set(used))
    notes = []
    severity = Severity.INFO
    expectation = "a NIC per GPU for inter-node traffic (DGX/HGX: 8 x 400 Gb/s for 8 GPUs)"
    if left_out:
        severity = Severity.WARNING
        notes.append(f"Active HCA port(s) NCCL does not use: {', '.join(left_out)}"
                     + (f" (NCCL_IB_HCA={hca} leaves them out)" if hca else ""))
    elif hca:
        notes.append(f"NCCL_IB_HCA={hca} chose this list")
    prof_nics = getattr(profile, "nics", None)
    if prof_nics and len(used) < prof_nics:
        severity = Severity.WARNING
        expectation = f"profile {profile.name}: {prof_nics} compute NICs"
        notes.append(f"profile {profile.name} has {prof_nics} compute NICs")
    if gpus is None or len(used) >= gpus:
        if severity is Severity.INFO:
            return None  # a NIC per GPU (or no GPU count to compare with): nothing to say
    if gpus is not None and len(used) < gpus:
        rate = min((rates[n] for n in used if n in rates), default=None)
        if rate is None and getattr(profile, "nic_rate_gbps", None):
            rate = float(profile.nic_rate_gbps)
        if rate:
            per_nic = rate / 8
            ceiling = (f"a node sends at most {len(used)} x {rate:g} Gb/s = {len(used) * per_nic:g} GB/s across the "
                       f"fabric, {len(used) * per_nic / gpus:.1f} GB/s per GPU; ~{len(used) * per_nic:g} GB/s is then the "
                       "ceiling of cross-node all_reduce busbw")
        else:
            ceiling = (f"a node sends at most {len(used)} x its line rate across the fabric ({gpus / len(used):g} "
                       "GPUs per NIC); cross-node all_reduce busbw is capped near that")
        what = f"at least {gpus}" if gpus_how.startswith("the log") else f"{gpus}"
        summary = f"{what} GPUs per node ({gpus_how}) share {len(used)} NIC(s) ({', '.join(used)}): {ceiling}"
    else:
        summary = f"NCCL uses {len(used)} NIC(s) ({', '.join(used)})"
    evidence = [_ev()]
    return hit(_hosts_subject(nccl_debug) + [f"nic:{n}" for n in used], severity=severity, evidence=evidence,
               expectation=expectation, summary=summary, note="".join(f"; {n}" for n in notes))
