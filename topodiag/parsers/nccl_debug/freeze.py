"""Freezing what `Facts` accumulated into the Result (records.py): the rank count and where it came
from, the socket-fallback reasons, the per-host and per-rank NET transports, and every capped list."""

from __future__ import annotations

from ..base import ParseError
from .records import NO_NCCL, LogLine, Rank, Result, add_name as _add_name


def _nranks(st) -> tuple:
    """(nranks, where it came from): the comm lines, the ring lines, the largest rank seen + 1."""
    if st.comm_nranks is not None:
        return st.comm_nranks, "comm"
    if st.ring_nranks:
        return st.ring_nranks, "ring"
    if st.max_rank >= 0:
        return st.max_rank + 1, "max_rank"
    return None, None


def _socket_reasons(st, refused) -> list[str]:
    """Why NCCL used sockets, as its lines say (only when a socket transport is in evidence)."""
    socket_seen = (st.network == "Socket" or any(k.startswith("NET/Socket") for k in st.transports)
                   or any(d.kind == "socket" for d in st.devices.values()))
    reasons: list[str] = []
    if socket_seen:
        if st.ib_no_device:
            reasons.append("NET/IB : No device found")
        reasons += [f"Failed to initialize NET plugin {name}" for name in st.plugins_failed]
        if refused:
            reasons.append(f"net plugin {refused} refused ({st.refusals[0]})")
        if st.env.get("NCCL_IB_DISABLE") == "1":
            reasons.append("NCCL_IB_DISABLE=1")
        if st.env.get("NCCL_NET", "").lower() == "socket":
            reasons.append("NCCL_NET=Socket")
    return reasons


def result(st) -> Result:
    """The Result of a `Facts` (ParseError when no NCCL line was seen)."""
    if st.nccl == 0:
        raise ParseError(NO_NCCL, st.n)
    nranks, nfrom = _nranks(st)
    ranks = tuple(
        Rank(r, v[0], v[1], v[2], v[3])
        for r, v in sorted(st.ranks.items())
        if nranks is None or r < nranks
    )
    gdr = True if st.gdr_on else (False if st.gdr_off else None)
    plugin = st.plugin_loaded or st.plugin_p2p or ("aws-ofi-nccl" if st.plugin_ofi else None)
    failed = list(st.plugins_failed)
    refused = st.refused_plugin(plugin)
    if refused:
        _add_name(failed, refused)
    reasons = _socket_reasons(st, refused)
    cuda = st.cuda or st.driver
    return Result(
        nccl_version=st.version,
        cuda_version=cuda,
        cuda_driver_version=st.driver,
        hosts=tuple(sorted(st.hosts)),
        cuda_devs={h: sorted(d) for h, d in sorted(st.cuda_devs.items())},
        nranks=nranks,
        nranks_from=nfrom,
        nnodes=st.nnodes,
        ranks=ranks,
        network=st.network,
        networks=tuple(st.networks),
        net_plugin=plugin,
        net_plugin_path=st.plugin_path,
        net_plugins_initialized=tuple(st.plugins_initialized),
        net_plugins_failed=tuple(failed),
        net_plugin_refusals=tuple(st.refusals),
        net_plugin_assigned=st.plugin_assigned,
        collnet_plugin=st.collnet_plugin,
        net_devices=tuple(st.devices.values()),
        bootstrap_interfaces=tuple(st.bootstrap.values()),
        gid_index=st.gid,
        qp_mtus=st.qp_result(),
        gdr=gdr,
        gdr_lines=tuple(st.gdr_lines),
        transports=dict(sorted(st.transports.items())),
        net_by_host=st.net_by_host(),
        net_by_rank=st.net_by_rank(),
        connections_sample=tuple(st.sample),
        env=dict(sorted(st.env.items())),
        channels=dict(st.channels),
        init_complete=st.init_complete,
        warnings=tuple(st.warnings),
        warnings_total=st.warnings_total,
        errors=tuple(st.errors),
        errors_total=st.errors_total,
        socket_fallback_reasons=tuple(reasons),
        unrecognised=tuple(LogLine(n, t) for n, t in st.unrecognised),
        unrecognised_total=st.unrecognised_total,
        lines=st.n,
        nccl_lines=st.nccl,
    )
