"""PCIe rules from `lspci -vvv`, the kernel command line, the kernel log and /sys/class/iommu:
ACS redirection on the bridges between GPUs and NICs (PCI001), PCIe links below their capability
(PCI002), the IOMMU translating on a host that uses P2P or GPUDirect RDMA (PCI003).

Where a device lies: a bridge's secondary..subordinate bus range holds the devices below it (lspci
-vvv prints it as "Bus: primary=.., secondary=.., subordinate=.."); a per-device paste may say
"upstream bridge of <bdf>" instead. A bridge lies on the PCIe path between two devices when it is
above exactly one of them: their traffic crosses it on the way up or down. Devices are named by the
model where another input gave their bus id (gpu:3, nic:mlx5_2), else `pci:<bdf>`."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Iterator, Optional

from .. import knowledge
from ..engine import Evidence, check, hit, when
from ._facts import counted, listing

ENDPOINTS = ("gpu", "nic")


# -- the tree ----------------------------------------------------------------------------------

def _bus(bdf: str) -> tuple[str, int]:
    dom, bus, _ = bdf.split(":")
    return dom, int(bus, 16)


def _below(bridge: Any, dev: Any) -> bool:
    """True when dev lies under the bridge (its bus in the bridge's secondary..subordinate range, or a
    comment named the bridge the upstream one of dev)."""
    if dev.bdf is None or bridge.bdf is None or dev.bdf == bridge.bdf:
        return False
    if bridge.upstream_of == dev.bdf:
        return True
    if bridge.secondary is None or bridge.subordinate is None:
        return False
    dom_b, _ = _bus(bridge.bdf)
    dom_d, bus = _bus(dev.bdf)
    return dom_b == dom_d and bridge.secondary <= bus <= bridge.subordinate


def _redirects(d: Any) -> bool:
    ctl = d.acs_ctl or {}
    return bool(ctl.get("ReqRedir") or ctl.get("CmpltRedir"))


def _name(topology, dev: Any) -> str:
    """The model's node for a device (gpu:3, nic:mlx5_2) when an input gave its bus id, else pci:<bdf>."""
    if dev.bdf is None:
        return f"pci:line{dev.line_no}"
    if topology is not None:
        for key in (dev.bdf, dev.bdf[5:], dev.bdf.split(".")[0]):
            node = topology.resolve(key)
            if topology.has_node(node) and node != key:
                return node
    return f"pci:{dev.bdf}"


def _label(topology, dev: Any) -> str:
    """'gpu:3 (0000:18:00.0)' / 'GPU 0000:18:00.0' for a message."""
    name = _name(topology, dev)
    kind = {"gpu": "GPU", "nic": "NIC", "bridge": "bridge"}.get(dev.kind, "device")
    if dev.bdf is None:
        return f"the {kind} of line {dev.line_no}"
    return f"{name} ({dev.bdf})" if not name.startswith("pci:") else f"{kind} {dev.bdf}"


def _pairs(bridge: Any, endpoints: list) -> list[tuple[Any, Any]]:
    """Endpoint pairs (one below the bridge, one not) with a GPU among them: GPU-NIC pairs first."""
    below = [d for d in endpoints if _below(bridge, d)]
    outside = [d for d in endpoints if d not in below]
    pairs = [(a, b) for a in below for b in outside if "gpu" in (a.kind, b.kind)]
    return sorted(pairs, key=lambda p: 0 if {p[0].kind, p[1].kind} == {"gpu", "nic"} else 1)


def _nccl_completion_errors(nccl_debug) -> list:
    """NCCL's 'Got completion with error' lines (error 4 / vendor err 81: a DMA the path refused)."""
    if nccl_debug is None:
        return []
    return [e for e in getattr(nccl_debug, "errors", ()) or () if e.kind == "ib_completion"]


# -- PCI001 ------------------------------------------------------------------------------------

def _nccl_text(errors: list) -> str:
    if not errors:
        return ""
    text = errors[0].text.strip()
    return text[text.find("NET/IB"):][:160] if "NET/IB" in text else text[:160]


def _acs_evidence(bridge: Any, errors: list) -> list:
    ev = [Evidence("lspci_vvv", None, bridge.line_no)]
    if errors:
        ev.append(Evidence("nccl_debug", None, errors[0].line_no))
    return ev


