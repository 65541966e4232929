"""NCCL rules (NCCL001-NCCL005): what an NCCL_DEBUG=INFO log says about transport selection and errors.

Every check reads the `nccl_debug` parser's fields (topodiag/parsers/nccl_debug/): `network`,
`networks`, `transports` ({"NET/Socket": 8, "NET/IB/GDRDMA": 2, "SHM": 7, ...}), `gdr`, `env`,
`socket_fallback_reasons`, `warnings`, `errors`, `net_devices`, `connections_sample`. Line numbers
in evidence are the log's. NCCL003 and NCCL005 also read the topology (`nvidia-smi topo -m`): NCCL003
to tell NVLinked GPUs from PCIe-only ones, NCCL005 (required) for the GPU-NIC path class.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Mapping, Optional

from . import _nccl_cross
from ..engine import Evidence, Severity, check, hit, when
from ._facts import listing, plain

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


_as_dict = plain


def _active_ib_ports(topology) -> list[str]:
    """'mlx5_0 port 1' for every InfiniBand port an IB tool reported Active / LinkUp."""
    if topology is None:
        return []
    return [f"{nic.split(':', 1)[-1]} port {p['port']}" for nic, p in topology.ib_ports()
            if p.get("state") == "Active" and p.get("physical_state") in (None, "LinkUp")
            and p.get("link_layer") in (None, "InfiniBand")]


def _forced(env: Mapping[str, str]) -> list[str]:
    """The settings with which the user switched InfiniBand off (NCCL_IB_DISABLE=1, NCCL_NET=Socket)."""
    forced = []
    if _env_flag(env, "NCCL_IB_DISABLE") == "1":
        forced.append("NCCL_IB_DISABLE=1")
    net = _env_flag(env, "NCCL_NET")
    if net is not None and net.lower() == "socket":
        forced.append("NCCL_NET=Socket")
    return forced


def _reason(forced: list[str], reasons: list[str], tried_ib: bool) -> str:
    """The NCCL001 note that says why NET/Socket: set by the user, printed by NCCL, no NET/IB line at
    all, or NET/IB tried without a printed reason."""
    if forced:
        return "reason_forced"
    if reasons:
        return "reason_printed"
    return "reason_none" if tried_ib else "reason_no_ib_line"


def _loopback(devices: list[dict]) -> Optional[dict]:
    """NCCL's NET/Socket device when it is the loopback interface (lo, 127.x, ::1)."""
    return next((d for d in devices if d.get("kind") == "socket"
                 and (d.get("name") == "lo" or str(d.get("address") or "").startswith(("127.", "::1")))), None)


def _socket_severity(forced: list[str], loopback: Optional[dict], nodes: Optional[bool]) -> Optional[Severity]:
    """Sockets carry nothing in a single-node communicator (info); a loopback socket cannot reach
    another node (error when the job spans nodes); a forced run, or one whose node count the log does
    not show, is a warning; a multi-node job on sockets keeps the rule's error."""
    if nodes is False:
        return Severity.INFO
    if loopback is not None:
        return Severity.ERROR if nodes else Severity.WARNING
    if forced or nodes is None:
        return Severity.WARNING
    return None


def _nodes(nccl_debug: Mapping[str, Any]) -> tuple[Optional[bool], str]:
    """(True: the job spans nodes, False: one node, None: the log does not say), and how it is known:
    NCCL's own nNodes, host prefixes, connection lines over the network, or every rank on one host."""
    nnodes = nccl_debug.get("nnodes")
    if nnodes is not None:
        return nnodes > 1, f"NCCL reports nNodes {nnodes}"
    hosts = _hosts(nccl_debug)
    if len(hosts) > 1:
        return True, f"{len(hosts)} hosts log"
    if any(k.startswith("NET/") for k in (nccl_debug.get("transports") or {})):
        return True, "connection lines go via NET/"
    # a communicator's size from its comm lines or a ring order line, never a fragment's highest rank
    nranks = nccl_debug.get("nranks") if nccl_debug.get("nranks_from") in ("comm", "ring") else None
    devs = (nccl_debug.get("cuda_devs") or {}).get(hosts[0], []) if hosts else []
    if nranks and devs and nranks <= len(devs):
        return False, f"all {nranks} rank(s) on {hosts[0]}"
    return None, ""


