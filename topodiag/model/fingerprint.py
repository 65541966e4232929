"""A node's fingerprint: the facts of its topology and configuration that should be alike across
the nodes of a cluster, as one flat {key: value} dict (JSON scalars), for `topodiag fleet`.

    gpu.count = 8                      gpu.model = "NVIDIA H100 80GB HBM3"
    gpu_pairs.NV18 = 28                (how many GPU pairs of each path class)
    gpu:3.nvlinks_active = 18          gpu:3.pcie = "Gen5 x16"     gpu:3.numa = 0
    gpu:3.nearest_nic = "mlx5_3 PIX"
    nic:mlx5_3.port1.state = "Active"  nic:mlx5_3.port1.rate_gbps = 400.0
    nic:mlx5_3.port1.link_layer = "InfiniBand"                     nic:mlx5_3.firmware = "28.39.1002"
    nic:mlx5_3.model = "MT4129"        nic:mlx5_3.numa = 0
    driver_version = "550.54.15"       cuda_driver_version = "12.4"
    nccl.network = "IB"                nccl.transports = "NET/IB/GDRDMA,P2P/CUMEM"

A fact no input gave is absent (not null): a node without it differs from nodes that have it.
"""

from __future__ import annotations

from typing import Any

from .topology import Topology


def _pcie(attrs: dict) -> str | None:
    speed, width = attrs.get("pcie_link_speed") or attrs.get("pcie_link_gts"), attrs.get("pcie_link_width")
    if speed is None and width is None:
        return None
    if isinstance(speed, (int, float)):
        speed = {2.5: "Gen1", 5.0: "Gen2", 8.0: "Gen3", 16.0: "Gen4", 32.0: "Gen5", 64.0: "Gen6"}.get(float(speed), f"{speed:g} GT/s")
    return f"{speed or '?'} x{width if width is not None else '?'}"


def fingerprint(topology: Topology) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        if value is not None and value != "":
            out[key] = value

    gpus = topology.gpus()
    if gpus:
        put("gpu.count", len(gpus))
        models = sorted({m for g in gpus if (m := topology.node(g).get("model"))})
        put("gpu.model", models[0] if len(models) == 1 else (", ".join(models) if models else None))
    classes: dict[str, int] = {}
    for _, _, cls in topology.gpu_pairs():
        if cls:
            classes[cls] = classes.get(cls, 0) + 1
    for cls, n in sorted(classes.items()):
        put(f"gpu_pairs.{cls}", n)
    for g in gpus:
        attrs = topology.node(g)
        nvl = attrs.get("nvlink")
        if nvl is not None and not nvl.get("truncated"):
            put(f"{g}.nvlinks_active", nvl.get("active_count"))
        put(f"{g}.pcie", _pcie(attrs))
        put(f"{g}.numa", topology.numa_of(g))
        near = topology.nearest_nic(g)
        if near is not None:
            put(f"{g}.nearest_nic", f"{near[0].split(':', 1)[-1]} {near[1]}")
        if attrs.get("lost"):
            put(f"{g}.lost", True)
    for nic in topology.nics():
        attrs = topology.node(nic)
        put(f"{nic}.model", attrs.get("ca_type"))
        put(f"{nic}.firmware", attrs.get("firmware"))
        put(f"{nic}.numa", topology.numa_of(nic))
        put(f"{nic}.pcie", _pcie(attrs))
    for nic, port in topology.ib_ports():
        key = f"{nic}.port{port['port']}"
        put(f"{key}.state", port.get("state"))
        put(f"{key}.physical_state", port.get("physical_state"))
        put(f"{key}.rate_gbps", port.get("rate_gbps"))
        put(f"{key}.link_layer", port.get("link_layer"))
    for obs in topology.observations():
        if obs.get("source") == "nvml":
            put("driver_version", obs.get("driver_version"))
            put("cuda_driver_version", obs.get("cuda_driver_version"))
        elif obs.get("source") == "nccl_debug" and "nccl.network" not in out:
            put("nccl.network", obs.get("network"))
            put("nccl.version", obs.get("nccl_version"))
            transports = sorted(obs.get("transports") or {})
            put("nccl.transports", ",".join(transports) if transports else None)
    return out
