"""Merging parsed inputs into one Topology: `build`, and one module here per source family.

Each module of this package (names without a leading underscore) declares
    SOURCES = ("source", ...)   the parser source names it merges
    ORDER = <int>               its place in the merge order
    def merge(topo, item, host_id)
and `build` finds them itself (pkgutil over this package): a new source costs one module here.
Inputs are merged by (ORDER, place of the source in SOURCES), whatever the order of the arguments,
so node ids and first-seen facts do not depend on it: `topo -m`, `topo -p2p`, `nvlink -s`, NVML,
NCCL's topology XML, ibstat, ibv_devinfo, ibstatus, the sysfs probe, NCCL logs, nccl-tests.
Sources no module merges are noted (`topology.notes`) and skipped. After the merge, `paths`
checks the NVLink counts the inputs imply against each other.

Joins: `topo -m` GPUs ("GPU3") and `nvlink -s` GPUs ("GPU 3") by index; `topo -m` NICs by their
RDMA device name (the NIC Legend's `device`, or a column named mlx5_0) with the IB tools' CA
names; NCCL topology XML GPUs by CUDA device index where an index-keyed GPU exists (else by bus
id), NICs by net name. NCCL logs and nccl-tests results are kept as observations on the host node.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from functools import lru_cache
from types import ModuleType
from typing import Callable, Iterable

from ...records import ParsedInput
from ..gpu_set import settle
from ..paths import check_nvlink_counts
from ..topology import Topology

Merge = Callable[[Topology, ParsedInput, str], None]


def discover(package: ModuleType) -> tuple[ModuleType, ...]:
    """The merge modules of a package, in merge order; TypeError for one that lacks SOURCES, ORDER
    or merge, ValueError when two share an ORDER or claim one source."""
    mods = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{package.__name__}.{info.name}")
        sources, order, merge = (getattr(mod, n, None) for n in ("SOURCES", "ORDER", "merge"))
        if not (isinstance(sources, tuple) and sources and isinstance(order, int) and callable(merge)):
            raise TypeError(f"{mod.__name__}: a merge module declares SOURCES (a tuple of source "
                            "names), ORDER (an int) and merge(topo, item, host_id)")
        mods.append(mod)
    mods.sort(key=lambda m: m.ORDER)
    for prev, mod in zip(mods, mods[1:]):
        if prev.ORDER == mod.ORDER:
            raise ValueError(f"{prev.__name__} and {mod.__name__} share ORDER {mod.ORDER}")
    seen: dict[str, str] = {}
    for mod in mods:
        for source in mod.SOURCES:
            if source in seen:
                raise ValueError(f"{source} is merged by both {seen[source]} and {mod.__name__}")
            seen[source] = mod.__name__
    return tuple(mods)


@lru_cache(maxsize=1)
def merge_modules() -> tuple[ModuleType, ...]:
    """This package's merge modules, in merge order (found once per process)."""
    return discover(sys.modules[__name__])


@lru_cache(maxsize=1)
def _by_source() -> dict[str, tuple[tuple[int, int], Merge]]:
    """source -> (sort key, merge function)."""
    return {source: ((mod.ORDER, i), mod.merge) for mod in merge_modules()
            for i, source in enumerate(mod.SOURCES)}


def merged_sources() -> tuple[str, ...]:
    """Every source name some module merges, in merge order."""
    table = _by_source()
    return tuple(sorted(table, key=lambda s: table[s][0]))


def build(inputs: Iterable[ParsedInput], host: str | None = None) -> Topology:
    """One Topology from whatever inputs are present; unknown sources are noted and skipped."""
    table = _by_source()
    last = (float("inf"), 0)
    items = sorted(inputs, key=lambda i: table[i.source][0] if i.source in table else last)
    topo = Topology()
    host_id = f"host:{host or _host_from(items) or 'local'}"
    topo.add_node(host_id, "host", name=host_id.split(":", 1)[1])
    for item in items:
        entry = table.get(item.source)
        if entry is None:
            topo.notes.append(f"{item.source} ({item.path}): not merged into the topology")
            continue
        entry[1](topo, item, host_id)
    settle(topo)
    check_nvlink_counts(topo)
    return topo


def _host_from(items: list[ParsedInput]) -> str | None:
    """The host an NCCL log names, when it names exactly one."""
    for item in items:
        if item.source == "nccl_debug":
            hosts = list(getattr(item.result, "hosts", ()) or ())
            if len(hosts) == 1:
                return hosts[0]
    return None
