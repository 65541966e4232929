"""Fingerprint keys in words, for the outlier lines of `topodiag fleet`:

    nic:mlx5_3.port1.rate_gbps   -> "nic:mlx5_3 port 1 at 200 Gb/s, 255 others at 400"
    gpu:5.nvlinks_active         -> "gpu:5 has 17 active NVLinks, 511 others 18"
    nic:mlx5_0.firmware          -> "firmware of mlx5_0 28.38.1002, 99 others 28.39.1002"
    gpu:3.nearest_nic            -> "gpu:3 nearest NIC mlx5_3 at SYS, 255 others at PIX"

Each key has three phrases: `own` (the node's value, with the key's subject), `other` (the
majority's value, after "N others"), `label` (the fact itself, for a node that lacks it).
A key this module does not know is worded as "KEY VALUE".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

_GPU_RE = re.compile(r"(gpu:.+?)\.([a-z_]+)\Z")
_NIC_RE = re.compile(r"(nic:(.+?))\.(?:port(\d+)\.)?([a-z_]+)\Z")


@dataclass(frozen=True)
class KeyParts:
    entity: Optional[str]  # "gpu:3", "nic:mlx5_3"; None for node-wide keys
    port: Optional[str]
    attr: str
    name: str  # the entity without its kind ("mlx5_3"), or the key's argument ("NV18" of gpu_pairs.NV18)

    @property
    def subject(self) -> Optional[str]:
        """What a missing or extra group of facts is about: "gpu:3", "nic:mlx5_3 port 1"."""
        if self.entity and self.port:
            return f"{self.entity} port {self.port}"
        return self.entity


def parse_key(key: str) -> KeyParts:
    m = _NIC_RE.match(key)
    if m:
        return KeyParts(m.group(1), m.group(3), m.group(4), m.group(2))
    m = _GPU_RE.match(key)
    if m:
        return KeyParts(m.group(1), None, m.group(2), m.group(1).split(":", 1)[1])
    head, _, arg = key.partition(".")
    if head == "gpu_pairs":
        return KeyParts(None, None, "gpu_pairs", arg)
    return KeyParts(None, None, key, "")


def fmt(value: Any) -> str:
    """A value as people write it: 400.0 -> "400", True -> "yes"."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}" if value != int(value) or abs(value) >= 1e15 else str(int(value))
    return str(value)


# attr -> (own, other, label); {s}: subject ("gpu:3", "nic:mlx5_3 port 1"), {n}: name, {v}: value
_ENTITY = {
    "nvlinks_active": ("{e} has {v} active NVLinks", "{v}", "{e} active NVLink count"),
    "pcie": ("{e} PCIe {v}", "{v}", "{e} PCIe link"),
    "numa": ("{e} on NUMA node {v}", "{v}", "{e} NUMA node"),
    "lost": ("{e} lost {v}", "{v}", "{e} lost"),
    "model": ("{e} model {v}", "{v}", "{e} model"),
    "firmware": ("firmware of {n} {v}", "{v}", "firmware of {n}"),
    "state": ("{s} {v}", "{v}", "{s} state"),
    "physical_state": ("{s} physical state {v}", "{v}", "{s} physical state"),
    "rate_gbps": ("{s} at {v} Gb/s", "at {v}", "{s} rate"),
    "link_layer": ("{s} link layer {v}", "{v}", "{s} link layer"),
}
_NODE = {
    "gpu.count": ("{v} GPUs", "{v}", "GPU count"),
    "gpu.model": ("GPU model {v}", "{v}", "GPU model"),
    "gpu_pairs": ("{v} GPU pairs at {n}", "{v}", "GPU pairs at {n}"),
    "driver_version": ("driver {v}", "{v}", "driver version"),
    "cuda_driver_version": ("CUDA driver {v}", "{v}", "CUDA driver version"),
    "nccl.network": ("NCCL network {v}", "{v}", "NCCL network"),
    "nccl.version": ("NCCL {v}", "{v}", "NCCL version"),
    "nccl.transports": ("NCCL transports {v}", "{v}", "NCCL transports"),
}


