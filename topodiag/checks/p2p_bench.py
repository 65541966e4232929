"""GPU copy benchmark rules (PERF005-PERF007) over p2pBandwidthLatencyTest and nvbandwidth outputs.

- PERF005: P2P enabled slower than disabled for a GPU pair (p2pBandwidthLatencyTest's P2P=Enabled
  matrix below its P2P=Disabled one): peer traffic detoured through the root complex (PCIe ACS) or
  translated by the IOMMU: PCI001 / PCI003 say where.
- PERF006: an asymmetric pair (A->B far below B->A) in a GPU-to-GPU matrix (p2pBandwidthLatencyTest
  P2P=Enabled, nvbandwidth device_to_device_*).
- PERF007: a GPU whose host copies (nvbandwidth host_to_device / device_to_host) are far below its
  peers': a PCIe link trained narrow or slow (PCI002 says which).

Device numbers are CUDA's as the tools print them: subjects are gpu:<n> with that number.
"""

from __future__ import annotations

from typing import Iterator, Optional

from ..engine import Evidence, check, hit, when
from ..parsers.base import listing
from ._p2p_causes import p2p_causes


def median(values) -> float:
    """statistics.median, imported when a check needs it (not on every run's import path)."""
    from statistics import median as _median

    return _median(values)


SLOWER = 0.9  # P2P enabled below this fraction of disabled
ASYMMETRY = 0.7  # A->B below this fraction of B->A
HOST_LOW = 0.7
OUTLIER = 0.5  # a pair below this fraction of every other pair  # a GPU's host copy below this fraction of the median of its peers


def _pairs(matrix) -> Iterator[tuple[int, int, float]]:
    for row in matrix.rows:
        for col, v in zip(matrix.devices, row.values):
            if v is not None and col != row.device:
                yield row.device, col, v


def _slower(p2p_bandwidth_latency, fraction: float) -> list[tuple[str, list]]:
    """(direction, [(a, b, enabled, disabled)]) for the uni- and bidirectional matrices."""
    out = []
    for direction in ("uni", "bi"):
        on = p2p_bandwidth_latency.matrix("bandwidth", direction, "enabled")
        off = p2p_bandwidth_latency.matrix("bandwidth", direction, "disabled")
        if on is None or off is None:
            continue
        slow = [(a, b, v, off.value(a, b)) for a, b, v in _pairs(on)
                if off.value(a, b) is not None and v < fraction * off.value(a, b)]
        if slow:
            out.append((direction, slow, on))
    return out


@check("PERF005")
def perf005(p2p_bandwidth_latency, params, lspci_vvv=None, kernel_cmdline=None, kernel_log=None,
            sysfs_iommu=None) -> Iterator:
    """GPU pairs whose P2P=Enabled bandwidth is below their P2P=Disabled bandwidth; with the PCIe sources,
    the ACS-redirecting bridges and a translating IOMMU join the finding as its cause."""
    fraction = float(params.get("max_fraction", SLOWER))
    for direction, slow, on in _slower(p2p_bandwidth_latency, fraction):
        gpus = sorted({g for a, b, _, _ in slow for g in (a, b)})
        total = sum(1 for _ in _pairs(on))
        cause = p2p_causes(lspci_vvv, kernel_cmdline, kernel_log, sysfs_iommu)
        yield hit([f"gpu:{g}" for g in gpus] + cause["subjects"],
                  evidence=[Evidence("p2p_bandwidth_latency", None, on.line_no)] + cause["evidence"],
                  notes=when(acs=cause["acs"], iommu=cause["iommu"]), acs_bridges=cause["acs_bridges"],
                  iommu_said=cause["iommu_said"],
                  expectation=f"P2P=Enabled at least {fraction:g} x P2P=Disabled for every pair",
                  direction={"uni": "unidirectional", "bi": "bidirectional"}[direction], count=len(slow), total=total,
                  pairs=listing([f"{a}->{b} {e:g} vs {d:g}" for a, b, e, d in slow], 6),
                  enabled=f"{median(e for _, _, e, _ in slow):g}", disabled=f"{median(d for _, _, _, d in slow):g}")


def _gpu_matrices(p2p_bandwidth_latency=None, nvbandwidth=None) -> list[tuple[str, object, str, int]]:
    """(label, matrix-like with value()/rows, source, line) for each GPU-to-GPU bandwidth matrix."""
    out = []
    if p2p_bandwidth_latency is not None:
        for direction in ("uni",):
            m = p2p_bandwidth_latency.matrix("bandwidth", direction, "enabled")
            if m is not None:
                out.append((m.title, m, "p2p_bandwidth_latency", m.line_no))
    if nvbandwidth is not None:
        for t in nvbandwidth.testcases:
            if t.row_kind == "GPU" and t.col_kind == "GPU" and t.direction in ("->", "<-") and t.rows:
                out.append((t.name, _NvMatrix(t), "nvbandwidth", t.line_no))
    return out


class _NvMatrix:
    """An nvbandwidth testcase seen as a p2p matrix (devices, rows with .device/.values, value())."""

    def __init__(self, t) -> None:
        self.devices = t.columns
        self.rows = [type("R", (), {"device": r.label, "values": r.values})() for r in t.rows]
        self.value = t.value


def _asymmetric(m, fraction: float) -> list[tuple[int, int, float, float]]:
    seen = []
    for a, b, v in _pairs(m):
        back = m.value(b, a)
        if back is not None and v < fraction * back:
            seen.append((a, b, v, back))
    return seen


