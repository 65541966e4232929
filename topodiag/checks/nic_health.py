"""IB017 hca-firmware-error: an HCA whose firmware stopped answering or reported an error, from the mlx5
driver's health reporter in the kernel log ("device's health compromised - reached miss count", "Health
issue observed, firmware internal error, severity(3) ERROR:", "synd 0x1: ...", "Fatal error N detected").
One finding per card (its PCI functions together), named by its PCI address and, where the model knows
the address (sysfs, pyverbs), by its RDMA device. Reads the `kernel_log` parser's nic_health."""

from __future__ import annotations

from typing import Any, Iterator

from ..engine import Evidence, Severity, check, hit, when
from ._facts import listing
from ._kernel_window import Window

MILD = ("WARNING", "NOTICE", "INFO", "DEBUG")  # the firmware's own grades that are no failure


def _current(events, since: "float | None" = None) -> list:
    """The events after each function's last "health recovery succeeded" (what came before it the driver
    recovered from), and within the last `since` seconds when the probe was asked for a window."""
    last_ok: dict[str, int] = {}
    for e in events:
        if e.kind == "recovered":
            last_ok[e.device] = e.line_no
    return [e for e in events if e.kind != "recovered" and e.line_no > last_ok.get(e.device, 0)
            and (since is None or e.time_s is None or e.time_s >= since)]


def _per_card(events) -> dict[str, dict[str, Any]]:
    """'0000:0d:00' -> {functions, kinds, syndromes, severities, lines}."""
    cards: dict[str, dict[str, Any]] = {}
    for e in events:
        c = cards.setdefault(e.device.rsplit(".", 1)[0], {"functions": [], "kinds": [], "syndromes": [],
                                                          "severities": [], "lines": []})
        for key, value in (("functions", e.device), ("kinds", e.kind), ("severities", e.severity)):
            if value and value not in c[key]:
                c[key].append(value)
        if e.kind in ("syndrome", "health_issue", "fatal") and e.syndrome and e.syndrome not in c["syndromes"]:
            c["syndromes"].append({"fatal": f"fatal sensor {e.syndrome}", "syndrome": f"synd {e.syndrome}"}.get(
                e.kind, e.syndrome))
        c["lines"].append(e.line_no)
    return cards


def _mild(card: dict[str, Any]) -> bool:
    """Only health issues the firmware itself grades as a warning or less: no miss count, no fatal."""
    return set(card["kinds"]) <= {"health_issue", "syndrome"} and bool(card["severities"]) and all(
        s in MILD for s in card["severities"])


def _subjects(topology, functions: list[str]) -> list[str]:
    out = []
    for f in functions:
        node = topology.resolve(f) if topology is not None else f
        out.append(node if node.startswith("nic:") else f"pci:{f}")
    return list(dict.fromkeys(out))


@check("IB017")
def ib017(kernel_log, topology=None) -> Iterator:
    since = Window(kernel_log, {}).floor  # --kernel-log-since, as GPU003 reads it
    events = _current(getattr(kernel_log, "nic_health", ()) or (), since)
    for card, c in sorted(_per_card(events).items()):
        functions = sorted(c["functions"])
        subjects = _subjects(topology, functions)
        nics = [s[4:] for s in subjects if s.startswith("nic:")]
        yield hit(subjects, severity=Severity.WARNING if _mild(c) else None,
                  notes=when(rdma=bool(nics), more=len(c["lines"]) > 1),
                  evidence=[Evidence("kernel_log", None, c["lines"][0])],
                  expectation="no health event from the HCA's firmware",
                  card=card, functions=listing(functions, 6),
                  what=_what(c), nics=", ".join(nics), events=len(c["lines"]), lines=listing([str(n) for n in c["lines"]], 5))


def _what(c: dict[str, Any]) -> str:
    parts = []
    if "recovery_failed" in c["kinds"]:
        parts.append("the driver's health recovery failed")
    if "miss_count" in c["kinds"]:
        parts.append("its firmware stopped answering the health poll (miss count reached)")
    if c["syndromes"]:
        parts.append("it reported " + ", ".join(c["syndromes"]))
    if c["severities"]:
        parts.append("severity " + "/".join(c["severities"]))
    return "; ".join(parts) or "a health event"
