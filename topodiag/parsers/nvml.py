"""Parser for the NVML probe JSON (`python -m topodiag.live.nvml_probe`, schema_version 1).

The probe is what NVML itself says (see topodiag/live/nvml_probe.py for every field); live and
replayed probes go through this same parser. A few lines of one:

    {
     "probe": "nvml",
     "schema_version": 1,
     "ok": true,
     ...
       {"link": 0, "active": true, "version": 6, "remote_pci_bus_id": "0000:07:00.0", "remote_device_type": "switch", "speed_gbps": 26.562},
     ...
     "pairs": [
      {"a": 0, "b": 1, "topology": "NODE", "topology_level": 40, "p2p": {"read": "OK", "write": "OK", "nvlink": "OK", "atomics": "OK"}},

A probe with ok false (pynvml missing, nvmlInit failed: driver not loaded...) parses: the rules need
to know NVML failed and why. JSON that is not an NVML probe, or a schema_version other than 1, is
refused with the line of the JSON error or of the offending key.

JSON: {source: "nvml", schema_version, ok, error, error_name (NVML_ERROR_* or null), driver_version,
       cuda_driver_version, nvml_version,
       gpus: [{index, model (the probe's name), uuid, serial, pci_bus_id ("0000:18:00.0"), pci_bus_id_raw, numa_node (the
               CPU NUMA node), numa_affinity [int], cpu_affinity, gpu_numa_id (the GPU's own NUMA
               node, Grace platforms only), lost,
               pcie {current_gen, max_gen, current_width, max_width},
               nvlinks: [{link, active, version (NVML code), version_name ("4.0"), remote_pci_bus_id,
                          remote_device_type ("gpu" | "switch" | "ibmnpu" | "unknown"), speed_gbps}],
               nvlink_count (links NVML reports), active_nvlinks, nvlink_end_error}],
       pairs: [{a, b, topology (NVML level name), topology_level (0..50), path_class (the topo -m
                code of that level: PIX, PXB, PHB, NODE, SYS; null for INTERNAL), p2p {read, write,
                nvlink, atomics} ("OK", "CNS", "GNS", "TNS", "NS", "DR", "U")}],
       unsupported: [{call, error_name, reason}] (sorted by call), notes: [str],
       died: null, or {how ("signal" | "timeout" | "exit" | "output"), signal ("SIGSEGV"), rc,
             last_call (the NVML call the probe's child process had begun), seconds}: the probe's
             process died or was stopped, and live collection wrote the probe (live/child.py)}
A value NVML did not give ("n/a" in the probe) or was not asked for is null; `unsupported` says why.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from .base import ParseError, ParserInfo, blank_provenance_header, listing, note
from .sniff.nvml import sniff

INFO = ParserInfo(
    source="nvml",
    tool="python -m topodiag.live.nvml_probe",
    description="the NVML probe's JSON: GPUs, PCIe, NUMA, NVLinks and their far ends, P2P by pair",
    timeout_s=15.0,
    prolog_safe=True,
    probe="nvml",
)
SOURCE = INFO.source
SCHEMA_VERSION = 1
NA = "n/a"

# nvmlNvlinkVersion_t (NVML_NVLINK_VERSION_*): NVML reports this code, not the generation.
NVLINK_VERSION_NAMES = {1: "1.0", 2: "2.0", 3: "2.2", 4: "3.0", 5: "3.1", 6: "4.0", 7: "5.0", 8: "6.0"}
TOPOLOGY_LEVELS = {0: "INTERNAL", 10: "SINGLE", 20: "MULTIPLE", 30: "HOSTBRIDGE", 40: "NODE", 50: "SYSTEM"}
# The `nvidia-smi topo -m` code for each NVML level (INTERNAL, one board, has none).
PATH_CLASSES = {10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
P2P_CODES = ("OK", "CNS", "GNS", "TNS", "NS", "DR", "U")
REMOTE_TYPES = ("gpu", "switch", "ibmnpu", "unknown")


@dataclass(frozen=True)
class Pcie:
    current_gen: int | None = None
    max_gen: int | None = None
    current_width: int | None = None
    max_width: int | None = None


@dataclass(frozen=True)
class NvLink:
    link: int
    active: bool | None
    version: int | None
    version_name: str | None
    remote_pci_bus_id: str | None
    remote_device_type: str | None
    speed_gbps: float | None


@dataclass(frozen=True)
class GpuFabric:
    """NVML's GPU fabric info in nvidia-smi -q's words (FAB001 reads both alike): state, status,
    clique_id and cluster_uuid as strings, health {field: value} from the health mask and summary."""
    state: str | None
    status: str | None
    clique_id: str | None
    cluster_uuid: str | None
    health: dict
    line_no: int | None = None


@dataclass(frozen=True)
class Gpu:
    index: int
    model: str | None  # the probe's "name" (nvmlDeviceGetName: NVIDIA H100 80GB HBM3)
    uuid: str | None
    serial: str | None
    pci_bus_id: str | None
    pci_bus_id_raw: str | None
    numa_node: int | None
    numa_affinity: tuple[int, ...] | None
    cpu_affinity: str | None
    gpu_numa_id: int | None
    lost: bool
    pcie: Pcie
    nvlinks: tuple[NvLink, ...]
    nvlink_count: int
    active_nvlinks: int
    nvlink_end_error: str | None
    fabric: GpuFabric | None = None  # null: not asked (probes of a pynvml without the call) or refused


@dataclass(frozen=True)
class P2P:
    read: str | None = None
    write: str | None = None
    nvlink: str | None = None
    atomics: str | None = None


@dataclass(frozen=True)
class Pair:
    a: int
    b: int
    topology: str | None
    topology_level: int | None
    path_class: str | None
    p2p: P2P


@dataclass(frozen=True)
class Unsupported:
    call: str
    error_name: str | None
    reason: str


@dataclass(frozen=True)
class Died:
    """The probe's child process gave no JSON: how it ended and the NVML call it was in."""
    how: str
    signal: str | None = None
    rc: int | None = None
    last_call: str | None = None
    seconds: float | None = None