def _isolated_low(m, fraction: float) -> list[tuple[int, int, float, float]]:
    """Pairs (both directions' best) below `fraction` x the slowest of all other pairs, with no other pair
    within 20% of them: one pair far below every link class of the node. (a, b, value, next slowest)."""
    best: dict[tuple[int, int], float] = {}
    for a, b, v in _pairs(m):
        key = (min(a, b), max(a, b))
        best[key] = max(best.get(key, 0.0), v)
    out = []
    for key, v in best.items():
        others = [w for k, w in best.items() if k != key]
        if len(others) >= 3 and v < fraction * min(others) and not any(abs(w - v) <= 0.2 * w for w in others):
            out.append((key[0], key[1], v, min(others)))
    return out


@check("PERF006")
def perf006(params, p2p_bandwidth_latency=None, nvbandwidth=None) -> Iterator:
    """A GPU pair whose one direction is far below the other in a GPU-to-GPU bandwidth matrix, or a pair
    far below every other pair of the node."""
    fraction = float(params.get("max_fraction", ASYMMETRY))
    for label, m, source, line in _gpu_matrices(p2p_bandwidth_latency, nvbandwidth):
        slow = _asymmetric(m, fraction)
        if slow:
            gpus = sorted({g for a, b, _, _ in slow for g in (a, b)})
            yield hit([f"gpu:{g}" for g in gpus], evidence=[Evidence(source, None, line)],
                      expectation=f"each direction of a pair at least {fraction:g} x the other",
                      matrix=label, count=len(slow),
                      pairs=listing([f"{a}->{b} {v:g} vs {b}->{a} {w:g} GB/s" for a, b, v, w in slow], 6))
        for a, b, v, floor in _isolated_low(m, float(params.get("outlier_fraction", OUTLIER))):
            yield hit([f"gpu:{a}", f"gpu:{b}"], variant="outlier", evidence=[Evidence(source, None, line)],
                      expectation=f"every pair within the link classes its peers show (the slowest other pair: {floor:g} GB/s)",
                      matrix=label, a=a, b=b, value=f"{v:g}", floor=f"{floor:g}")


def _host_rows(nvbandwidth) -> list[tuple[str, dict, int]]:
    """(testcase, {gpu: GB/s}, line) for the host<->GPU copy testcases (one CPU row, a column per GPU)."""
    out = []
    for t in nvbandwidth.testcases:
        if {t.row_kind, t.col_kind} == {"CPU", "GPU"} and t.rows and len(t.columns) >= 3:
            vals = {c: v for c, v in zip(t.columns, t.rows[0].values) if v is not None}
            out.append((t.name, vals, t.line_no))
    return out


def _low(vals: dict, fraction: float) -> Optional[list[tuple[int, float, float]]]:
    low = []
    for g, v in vals.items():
        peers = [w for h, w in vals.items() if h != g]
        if len(peers) >= 2 and v < fraction * median(peers):
            low.append((g, v, median(peers)))
    return low or None


def _bdf(bus_id: Optional[str]) -> Optional[str]:
    """nvbandwidth's "00000000:99:00" as lspci's "0000:99:00" (domain, bus, device)."""
    if not bus_id or bus_id.count(":") < 2:
        return None
    dom, bus, dev = bus_id.split(":")[:3]
    return f"{dom[-4:]}:{bus}:{dev.split('.')[0]}".lower()


def _below_cap(d) -> bool:
    cap, sta = d.link_cap, d.link_sta
    if not (cap and sta):
        return False
    return (sta.width or 0) < (cap.width or 0) or (sta.speed_gts or 0) < (cap.speed_gts or 0)


def _gts(v: Optional[float]) -> str:
    return f"{v:g}" if v else "?"


def _link(nvbandwidth, lspci_vvv, gpu: int) -> Optional[dict]:
    """lspci's link of this GPU when it trained below its capability: {width, max_width, speed, max_speed, line}."""
    want = _bdf(next((d.bus_id for d in nvbandwidth.devices if d.index == gpu), None))
    if want is None or lspci_vvv is None:
        return None
    for d in lspci_vvv.devices:
        if d.bdf and d.bdf.lower().startswith(want) and _below_cap(d):
            return {"width": d.link_sta.width, "max_width": d.link_cap.width, "speed": _gts(d.link_sta.speed_gts),
                    "max_speed": _gts(d.link_cap.speed_gts), "line": d.line_no, "bdf": d.bdf}
    return None


@check("PERF007")
def perf007(nvbandwidth, params, lspci_vvv=None) -> Iterator:
    """A GPU whose host-to-device or device-to-host copy bandwidth is far below its peers'; with lspci -vvv,
    the GPU's link below its capability (joined by the bus id nvbandwidth prints) joins the finding."""
    fraction = float(params.get("max_fraction", HOST_LOW))
    for name, vals, line in _host_rows(nvbandwidth):
        for g, v, peers in _low(vals, fraction) or ():
            link = _link(nvbandwidth, lspci_vvv, g) or {}
            ev = [Evidence("lspci_vvv", None, link["line"])] if link else []
            yield hit([f"gpu:{g}"] + ([f"pci:{link['bdf']}"] if link else []),
                      evidence=[Evidence("nvbandwidth", None, line)] + ev, notes=when(link=bool(link)),
                      expectation=f"every GPU at least {fraction:g} x the median of its peers",
                      gpu=g, testcase=name, value=f"{v:g}", peers=f"{peers:g}", ratio=f"{v / peers:.0%}",
                      width=link.get("width"), max_width=link.get("max_width"), speed=link.get("speed"),
                      max_speed=link.get("max_speed"), bdf=link.get("bdf"))
