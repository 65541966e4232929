"""PCI rules from `lspci -vvv` (the `lspci_vvv` parser): PCI001 acs-redirect (ACS redirecting
peer-to-peer requests on a bridge, named with the GPUs and NICs below it when the output shows
them) and PCI002 pcie-link-downgraded (a GPU, NIC or bridge link below its capability)."""

from __future__ import annotations

from typing import Iterator, Optional

from ..engine import Evidence, Severity, check, hit, when
from ._facts import listing

REDIRECT = ("ReqRedir", "CmpltRedir")
NVIDIA_HINTS = ("nvidia",)
NIC_HINTS = ("mellanox", "connectx", "infiniband", "broadcom bcm57", "ethernet controller")


def _kind(dev) -> Optional[str]:
    """'gpu', 'nic' or None, from the class and name lspci prints."""
    cls, name = dev.cls.lower(), dev.name.lower()
    if ("3d controller" in cls or "vga" in cls) and any(h in name for h in NVIDIA_HINTS):
        return "gpu"
    if "infiniband" in cls or ("ethernet" in cls and any(h in name for h in NIC_HINTS[:3])) or "network" in cls:
        return "nic"
    return None


def _redirects(acs: dict) -> bool:
    return any(acs.get(f) for f in REDIRECT)


def _below(bridge, devices) -> list:
    """The GPUs and NICs whose bus lies in the bridge's secondary..subordinate range (same domain)."""
    if bridge.secondary is None or bridge.subordinate is None:
        return []
    lo, hi = int(bridge.secondary, 16), int(bridge.subordinate, 16)
    dom = bridge.bdf.split(":")[0]
    return [d for d in devices if d is not bridge and _kind(d) and d.bdf.split(":")[0] == dom
            and lo <= int(d.bus, 16) <= hi]


EXPECT_ACS = "ACS redirect off on the bridges between GPUs and their NICs (bare metal)"


def _placed_hit(bridge, below):
    gpus = sum(1 for d in below if _kind(d) == "gpu")
    return hit([f"pci:{bridge.bdf}"] + [f"pci:{d.bdf}" for d in below[:6]],
               evidence=[Evidence("lspci_vvv", None, bridge.line_no)], expectation=EXPECT_ACS,
               bridge=bridge.bdf, name=bridge.name[:60], below=listing([f"{_kind(d)} {d.bdf}" for d in below], 4),
               gpus=gpus, nics=len(below) - gpus)


def _unplaced_hit(lspci_vvv, rest: list, loose: list):
    devices = list(lspci_vvv.devices)
    lines = [b.line_no for b in rest] + [a.line_no for a in loose]
    total = sum(1 for d in devices if d.acs) + len(lspci_vvv.loose_acs)
    any_gpu = any(_kind(d) == "gpu" for d in devices)
    return hit([f"pci:{b.bdf}" for b in rest[:8]] or ["pci:unknown"], severity=Severity.WARNING, variant="unplaced",
               evidence=[Evidence("lspci_vvv", None, n) for n in lines[:3]], expectation=EXPECT_ACS,
               count=len(lines), total=total, lines=listing([str(n) for n in lines], 6),
               notes=when(grepped=bool(loose), no_gpu=bool(rest) and not any_gpu))


@check("PCI001")
def pci001(lspci_vvv) -> Iterator:
    """ACS ReqRedir/CmpltRedir on: per bridge with GPUs or NICs below it (error); else one finding for
    the bridges (or grepped lines) that have it on, saying what the output cannot show (warning)."""
    devices = list(lspci_vvv.devices)
    rest = []
    for bridge in (d for d in devices if _redirects(d.acs)):
        below = _below(bridge, devices)
        if below:
            yield _placed_hit(bridge, below)
        else:
            rest.append(bridge)
    loose = [a for a in lspci_vvv.loose_acs if _redirects(a.acs)]
    if rest or loose:
        yield _unplaced_hit(lspci_vvv, rest, loose)


def _link_short(dev) -> Optional[str]:
    cap, sta = dev.link_cap, dev.link_sta
    if cap is None or sta is None:
        return None
    if sta.width < cap.width:
        return "width"
    if sta.speed_gts < cap.speed_gts:
        return "speed"
    return None


@check("PCI002")
def pci002(lspci_vvv) -> Iterator:
    """A link narrower than its capability (warning, error on a GPU or NIC); slower only, on a GPU: info
    (idle GPUs lower their link speed to save power); slower on a NIC or bridge: warning."""
    for dev in lspci_vvv.devices:
        short = _link_short(dev)
        if short is None:
            continue
        kind = _kind(dev)
        if short == "width":
            severity = Severity.ERROR if kind else Severity.WARNING
        else:
            severity = Severity.INFO if kind == "gpu" else Severity.WARNING
        cap, sta = dev.link_cap, dev.link_sta
        yield hit([f"pci:{dev.bdf}"], severity=severity, evidence=[Evidence("lspci_vvv", None, dev.line_no)],
                  expectation=f"LnkSta at LnkCap: {cap.speed_gts:g} GT/s x{cap.width}",
                  device=dev.bdf, name=dev.name[:60], kind=kind or "device", cap_speed=f"{cap.speed_gts:g}",
                  cap_width=cap.width, sta_speed=f"{sta.speed_gts:g}", sta_width=sta.width,
                  notes=when(idle_gpu=short == "speed" and kind == "gpu"))
