"""GPU health rules from the kernel log (GPU001): the NVIDIA driver's Xid events and "fallen off the
bus" notices, graded per GPU with the Xid catalogue (topodiag/xid.py); events that all came before the
GPU's acknowledged reset or the last NVIDIA driver load are history (info). Reads the `kernel_log`
parser's `xids` (with `caused_by`, the Xid a cleanup Xid 45 names), `fallen_off_bus`,
`driver_window_line` and `gpu_resets`."""

from __future__ import annotations

import re
from typing import Any, Iterator

from .. import xid as xids
from ..engine import Evidence, Severity, check, hit, when
from ._facts import listing
from ._kernel_window import Window, per_gpu

GRADE_WORDS = {"lost": "a lost GPU", "reset": "a GPU that needed a reset", "app": "the job's own errors",
               "watch": "degradation", "unknown": "codes outside the catalogue"}
SEVERITY = {"app": Severity.WARNING, "watch": Severity.WARNING, "unknown": Severity.WARNING,
            "reset": None, "lost": Severity.CRITICAL}  # None: the rule's own (error)


def _grade(g: dict[str, Any]) -> str:
    if g["lost"] is not None:
        return "lost"
    return max((xids.grade(c) for c in g["codes"] + g["causes"]), key=xids.GRADE_ORDER.index)


def _variant(grade: str) -> str:
    if grade == "lost":
        return "lost"
    if grade == "reset":
        return "default"
    if grade == "app":
        return "app"
    if grade == "watch":
        return "watch"
    return "unknown"


def _history(win: Window, bus: str, g: dict[str, Any]) -> str:
    """What re-initialised the GPU after every one of its events ("its reset at line N", "the NVIDIA
    driver load at line M"), or "" when an event is not behind such a line (the same window GPU003
    judges in, without its time span)."""
    start = win.start(bus)
    last = max(g["lines"] + ([g["lost"]] if g["lost"] is not None else []))
    if not start or last >= start:
        return ""
    reset = win.resets.get(bus)
    return (f"its reset at line {reset[0]}" if reset and reset[0] == start
            else f"the NVIDIA driver load that starts at line {start}")


@check("GPU001")
def gpu001(kernel_log) -> Iterator:
    """One finding per GPU with Xid events or a fallen-off-the-bus notice, at the gravity of its worst
    event (a cleanup Xid 45 counts as the Xid it names); info, as history, when every event came
    before the GPU's acknowledged reset or the last NVIDIA driver load."""
    total = getattr(kernel_log, "xids_total", 0)
    win = Window(kernel_log, {})
    for bus, g in sorted(per_gpu(kernel_log).items()):
        grade = _grade(g)
        codes = g["codes"]
        first = g["lost"] if g["lost"] is not None else g["lines"][0]
        since = _history(win, bus, g)
        yield hit([f"pci:{bus}"], variant="history" if since else _variant(grade),
                  severity=Severity.INFO if since else SEVERITY[grade],
                  notes=when(caused=g["causes"], no_xid=g["lost"] is not None and 79 not in codes,
                             more=len(g["lines"]) > 1),
                  evidence=[Evidence("kernel_log", None, first)],
                  expectation="no Xid event and no fallen-off-the-bus notice for this GPU",
                  gpu=bus, codes=", ".join(map(str, codes)) or "none",
                  names="; ".join(f"{c}: {xids.name(c)}" for c in codes) or "no Xid line",
                  causes=", ".join(map(str, g["causes"])),
                  cause_names="; ".join(f"{c}: {xids.name(c)}" for c in g["causes"]),
                  events=len(g["lines"]), total=total, lines=listing(g["lines"], 5), since=since,
                  worst=GRADE_WORDS[grade])


SXID_SEVERITY = {"fatal": None, "nonfatal": Severity.WARNING, "unknown": Severity.WARNING,
                 "correctable": Severity.INFO}  # None: the rule's own (error)


def _per_switch(log) -> dict[str, dict[str, Any]]:
    """{switch bus: {codes: [SXids in order], grade: the worst, lines: [line numbers], links: [NVLink
    numbers the lines name]}}."""
    switches: dict[str, dict[str, Any]] = {}
    events = getattr(log, "sxids", ()) or ()
    # a code one line of this log prints with its class ("20034, Fatal, ...") has that class on the
    # lines that print it with its data words only
    worded = {e.sxid: xids.sxid_grade(e.sxid, e.text) for e in events if ", Data {" not in e.text}
    for e in events:
        sw = switches.setdefault(e.pci, {"codes": [], "grade": "correctable", "lines": [], "links": []})
        if e.sxid not in sw["codes"]:
            sw["codes"].append(e.sxid)
        g = xids.sxid_grade(e.sxid, e.text)
        if g == "unknown":
            g = worded.get(e.sxid, g)
        if xids.SXID_GRADE_ORDER.index(g) > xids.SXID_GRADE_ORDER.index(sw["grade"]):
            sw["grade"] = g
        sw["lines"].append(e.line_no)
        m = _LINK_RE.search(e.text)
        if m and int(m[1]) not in sw["links"]:
            sw["links"].append(int(m[1]))
    return switches


_LINK_RE = re.compile(r"\bLink (\d{1,3})\b")


def _sxid_variant(grade: str) -> str:
    if grade == "fatal":
        return "default"
    if grade == "nonfatal":
        return "nonfatal"
    if grade == "correctable":
        return "correctable"
    return "unknown"


@check("GPU002")
def gpu002(kernel_log) -> Iterator:
    """One finding per NVSwitch with SXid lines, at the gravity of its worst: fatal (error: the NVLink
    traffic through it stalls until the system is reset), non-fatal or unknown (warning), corrected
    single-bit ECC only (info)."""
    for bus, sw in sorted(_per_switch(kernel_log).items()):
        yield hit([f"nvswitch:{bus}"], variant=_sxid_variant(sw["grade"]),
                  severity=SXID_SEVERITY[sw["grade"]],
                  notes=when(links=sw["links"], more=len(sw["lines"]) > 1),
                  evidence=[Evidence("kernel_log", None, sw["lines"][0])],
                  expectation="no SXid from the NVSwitches",
                  switch=bus, codes=", ".join(map(str, sw["codes"])),
                  names="; ".join(f"{c}: {xids.sxid_name(c)}" for c in sw["codes"]),
                  link_list=", ".join(map(str, sw["links"])), events=len(sw["lines"]),
                  lines=listing(sw["lines"], 5))