def _socket_words(nccl_debug: Mapping[str, Any]) -> str:
    """The line that says NCCL's network is Socket, quoted for the message ("" when none does)."""
    if _using_socket(nccl_debug):
        return '"Using network Socket"'
    if str(nccl_debug.get("net_plugin_assigned") or "").lower() == "socket":
        return '"Assigned NET plugin Socket to comm"'
    if "socket" in [str(n).lower() for n in nccl_debug.get("net_plugins_initialized") or []]:
        return '"Initialized NET plugin Socket"'
    return ""


def _only_socket_devices(nccl_debug: Mapping[str, Any]) -> bool:
    """A "NET/Socket : Using" device list with no IB device, no other network and no NET/ connection
    (logs before NCCL 2.5 print no "Using network" line; NET/Socket is initialised only when IB is not)."""
    devices = nccl_debug.get("net_devices") or []
    other_net = [n for n in nccl_debug.get("networks") or [] if str(n).lower() != "socket"]
    net_lines = any(k.startswith("NET/") for k in (nccl_debug.get("transports") or {}))
    return (any(d.get("kind") == "socket" for d in devices) and not any(d.get("kind") == "ib" for d in devices)
            and not other_net and not net_lines)


def _socket_variant(nccl_debug: Mapping[str, Any], socket_conns: int) -> Optional[str]:
    """How the log shows NET/Socket as NCCL's network: connection lines via NET/Socket, a line that says
    so ("Using network Socket", NCCL 2.3's "Using internal Network Socket", the Socket plugin assigned
    or initialised), or only a socket device list; None when it does not."""
    if socket_conns:
        return "default"
    if _socket_words(nccl_debug):
        return "using_socket"
    if _only_socket_devices(nccl_debug):
        return "socket_device"
    return None


def _socket_reasons(nccl_debug: Mapping[str, Any], forced: list[str]) -> list[str]:
    reasons = list(nccl_debug.get("socket_fallback_reasons") or [])
    return reasons + [f for f in forced if f not in reasons]


def _socket_names(devices: list[dict]) -> str:
    return ", ".join(str(d.get("name")) for d in devices if d.get("kind") == "socket")


def _ipoib(devices: list[dict]) -> Optional[dict]:
    """NCCL's NET/Socket device when it is an IPoIB interface (ib0, ibp24s0, ibs1...)."""
    return next((d for d in devices if d.get("kind") == "socket" and re.match(r"ib[a-z0-9]", str(d.get("name") or ""))),
                None)


def _ipoib_bootstrap(nccl_debug: Mapping[str, Any], devices: list[dict]) -> Optional[dict]:
    """With no NET/Socket device list in the log, the IPoIB interface NCCL bootstrapped on: its socket
    transport chooses interfaces the same way (NCCL_SOCKET_IFNAME, else the same preference order)."""
    if any(d.get("kind") == "socket" for d in devices):
        return None
    boot = [dict(d, kind="socket") for d in nccl_debug.get("bootstrap_interfaces") or []]
    return _ipoib(boot)


def _sample_evidence(nccl_debug: Mapping[str, Any], transport: str) -> list[Evidence]:
    """The first three sampled connection lines over `transport` (or the log itself when none)."""
    lines = [s["line_no"] for s in nccl_debug.get("connections_sample") or [] if transport in s.get("text", "")]
    return [_ev(n) for n in lines[:3]] or [_ev()]


def _hosts(nccl_debug: Mapping[str, Any]) -> list[str]:
    return [h for h in nccl_debug.get("hosts") or [] if h]


def _using_socket(nccl_debug: Mapping[str, Any]) -> bool:
    """'Using network Socket' in the log."""
    return "socket" in [str(n).lower() for n in nccl_debug.get("networks") or []]


def _tried_ib(devices: list[dict], reasons: list[str]) -> bool:
    return any(d.get("kind") == "ib" for d in devices) or "NET/IB : No device found" in reasons


