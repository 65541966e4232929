"""Helpers several merge modules use (not a merge module: the leading underscore keeps discovery off)."""

from __future__ import annotations

import re

from ...records import ParsedInput
from ..topology import Topology, source_ref
from ...parsers.base import is_digits


def ref(item: ParsedInput, line_no: int | None) -> dict:
    """The provenance record of a fact from this input (at this line, when known)."""
    return source_ref(item.source, item.path, line_no)


def gpu_id(name: str) -> str:
    """`nvidia-smi topo` names GPUs "GPU3": gpu:3; any other name stands as it is (gpu:<name>)."""
    tail = name[3:]
    return f"gpu:{tail}" if name.startswith("GPU") and is_digits(tail) else f"gpu:{name}"


def observe(topo: Topology, host_id: str, item: ParsedInput, facts: dict) -> None:
    """Keep a summary of an input on the host node (observations) and the input among its sources."""
    attrs = topo.node(host_id)
    attrs.setdefault("observations", []).append({"source": item.source, "file": item.path, **facts})
    r = ref(item, None)
    if r not in attrs["sources"]:
        attrs["sources"].append(r)


def add_numa_cpus(topo: Topology, numa: str, cpus: str, r: dict) -> None:
    """A NUMA node's CPU list; GPUs of one node may print different affinity (kept as a list)."""
    attrs = topo.node(numa)
    seen = attrs.setdefault("cpu_affinities", [])
    if cpus not in seen:
        seen.append(cpus)
    if "cpu_affinity" not in attrs:
        attrs["cpu_affinity"] = cpus
        attrs["provenance"]["cpu_affinity"] = r


# Software RDMA devices (Soft RoCE: rdma_rxe, Soft iWARP: siw) run over an ordinary netdev: no HCA.
# Named rxe* / siw* unless renamed; their drivers report these vendor ids (rxe 0xffffff, siw 0x626d74 'bmt').
_SOFTWARE_NAME = re.compile(r"^(?:rxe|siw)", re.I)
_SOFTWARE_VENDOR_IDS = {0xFFFFFF: "Soft RoCE (rxe)", 0x626D74: "Soft iWARP (siw)"}


def software_rdma(name: str | None, vendor_id: str | int | None = None) -> str | None:
    """"Soft RoCE (rxe)" / "Soft iWARP (siw)" for a software RDMA device, by its vendor id or name; None
    for a hardware one (or one nothing tells)."""
    try:
        vid = vendor_id if isinstance(vendor_id, int) else int(str(vendor_id), 0) if vendor_id else None
    except ValueError:
        vid = None
    if vid in _SOFTWARE_VENDOR_IDS:
        return _SOFTWARE_VENDOR_IDS[vid]
    m = _SOFTWARE_NAME.match(name or "")
    if m:
        return "Soft RoCE (rxe)" if m.group(0).lower() == "rxe" else "Soft iWARP (siw)"
    return None
