"""The records an NCCL_DEBUG log parses into (the JSON schema is in the package docstring), and the
caps that keep a multi-GB log's result small."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

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
MAX_QP_MTUS = 256

# The IB MTU enum NCCL prints in its per-QP lines ("mtu 5"): enum ibv_mtu, 1..5.
IB_MTU_BYTES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}

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
class QpMtu:
    """What NCCL's per-QP lines ("NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 576 mtu 3 GID 3 (...)") say of
    one host's port: the MTU its queue pairs were set up with (the port's active MTU)."""

    host: Optional[str]
    device: Optional[str]
    net_dev: Optional[int]
    ib_dev: Optional[int]
    port: int
    link_layer: str
    mtu: int
    mtu_bytes: Optional[int]
    qps: int
    line_no: int


@dataclass(frozen=True)
class LogLine:
    line_no: int
    text: str


@dataclass(frozen=True)
class ErrorLine:
    """A failure line: its kind (classify.py), and what the catalogue entry that explains it says
    (class_ is written "class" in JSON; None/False when no entry does)."""

    line_no: int
    text: str
    kind: str
    class_: Optional[str] = None
    entry: Optional[str] = None
    severity: Optional[str] = None
    consequence: bool = False


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
    nnodes: Optional[int] = None
    ranks: tuple[Rank, ...] = ()
    network: Optional[str] = None
    networks: tuple[str, ...] = ()
    net_plugin: Optional[str] = None
    net_plugin_path: Optional[str] = None
    net_plugins_initialized: tuple[str, ...] = ()
    net_plugins_failed: tuple[str, ...] = ()
    net_plugin_refusals: tuple[str, ...] = ()
    net_plugin_assigned: Optional[str] = None
    collnet_plugin: Optional[str] = None
    net_devices: tuple[NetDevice, ...] = ()
    bootstrap_interfaces: tuple[NetDevice, ...] = ()
    gid_index: Optional[int] = None
    qp_mtus: tuple[QpMtu, ...] = ()
    gdr: Optional[bool] = None
    gdr_lines: tuple[LogLine, ...] = ()
    transports: dict = None  # type: ignore[assignment]
    net_by_host: dict = None  # type: ignore[assignment]
    net_by_rank: dict = None  # type: ignore[assignment]
    connections_sample: tuple[LogLine, ...] = ()
    env: dict = None  # type: ignore[assignment]
    channels: dict = None  # type: ignore[assignment]
    init_complete: bool = False
    warnings: tuple[LogLine, ...] = ()
    warnings_total: int = 0
    errors: tuple[ErrorLine, ...] = ()
    errors_total: int = 0
    socket_fallback_reasons: tuple[str, ...] = ()
    unrecognised: tuple[LogLine, ...] = ()
    unrecognised_total: int = 0
    lines: int = 0
    nccl_lines: int = 0


def add_name(names: list[str], name: str) -> None:
    """Append a stripped name once, within MAX_NETWORKS (the capped name lists of the Result)."""
    name = name.strip()[:MAX_TEXT]
    if name and name not in names and len(names) < MAX_NETWORKS:
        names.append(name)
