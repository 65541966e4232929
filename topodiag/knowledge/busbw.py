"""Bus bandwidth (nccl-tests): busbw = algbw x factor(n), and what a healthy all_reduce reaches per GPU
class and transport (data: busbw.toml).

docs/domain.md "Bus bandwidth (nccl-tests)": all_reduce 2(n-1)/n; all_gather / reduce_scatter (n-1)/n;
broadcast / reduce 1. sendrecv 1 and alltoall, gather, scatter (n-1)/n as nccl-tests computes them
(its src/*.cu, doc/PERFORMANCE.md)."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Callable, Mapping

from ._data import table
from .pcie import pcie_one_way_gbyte_s

_T = table("busbw")

BUSBW_FACTORS: Mapping[str, Callable[[int], float]] = MappingProxyType({
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "sendrecv": lambda n: 1.0,
    "alltoall": lambda n: (n - 1) / n,
    "gather": lambda n: (n - 1) / n,
    "scatter": lambda n: (n - 1) / n,
})

_COLLECTIVE_ALIASES: Mapping[str, str] = MappingProxyType({
    "allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
    "broadcast": "broadcast", "reduce": "reduce", "sendrecv": "sendrecv", "alltoall": "alltoall",
    "gather": "gather", "scatter": "scatter",
})


def normalize_collective(name: str) -> str:
    """"all_reduce_perf", "AllReduce", "allreduce" -> "all_reduce"; ValueError when unknown."""
    key = re.sub(r"_perf$", "", str(name).strip().lower())
    key = key.replace("_", "").replace("-", "").replace(" ", "")
    if key not in _COLLECTIVE_ALIASES:
        raise ValueError(f"unknown collective {name!r} (known: {', '.join(BUSBW_FACTORS)})")
    return _COLLECTIVE_ALIASES[key]


def busbw_factor(collective: str, nranks: int) -> float:
    """busbw / algbw for a collective over nranks ranks (all_reduce, 8 ranks -> 1.75)."""
    if nranks < 1:
        raise ValueError(f"nranks must be >= 1, got {nranks}")
    return BUSBW_FACTORS[normalize_collective(collective)](nranks)


def busbw_from_algbw(algbw_gbyte_s: float, collective: str, nranks: int) -> float:
    return algbw_gbyte_s * busbw_factor(collective, nranks)


# Fractions of the path's nominal one-way GB/s a healthy ring all_reduce reaches (busbw.toml).
NVLINK_RING_EFFICIENCY: float = _T["nvlink_ring"]["efficiency"]
PCIE_P2P_EFFICIENCY: float = _T["pcie_p2p"]["efficiency"]
HOST_STAGED_EFFICIENCY: float = _T["host_staged"]["efficiency"]
PLATEAU_NO_MODEL_GBYTE_S: float = _T["plateau"]["no_model_gbyte_s"]

TRANSPORTS: Mapping[str, float] = MappingProxyType({
    "nvlink": NVLINK_RING_EFFICIENCY, "pcie_p2p": PCIE_P2P_EFFICIENCY, "host_staged": HOST_STAGED_EFFICIENCY})


def busbw_source(transport: str) -> str:
    """Where a transport's efficiency comes from (busbw.toml `source`)."""
    key = {"nvlink": "nvlink_ring"}.get(transport, transport)
    return _T[key]["source"]


def pcie_busbw_gbyte_s(gen: int | None, width: int = 16, *, staged: bool = False) -> float | None:
    """all_reduce busbw a healthy PCIe-only node reaches inside itself: the GPU's one-way PCIe figure x the
    P2P efficiency, or x the host-staged efficiency when GPU P2P is not available; None for an unknown
    generation."""
    one_way = pcie_one_way_gbyte_s(gen, width)
    if one_way is None:
        return None
    return one_way * (HOST_STAGED_EFFICIENCY if staged else PCIE_P2P_EFFICIENCY)