def _bridge_finding(topology, bridge: Any, endpoints: list, errors: list):
    """One bridge with redirection on: error when it lies between a GPU and a NIC or two GPUs, warning when
    it is above GPUs/NICs whose peers the paste does not show; None when no GPU or NIC is near it."""
    pairs = _pairs(bridge, endpoints)
    below = [d for d in endpoints if _below(bridge, d)]
    if not pairs and not below:
        return None
    flags = ", ".join(f"{k}+" for k, v in (bridge.acs_ctl or {}).items() if v)
    common = dict(bridge=bridge.bdf, flags=flags, nccl_error=_nccl_text(errors))
    if pairs:
        a, b = pairs[0]
        subjects = list(dict.fromkeys([_name(topology, a), _name(topology, b), f"pcisw:{bridge.bdf}"]))
        return hit(subjects, evidence=_acs_evidence(bridge, errors), notes=when(nccl=errors, more=len(pairs) > 1),
                   expectation="ACS redirection off on the bridges between GPUs and NICs",
                   a=_label(topology, a), b=_label(topology, b), count=len(pairs),
                   others=counted((f"{_label(topology, x)}-{_label(topology, y)}" for x, y in pairs[1:]), 4),
                   **common)
    return hit([_name(topology, d) for d in below] + [f"pcisw:{bridge.bdf}"], variant="above", severity="warning",
               evidence=_acs_evidence(bridge, errors), notes=when(nccl=errors),
               expectation="ACS redirection off on the bridges above GPUs and NICs",
               devices=listing((_label(topology, d) for d in below), 4), **common)


def _unplaced(lspci, redirecting: list, errors: list):
    """Redirection on lines (or bridges) the paste does not place: how many, and what to run next."""
    total = sum(1 for d in lspci.devices if d.acs_ctl is not None)
    return hit(["host:lspci"], variant="unplaced", severity="error" if errors else "warning",
               evidence=[Evidence("lspci_vvv", None, redirecting[0].line_no)]
               + ([Evidence("nccl_debug", None, errors[0].line_no)] if errors else []),
               notes=when(nccl=errors), expectation="ACS redirection off on the bridges between GPUs and NICs",
               count=len(redirecting), total=total,
               lines=listing((str(d.line_no) for d in redirecting), 8),
               bridges=listing((d.bdf for d in redirecting if d.bdf), 6) or "no BDF in the paste",
               nccl_error=_nccl_text(errors), flags="")


# -- the tree (lspci -t / -tv) completing what a -vvv paste left out --------------------------

_NOT_A_GPU = re.compile(r"Audio|USB|Serial|Bridge|Switch|NVSwitch|SMBus|Host bridge", re.I)


@dataclass(frozen=True)
class _TreeEndpoint:
    """A GPU or NIC the tree names (-tv) that the -vvv paste did not show."""

    bdf: str
    kind: str
    line_no: int
    secondary: Optional[int] = None
    subordinate: Optional[int] = None
    upstream_of: Optional[str] = None


def _tree_kind(name: Optional[str], bdf: str) -> Optional[str]:
    """gpu / nic from an lspci -tv name (function 0 only: the audio or second port functions are not
    endpoints of their own), else None."""
    if not name or not bdf.endswith(".0"):
        return None
    if "NVIDIA" in name and not _NOT_A_GPU.search(name):
        return "gpu"
    if re.search(r"Mellanox|ConnectX|BlueField", name):
        return "nic"
    return None


def with_tree(lspci_vvv, lspci_tree) -> tuple:
    """lspci -vvv's devices with the bus ranges only the tree gave (a grepped paste has no "Bus:" line),
    and the GPUs and NICs only the tree names. The -vvv facts win where both say."""
    devices = tuple(lspci_vvv.devices) if lspci_vvv is not None else ()
    if lspci_tree is None:
        return devices
    tree = {d.bdf: d for d in lspci_tree.devices}
    out = []
    for d in devices:
        t = tree.get(d.bdf) if d.bdf else None
        if t is not None and d.secondary is None and t.secondary is not None:
            d = replace(d, secondary=t.secondary, subordinate=t.subordinate)
        out.append(d)
    known = {d.bdf for d in devices if d.bdf}
    for t in lspci_tree.devices:
        kind = _tree_kind(t.name, t.bdf)
        if kind and t.bdf not in known:
            out.append(_TreeEndpoint(t.bdf, kind, t.line_no))
    return tuple(out)


