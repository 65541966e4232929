"""NVLink fabric rules (FAB001) over `nvidia-smi -q`'s per-GPU Fabric block (or NVML's GPU fabric
info from the NVML probe): a GPU whose fabric
registration is not Completed/Success, whose fabric Health is bad, or (multi-node NVLink profiles) that
sits in no clique. N/A or Not Supported (no NVSwitch fabric) is nothing."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from ..engine import Evidence, check, hit, when

NOT_APPLICABLE = ("", "n/a", "not supported", "none")
NOT_REGISTERED = ("in progress", "not started")
# Health fields and the values that are fine (anything else but N/A is a fault).
HEALTH_OK = {"summary": ("healthy",), "bandwidth": ("full",), "route recovery in progress": ("false",),
             "route unhealthy": ("false",), "access timeout recovery": ("false",),
             "incorrect configuration": ("none",)}
ZERO_UUID = "00000000-0000-0000-0000-000000000000"
MULTI_NODE_PROFILES = ("gb200-nvl", "gb300-nvl")


def _low(value: Optional[str]) -> str:
    return (value or "").strip().lower()


def _bad_health(health: dict) -> list[str]:
    return [f"{k.capitalize()} {v}" for k, v in health.items()
            if k in HEALTH_OK and _low(v) not in NOT_APPLICABLE and _low(v) not in HEALTH_OK[k]]


def _multi_node(profile) -> bool:
    name = getattr(profile, "name", "") or ""
    return name in MULTI_NODE_PROFILES or name.startswith(("gb200", "gb300"))


def _no_clique(fab) -> bool:
    return _low(fab.clique_id) == "0" or _low(fab.cluster_uuid) == ZERO_UUID


def _verdict(fab, profile) -> Optional[tuple[str, str]]:
    """(variant, key) for one GPU's Fabric block, None when it is fine or not applicable."""
    state, status = _low(fab.state), _low(fab.status)
    if state in NOT_REGISTERED:
        return "default", state
    if state == "completed" and status not in NOT_APPLICABLE and status != "success":
        return "status", status
    bad = _bad_health(fab.health)
    if bad:
        return "unhealthy", "; ".join(bad)
    if state == "completed" and _multi_node(profile) and _no_clique(fab):
        return "no_clique", f"{fab.clique_id}/{fab.cluster_uuid}"
    return None


def _subject(bus_id: Optional[str], index: int) -> str:
    if bus_id and ":" in bus_id:
        dom, rest = bus_id.lower().split(":", 1)
        return f"pci:{dom[-4:]}:{rest.split('.')[0]}"
    return f"gpu:{index}"


def _fabrics(nvidia_smi_q, nvml) -> list[tuple[str, Any, str, bool]]:
    """(subject, fabric block, source, bus id known) per GPU: nvidia-smi -q's first, then NVML's for
    GPUs -q did not show."""
    out, seen = [], set()
    for g in getattr(nvidia_smi_q, "gpus", ()) or ():
        if g.fabric is not None:
            subject = _subject(g.bus_id, g.index)
            seen.add(subject)
            out.append((subject, g.fabric, "nvidia_smi_q", bool(g.bus_id)))
    for g in getattr(nvml, "gpus", ()) or ():
        subject = _subject(g.pci_bus_id, g.index)
        if getattr(g, "fabric", None) is not None and subject not in seen:
            out.append((subject, g.fabric, "nvml", bool(g.pci_bus_id)))
    return out