@dataclass(frozen=True)
class NvmlProbe:
    source: str = SOURCE
    schema_version: int = SCHEMA_VERSION
    ok: bool = False
    error: str | None = None
    error_name: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    nvml_version: str | None = None
    gpus: tuple[Gpu, ...] = ()
    pairs: tuple[Pair, ...] = ()
    unsupported: tuple[Unsupported, ...] = ()
    notes: tuple[str, ...] = ()
    died: Died | None = None


def _short(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


class _Reader:
    """Typed access to the decoded JSON; a wrong type is a ParseError naming the path and its line."""

    def __init__(self, text: str):
        self.text = text

    def line_of(self, key: str) -> int:
        pos = self.text.find(f'"{key}"')
        return self.text.count("\n", 0, pos) + 1 if pos >= 0 else 0

    def fail(self, path: str, want: str, value: Any) -> ParseError:
        # a top-level key has one line; a nested one would need a position json does not give
        line = 0 if "." in path or "[" in path else self.line_of(path)
        return ParseError(f"NVML probe field {path}: expected {want}, got {_short(value)}", line)

    def obj(self, value: Any, path: str, *, optional: bool = True) -> dict:
        if value is None and optional:
            return {}
        if not isinstance(value, dict):
            raise self.fail(path, "an object", value)
        return value

    def seq(self, value: Any, path: str) -> list:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(path, "a list", value)
        return value

    def int_(self, value: Any, path: str) -> int | None:
        if value is None or value == NA:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, 'an integer or "n/a"', value)
        return value

    def str_(self, value: Any, path: str) -> str | None:
        if value is None or value == NA:
            return None
        if not isinstance(value, str):
            raise self.fail(path, 'a string or "n/a"', value)
        return value

    def bool_(self, value: Any, path: str, default: bool | None = None) -> bool | None:
        if value is None or value == NA:
            return default
        if not isinstance(value, bool):
            raise self.fail(path, 'true, false or "n/a"', value)
        return value

    def float_(self, value: Any, path: str) -> float | None:
        if value is None or value == NA:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.fail(path, 'a number or "n/a"', value)
        return float(value)