@check("PCI001")
def acs_redirect(lspci_vvv, topology=None, nccl_debug=None, lspci_tree=None) -> Iterator:
    """ACS ReqRedir+/CmpltRedir+ on a bridge: P2P and GPUDirect RDMA between the devices it separates are
    sent up to the root complex. Placed bridges: one finding each, naming both ends; the rest
    (a grepped paste without BDFs or bus ranges): one finding that counts them. lspci -t completes the
    bus ranges and names the GPUs and NICs a grepped paste left out."""
    all_devices = with_tree(lspci_vvv, lspci_tree)
    redirecting = [d for d in all_devices if getattr(d, "acs_ctl", None) is not None and _redirects(d)]
    if not redirecting:
        return
    errors = _nccl_completion_errors(nccl_debug)
    endpoints = [d for d in all_devices if d.kind in ENDPOINTS and d.bdf]
    unplaced = []
    for bridge in redirecting:
        found = _bridge_finding(topology, bridge, endpoints, errors) if endpoints else None
        if found is not None:
            yield found
        elif bridge.bdf is None or (bridge.secondary is None and bridge.upstream_of is None):
            unplaced.append(bridge)
    if unplaced:
        yield _unplaced(lspci_vvv, unplaced, errors)


# -- PCI002 ------------------------------------------------------------------------------------

def _gen(speed: Optional[float]) -> Optional[int]:
    return knowledge.pcie_gen_from_link_speed(speed) if speed else None


def _partner(dev: Any, devices: tuple) -> Optional[Any]:
    """The GPU or NIC right below a bridge (on its secondary bus, or the one a comment names)."""
    for d in devices:
        if d.kind in ENDPOINTS and _below(dev, d) and (dev.upstream_of == d.bdf or _bus(d.bdf)[1] == dev.secondary):
            return d
    return None


def _judged(dev: Any, devices: tuple) -> bool:
    """GPUs, NICs and devices of unknown kind; bridges only above a GPU or NIC (other bridges lead to
    disks, USB, the BMC: not this rule's)."""
    if dev.kind in ("gpu", "nic", "unknown"):
        return True
    if dev.kind == "bridge" or (dev.kind == "other" and dev.acs_ctl is not None):
        return any(d.kind in ENDPOINTS and _below(dev, d) for d in devices)
    return False


def _grade(dev: Any, narrow: bool, partner: Optional[Any]) -> tuple[str, Optional[str]]:
    """(variant, severity): a narrow GPU/NIC link is an error, a narrow bridge or unknown device a
    warning; speed alone is info on a GPU (idle power saving) or a bridge whose GPU partner idles too,
    else a warning (NICs and switches keep their link speed)."""
    if narrow:
        return "narrow", "error" if dev.kind in ENDPOINTS else "warning"
    idle = dev.kind in ("gpu", "unknown") or (partner is not None and partner.kind == "gpu")
    return ("idle", "info") if idle else ("slow", "warning")


def _below_cap(cap: Any, sta: Any) -> Optional[tuple[bool, bool]]:
    """(narrow, slow) of a link below its capability; None when at it or not known."""
    if cap is None or sta is None or None in (cap.width, sta.width):
        return None
    narrow = sta.width < cap.width
    slow = None not in (cap.speed_gts, sta.speed_gts) and sta.speed_gts < cap.speed_gts - 0.05
    return (narrow, slow) if narrow or slow else None


def _gbs(speed: Optional[float], width: int) -> str:
    gen = _gen(speed)
    bw = knowledge.pcie_one_way_gbyte_s(gen, width) if gen else None
    return f"{bw:.1f}" if bw else ""


def _fmt_speed(speed: Optional[float]) -> str:
    return f"{speed:g}" if speed else "?"


def _link_finding(topology, dev: Any, devices: tuple):
    cap, sta = dev.link_cap, dev.link_sta
    below = _below_cap(cap, sta)
    if below is None:
        return None
    narrow = below[0]
    partner = _partner(dev, devices) if dev.kind in ("bridge", "other") else None
    if not narrow and partner is not None and partner.link_sta is not None and partner.link_sta.width == sta.width:
        return None  # the same link as its GPU/NIC's: that device's finding says it
    variant, severity = _grade(dev, narrow, partner)
    now, full = _gbs(sta.speed_gts, sta.width), _gbs(cap.speed_gts, cap.width)
    return hit([_name(topology, dev)], variant=variant, severity=severity,
               evidence=[Evidence("lspci_vvv", None, dev.line_no)],
               notes=when(bandwidth=bool(now and full), partner=partner is not None),
               expectation=f"PCIe link at its capability ({_fmt_speed(cap.speed_gts)} GT/s x{cap.width})",
               device=_label(topology, dev), speed=_fmt_speed(sta.speed_gts), width=sta.width,
               max_speed=_fmt_speed(cap.speed_gts), max_width=cap.width, now=now, full=full,
               partner=_label(topology, partner) if partner is not None else "")


_NIC_DRIVERS = ("mlx5_core", "mlx4_core", "bnxt_en", "ice", "i40e", "ixgbe", "efa", "irdma", "ionic")