@check("NCCL001")
def nccl001(nccl_debug, topology=None):
    """NET/Socket carried the network traffic: say why NCCL chose it (a printed reason or the env),
    whether it bound a loopback or an IPoIB interface, whether IB ports were up on the host all along,
    and whether the job spans nodes at all (a single-node communicator sends nothing over sockets)."""
    nccl_debug = _as_dict(nccl_debug)
    socket_conns = _socket_transports(nccl_debug.get("transports") or {})
    variant = _socket_variant(nccl_debug, socket_conns)
    if variant is None:
        return None
    forced = _forced(nccl_debug.get("env") or {})
    reasons = _socket_reasons(nccl_debug, forced)
    devices = nccl_debug.get("net_devices") or []
    loopback = _loopback(devices) or {}
    ipoib = {} if loopback else (_ipoib(devices) or {})
    boot = {} if loopback or ipoib else (_ipoib_bootstrap(nccl_debug, devices) or {})
    iface = loopback or ipoib or boot
    active = _active_ib_ports(topology)
    nodes, how = _nodes(nccl_debug)
    return hit(_hosts_subject(nccl_debug), variant=variant,
               notes=(_reason(forced, reasons, _tried_ib(devices, reasons)),)
               + when(loopback=loopback, ipoib=ipoib, ipoib_bootstrap=boot, ib_ports_active=active,
                      single_node=nodes is False, nodes_unknown=nodes is None),
               severity=_socket_severity(forced, loopback or None, nodes),
               evidence=_sample_evidence(nccl_debug, "NET/Socket"),
               expectation="NET/IB (or a net plugin) for inter-node traffic",
               socket_lines=socket_conns, said=_socket_words(nccl_debug), reasons=", ".join(reasons),
               interface=iface.get("name"), address=iface.get("address") or "no address",
               ib_ports=len(active), active_ports=listing(active, 4), nodes_how=how,
               devices=_socket_names(devices))


def _xml_no_gdr(topology):
    """NCCL002 from NCCL's topology dump alone: its <net gdr="0"> NICs (NCCL found no GPUDirect RDMA
    support for them: nvidia-peermem / DMA-BUF missing)."""
    nics = [n for n in topology.nics() if topology.node(n).get("gdr") == 0]
    if not nics:
        return None
    evidence = [ref for n in nics[:1] for ref in topology.node(n).get("sources", [])[:1]]
    return hit(nics, evidence=evidence, expectation="gdr=1 on the NICs of NCCL's topology", variant="topology_dump",
               nics=", ".join(n.split(":", 1)[-1] for n in nics))


def _ib_connections(transports: Mapping[str, int]) -> tuple[int, int]:
    """(NET/IB connection lines without /GDRDMA, with /GDRDMA); IBext and other IB plugins count as IB."""
    plain = sum(n for k, n in transports.items()
                if k.startswith("NET/") and not k.startswith("NET/Socket")
                and _IB_NET_RE.match(k[4:]) and not k.endswith("/GDRDMA"))
    gdr = sum(n for k, n in transports.items() if k.startswith("NET/IB") and k.endswith("/GDRDMA"))
    return plain, gdr


def _without_gdr(nccl_debug: Mapping[str, Any], ib_plain: int, ib_gdr: int) -> bool:
    """NET/IB in use, and some connection line without /GDRDMA or 'GPU Direct RDMA Disabled' printed
    (GDRDMA on every IB connection, or no evidence either way: False)."""
    ib_net = bool(_IB_NET_RE.match(nccl_debug.get("network") or "")) or ib_plain > 0 or ib_gdr > 0
    return ib_net and (ib_plain > 0 or nccl_debug.get("gdr") is False)


def _gdr_disabled_evidence(nccl_debug: Mapping[str, Any]) -> list[Evidence]:
    lines = [g["line_no"] for g in nccl_debug.get("gdr_lines") or [] if "Disabled" in g.get("text", "")]
    return [_ev(n) for n in lines[:3]] or [_ev()]


def _gdr_by_host(nccl_debug: Mapping[str, Any]):
    """GPUDirect RDMA on some hosts and not on others: the hosts whose ranks' NET/IB connection lines
    never say /GDRDMA, beside hosts whose lines do (net_by_host: the connection lines of each host's
    ranks). A host-level fault (nvidia-peermem not loaded there, ACS, a BIOS setting), not NCCL's choice."""
    by_host = nccl_debug.get("net_by_host") or {}
    ib = {h: [k for k in keys if _IB_NET_RE.match(k[4:])] for h, keys in by_host.items()}
    with_gdr = sorted(h for h, keys in ib.items() if any(k.endswith("/GDRDMA") for k in keys))
    without = sorted(h for h, keys in ib.items() if keys and not any(k.endswith("/GDRDMA") for k in keys))
    if not (with_gdr and without):
        return None
    return hit([f"host:{h}" for h in without], variant="some_hosts", evidence=_sample_evidence(nccl_debug, "NET/IB"),
               expectation="NET/IB/<n>/GDRDMA on every host's inter-node connections",
               without=listing(without, 6), with_gdr=listing(with_gdr, 6))


