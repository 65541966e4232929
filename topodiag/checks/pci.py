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
from ._facts import listing

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


def _label(topology, dev: Any, name: Optional[str] = None) -> str:
    """'gpu:3 (0000:18:00.0)' / 'GPU 0000:18:00.0' for a message."""
    name = name or _name(topology, dev)
    kind = {"gpu": "GPU", "nic": "NIC", "bridge": "bridge"}.get(dev.kind, "device")
    if dev.bdf is None:
        return f"the {kind} of line {dev.line_no}"
    return f"{name} ({dev.bdf})" if not name.startswith("pci:") else f"{kind} {dev.bdf}"


class _Endpoints:
    """The GPUs and NICs of a paste, indexed once per run by (domain, bus) so that what lies below a
    bridge is a range lookup, not a scan (a 4 MB paste of 1,366 bridges took 84 s scanning), and
    their model names resolved once each."""

    def __init__(self, topology, endpoints: list) -> None:
        import bisect

        self._bisect = bisect
        self.topology = topology
        self.all = endpoints
        self.keys: list[tuple[str, int, int]] = []
        self.by_bdf: dict[str, list[int]] = {}
        self.by_kind: dict[str, list[int]] = {"gpu": [], "nic": []}
        for i, d in enumerate(endpoints):
            self.by_bdf.setdefault(d.bdf, []).append(i)
            self.by_kind.setdefault(d.kind, []).append(i)
            try:
                dom, bus = _bus(d.bdf)
            except ValueError:
                continue
            self.keys.append((dom, bus, i))
        self.keys.sort()
        self._names: dict[str, str] = {}

    def name(self, dev: Any) -> str:
        if dev.bdf is None:
            return _name(self.topology, dev)
        got = self._names.get(dev.bdf)
        if got is None:
            got = self._names[dev.bdf] = _name(self.topology, dev)
        return got

    def label(self, dev: Any) -> str:
        return _label(self.topology, dev, self.name(dev))

    def below(self, bridge: Any) -> list[int]:
        """The indexes (in input order) of the endpoints under the bridge (as `_below` says)."""
        if bridge.bdf is None:
            return []
        found = set(self.by_bdf.get(bridge.upstream_of, ())) if bridge.upstream_of else set()
        if bridge.secondary is not None and bridge.subordinate is not None:
            dom, _ = _bus(bridge.bdf)
            lo = self._bisect.bisect_left(self.keys, (dom, bridge.secondary, -1))
            hi = self._bisect.bisect_right(self.keys, (dom, bridge.subordinate, len(self.all)))
            found.update(k[2] for k in self.keys[lo:hi])
        found.difference_update(self.by_bdf.get(bridge.bdf, ()))
        return sorted(found)

    def pairs(self, below: list[int], first: int) -> tuple[int, list[tuple[Any, Any]]]:
        """How many endpoint pairs (one below the bridge, one not) have a GPU among them, and the
        first `first` of them in the order of the full list: GPU-NIC pairs first, each group by
        the endpoint below, then the one outside, in input order."""
        inside = set(below)
        kinds = [self.all[i].kind for i in below]
        outside = {k: [i for i in self._outside(k, inside, first)] for k in ("gpu", "nic")}
        n_out = {k: len(self.by_kind.get(k, ())) - kinds.count(k) for k in ("gpu", "nic")}
        count = kinds.count("gpu") * (n_out["nic"] + n_out["gpu"]) + kinds.count("nic") * n_out["gpu"]
        out: list[tuple[Any, Any]] = []
        partner = {"gpu": "nic", "nic": "gpu"}
        for group in ("gpu-nic", "gpu-gpu"):
            for i, kind in zip(below, kinds):
                other = partner.get(kind) if group == "gpu-nic" else ("gpu" if kind == "gpu" else None)
                for j in outside.get(other, ()) if other else ():
                    if len(out) == first:
                        return count, out
                    out.append((self.all[i], self.all[j]))
        return count, out

    def _outside(self, kind: str, inside: set, limit: int) -> Iterator[int]:
        n = 0
        for j in self.by_kind.get(kind, ()):
            if j not in inside:
                yield j
                n += 1
                if n == limit:
                    return


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


