"""What the kernel-log GPU checks share (GPU001, GPU003): the log's events per GPU (`per_gpu`), and the
window a kernel log is judged in (`Window`): after the last NVIDIA driver load (its probe included),
after a GPU's last reset the log acknowledges, and, when asked (`--kernel-log-since`, a rule's
`since_s`), within the log's last S seconds. A helper of the check modules (the registry skips names
starting with "_")."""

from __future__ import annotations

from typing import Any, Callable, Optional


def per_gpu(log, keep: Optional[Callable[[Any], bool]] = None) -> dict[str, dict[str, Any]]:
    """{bus: {codes: [Xids, in order], causes: [Xids named by 'caused by previous Xid N'], actions:
    [the actions Xid 154 names], lines: [line numbers], lost: the fallen-off-the-bus line or None}}
    of the log's Xid events and fallen-off-the-bus notices that `keep` keeps (all without it)."""
    gpus: dict[str, dict[str, Any]] = {}

    def of(bus: str) -> dict[str, Any]:
        return gpus.setdefault(bus, {"codes": [], "causes": [], "actions": [], "lines": [], "lost": None})

    for x in getattr(log, "xids", ()) or ():
        if keep is not None and not keep(x):
            continue
        g = of(x.pci)
        if x.xid not in g["codes"]:
            g["codes"].append(x.xid)
        caused = getattr(x, "caused_by", None)
        if caused is not None and caused not in g["causes"]:
            g["causes"].append(caused)
        action = getattr(x, "action", None)
        if action and action not in g["actions"]:
            g["actions"].append(action)
        g["lines"].append(x.line_no)
    for e in getattr(log, "fallen_off_bus", ()) or ():
        if e.pci is not None and (keep is None or keep(e)):
            of(e.pci)["lost"] = e.line_no
    return gpus


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


class Window:
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