@check("FAB001")
def fab001(nvidia_smi_q=None, nvml=None, profile=None) -> Iterator:
    """One finding per kind of fabric fault, naming every GPU that has it."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for entry in _fabrics(nvidia_smi_q, nvml):
        v = _verdict(entry[1], profile)
        if v is not None:
            groups.setdefault(v, []).append(entry)
    for gs in groups.values():
        yield _group_hit(gs, profile)


def _group_hit(gs: list, profile):
    _, fab, source, named = gs[0]
    variant, _ = _verdict(fab, profile)
    names = [g[0] for g in gs]
    return hit(names, variant=variant, notes=when(more=len(gs) > 1),
               evidence=[Evidence(source, None, fab.line_no)],
               expectation="Fabric State Completed, Status Success, Health healthy"
                           + (" and a non-zero clique (multi-node NVLink profile)" if _multi_node(profile) else ""),
               gpus=", ".join(names) if named else ("GPU" if len(gs) == 1 else "GPUs") + " of the paste",
               state=fab.state, status=fab.status, clique=fab.clique_id, cluster=fab.cluster_uuid,
               health="; ".join(_bad_health(fab.health)), profile=getattr(profile, "name", None),
               count=len(gs), line=fab.line_no)


NVSWITCH_PROFILES = ("dgx-a100", "dgx-h100", "dgx-b200", "hgx-h200")
NOT_RUNNING = ("inactive", "failed", "unknown", "deactivating")


def _nvswitch(profile, topology) -> tuple[Optional[bool], str]:
    """(does this node have NVSwitches, from what): the profile, NVSwitch nodes in the topology, or
    (None, ...) when nothing says."""
    name = getattr(profile, "name", None)
    if name in NVSWITCH_PROFILES:
        return True, f"profile {name}"
    if topology is not None and any(str(n).startswith("nvswitch:") for n in topology.nodes()):
        return True, "NVSwitches in the topology"
    if name:
        return False, f"profile {name}"
    return None, "no profile and no NVSwitch seen"


def _not_running(fm) -> bool:
    return fm.unit_missing or fm.state in NOT_RUNNING or (fm.state is None and bool(fm.failures) and not fm.started)


def _fm_evidence(fm, line: Optional[int]) -> list:
    return [Evidence("fabricmanager", None, line)]


@check("FAB002")
def fab002(fabricmanager, profile=None, topology=None):
    """Fabric Manager against the node: a version mismatch (error), NV_WARN_NOTHING_TO_DO (info without
    NVSwitch, error with), the unit not running (error on an NVSwitch system, warning when unknown)."""
    fm = fabricmanager
    nvsw, expect = _nvswitch(profile, topology)
    if fm.version_mismatch is not None:
        mm = fm.version_mismatch
        return hit(["service:nvidia-fabricmanager"], variant="mismatch", evidence=_fm_evidence(fm, mm.line_no),
                   expectation="Fabric Manager of exactly the driver's version", fm_version=mm.fm_version,
                   driver_version=mm.driver_version)
    if fm.nothing_to_do:
        line = fm.nothing_to_do[0].line_no
        if nvsw:
            return hit(["service:nvidia-fabricmanager"], variant="nothing_on_nvswitch", evidence=_fm_evidence(fm, line),
                       expectation=f"Fabric Manager manages the NVSwitches ({expect})", expect=expect)
        return hit(["service:nvidia-fabricmanager"], variant="no_nvswitch", severity="info",
                   evidence=_fm_evidence(fm, line), expectation="nothing to manage without NVSwitch", expect=expect)
    if not _not_running(fm) or nvsw is False:
        return None
    state = fm.state or ("not found" if fm.unit_missing else "failed")
    fail_line = fm.failures[0].line_no if fm.failures else None
    line = fm.state_line or fail_line
    if fm.unit_missing and nvsw is None:  # not installed, on a node nothing says has NVSwitches (live on most hosts)
        return hit(["service:nvidia-fabricmanager"], variant="not_installed_unknown", severity="info",
                   evidence=_fm_evidence(fm, line), expectation=f"nvidia-fabricmanager active on an NVSwitch system ({expect})",
                   state=state, expect=expect, fail_line=fail_line)
    return hit(["service:nvidia-fabricmanager"], variant="default" if nvsw else "unknown_system",
               severity=None if nvsw else "warning", evidence=_fm_evidence(fm, line),
               notes=when(failed=fail_line is not None and nvsw is True),
               expectation=f"nvidia-fabricmanager active ({expect})", state=state, expect=expect, fail_line=fail_line)