def _gdr_by_rank(nccl_debug: Mapping[str, Any]):
    """GPUDirect RDMA for some ranks and not for others, where no line names their hosts (a log
    without host prefixes, or bare connection lines quoted in a thread): the ranks whose NET/IB lines
    never say /GDRDMA beside ranks whose lines do. Each connection line is printed by the process of
    its local rank, so the split is per GPU process: a node without nvidia-peermem shows up as the
    ranks it hosts."""
    by_rank = nccl_debug.get("net_by_rank") or {}
    ib = {r: [k for k in keys if _IB_NET_RE.match(k[4:])] for r, keys in by_rank.items()}
    with_gdr = sorted((r for r, keys in ib.items() if any(k.endswith("/GDRDMA") for k in keys)), key=int)
    without = sorted((r for r, keys in ib.items() if keys and not any(k.endswith("/GDRDMA") for k in keys)), key=int)
    if not (with_gdr and without):
        return None
    return hit([f"rank:{r}" for r in without], variant="some_ranks", evidence=_sample_evidence(nccl_debug, "NET/IB"),
               expectation="NET/IB/<n>/GDRDMA on every rank's inter-node connections",
               without=listing(without, 8), with_gdr=listing(with_gdr, 8))


def _peermem_cause(peermem) -> list[Evidence]:
    """The peermem source's evidence when it shows no peer-memory module (the cause of NET/IB without
    GDRDMA: one finding with both pieces of evidence; GDR001 stays silent then), else []."""
    if peermem is None or getattr(peermem, "peer_absent", None) is not True:
        return []
    return [Evidence("peermem", None, peermem.peer_line)]


@check("NCCL002")
def nccl002(nccl_debug=None, topology=None, peermem=None):
    """NET/IB (or IBext) in use but without GPUDirect RDMA: data bounces through host memory. From
    an NCCL log (its transports and GDR lines), else from NCCL's topology dump (net gdr=0); with the
    peermem source showing no peer-memory module, the finding names that cause and carries its evidence."""
    if nccl_debug is None:
        return _xml_no_gdr(topology) if topology is not None else None
    nccl_debug = _as_dict(nccl_debug)
    mixed = _gdr_by_host(nccl_debug) or _gdr_by_rank(nccl_debug)
    if mixed is not None:
        return mixed
    ib_plain, ib_gdr = _ib_connections(nccl_debug.get("transports") or {})
    if not _without_gdr(nccl_debug, ib_plain, ib_gdr):
        return None
    level = _env_flag(nccl_debug.get("env") or {}, "NCCL_NET_GDR_LEVEL")
    cause, distance = _gdr_cause(nccl_debug)
    module = _peermem_cause(peermem)
    return hit(_hosts_subject(nccl_debug), evidence=_gdr_disabled_evidence(nccl_debug) + module,
               expectation="NET/IB/<n>/GDRDMA on every inter-node connection",
               variant="default" if ib_plain else "gdr_disabled",
               notes=when(some_gdr=ib_plain and ib_gdr, gdr_level=level is not None,
                          no_module=cause == "no_module" and not module, too_far=cause == "too_far",
                          peermem=bool(module)),
               plain=ib_plain, gdr=ib_gdr, level=level, distance=distance)


def _gdr_cause(nccl_debug: Mapping[str, Any]) -> tuple[str, str]:
    """Why NCCL says it turned GPUDirect RDMA off, from its own "GPU Direct RDMA Disabled" lines:
    ("no_module", "") for "(no module)" -- no peer-memory module and no DMA-BUF --, ("too_far",
    "7 > 4") for "(distance 7 > 4)" -- the NIC further from the GPU than NCCL_NET_GDR_LEVEL allows --,
    ("", "") when it does not say."""
    for line in nccl_debug.get("gdr_lines") or []:
        text = str(line.get("text") if isinstance(line, Mapping) else line)
        if "Disabled" not in text:
            continue
        if "(no module)" in text:
            return "no_module", ""
        m = re.search(r"distance (\d+ > \d+)", text)
        if m:
            return "too_far", m.group(1)
    return "", ""