def _nvlink(r: _Reader, raw: Any, path: str, pos: int) -> NvLink:
    d = r.obj(raw, path, optional=False)
    link = r.int_(d.get("link", pos), f"{path}.link")
    version = r.int_(d.get("version"), f"{path}.version")
    kind = r.str_(d.get("remote_device_type"), f"{path}.remote_device_type")
    bdf = r.str_(d.get("remote_pci_bus_id"), f"{path}.remote_pci_bus_id")
    return NvLink(link=pos if link is None else link, active=r.bool_(d.get("active"), f"{path}.active"),
                  version=version, version_name=NVLINK_VERSION_NAMES.get(version) if version is not None else None,
                  remote_pci_bus_id=bdf.lower() if bdf else bdf, remote_device_type=kind,
                  speed_gbps=r.float_(d.get("speed_gbps"), f"{path}.speed_gbps"))


def _gpu(r: _Reader, raw: Any, pos: int, notes: list[str]) -> Gpu:
    path = f"gpus[{pos}]"
    d = r.obj(raw, path, optional=False)
    index = r.int_(d.get("index", pos), f"{path}.index")
    pcie = r.obj(d.get("pcie"), f"{path}.pcie")
    links = tuple(_nvlink(r, x, f"{path}.nvlinks[{k}]", k) for k, x in enumerate(r.seq(d.get("nvlinks"),
                                                                                      f"{path}.nvlinks")))
    affinity = d.get("numa_affinity")
    nodes: tuple[int, ...] | None = None
    if affinity not in (None, NA):
        nodes = tuple(r.int_(n, f"{path}.numa_affinity") for n in r.seq(affinity, f"{path}.numa_affinity"))
        if any(n is None for n in nodes):
            raise r.fail(f"{path}.numa_affinity", "a list of integers", affinity)
    gpu_numa = r.int_(d.get("gpu_numa_id"), f"{path}.gpu_numa_id")
    kinds = {ln.remote_device_type for ln in links} - set(REMOTE_TYPES) - {None}
    if kinds:
        notes.append(note(SOURCE, "remote-type-unknown", index=index, kinds=listing(sorted(kinds))))
    return Gpu(
        index=pos if index is None else index,
        model=r.str_(d.get("name"), f"{path}.name"),
        uuid=r.str_(d.get("uuid"), f"{path}.uuid"),
        serial=r.str_(d.get("serial"), f"{path}.serial"),
        pci_bus_id=r.str_(d.get("pci_bus_id"), f"{path}.pci_bus_id"),
        pci_bus_id_raw=r.str_(d.get("pci_bus_id_raw"), f"{path}.pci_bus_id_raw"),
        numa_node=r.int_(d.get("numa_node"), f"{path}.numa_node"),
        numa_affinity=nodes,
        cpu_affinity=r.str_(d.get("cpu_affinity"), f"{path}.cpu_affinity"),
        gpu_numa_id=gpu_numa if gpu_numa is None or gpu_numa >= 0 else None,
        lost=bool(r.bool_(d.get("lost"), f"{path}.lost", False)),
        pcie=Pcie(**{k: r.int_(pcie.get(k), f"{path}.pcie.{k}") for k in
                     ("current_gen", "max_gen", "current_width", "max_width")}),
        nvlinks=links,
        nvlink_count=len(links),
        active_nvlinks=sum(1 for ln in links if ln.active),
        nvlink_end_error=r.str_(d.get("nvlink_end_error"), f"{path}.nvlink_end_error"),
        fabric=_fabric(r, d.get("fabric"), f"{path}.fabric"),
    )


