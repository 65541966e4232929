"""NVLink fabric rules (FAB001) over `nvidia-smi -q`'s per-GPU Fabric block: a GPU whose fabric
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


def _subject(g) -> str:
    if g.bus_id:
        dom, rest = g.bus_id.lower().split(":", 1)
        return f"pci:{dom[-4:]}:{rest.split('.')[0]}"
    return f"gpu:{g.index}"


@check("FAB001")
def fab001(nvidia_smi_q, profile=None) -> Iterator:
    """One finding per kind of fabric fault, naming every GPU that has it."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for g in nvidia_smi_q.gpus:
        if g.fabric is None:
            continue
        v = _verdict(g.fabric, profile)
        if v is not None:
            groups.setdefault(v, []).append(g)
    for (variant, _), gs in groups.items():
        fab = gs[0].fabric
        names = [_subject(g) for g in gs]
        yield hit(names, variant=variant, notes=when(more=len(gs) > 1),
                  evidence=[Evidence("nvidia_smi_q", None, fab.line_no)],
                  expectation="Fabric State Completed, Status Success, Health healthy"
                              + (" and a non-zero clique (multi-node NVLink profile)" if _multi_node(profile) else ""),
                  gpus=", ".join(names) if gs[0].bus_id else ("GPU" if len(gs) == 1 else "GPUs") + " of the paste",
                  state=fab.state, status=fab.status, clique=fab.clique_id, cluster=fab.cluster_uuid,
                  health="; ".join(_bad_health(fab.health)), profile=getattr(profile, "name", None),
                  count=len(gs), line=fab.line_no)
