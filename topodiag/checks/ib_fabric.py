"""IB007 ib-link-degraded: fabric links trained narrower or slower than they should, from the combined
`ib_links` view (topodiag/model/combiners.py: `iblinkinfo`, else `ibnetdiscover`; the fabric as the
subnet sees it, not one host's HCAs). IB008 hca-no-rdma-device: from the sysfs probe.

Each physical link appears twice in both tools (once from each end): the combiner keys links by their
two ends, (LID, port) for iblinkinfo and (node GUID, port) for ibnetdiscover, and keeps one. What is
judged, for links that are up:
- width below 4X (1X, 2X): a quarter or half of the link's bandwidth;
- iblinkinfo's own "Could be ..." note: both ends support a faster width or speed than trained;
- a rate under half the fabric's most common link rate (a DDR link among EDR ones): the link fell
  back a generation or more (cable, transceiver, port);
- ports that are physically up but not Active (Initialize, Armed: the subnet manager has not
  finished with them);
- from ibnetdiscover, a CA with no link at all (the node is not on the fabric).
Switch ports that are Down / Polling / Disabled with nothing plugged in are normal and not judged.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterator

from .. import knowledge
from ..engine import Evidence, Severity, check, hit, when
from ._facts import counted

FULL_WIDTH = 4


def _evidence(view: Any, items) -> list[Evidence]:
    return [Evidence(view.source, view.file, x.line_no) for x in items[:3]]


def _subjects(items) -> list[str]:
    return [f"iblink:{x.a}" for x in items]


def _narrow_item(x) -> str:
    if not x.rate_gbps:
        return f"{x.a} <-> {x.b} at {x.width_lanes}X"
    full = x.rate_gbps * FULL_WIDTH / x.width_lanes
    return f"{x.a} <-> {x.b} at {x.width_lanes}X {x.speed_name or ''} ({x.rate_gbps:g} Gb/s of {full:g})"


def _slow_links(links, judged) -> tuple[float | None, list]:
    """(the fabric's most common rate, the links under half of it not judged already)."""
    rates = Counter(x.rate_gbps for x in links if x.rate_gbps)
    if not rates:
        return None, []
    common, _ = rates.most_common(1)[0]
    return common, [x for x in links if x.rate_gbps and x.rate_gbps < common / 2 and x not in judged]


@check("IB007")
def ib_link_degraded(ib_links, params) -> Iterator:
    links = ib_links.links
    narrow = [x for x in links if x.width_lanes is not None and x.width_lanes < FULL_WIDTH]
    could = [x for x in links if x.could_be and x not in narrow]
    common, slow = _slow_links(links, narrow + could)
    found = [_narrow_hit(ib_links, narrow) if narrow else None, _could_be_hit(ib_links, could) if could else None,
             _slow_hit(ib_links, common, slow) if slow else None, _not_active_hit(ib_links)]
    yield from (h for h in found if h is not None)
    for ca in ib_links.isolated:
        yield hit([f"iblink:{ca.name}"], severity=Severity.ERROR, variant="isolated",
                  evidence=[Evidence(ib_links.source, ib_links.file, ca.line_no)],
                  expectation="every CA linked to the fabric", count=1, name=ca.name, nports=ca.nports or "?")


def _narrow_hit(view: Any, narrow):
    return hit(_subjects(narrow), evidence=_evidence(view, narrow), expectation="every link at 4X",
               count=len(narrow), listed=counted((_narrow_item(x) for x in narrow), 6))


def _could_be_hit(view: Any, could):
    return hit(_subjects(could), evidence=_evidence(view, could), variant="could_be",
               expectation="links at the width and speed both ends support", count=len(could),
               listed=counted((f"{x.a} <-> {x.b} at {x.speed_name or '?'}: {x.could_be}" for x in could), 6))


def _not_active_hit(view: Any):
    ports = list(view.not_active)
    if not ports:
        return None
    return hit(_subjects(ports), evidence=_evidence(view, ports), variant="not_active",
               expectation="every cabled port Active", count=len(ports), severity=Severity.WARNING,
               listed=counted((f"{x.a} {x.state}" for x in ports), 6))


def _slow_hit(view: Any, common: float, slow):
    name = knowledge.ib_rate_name(common)
    return hit(_subjects(slow), evidence=_evidence(view, slow), variant="slow",
               expectation=f"links near the fabric's common rate ({common:g} Gb/s{f', {name}' if name else ''})",
               count=len(slow), common=f"{common:g}", factor=f"{common / min(x.rate_gbps for x in slow):g}",
               listed=counted((f"{x.a} <-> {x.b} at {x.rate_gbps:g} Gb/s ({x.speed_name or '?'})" for x in slow), 6))


@check("IB008")
def hca_no_rdma_device(sysfs_infiniband, params) -> Iterator:
    """Mellanox/NVIDIA network functions on the PCI bus that registered no RDMA device (sysfs)."""
    for p in sysfs_infiniband.pci:
        if p.kind != "nic" or p.rdma_devices:
            continue
        yield hit([f"nic:{p.bdf}"], severity=Severity.ERROR if p.driver is None else Severity.WARNING,
                  variant="default" if p.driver is None else "no_rdma_device",
                  evidence=[Evidence("sysfs_infiniband", None, p.line_no)],
                  expectation="every HCA on the PCI bus has an RDMA device", notes=when(pcie=p.current_link_width),
                  bdf=p.bdf, device=f"{p.vendor}:{p.device}", numa=p.numa_node if p.numa_node is not None else "?",
                  driver=p.driver, speed=p.current_link_speed or "?", width=p.current_link_width)