# NVML_GPU_FABRIC_HEALTH_MASK_*: (shift, width, field as nvidia-smi -q names it, {value: word}).
_HEALTH_BITS = (
    (0, 0x3, "bandwidth", {1: "Degraded", 2: "Full"}),
    (2, 0x3, "route recovery in progress", {1: "True", 2: "False"}),
    (4, 0x3, "route unhealthy", {1: "True", 2: "False"}),
    (6, 0x3, "access timeout recovery", {1: "True", 2: "False"}),
    (8, 0xF, "incorrect configuration", {1: "None", 2: "Incorrect System GUID", 3: "Incorrect Chassis Serial Number",
                                         4: "No Partition", 5: "Insufficient NVLinks", 6: "Incompatible GPU Firmware",
                                         7: "Invalid Location", 8: "GPU State Invalid"}),
)


def _fabric(r: _Reader, raw: Any, path: str) -> GpuFabric | None:
    """The probe's `fabric` object; None when absent (older probes) or "n/a" (NVML refused it)."""
    if raw is None or raw == NA:
        return None
    d = r.obj(raw, path, optional=False)
    mask = r.int_(d.get("health_mask"), f"{path}.health_mask")
    health: dict[str, str] = {}
    summary = r.str_(d.get("health_summary"), f"{path}.health_summary")
    if summary is not None:
        health["summary"] = summary
    for shift, width, name, words in _HEALTH_BITS if mask is not None else ():
        word = words.get((mask >> shift) & width)
        if word is not None:
            health[name] = word
    clique = r.int_(d.get("clique_id"), f"{path}.clique_id")
    return GpuFabric(state=r.str_(d.get("state"), f"{path}.state"), status=r.str_(d.get("status"), f"{path}.status"),
                     clique_id=None if clique is None else str(clique),
                     cluster_uuid=r.str_(d.get("cluster_uuid"), f"{path}.cluster_uuid"), health=health)


def _pair(r: _Reader, raw: Any, pos: int, notes: list[str]) -> Pair:
    path = f"pairs[{pos}]"
    d = r.obj(raw, path, optional=False)
    a, b = r.int_(d.get("a"), f"{path}.a"), r.int_(d.get("b"), f"{path}.b")
    if a is None or b is None:
        raise r.fail(f"{path}.a", "GPU indices a and b", raw)
    level = r.int_(d.get("topology_level"), f"{path}.topology_level")
    name = r.str_(d.get("topology"), f"{path}.topology")
    if level is not None and name is not None and TOPOLOGY_LEVELS.get(level, name) != name:
        notes.append(note(SOURCE, "level-name-mismatch", a=a, b=b, name=name, level=level,
                          level_name=TOPOLOGY_LEVELS[level]))
        name = TOPOLOGY_LEVELS[level]
    p2p = r.obj(d.get("p2p"), f"{path}.p2p")
    codes = {k: r.str_(p2p.get(k), f"{path}.p2p.{k}") for k in ("read", "write", "nvlink", "atomics")}
    odd = sorted({c for c in codes.values() if c is not None and c not in P2P_CODES})
    if odd:
        notes.append(note(SOURCE, "p2p-code-unknown", a=a, b=b, codes=listing(odd)))
    return Pair(a=a, b=b, topology=name, topology_level=level,
                path_class=PATH_CLASSES.get(level) if level is not None else None, p2p=P2P(**codes))


def _unsupported(r: _Reader, raw: Any) -> tuple[Unsupported, ...]:
    d = r.obj(raw, "unsupported")
    out = []
    for call, reason in d.items():
        text = r.str_(reason, f"unsupported.{call}") or ""
        name = text.split(":", 1)[0] if text.startswith("NVML_ERROR_") else None
        out.append(Unsupported(call=call, error_name=name, reason=text))
    return tuple(sorted(out, key=lambda u: u.call))


