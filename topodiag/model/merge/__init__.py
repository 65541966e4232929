"""Merging parsed inputs into one Topology: `build`, and one module here per source family.

Each module of this package (names without a leading underscore) declares
    SOURCES = ("source", ...)   the parser source names it merges
    PROVIDES = ("gpu.nvlinks", ...)  the capabilities (topodiag.model.schema.CAPABILITIES) it is the
                                first word on
    FILLS = ("gpu.pair_class", ...)  optional: the capabilities it gives too, where the first word
                                was silent (NVML's links after `nvlink -s`)
    NEEDS = ("gpu.index", ...)  the capabilities that must be in the graph before it merges: it joins
                                onto them or only fills their gaps (the first value of a fact stays)
    def merge(topo, item, host_id)
and `build` finds them itself (pkgutil over this package): a new source costs one module here.
The merge order is derived: a module comes after every module that PROVIDES something it NEEDS
(a topological sort; modules free to go in either order go by name). PROVIDES and FILLS together
say which sources give a capability (`capability_sources`, with the parsed-result facts of
schema.INPUT_FACTS): what a rule's `requires` is met by. Inputs are merged in that
order, then by the place of the source in SOURCES, whatever the order of the arguments, so node ids
and first-seen facts do not depend on it: `topo -m`, `topo -p2p`, `nvlink -s`, NVML, `nvidia-smi -q`,
NCCL's topology XML, the IB tools, `rdma link`, the sysfs probe, the GPU scope, NCCL logs and
nccl-tests, then the other run records. `python -m topodiag.model.merge` prints the order and why.
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
    """The merge modules of a package, in merge order; TypeError for one that lacks SOURCES, PROVIDES,
    NEEDS or merge, ValueError for a source two modules claim, a need nobody provides, a fact a
    module both provides and needs, or a cycle of needs."""
    mods = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{package.__name__}.{info.name}")
        if not _declares(mod):
            raise TypeError(f"{mod.__name__}: a merge module declares SOURCES (a tuple of source names), "
                            "PROVIDES and NEEDS (and optionally FILLS: tuples of capability names) and "
                            "merge(topo, item, host_id)")
        mods.append(mod)
    seen: dict[str, str] = {}
    for mod in mods:
        for source in mod.SOURCES:
            if source in seen:
                raise ValueError(f"{source} is merged by both {seen[source]} and {mod.__name__}")
            seen[source] = mod.__name__
    return tuple(sorted_by_needs(mods))


def _declares(mod: ModuleType) -> bool:
    sources, provides, needs, merge = (getattr(mod, n, None) for n in ("SOURCES", "PROVIDES", "NEEDS", "merge"))
    fills = getattr(mod, "FILLS", ())
    return (isinstance(sources, tuple) and bool(sources) and callable(merge)
            and all(isinstance(t, tuple) and all(isinstance(x, str) for x in t)
                    for t in (sources, provides, fills, needs)))


def dependencies(mods) -> dict[str, dict[str, tuple[str, ...]]]:
    """module name -> {module it comes after: the facts it needs from that one}; ValueError for a
    need nobody provides or a fact a module both provides and needs."""
    providers: dict[str, list] = {}
    for mod in mods:
        for fact in mod.PROVIDES:
            providers.setdefault(fact, []).append(mod)
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for mod in mods:
        after: dict[str, list[str]] = {}
        for fact in mod.NEEDS:
            if fact in mod.PROVIDES:
                raise ValueError(f"{mod.__name__} both provides and needs {fact}")
            if fact not in providers:
                raise ValueError(f"{mod.__name__} needs {fact}, which no merge module provides")
            for other in providers[fact]:
                after.setdefault(other.__name__, []).append(fact)
        out[mod.__name__] = {k: tuple(v) for k, v in after.items()}
    return out


def sorted_by_needs(mods) -> list[ModuleType]:
    """The modules in an order where each comes after those that provide what it needs; among the
    modules free to go, the first by name. ValueError naming the modules of a cycle."""
    by_name = {m.__name__: m for m in mods}
    waiting = {name: set(after) for name, after in dependencies(mods).items()}
    ready = sorted(name for name, after in waiting.items() if not after)
    out: list[ModuleType] = []
    while ready:
        name = ready.pop(0)
        out.append(by_name[name])
        del waiting[name]
        for other, after in waiting.items():
            if name in after:
                after.discard(name)
                if not after:
                    ready = sorted(ready + [other])
    if waiting:
        raise ValueError(f"merge modules that need each other's facts (a cycle): {', '.join(sorted(waiting))}")
    return out


@lru_cache(maxsize=1)
def merge_modules() -> tuple[ModuleType, ...]:
    """This package's merge modules, in merge order (found once per process)."""
    return discover(sys.modules[__name__])


@lru_cache(maxsize=1)
def _by_source() -> dict[str, tuple[tuple[int, int], Merge]]:
    """source -> (sort key, merge function)."""
    return {source: ((place, i), mod.merge) for place, mod in enumerate(merge_modules())
            for i, source in enumerate(mod.SOURCES)}


@lru_cache(maxsize=1)
def capability_sources() -> dict[str, tuple[str, ...]]:
    """capability -> the inputs that give it, in merge order then by name: each merge module's
    PROVIDES and FILLS for every source it merges, and schema.INPUT_FACTS."""
    from ..schema import INPUT_FACTS

    out: dict[str, list[str]] = {}
    for mod in merge_modules():
        for cap in mod.PROVIDES + getattr(mod, "FILLS", ()):
            out.setdefault(cap, []).extend(mod.SOURCES)
    for source, caps in sorted(INPUT_FACTS.items()):
        for cap in caps:
            out.setdefault(cap, []).append(source)
    return {cap: tuple(dict.fromkeys(sources)) for cap, sources in sorted(out.items())}


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


def explain() -> str:
    """The merge order, each module with the facts that put it after others, then each capability
    with the inputs that give it (`python -m topodiag.model.merge`)."""
    mods = merge_modules()
    deps = dependencies(mods)
    lines = []
    for place, mod in enumerate(mods, 1):
        name = mod.__name__.rsplit(".", 1)[1]
        after = "; ".join(f"{other.rsplit('.', 1)[1]} ({', '.join(facts)})" for other, facts in deps[mod.__name__].items())
        lines.append(f"{place:2}. {name}: {', '.join(mod.SOURCES)}" + (f"  after {after}" if after else ""))
    lines += ["", "Capabilities (what rules require) and the inputs that give them:"]
    lines += [f"  {cap}: {', '.join(sources)}" for cap, sources in capability_sources().items()]
    return "\n".join(lines)

