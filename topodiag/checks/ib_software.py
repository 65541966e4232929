"""IB011 software-rdma: RDMA devices that are software (Soft RoCE rxe, Soft iWARP siw), not RDMA NICs.

The model marks them (`software_rdma`, `software_rdma_kind`: by name rxe*/siw* or by the vendor ids
their drivers report); a device that reports vendor id 0 and firmware 0.0.0 (old librxe builds,
renamed devices) is software too: no RDMA hardware has either. Reported as info: the verbs work,
but every byte is copied by the CPU over an ordinary netdev, so they are no rail for GPU traffic
(and IB001-IB004 leave them out).
"""

from __future__ import annotations

from typing import Any, Iterator

from ..engine import Severity, check, hit


def _kind(facts: dict[str, Any]) -> str | None:
    if facts.get("software_rdma"):
        return facts.get("software_rdma_kind") or "software RDMA"
    vendor, firmware = str(facts.get("vendor_id") or "").lower(), facts.get("firmware")
    if vendor in ("0x0", "0x0000", "0") and firmware == "0.0.0":
        return "software RDMA (vendor id 0, firmware 0.0.0)"
    return None


@check("IB011")
def ib011(topology) -> Iterator:
    for nic in topology.nics():
        facts = topology.node(nic)
        kind = _kind(facts)
        if kind is None:
            continue
        netdevs = facts.get("netdevs") or []
        yield hit([nic], severity=Severity.INFO, evidence=(facts.get("sources") or [])[:1],
                  expectation="RDMA NICs (hardware) carry the GPU traffic",
                  name=facts.get("name") or nic.split(":", 1)[-1], kind=kind,
                  netdev=f" over {', '.join(netdevs)}" if netdevs else "")
