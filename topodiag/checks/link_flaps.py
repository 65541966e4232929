"""IB009 ib-link-flaps: a NIC port whose link went down and up again and again, from the kernel log's
mlx5 "Link up/down" (Ethernet, RoCE, IPoIB netdevs) and "Port: N Link DOWN/ACTIVE" (IB ports) lines.
Reads the `kernel_log` parser's `link_events` (device, netdev, state, line_no, time_s)."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from ..engine import Evidence, Severity, check, hit
from ._facts import listing

WINDOW_S = 600.0  # ten minutes
MIN_CHANGES = 3
ERROR_CHANGES = 10


def _by_port(events) -> dict[tuple, list]:
    out: dict[tuple, list] = {}
    for e in events:
        out.setdefault((e.device, e.netdev), []).append(e)
    return out


def _worst_window(events: list, window_s: float) -> tuple[int, list]:
    """The most link changes inside any `window_s` span of time stamps, and those events; events
    without a time stamp count as one span when none has one."""
    timed = [e for e in events if e.time_s is not None]
    if not timed:
        return len(events), events
    best, best_events, start = 0, [], 0
    for end, e in enumerate(timed):
        while e.time_s - timed[start].time_s > window_s:
            start += 1
        if end - start + 1 > best:
            best, best_events = end - start + 1, timed[start : end + 1]
    return best, best_events


def _span(events: list) -> Optional[float]:
    times = [e.time_s for e in events if e.time_s is not None]
    return (max(times) - min(times)) if len(times) > 1 else None


@check("IB009")
def ib009(kernel_log, params) -> Iterator:
    """One finding per port with at least `min_changes` link changes inside `window_s` seconds."""
    window = float(params.get("window_s", WINDOW_S))
    least = int(params.get("min_changes", MIN_CHANGES))
    many = int(params.get("error_changes", ERROR_CHANGES))
    for (device, netdev), events in sorted(_by_port(getattr(kernel_log, "link_events", ()) or ()).items(),
                                           key=lambda kv: (kv[0][0], kv[0][1] or "")):
        count, worst = _worst_window(events, window)
        if count < least:
            continue
        span = _span(worst)
        downs = sum(1 for e in worst if e.state == "down")
        facts: dict[str, Any] = dict(port=f"{device}{f' ({netdev})' if netdev else ''}", count=count,
                                     downs=downs, ups=count - downs, window=f"{window / 60:g} min",
                                     span=f"{span:g} s" if span is not None else "an unknown time (no time stamps)",
                                     lines=listing([str(e.line_no) for e in worst], 6), total=len(events))
        yield hit([f"pci:{device}"], severity=Severity.ERROR if count >= many else None,
                  evidence=[Evidence("kernel_log", None, e.line_no) for e in worst[:3]],
                  expectation=f"fewer than {least} link changes of a port in {window / 60:g} min", **facts)