def _shm_context(topology) -> tuple[str, Optional[Severity], dict]:
    """(NCCL003 variant, severity, facts) from what the topology says about the GPUs: NVLinked (SHM is a
    fault), PCIe only (NCCL's choice), unknown, or not given."""
    if topology is None:
        return "no_topology", None, {}
    nvlinked = [(a, b, cls) for a, b, cls in topology.gpu_pairs() if cls and cls.startswith("NV")]
    if nvlinked:
        a, b, cls = nvlinked[0]
        return "default", Severity.ERROR, {"gpu_a": a, "gpu_b": b, "path": cls, "nvlink_pairs": len(nvlinked)}
    if topology.gpu_pairs():
        return "no_nvlink", Severity.INFO, {}
    return "topology_unknown", None, {}


def _p2p_env(env: Mapping[str, str]) -> str:
    """The settings with which the user turned GPU peer-to-peer off or down ("" when none):
    NCCL_P2P_DISABLE=1, NCCL_P2P_LEVEL=LOC (or 0: P2P never used) and NCCL_SHM_DISABLE is not one."""
    found = []
    if _env_flag(env, "NCCL_P2P_DISABLE") == "1":
        found.append("NCCL_P2P_DISABLE=1")
    level = _env_flag(env, "NCCL_P2P_LEVEL")
    if level is not None and level.upper() in ("LOC", "0"):
        found.append(f"NCCL_P2P_LEVEL={level}")
    return ", ".join(found)


def _p2p_env_only(nccl_debug: Mapping[str, Any], env: str, topology):
    """P2P switched off by the environment, in a log that shows no intra-node connection line: the
    setting is the finding (every intra-node hop of the job goes through host memory)."""
    if not env:
        return None
    variant, severity, facts = _shm_context(topology)
    return hit(_hosts_subject(nccl_debug), variant="p2p_env_only", severity=severity if variant == "default" else None,
               expectation="GPU P2P / NVLink between GPUs of one node", settings=env,
               evidence=[_ev()])


@check("NCCL003")
def nccl003(nccl_debug, topology=None):
    """Intra-node hops through host shared memory (SHM) instead of GPU P2P / NVLink."""
    nccl_debug = _as_dict(nccl_debug)
    shm = sum(n for k, n in (nccl_debug.get("transports") or {}).items() if k.startswith("SHM"))
    env = _p2p_env(nccl_debug.get("env") or {})
    if not shm:
        return _p2p_env_only(nccl_debug, env, topology)
    variant, severity, facts = _shm_context(topology)
    return hit(_hosts_subject(nccl_debug), count=shm, severity=severity, variant=variant,
               notes=when(p2p_env=env), settings=env,
               evidence=_sample_evidence(nccl_debug, "SHM"), expectation="P2P/IPC, P2P/CUMEM or NVLS between GPUs of one node", **facts)


def _ib_detail(text: str) -> str:
    """"status 12 = IBV_WC_RETRY_EXC_ERR (...), vendor err 129": the codes of a completion error line."""
    parts = []
    m = _STATUS_RE.search(text)
    if m:
        code = int(m.group(1))
        parts.append(f"status {code}" + (f" = {IBV_WC_STATUS[code]}" if code in IBV_WC_STATUS else ""))
    m = _VENDOR_RE.search(text)
    if m:
        parts.append(f"vendor err {m.group(1)}")
    return ", ".join(parts)


def _first_line(items: list[dict]) -> str:
    first = items[0].get("text", "").strip()
    return first[:157] + "..." if len(first) > 160 else first


_SEVERITY = {"info": Severity.INFO, "warning": Severity.WARNING, "critical": Severity.CRITICAL}
_RANK = {None: 2, "info": 0, "warning": 1, "error": 2, "critical": 3}


def _class_text(items: list[dict]) -> dict:
    """The class facts of a group of error lines: the first line's catalogue entry (class, its title,
    meaning and fix, the entry id), and the group's severity (the highest of its entries')."""
    from ..catalogues import classes, entry_by_id, entry_for  # noqa: PLC0415

    first = items[0]
    cls = first.get("class")
    # the reader's catalogues (loaded already) before every shipped one (NVRM's alone is 2 MB of JSON)
    entry = (entry_for("nccl_debug", first["entry"]) or entry_by_id(first["entry"])) if first.get("entry") else None
    vocab = classes().get(cls or "", {})
    worst = max((e.get("severity") for e in items), key=lambda s: _RANK.get(s, 2))
    return {"cls": cls or "", "title": vocab.get("title", ""), "entry": first.get("entry") or "",
            "meaning": entry.meaning if entry else vocab.get("meaning", ""),
            "fix": entry.fix if entry else vocab.get("fix", ""), "worst": worst,
            "fixed_in": (entry.fixed_in or "") if entry else ""}