def _bridge_finding(ends: _Endpoints, bridge: Any, errors: list):
    """One bridge with redirection on: error when it lies between a GPU and a NIC or two GPUs, warning when
    it is above GPUs/NICs whose peers the paste does not show; None when no GPU or NIC is near it."""
    index = ends.below(bridge)
    below = [ends.all[i] for i in index]
    count, pairs = ends.pairs(index, 5) if below else (0, [])
    if not count and not below:
        return None
    flags = ", ".join(f"{k}+" for k, v in (bridge.acs_ctl or {}).items() if v)
    common = dict(bridge=bridge.bdf, flags=flags, nccl_error=_nccl_text(errors))
    if count:
        a, b = pairs[0]
        subjects = list(dict.fromkeys([ends.name(a), ends.name(b), f"pcisw:{bridge.bdf}"]))
        others = "; ".join(f"{ends.label(x)}-{ends.label(y)}" for x, y in pairs[1:5])
        if count - 1 > 4:
            others += f"; and {count - 5} more"
        return hit(subjects, evidence=_acs_evidence(bridge, errors), notes=when(nccl=errors, more=count > 1),
                   expectation="ACS redirection off on the bridges between GPUs and NICs",
                   a=ends.label(a), b=ends.label(b), count=count, others=others, **common)
    return hit([ends.name(d) for d in below] + [f"pcisw:{bridge.bdf}"], variant="above", severity="warning",
               evidence=_acs_evidence(bridge, errors), notes=when(nccl=errors),
               expectation="ACS redirection off on the bridges above GPUs and NICs",
               devices=listing((ends.label(d) for d in below[:5]), 4), **common)


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
    ends = _Endpoints(topology, endpoints)
    unplaced = []
    for bridge in redirecting:
        found = _bridge_finding(ends, bridge, errors) if endpoints else None
        if found is not None:
            yield found
        elif bridge.bdf is None or (bridge.secondary is None and bridge.upstream_of is None):
            unplaced.append(bridge)
    if unplaced:
        yield _unplaced(lspci_vvv, unplaced, errors)


# -- PCI002 ------------------------------------------------------------------------------------

def _gen(speed: Optional[float]) -> Optional[int]:
    return knowledge.pcie_gen_from_link_speed(speed) if speed else None


def _partner(dev: Any, ends: _Endpoints) -> Optional[Any]:
    """The GPU or NIC right below a bridge (on its secondary bus, or the one a comment names)."""
    for i in ends.below(dev):
        d = ends.all[i]
        if dev.upstream_of == d.bdf or _bus(d.bdf)[1] == dev.secondary:
            return d
    return None


def _judged(dev: Any, ends: _Endpoints) -> bool:
    """GPUs, NICs and devices of unknown kind; bridges only above a GPU or NIC (other bridges lead to
    disks, USB, the BMC: not this rule's)."""
    if dev.kind in ("gpu", "nic", "unknown"):
        return True
    if dev.kind == "bridge" or (dev.kind == "other" and dev.acs_ctl is not None):
        return bool(ends.below(dev))
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


def _link_finding(topology, dev: Any, ends: _Endpoints):
    cap, sta = dev.link_cap, dev.link_sta
    below = _below_cap(cap, sta)
    if below is None:
        return None
    narrow = below[0]
    partner = _partner(dev, ends) if dev.kind in ("bridge", "other") else None
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
        yield from _lspci_link_findings(topology, lspci_vvv, lspci_tree, said)
    shown = {d.bdf for d in lspci_vvv.devices} if lspci_vvv is not None else set()
    for lim in getattr(kernel_log, "pcie_limited", ()) or ():
        if lim.device not in said and lim.device not in shown:
            found = _kernel_finding(topology, lim)
            if found is not None:
                yield found


def _lspci_link_findings(topology, lspci_vvv, lspci_tree, said: set) -> Iterator:
    """PCI002 of lspci's devices; the bus ids it names go into `said`."""
    devices = tuple(d for d in with_tree(lspci_vvv, lspci_tree) if not isinstance(d, _TreeEndpoint))
    ends = _Endpoints(topology, [d for d in devices if d.kind in ENDPOINTS and d.bdf])
    for dev in devices:
        if _judged(dev, ends):
            found = _link_finding(topology, dev, ends)
            if found is not None:
                said.add(dev.bdf or "")
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
