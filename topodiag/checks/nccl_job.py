"""NCCL rules about the job as a whole (NCCL007-NCCL008): which net plugin carried it, and whether the
nodes that log formed one job. Read from the `nccl_debug` parser's fields (topodiag/parsers/nccl_debug/):
`net_plugin` (the external plugin loaded), `net_plugins_failed` / `net_plugins_initialized` /
`net_plugin_assigned`, `network`, `env`, `hosts`, `cuda_devs`, `nranks` / `nranks_from`, `nnodes`,
`transports`."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from ..engine import Evidence, Severity, check, hit, when
from ._facts import listing
from .nccl import _as_dict, _env_flag, _hosts, _hosts_subject, _nodes

INTERNAL_NETS = ("ib", "socket")


def _used(nccl_debug: Mapping[str, Any]) -> Optional[str]:
    """The network NCCL assigned to the communicator (2.19+), else the one it said it used, else the
    internal transport its connection lines go through ("via NET/Socket/0") or whose device list it
    printed alone ("NET/IB : Using [0]mlx5_9:1/RoCE" with no "Using network" line: 2.4-2.11 fragments)."""
    named = nccl_debug.get("net_plugin_assigned") or nccl_debug.get("network")
    if named:
        return named
    nets = {k.split("/")[1].lower() for k in nccl_debug.get("transports") or {} if k.startswith("NET/")}
    nets = nets or {d.get("kind") for d in nccl_debug.get("net_devices") or []}
    return {frozenset({"ib"}): "IB", frozenset({"socket"}): "Socket"}.get(frozenset(nets))


def _plugin_off(env: Mapping[str, str]) -> str:
    """The settings with which the user turned the external net plugin off ("" when none)."""
    found = []
    if _env_flag(env, "NCCL_IBEXT_DISABLE") == "1":
        found.append("NCCL_IBEXT_DISABLE=1")
    plugin = _env_flag(env, "NCCL_NET_PLUGIN")
    if plugin is not None and plugin.lower() in ("none", "0"):
        found.append(f"NCCL_NET_PLUGIN={plugin}")
    return ", ".join(found)


def _failed_plugins(nccl_debug: Mapping[str, Any]) -> list[str]:
    """External plugins NCCL could not initialise (its internal IB and Socket transports are NCCL001's)."""
    return [p for p in nccl_debug.get("net_plugins_failed") or [] if p.lower() not in INTERNAL_NETS]


def _how_failed(nccl_debug: Mapping[str, Any]) -> str:
    """How the log shows the failure: NCCL's loader trace, else its line or the plugin's own WARN lines."""
    refusals = nccl_debug.get("net_plugin_refusals") or []
    return f"NCCL's plugin loader returned an error: {refusals[0]}" if refusals else \
        "'Failed to initialize NET plugin', or the plugin's own WARN lines"


@check("NCCL007")
def nccl007(nccl_debug):
    """An external net plugin (aws-ofi-nccl, IBext/SHARP, a vendor plugin) was loaded or tried but did not
    carry the job: its initialisation failed, or NCCL used its internal IB / Socket transport instead."""
    nccl_debug = _as_dict(nccl_debug)
    used = _used(nccl_debug)
    internal = str(used or "").lower()
    failed = _failed_plugins(nccl_debug)
    loaded = nccl_debug.get("net_plugin")
    off = _plugin_off(nccl_debug.get("env") or {})
    if not failed and not (loaded and internal in INTERNAL_NETS):
        return None
    single = _nodes(nccl_debug)[0] is False  # the network carries nothing in a single-node communicator
    return hit(_hosts_subject(nccl_debug), variant="default" if failed else "not_used",
               severity=Severity.INFO if single or off else None,
               notes=when(on_socket=internal == "socket", rdma_kept=bool(off) and internal == "ib", by_env=off,
                          single_node=single),
               evidence=[Evidence("nccl_debug", None, None)],
               expectation="the external net plugin initialised and assigned to the communicator",
               plugin=listing(failed, 3) if failed else loaded, used=used or "no network line", settings=off,
               how=_how_failed(nccl_debug))


def _one_host_comms(nccl_debug: Mapping[str, Any]) -> Optional[str]:
    """How the log shows every communicator holding one host's ranks (None when it does not): NCCL's
    nNodes 1 on every comm, or the largest comm (its comm lines or a ring order line) no bigger than the
    GPUs one host logs from."""
    nnodes = nccl_debug.get("nnodes")
    if nnodes is not None:
        return "NCCL reports nNodes 1 for every communicator" if nnodes == 1 else None
    nranks = nccl_debug.get("nranks")
    if nccl_debug.get("nranks_from") not in ("comm", "ring") or not nranks:
        return None
    if any(k.startswith("NET/") for k in (nccl_debug.get("transports") or {})):
        return None  # connections over the network: some communicator spans nodes
    per_host = max(len(d) for d in (nccl_debug.get("cuda_devs") or {}).values()) if nccl_debug.get("cuda_devs") else 0
    if per_host and nranks <= per_host:
        return f"the largest communicator has {nranks} rank(s), no more than the {per_host} GPU(s) one host runs"
    return None


@check("NCCL008")
def nccl008(nccl_debug):
    """Several hosts log, but every communicator holds one host's ranks: the nodes ran as separate
    single-node jobs (the launcher did not join them), so the job never crossed the network."""
    nccl_debug = _as_dict(nccl_debug)
    hosts = _hosts(nccl_debug)
    if len(hosts) < 2:
        return None
    how = _one_host_comms(nccl_debug)
    if how is None:
        return None
    return hit(_hosts_subject(nccl_debug), evidence=[Evidence("nccl_debug", None, None)],
               expectation="one communicator across the hosts of a multi-node job",
               count=len(hosts), hosts=listing(hosts, 4), how=how)