def _died(r: _Reader, raw: Any) -> Died | None:
    if raw is None:
        return None
    d = r.obj(raw, "died", optional=False)
    how = r.str_(d.get("how"), "died.how")
    if how is None:
        raise r.fail("died.how", "a string", d.get("how"))
    return Died(how=how, signal=r.str_(d.get("signal"), "died.signal"), rc=r.int_(d.get("rc"), "died.rc"),
                last_call=r.str_(d.get("last_call"), "died.last_call"),
                seconds=r.float_(d.get("seconds"), "died.seconds"))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _decode(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        first = text.lstrip()[:1]
        what = "not JSON" if first not in ("{", "[") else "broken JSON"
        raise ParseError(f"{what} ({exc.msg}): expected the NVML probe JSON of "
                         "`python -m topodiag.live.nvml_probe`", exc.lineno) from None
    except RecursionError:
        raise ParseError("JSON nested too deeply to be an NVML probe", 0) from None
    except ValueError as exc:  # NaN/Infinity, or an integer too long to convert
        raise ParseError(f"JSON the NVML probe never writes: {exc}", 0) from None


def parse(text: str) -> NvmlProbe:
    """NVML probe JSON -> NvmlProbe; ParseError for other JSON, other text or another schema_version."""
    text = blank_provenance_header(text)
    if not text.strip():
        raise ParseError("no text: expected the NVML probe JSON of `python -m topodiag.live.nvml_probe`", 0)
    data = _decode(text)
    r = _Reader(text)
    if not isinstance(data, dict) or data.get("probe") != "nvml":
        found = f"a JSON {type(data).__name__}" if not isinstance(data, dict) else (
            f'"probe": {_short(data["probe"])}' if "probe" in data else 'no "probe" key')
        raise ParseError(f'JSON, but not an NVML probe (expected "probe": "nvml", found {found})',
                         r.line_of("probe") if isinstance(data, dict) and "probe" in data else 1)
    version = data.get("schema_version")
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        raise ParseError(f"NVML probe schema_version {_short(version)}: this topodiag reads schema_version "
                         f"{SCHEMA_VERSION} (upgrade topodiag, or record the probe again)",
                         r.line_of("schema_version"))
    ok = data.get("ok")
    if not isinstance(ok, bool):
        raise r.fail("ok", "true or false", ok)
    notes: list[str] = []
    gpus = tuple(_gpu(r, g, k, notes) for k, g in enumerate(r.seq(data.get("gpus"), "gpus")))
    pairs = tuple(_pair(r, p, k, notes) for k, p in enumerate(r.seq(data.get("pairs"), "pairs")))
    indices = [g.index for g in gpus]
    twice = sorted({i for i in indices if indices.count(i) > 1})
    if twice:
        notes.append(note(SOURCE, "index-twice", indices=listing(str(i) for i in twice)))
    strays = sorted({f"{p.a}-{p.b}" for p in pairs if p.a not in indices or p.b not in indices})
    if strays:
        notes.append(note(SOURCE, "pair-stray", pairs=listing(strays)))
    if not ok and not data.get("error"):
        notes.append(note(SOURCE, "not-ok-no-error"))
    return NvmlProbe(
        ok=ok,
        error=r.str_(data.get("error"), "error"),
        error_name=r.str_(data.get("error_name"), "error_name"),
        driver_version=r.str_(data.get("driver_version"), "driver_version"),
        cuda_driver_version=r.str_(data.get("cuda_driver_version"), "cuda_driver_version"),
        nvml_version=r.str_(data.get("nvml_version"), "nvml_version"),
        gpus=gpus,
        pairs=pairs,
        unsupported=_unsupported(r, data.get("unsupported")),
        notes=tuple(notes),
        died=_died(r, data.get("died")),
    )