def _kernel_kind(topology, lim: Any) -> str:
    """gpu / nic / unknown for a device the kernel reported: the model's node for its bus id, else the
    driver that printed the line (the PCI core's own "pci" report names no kind)."""
    name = _name(topology, _Dev(lim.device))
    if name.startswith(("gpu:", "nic:")):
        return name.split(":", 1)[0]
    if lim.driver in ("nvidia", "nouveau"):
        return "gpu"
    return "nic" if lim.driver in _NIC_DRIVERS else "unknown"


class _Dev:
    """A device the kernel log names: the bus id and kind _name/_label read."""

    def __init__(self, bdf: str, kind: str = "unknown", line_no: int = 0) -> None:
        self.bdf, self.kind, self.line_no = bdf, kind, line_no


def _kernel_finding(topology, lim: Any):
    """The kernel's "A Gb/s available PCIe bandwidth, limited by S GT/s xW link at <bdf> (capable of
    ...)" report, graded as lspci's LnkSta/LnkCap would be (it is printed at probe time: a GPU idle
    then may show a low speed)."""
    if None in (lim.width, lim.capable_width, lim.speed_gts, lim.capable_speed_gts):
        return None
    narrow = lim.width < lim.capable_width
    if not narrow and lim.speed_gts >= lim.capable_speed_gts - 0.05:
        return None
    dev = _Dev(lim.device, _kernel_kind(topology, lim), lim.line_no)
    variant, severity = _grade(dev, narrow, None)
    at = "" if lim.at == lim.device else f"the link at {lim.at} (above it)"
    return hit([_name(topology, dev)], variant=variant, severity=severity,
               evidence=[Evidence("kernel_log", None, lim.line_no)],
               notes=when(kernel=True, upstream=bool(at)),
               expectation=f"PCIe link at its capability ({_fmt_speed(lim.capable_speed_gts)} GT/s x{lim.capable_width})",
               device=_label(topology, dev), speed=_fmt_speed(lim.speed_gts), width=lim.width,
               max_speed=_fmt_speed(lim.capable_speed_gts), max_width=lim.capable_width,
               now=f"{lim.available_gbps / 8:.1f}" if lim.available_gbps else "",
               full=f"{lim.capable_gbps / 8:.1f}" if lim.capable_gbps else "", partner="",
               at=at, line=lim.line_no, driver="the PCI core" if lim.driver in (None, "pci") else lim.driver)


@check("PCI002")
def pcie_link_below_cap(lspci_vvv=None, kernel_log=None, topology=None, lspci_tree=None) -> Iterator:
    """LnkSta below LnkCap on a GPU, a NIC or a bridge above one: width is graded, speed alone is
    graded with the device kind and its link partner (idle GPUs drop to 2.5 GT/s). The kernel log's
    downtraining reports count too, for the devices lspci does not show below their capability."""
    said: set[str] = set()
    if lspci_vvv is not None:
        devices = tuple(d for d in with_tree(lspci_vvv, lspci_tree) if not isinstance(d, _TreeEndpoint))
        for dev in devices:
            if _judged(dev, devices):
                found = _link_finding(topology, dev, devices)
                if found is not None:
                    said.add(dev.bdf or "")
                    yield found
    for lim in getattr(kernel_log, "pcie_limited", ()) or ():
        if lim.device not in said and (lspci_vvv is None or not any(d.bdf == lim.device for d in lspci_vvv.devices)):
            found = _kernel_finding(topology, lim)
            if found is not None:
                yield found


# -- PCI003 ------------------------------------------------------------------------------------

def _mode(kernel_cmdline, kernel_log, sysfs_iommu) -> tuple[Optional[str], str]:
    """(translated | passthrough | off | on | None, what said it). The kernel log's 'Default domain
    type' is the running kernel's own word and wins; then the command line; then an IOMMU seen on."""
    domain = getattr(kernel_log, "iommu_default_domain", None)
    if domain:
        d = domain.lower()
        return ("passthrough" if d.startswith("pass") else "translated" if d.startswith("trans") else None,
                f"kernel log: 'Default domain type: {domain}'")
    mode, options = _cmdline_mode(kernel_cmdline, kernel_log)
    if mode in ("passthrough", "off", "translated"):
        return mode, "kernel command line: " + " ".join(options)
    if sysfs_iommu is not None and not sysfs_iommu.units:
        return "off", "/sys/class/iommu is empty"
    if (sysfs_iommu is not None and sysfs_iommu.units) or getattr(kernel_log, "iommu_enabled", None):
        what = f"/sys/class/iommu lists {listing(sysfs_iommu.units, 3)}" if sysfs_iommu is not None \
            else "the kernel log says the IOMMU is enabled"
        return "on", what + " and no iommu=pt"
    return None, ""


