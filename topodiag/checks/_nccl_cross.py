"""What the node's other inputs say about the failures NCCL004 reports (issue 26: a failure seen from
two sides is one finding naming both): the GPUs' or the fabric manager's fabric state beside an
NVLS/fabric failure; ACS redirection on PCIe bridges, or NIC links going down, beside IB verbs
failures (completion errors)."""

from __future__ import annotations

from typing import Any


def facts(nvidia_smi_q: Any, fabricmanager: Any, lspci_vvv: Any, kernel_log: Any) -> dict[str, str]:
    """{"fabric" | "acs" | "flaps": a clause for the finding's message}, for what the inputs show."""
    out: dict[str, str] = {}
    fabric = [t for t in (_gpu_fabric(nvidia_smi_q), _manager(fabricmanager)) if t]
    if fabric:
        out["fabric"] = "; ".join(fabric)
    acs = _acs(lspci_vvv)
    if acs:
        out["acs"] = acs
    flaps = _links_down(kernel_log)
    if flaps:
        out["flaps"] = flaps
    return out


def notes(cls: str, kind: str, cross: dict[str, str]) -> tuple[bool, bool, bool]:
    """Which of those facts bear on a failure of this class: (fabric, acs, flaps)."""
    verbs = cls == "ib-verbs-failure" or kind == "ib_completion"
    return cls == "fabric-nvls" and "fabric" in cross, verbs and "acs" in cross, verbs and "flaps" in cross


def _gpu_fabric(nvidia_smi_q: Any) -> str:
    bad = set()
    for g in getattr(nvidia_smi_q, "gpus", ()) or ():
        fab = getattr(g, "fabric", None)
        if fab is None or not fab.state:
            continue
        if str(fab.state).lower() != "completed" or str(fab.status or "success").lower() != "success":
            bad.add(f"{fab.state}/{fab.status}")
    return f"the GPUs' fabric state is {', '.join(sorted(bad))} (nvidia-smi -q)" if bad else ""


def _manager(fabricmanager: Any) -> str:
    if fabricmanager is None:
        return ""
    state = getattr(fabricmanager, "state", None)
    failures = getattr(fabricmanager, "failures", ()) or ()
    if failures or (state and state.lower() not in ("active", "running")):
        return f"the fabric manager is {state or 'failing'} ({len(failures)} failure line(s))"
    return ""


def _acs(lspci_vvv: Any) -> str:
    redirect = [d.bdf for d in getattr(lspci_vvv, "devices", ()) or ()
                if isinstance(getattr(d, "acs_ctl", None), dict) and (d.acs_ctl.get("ReqRedir") or d.acs_ctl.get("CmpltRedir"))]
    if not redirect:
        return ""
    named = [b for b in redirect if b][:3]
    return f"ACS redirects peer traffic on {len(redirect)} PCIe bridge(s) ({', '.join(named) + '; ' if named else ''}PCI001)"


def _links_down(kernel_log: Any) -> str:
    downs = sorted({e.device for e in getattr(kernel_log, "links", ()) or () if e.state == "down"})
    return f"NIC link(s) went down in the kernel log ({', '.join(downs[:3])}; IB009)" if downs else ""
