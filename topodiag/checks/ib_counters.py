"""IB port error counters (the ib_counters source: sysfs counters/ and hw_counters/).

IB012 judges one snapshot, and only on the counters that must stay zero on a healthy link
(link_downed, excessive_buffer_overrun_errors, local_link_integrity_errors: NVSentinel's "fatal"
set): they are cumulative since the driver loaded or someone cleared them, so a non-zero value says
it happened, not when. IB013 judges rates, and only with two samples or a stated window: a
must-stay-zero counter that grew inside the window, symbol errors above what the IB spec's bit error
rate allows at the port's rate, link error recoveries and receive errors that keep coming."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from ..engine import Evidence, Severity, check, hit, when
from ._facts import listing

MUST_BE_ZERO = ("link_downed", "excessive_buffer_overrun_errors", "local_link_integrity_errors")
CONTEXT = ("symbol_error", "link_error_recovery", "port_rcv_errors", "port_rcv_remote_physical_errors",
           "port_xmit_discards", "port_rcv_constraint_errors", "port_xmit_constraint_errors", "VL15_dropped")
# widths of the IB PortCounters fields: a value at 2^n - 1 is saturated (it stopped counting)
SATURATED = {255, 65535, 4294967295}
BER = 1e-12
SYMBOLS_PER_HOUR_FLOOR = 120.0
RECOVERIES_PER_MIN = 5.0


def _port_name(p) -> str:
    return f"{p.device} port {p.port}" if p.port is not None else p.device


def _evidence(p) -> list:
    return [Evidence("ib_counters", None, p.line_no)]


def _nonzero(table: dict, names) -> list[tuple[str, int]]:
    return [(n, table[n]) for n in names if isinstance(table.get(n), int) and table[n] > 0]


def _shown(pairs) -> str:
    return listing([f"{n} {v}{' (saturated)' if v in SATURATED else ''}" for n, v in pairs], 6)


@check("IB012")
def ib012(ib_counters, params) -> Iterator:
    """One warning per port whose must-stay-zero counters are above zero in the (last) snapshot."""
    names = tuple(params.get("must_be_zero", MUST_BE_ZERO))
    for p in getattr(ib_counters, "ports", ()) or ():
        bad = _nonzero(p.counters, names) + _nonzero(p.hw_counters, ("rnr_nak_retry_err",))
        if not bad:
            continue
        other = _nonzero(p.counters, CONTEXT)
        yield hit([f"nic:{p.device}"], evidence=_evidence(p), port=_port_name(p), counters=_shown(bad),
                  others=_shown(other) if other else "none", notes=when(others=bool(other)),
                  expectation="link_downed, excessive_buffer_overrun_errors and local_link_integrity_errors at 0")


def symbol_limit_per_hour(rate_gbps: Optional[float], ber: float = BER, floor: float = SYMBOLS_PER_HOUR_FLOOR) -> float:
    """Symbol errors per hour a link may show at the spec's bit error rate: rate x BER x 3600 s,
    never below the published 120 per hour."""
    if not rate_gbps:
        return floor
    return max(floor, rate_gbps * 1e9 * ber * 3600.0)


def _deltas(p) -> dict[str, int]:
    out = {}
    for now, before in ((p.counters, p.before_counters), (p.hw_counters, p.before_hw_counters)):
        for name, value in (now or {}).items():
            old = (before or {}).get(name)
            if isinstance(value, int) and isinstance(old, int) and value >= old:
                out[name] = value - old
    return out


def _rate_problems(p, d: dict, window: Optional[float], rate: Optional[float], params) -> list[str]:
    out = []
    if window:
        hours = window / 3600.0
        limit = symbol_limit_per_hour(rate, float(params.get("ber", BER)),
                                      float(params.get("symbols_per_hour_floor", SYMBOLS_PER_HOUR_FLOOR)))
        per_hour = d.get("symbol_error", 0) / hours
        if per_hour > limit:
            out.append(f"symbol_error +{d['symbol_error']} in {window:g} s = {per_hour:.0f}/h "
                       f"(limit {limit:.0f}/h{f' at {rate:g} Gb/s' if rate else ''})")
        per_min = d.get("link_error_recovery", 0) / (window / 60.0)
        if per_min > float(params.get("recoveries_per_min", RECOVERIES_PER_MIN)):
            out.append(f"link_error_recovery {per_min:.1f}/min")
    return out


def _port_rate(p, topology) -> Optional[float]:
    if p.rate_gbps:
        return p.rate_gbps
    if topology is None:
        return None
    for nic, port in topology.ib_ports():
        if nic == f"nic:{p.device}" and port.get("port") == p.port and port.get("rate_gbps"):
            return float(port["rate_gbps"])
    return None


@check("IB013")
def ib013(ib_counters, params, topology=None) -> Iterator:
    """Two samples: a must-stay-zero counter that grew is an error; symbol errors above the BER
    limit, link error recoveries above 5/min an error too; receive errors that grew a warning."""
    if getattr(ib_counters, "samples", 1) < 2:
        return
    window = ib_counters.interval_s
    names = tuple(params.get("must_be_zero", MUST_BE_ZERO))
    for p in ib_counters.ports:
        if p.before_counters is None and p.before_hw_counters is None:
            continue
        d = _deltas(p)
        grew = [f"{n} +{d[n]}" for n in names if d.get(n)]
        rate = _port_rate(p, topology)
        problems = grew + _rate_problems(p, d, window, rate, params)
        rcv = [f"{n} +{d[n]}" for n in ("port_rcv_errors", "port_rcv_remote_physical_errors", "port_xmit_discards")
               if d.get(n)]
        if not problems and not rcv:
            continue
        facts: dict[str, Any] = dict(port=_port_name(p), window=f"{window:g} s" if window else "an unknown window",
                                     what=listing(problems + rcv, 6))
        yield hit([f"nic:{p.device}"], evidence=_evidence(p), severity=None if problems else Severity.WARNING,
                  variant="default" if window else "no_window",
                  expectation="no error counter growth; symbol errors within the 1e-12 BER budget", **facts)