def _cmdline_mode(kernel_cmdline, kernel_log) -> tuple[Optional[str], tuple]:
    if kernel_cmdline is not None:
        return kernel_cmdline.iommu_mode, kernel_cmdline.iommu_options
    text = getattr(kernel_log, "kernel_cmdline", None)
    if text:
        from ..parsers.kernel_cmdline import iommu_mode, params_of

        return iommu_mode(params_of(text))
    return None, ()


_DMA_DRIVERS = ("nvidia", "mlx5_core", "mlx5", "nvidia-nvswitch")


def _dma_faults(kernel_log, gpus_nics: set) -> list:
    """IOMMU faults of a GPU or NIC: the driver that printed it, or a bus id the inputs know as one."""
    out = []
    for e in getattr(kernel_log, "iommu_faults", ()) or ():
        text = e.text
        if any(f"{drv} " in text for drv in _DMA_DRIVERS) or (e.pci and e.pci in gpus_nics):
            out.append(e)
    return out


def _counts(topology, lspci_vvv) -> tuple[int, int]:
    """(GPUs, NICs) the model or lspci shows, whichever shows more."""
    gpus = len(topology.gpus()) if topology is not None else 0
    nics = len(topology.nics()) if topology is not None else 0
    if lspci_vvv is not None:
        gpus = max(gpus, sum(1 for d in lspci_vvv.devices if d.kind == "gpu"))
        nics = max(nics, sum(1 for d in lspci_vvv.devices if d.kind == "nic"))
    return gpus, nics


def _p2p_users(topology, lspci_vvv, nccl_debug) -> list[str]:
    """What shows the host moves data GPU-to-GPU or NIC-to-GPU: GPUs and NICs the inputs list,
    NCCL's P2P or GDRDMA transports."""
    gpus, nics = _counts(topology, lspci_vvv)
    why = [f"{gpus} GPUs"] if gpus >= 2 else []
    if gpus and nics:
        why.append(f"GPU and {nics} NIC(s)")
    transports = getattr(nccl_debug, "transports", None) or {}
    used = [k for k in transports if k.startswith("P2P") or "GDRDMA" in k]
    if used:
        why.append("NCCL " + "/".join(used))
    return why


def _fault_finding(kernel_log, faults: list, said: str):
    devs = list(dict.fromkeys(e.pci or "?" for e in faults))
    return hit([f"pci:{d}" for d in devs[:8]], variant="faults", severity="error",
               evidence=[Evidence("kernel_log", None, faults[0].line_no)],
               expectation="no IOMMU fault on GPU or NIC DMA (iommu=pt or the IOMMU off)",
               count=getattr(kernel_log, "iommu_faults_total", len(faults)), devices=listing(devs, 4),
               said=said or "the faults show it translating", text=faults[0].text.strip()[:200])


def _endpoint_bdfs(lspci_vvv) -> set:
    return {d.bdf for d in (lspci_vvv.devices if lspci_vvv is not None else ()) if d.kind in ENDPOINTS}


@check("PCI003")
def iommu_translation(topology=None, kernel_cmdline=None, kernel_log=None, sysfs_iommu=None, lspci_vvv=None,
                      nccl_debug=None) -> Iterator:
    """The IOMMU translating DMA (not passthrough, not off) on a host that uses P2P or GPUDirect RDMA:
    error when a GPU or NIC's DMA faulted in it, warning with P2P/GDR users in the inputs, info
    without them."""
    if kernel_cmdline is None and kernel_log is None and sysfs_iommu is None:
        return
    faults = _dma_faults(kernel_log, _endpoint_bdfs(lspci_vvv))
    mode, said = _mode(kernel_cmdline, kernel_log, sysfs_iommu)
    if faults:
        yield _fault_finding(kernel_log, faults, said)
        return
    if mode not in ("translated", "on"):
        return
    users = _p2p_users(topology, lspci_vvv, nccl_debug)
    host = (topology.host() if topology is not None else None) or "host:local"
    yield hit([host], variant="default" if users else "unused", severity=None if users else "info",
              evidence=[Evidence(_said_source(said), None, None)],
              notes=when(likely=mode == "on"),
              expectation="iommu=pt (or the IOMMU off) on a host that uses P2P or GPUDirect RDMA",
              said=said, users=", ".join(users))


def _said_source(said: str) -> str:
    if said.startswith("kernel log"):
        return "kernel_log"
    if said.startswith("kernel command line"):
        return "kernel_cmdline"
    return "sysfs_iommu" if said.startswith("/sys") else "kernel_log"