def _phrases(key: str) -> tuple[KeyParts, tuple[str, str, str]]:
    p = parse_key(key)
    if p.entity is not None and p.attr in _ENTITY:
        return p, _ENTITY[p.attr]
    if p.entity is None and p.attr in _NODE:
        return p, _NODE[p.attr]
    return p, ("{k} {v}", "{v}", "{k}")


def _fill(template: str, key: str, p: KeyParts, value: Any = None) -> str:
    return template.format(e=p.entity or "", s=p.subject or "", n=p.name, k=key, v=fmt(value))


def _nearest(value: Any) -> tuple[str, str]:
    nic, _, cls = str(value).partition(" ")
    return nic, cls or "?"


def own(key: str, value: Any) -> str:
    """The node's fact: "nic:mlx5_3 port 1 at 200 Gb/s"."""
    p, (o, _, _) = _phrases(key)
    if p.attr == "nearest_nic" and p.entity:
        nic, cls = _nearest(value)
        return f"{p.entity} nearest NIC {nic} at {cls}"
    if p.attr == "lost" and value is True:
        return f"{p.entity} lost (fell off the bus)"
    if p.attr == "gpu_pairs" and value == 1:
        return f"1 GPU pair at {p.name}"
    if key == "gpu.count" and value == 1:
        return "1 GPU"
    if p.attr == "nvlinks_active" and value == 1 and p.entity:
        return f"{p.entity} has 1 active NVLink"
    return _fill(o, key, p, value)


def other(key: str, value: Any, mine: Any = None) -> str:
    """The majority's value, after "N others": "at 400"; for the nearest NIC, only the class when
    the NIC is the node's own."""
    p, (_, t, _) = _phrases(key)
    if p.attr == "nearest_nic" and p.entity:
        nic, cls = _nearest(value)
        return f"at {cls}" if mine is not None and _nearest(mine)[0] == nic else f"{nic} at {cls}"
    return _fill(t, key, p, value)


def label(key: str) -> str:
    """The fact itself: "nic:mlx5_3 port 1 rate"."""
    p, (_, _, lab) = _phrases(key)
    if p.attr == "nearest_nic" and p.entity:
        return f"{p.entity} nearest NIC"
    return _fill(lab, key, p)


def others(n: int) -> str:
    return f"{n} other" if n == 1 else f"{n} others"


def differs(key: str, value: Any, majority: Any, n: int) -> str:
    """"nic:mlx5_3 port 1 at 200 Gb/s, 255 others at 400"."""
    return f"{own(key, value)}, {others(n)} {other(key, majority, value)}"


def missing(key: str, majority: Any, n: int) -> str:
    """"firmware of mlx5_0 absent, 255 others 28.39.1002"."""
    return f"{label(key)} absent, {others(n)} {other(key, majority)}"


def only_on(key: str, value: Any, n: int) -> str:
    """"gpu:3 lost (fell off the bus), absent on 255 others"."""
    return f"{own(key, value)}, absent on {others(n)}"


def subject_missing(subject: str, facts: int, n: int) -> str:
    """A node that lacks every fact of a NIC, port or GPU the others have."""
    return f"{subject} absent ({facts} facts), {others(n)} have it"


def subject_only_on(subject: str, facts: int, n: int) -> str:
    return f"{subject} present ({facts} facts), absent on {others(n)}"


MAX_DUPLICATE_NODES = 8  # nodes named in a duplicate host line (the rest counted)


def duplicate(host: str, nodes: list) -> str:
    """"host gpu01 reported by 3 sources: gpu01, gpu05, gpu09"."""
    shown = ", ".join(nodes[:MAX_DUPLICATE_NODES])
    more = len(nodes) - MAX_DUPLICATE_NODES
    return f"host {host} reported by {len(nodes)} sources: {shown}" + (f" +{more} more" if more > 0 else "")
