"""GPU003 gpu-not-ready: a GPU that the kernel log says must not take the next job (the prolog's
question), judged only inside a window: after the last NVIDIA driver load (its probe included), after
that GPU's last reset the log acknowledges, and, when asked (`--kernel-log-since`, or the rule's
`since_s`), within the log's last S seconds. Which events block is xid.blocks_job: the catalogue's
reset and lost grades, a pending row remap (63), Xid 154 by the action it names; a GPU fallen off
the bus blocks. Reads the `kernel_log` parser's xids, fallen_off_bus, driver_window_line, gpu_resets,
last_time_s and the probe's now_s / since_s."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from .. import xid as xids
from ..engine import Evidence, Severity, check, hit, when
from ._facts import listing


def _since(log, params) -> Optional[float]:
    """The window's length in seconds: the probe's (--kernel-log-since), else the rule's since_s."""
    s = getattr(log, "since_s", None)
    if s is None:
        try:
            s = float(params.get("since_s", 0) or 0) or None
        except (TypeError, ValueError):
            s = None
    return s if s is not None and s > 0 else None


def _resets(log) -> dict[str, tuple[int, Optional[float]]]:
    """bus -> (line, time) of that GPU's last reset the log acknowledges."""
    out: dict[str, tuple[int, Optional[float]]] = {}
    for r in getattr(log, "gpu_resets", ()) or ():
        if r.pci is not None:
            out[r.pci] = (r.line_no, r.time_s)
    return out


class _Window:
    def __init__(self, log, params) -> None:
        self.load = getattr(log, "driver_window_line", None)
        self.resets = _resets(log)
        self.span = _since(log, params)
        now = getattr(log, "now_s", None)
        self.now_from = "the probe's clock" if now is not None else "the log's last stamp"
        now = now if now is not None else getattr(log, "last_time_s", None)
        self.floor = now - self.span if self.span is not None and now is not None else None
        self.untimed = 0  # events kept although the time window could not judge them (no stamp)

    def start(self, bus: str) -> int:
        return max(self.load or 0, self.resets.get(bus, (0, None))[0])

    def keeps(self, bus: str, line_no: int, time_s: Optional[float]) -> bool:
        if line_no < self.start(bus):
            return False
        if self.floor is not None:
            if time_s is None:
                self.untimed += 1
            elif time_s < self.floor:
                return False
        return True

    def said(self, bus: str) -> str:
        parts = []
        reset = self.resets.get(bus)
        if reset and reset[0] >= (self.load or 0):
            parts.append(f"after this GPU's reset (line {reset[0]})")
        elif self.load:
            parts.append(f"after the last NVIDIA driver load (from line {self.load})")
        else:
            parts.append("the whole log (no NVIDIA driver load line in it)")
        if self.span is not None:
            parts.append(f"within the last {_duration(self.span)} ({self.now_from})" if self.floor is not None
                         else f"the last {_duration(self.span)} asked, but the log has no time stamps")
        return ", ".join(parts)


def _duration(s: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= size and s % size == 0:
            return f"{s / size:g} {unit}"
    return f"{s:g} s"


def _blocking(log, win: _Window) -> dict[str, dict[str, Any]]:
    """bus -> {codes, lines, lost (line or None)} of the events inside the window that block a job."""
    gpus: dict[str, dict[str, Any]] = {}
    for x in getattr(log, "xids", ()) or ():
        if not xids.blocks_job(x.xid, getattr(x, "action", None)) or not win.keeps(x.pci, x.line_no, x.time_s):
            continue
        g = gpus.setdefault(x.pci, {"codes": [], "lines": [], "lost": None, "actions": []})
        if x.xid not in g["codes"]:
            g["codes"].append(x.xid)
        if getattr(x, "action", None) and x.action not in g["actions"]:
            g["actions"].append(x.action)
        g["lines"].append(x.line_no)
    for e in getattr(log, "fallen_off_bus", ()) or ():
        if e.pci is not None and win.keeps(e.pci, e.line_no, getattr(e, "time_s", None)):
            g = gpus.setdefault(e.pci, {"codes": [], "lines": [], "lost": None, "actions": []})
            g["lost"] = e.line_no
    return gpus


def _lost(g: dict[str, Any]) -> bool:
    return g["lost"] is not None or any(xids.grade(c) == "lost" for c in g["codes"])


@check("GPU003")
def gpu003(kernel_log, params) -> Iterator:
    """One finding per GPU with an event inside the window that means it must not take a job:
    critical for a GPU lost (off the bus, 95, 143), else error."""
    win = _Window(kernel_log, params)
    for bus, g in sorted(_blocking(kernel_log, win).items()):
        lost = _lost(g)
        first = g["lost"] if g["lost"] is not None else g["lines"][0]
        lines = sorted(set(g["lines"] + ([g["lost"]] if g["lost"] is not None else [])))
        yield hit([f"pci:{bus}"], variant="lost" if lost else "default",
                  severity=Severity.CRITICAL if lost else None,
                  notes=when(action=bool(g["actions"]), untimed=win.untimed > 0, more=len(lines) > 1),
                  evidence=[Evidence("kernel_log", None, first)],
                  expectation="no event since the GPU's last reset or driver load that leaves it unfit for a job",
                  gpu=bus, codes=", ".join(map(str, g["codes"])) or "none (the fallen-off-the-bus notice)",
                  names="; ".join(f"{c}: {xids.name(c)}" for c in g["codes"]) or "the GPU fell off the bus",
                  window=win.said(bus), actions=", ".join(g["actions"]), events=len(lines),
                  lines=listing([str(n) for n in lines], 5))
