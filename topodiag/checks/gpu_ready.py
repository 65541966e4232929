"""GPU003 gpu-not-ready: a GPU that the kernel log says must not take the next job (the prolog's
question), judged only inside a window: after the last NVIDIA driver load (its probe included), after
that GPU's last reset the log acknowledges, and, when asked (`--kernel-log-since`, or the rule's
`since_s`), within the log's last S seconds. Which events block is xid.blocks_job: the catalogue's
reset and lost grades, a pending row remap (63), Xid 154 by the action it names; a GPU fallen off
the bus blocks. Reads the `kernel_log` parser's xids, fallen_off_bus, driver_window_line, gpu_resets,
last_time_s and the probe's now_s / since_s."""

from __future__ import annotations

from typing import Any, Iterator

from .. import xid as xids
from ..engine import Evidence, Severity, check, hit, when
from ._facts import listing
from ._kernel_window import Window, per_gpu


def _blocking(log, win: Window) -> dict[str, dict[str, Any]]:
    """per_gpu of the events inside the window that block a job."""
    def keep(e) -> bool:
        if hasattr(e, "xid") and not xids.blocks_job(e.xid, getattr(e, "action", None)):
            return False
        return win.keeps(e.pci, e.line_no, getattr(e, "time_s", None))

    return per_gpu(log, keep)


def _lost(g: dict[str, Any]) -> bool:
    return g["lost"] is not None or any(xids.grade(c) == "lost" for c in g["codes"])


@check("GPU003")
def gpu003(kernel_log, params) -> Iterator:
    """One finding per GPU with an event inside the window that means it must not take a job:
    critical for a GPU lost (off the bus, 95, 143), else error."""
    win = Window(kernel_log, params)
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