def _older(version: Optional[str], fixed_in: str) -> bool:
    """Whether NCCL `version` ("2.19.3") predates the release `fixed_in` ("v2.24.3-1"); unknown: True."""
    nums = [int(x) for x in re.findall(r"\d+", fixed_in)[:3]]
    have = [int(x) for x in re.findall(r"\d+", version or "")[:3]]
    return not have or have < nums


def _variant(items: list[dict], cause: Optional[dict], details: bool, cls: str) -> str:
    """consequence (every line follows the first failure, which came earlier), ib_completion (decoded
    status), classified (a catalogue class), default."""
    if cause is not None and all(e.get("consequence") for e in items) and cause["line_no"] < items[0]["line_no"]:
        return "consequence"
    if details:
        return "ib_completion"
    return "classified" if cls else "default"


def _error_hit(kind: str, items: list[dict], subjects: list[str], cause: Optional[dict], version: Optional[str],
               cross: Optional[dict] = None, counted: tuple = (0, 0)):
    """One finding per kind of error: the lines, the first line's text (with the IB codes decoded), and
    what its catalogue entry says (class, meaning, fix); a kind whose lines are all consequences of an
    earlier failure (`cause`) is named as such, not as a second cause."""
    lines = [e["line_no"] for e in items]
    details = sorted({d for e in items if (d := _ib_detail(e.get("text", "")))}) if kind == "ib_completion" else []
    c = _class_text(items)
    variant = _variant(items, cause, bool(details), c["cls"])
    severity = Severity.INFO if variant == "consequence" else _SEVERITY.get(c["worst"])
    fixed = bool(c["fixed_in"]) and variant != "consequence" and _older(version, c["fixed_in"])
    cross = cross or {}
    fabric, acs, flaps = _nccl_cross.notes(c["cls"], kind, cross) if variant != "consequence" else (False, False, False)
    listed, total = counted  # the error lines the result lists, and the log's (more where the list is full)
    return hit(subjects, variant=variant, severity=severity,
               notes=when(fixed_in=fixed, cross_fabric=fabric, cross_acs=acs, cross_flaps=flaps, sampled=total > listed),
               listed=listed, total=total,
               fabric_said=cross.get("fabric", ""), acs_said=cross.get("acs", ""), flaps_said=cross.get("flaps", ""),
               fixed_in=c["fixed_in"], version=version or "not printed in the log",
               what=_ERROR_KIND_TEXT.get(kind, kind.replace("_", " ")), count=len(items), lines=_lines(lines),
               codes="; ".join(details[:3]), first=_first_line(items), cls=c["cls"], title=c["title"],
               meaning=c["meaning"], fix=c["fix"], entry=c["entry"],
               cause=_first_line([cause]) if cause else "", cause_line=cause["line_no"] if cause else 0,
               evidence=[_ev(n) for n in lines[:5]])


@check("NCCL004")
def nccl004(nccl_debug, nvidia_smi_q=None, fabricmanager=None, lspci_vvv=None, kernel_log=None) -> Iterator:
    """Errors (one finding per kind, with what the catalogue says of its class), with line numbers; a
    result of an older schema (no catalogue fields) has its other WARN lines reported as before."""
    nccl_debug = _as_dict(nccl_debug)
    errors = list(nccl_debug.get("errors") or [])
    by_kind: dict[str, list[dict]] = {}
    for e in errors:
        by_kind.setdefault(e.get("kind") or "nccl_error", []).append(e)
    causes = [e for e in errors if not e.get("consequence")]
    cause = min(causes, key=lambda e: e["line_no"]) if causes else None
    subjects = _hosts_subject(nccl_debug)
    cross = _nccl_cross.facts(nvidia_smi_q, fabricmanager, lspci_vvv, kernel_log)
    counted = (len(errors), nccl_debug.get("errors_total") or 0)
    for kind, items in by_kind.items():
        yield _error_hit(kind, items, subjects, cause, nccl_debug.get("nccl_version"), cross, counted)
    if "unrecognised" not in nccl_debug:  # else every WARN line is an error, harmless, or SYS004's
        yield from _plain_warns(nccl_debug, {e["line_no"] for e in errors}, subjects)


def _plain_warns(nccl_debug: Mapping[str, Any], error_lines: set, subjects: list[str]) -> Iterator:
    """The WARN lines of a result without catalogue fields (an older schema) that are no error: one
    warning finding, as before the catalogues."""
    warns = [w for w in nccl_debug.get("warnings") or [] if w["line_no"] not in error_lines]
    if warns:
        lines = [w["line_no"] for w in warns]
        total = max(len(warns), (nccl_debug.get("warnings_total") or 0) - len(error_lines))
        yield hit(subjects, variant="warn", count=total, lines=_lines(lines), first=_first_line(warns),
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


def _log_host(topology, nccl_debug: Mapping[str, Any]) -> Optional[str]:
    """The log's host the topology describes: its own name, or the log's only host; None when the log
    spans hosts and the topology names none of them (no safe pairing)."""
    topo_host = (topology.host() or "").split(":", 1)[-1]
    log_hosts = list(nccl_debug.get("hosts") or [])
    if topo_host in log_hosts:
        return topo_host
    if len(log_hosts) > 1:
        return None
    return log_hosts[0] if log_hosts else topo_host


def _sample_pair(topology, sample: Mapping[str, Any], host: str, devices: dict, bus_by_dev: dict):
    """(GPU, NIC) of one connection line of `host` over NET/IB: the rank's CUDA device (by busId when
    NCCL printed one, else by index) and the n-th NET/IB device; None when either is not in the model."""
    text = sample.get("text", "")
    m, n = _PREFIX_RE.match(text), _NET_DEV_RE.search(text)
    if not m or not n or n.group("net").lower() == "socket" or m.group("host") != host:
        return None
    name = devices.get(int(n.group("idx")))
    if name is None:
        return None
    dev = int(m.group("dev"))
    gpu = topology.resolve(bus_by_dev[dev]) if dev in bus_by_dev else None
    if gpu not in topology.gpus():
        gpu = topology.resolve(f"gpu:{dev}")
    nic = _nic_id(topology, name)
    return (gpu, nic) if gpu in topology.gpus() and nic is not None else None


def _used_pairs(nccl_debug: Mapping[str, Any], topology, devices: dict) -> dict[tuple[str, str], Optional[int]]:
    """{(GPU, NIC): first line} of the pairs the log's connection lines show on the topology's host."""
    host = _log_host(topology, nccl_debug)
    if host is None:
        return {}
    bus_by_dev = {r.get("cuda_dev"): r.get("bus_id") for r in nccl_debug.get("ranks") or []
                  if r.get("host") in (None, host) and r.get("bus_id")}
    seen: dict[tuple[str, str], Optional[int]] = {}
    for sample in nccl_debug.get("connections_sample") or []:
        pair = _sample_pair(topology, sample, host, devices, bus_by_dev)
        if pair is not None:
            seen.setdefault(pair, sample.get("line_no"))
    return seen


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
    for (gpu, nic), line_no in _used_pairs(nccl_debug, topology, devices).items():
        cls = topology.pair_class(gpu, nic)
        if cls not in far:
            continue
        nearest = topology.nearest_nic(gpu)
        better = nearest is not None and nearest[0] != nic and nearest[1] not in far
        yield hit([gpu, nic], gpu=gpu, nic=nic.split(":", 1)[-1], path=cls, notes=when(nearer_nic=better),
                  nearest=nearest[0].split(":", 1)[-1] if better else None, nearest_path=nearest[1] if better else None,
                  evidence=[_ev(line_no)], expectation="GPU-NIC path PIX/PXB (same PCIe switch) for GPUDirect RDMA")


def _gpus_per_node(nccl_debug: Mapping[str, Any], topology) -> tuple[Optional[int], Optional[tuple[str, int]]]:
    """(GPUs a node runs ranks on, None when the model's GPU count says it (it describes the log's host),
    else (host, highest CUDA device) of the log's prefixes: device N means at least N+1 GPUs)."""
    hosts = [h for h in nccl_debug.get("hosts") or [] if h]
    if topology is not None and topology.gpus():
        topo_host = (topology.host() or "").split(":", 1)[-1]
        if topo_host in hosts or len(hosts) <= 1:
            return len(topology.gpus()), None
    devs = nccl_debug.get("cuda_devs") or {}
    best = max(((max(d) + 1, h) for h, d in devs.items() if d), default=None)
    if best is None:
        return None, None
    return best[0], (best[1], best[0] - 1)


def _active_rates(topology) -> dict[str, float]:
    """{NIC name: rate Gb/s} of the Active IB ports the model knows."""
    rates: dict[str, float] = {}
    if topology is not None:
        for nic, p in topology.ib_ports():
            if p.get("state") == "Active" and p.get("rate_gbps"):
                rates.setdefault(nic.split(":", 1)[-1], p["rate_gbps"])
    return rates


def _share(used: list[str], gpus: int, seen_in_log, rate: Optional[float]) -> tuple[str, dict]:
    """(NCCL006 variant, facts) when fewer NICs than GPUs: the node's ceiling across the fabric, in GB/s
    when the line rate is known; GPUs counted from the model, or at least those the log shows."""
    facts: dict[str, Any] = {"gpus": gpus, "gpus_per_nic": f"{gpus / len(used):g}"}
    if seen_in_log is not None:
        facts.update(log_host=seen_in_log[0], cuda_dev=seen_in_log[1])
    if rate:
        per_nic = rate / 8
        facts.update(rate=f"{rate:g}", node_gbyte_s=f"{len(used) * per_nic:g}", per_gpu=f"{len(used) * per_nic / gpus:.1f}")
        return ("share_rate_log" if seen_in_log else "share_rate"), facts
    return ("share_log" if seen_in_log else "share"), facts


def _nics_expected(profile, few_for_profile: bool) -> str:
    if few_for_profile:
        return f"profile {profile.name}: {profile.nics} compute NICs"
    return "a NIC per GPU for inter-node traffic (DGX/HGX: 8 NDR NICs for 8 GPUs)"


def _used_nics(nccl_debug: Mapping[str, Any]) -> list[str]:
    """The NET/IB devices NCCL lists, in its order, each once."""
    return list(dict.fromkeys(d["name"] for d in nccl_debug.get("net_devices") or []
                              if d.get("kind") == "ib" and d.get("name")))


def _line_rate(used: list[str], rates: Mapping[str, float], profile) -> Optional[float]:
    """The slowest Active rate of the NICs NCCL uses, else the profile's NIC rate (Gb/s), else None."""
    rate = min((rates[n] for n in used if n in rates), default=None) or getattr(profile, "nic_rate_gbps", None)
    return float(rate) if rate else None


@check("NCCL006")
def nccl006(nccl_debug, params, topology=None, profile=None):
    """NCCL's NET/IB device list against the GPUs of a node: fewer NICs than GPUs caps what a node
    can send across the fabric (info, with the math); Active HCAs that NCCL leaves out (warning)."""
    nccl_debug = _as_dict(nccl_debug)
    used = _used_nics(nccl_debug)
    if not used:
        return None
    gpus, seen_in_log = _gpus_per_node(nccl_debug, topology)
    rates = _active_rates(topology)
    left_out = sorted(set(rates) - set(used))
    prof_nics = getattr(profile, "nics", None)
    few_for_profile = bool(prof_nics and len(used) < prof_nics)
    few_for_gpus = gpus is not None and len(used) < gpus
    if not (left_out or few_for_profile or few_for_gpus):
        return None  # a NIC per GPU (or no GPU count to compare with): nothing to say
    variant, facts = _share(used, gpus, seen_in_log, _line_rate(used, rates, profile)) if few_for_gpus \
        else ("default", {})
    hca = _env_flag(nccl_debug.get("env") or {}, "NCCL_IB_HCA")
    return hit(_hosts_subject(nccl_debug) + [f"nic:{n}" for n in used], evidence=[_ev()],
               severity=Severity.WARNING if left_out or few_for_profile else Severity.INFO,
               expectation=_nics_expected(profile, few_for_profile),
               variant=variant, notes=when(left_out=left_out, hca_leaves_out=left_out and hca,
                                           hca_chose=not left_out and hca, profile_nics=few_for_profile),
               nic_count=len(used), nics=", ".join(used), left_out=", ".join(left_out), hca=hca,
               profile=getattr(profile, "name", None), profile_nics=prof_nics, **facts)
