"""PERF004 busbw-pair-slow: in a per-pair busbw table (the `busbw_pairs` source: nccl-tests run on
pairs of nodes), the node that every slow pair has in common. A pair is slow below `min_fraction` of
the best pair; a node is named when it is in at least two pairs and all of them are slow (a node
that is fast with some partner is cleared); a slow pair whose two nodes were tested with nobody
else names both, as one or the other."""

from __future__ import annotations

from typing import Iterator

from ..engine import Evidence, Severity, check, hit, when
from ._facts import listing

MIN_FRACTION = 0.8


def _tally(pairs, limit: float) -> dict[str, dict]:
    nodes: dict[str, dict] = {}
    for p in pairs:
        slow = p.busbw_gbps < limit
        for h in (p.a, p.b):
            n = nodes.setdefault(h, {"slow": [], "fast": []})
            n["slow" if slow else "fast"].append(p)
    return nodes


def _tested_once(nodes: dict, h: str) -> bool:
    return len(nodes[h]["slow"]) + len(nodes[h]["fast"]) == 1


def _named(nodes: dict, h: str, fraction: float, best: float):
    slow = nodes[h]["slow"]
    partners = [p.b if p.a == h else p.a for p in slow]
    cleared = all(nodes[q]["fast"] for q in partners)
    return hit([f"host:{h}"], evidence=[Evidence("busbw_pairs", None, p.line_no) for p in slow[:3]],
               expectation=f"every pair at or above {fraction:g} x the best pair ({best:g} GB/s)",
               node=h, pairs=len(slow), busbw=listing([f"{p.busbw_gbps:g}" for p in slow], 4), best=f"{best:g}",
               partners=listing(partners, 4), min_fraction=fraction, notes=when(cleared=cleared))


@check("PERF004")
def perf004(busbw_pairs, params) -> Iterator:
    """A node all of whose (two or more) pairs are slow; a slow pair of two nodes tested only together."""
    pairs = list(busbw_pairs.pairs)
    best = max(p.busbw_gbps for p in pairs)
    fraction = float(params.get("min_fraction", MIN_FRACTION))
    limit = fraction * best
    nodes = _tally(pairs, limit)
    named = sorted(h for h, n in nodes.items() if not n["fast"] and len(n["slow"]) >= 2)
    for h in named:
        yield _named(nodes, h, fraction, best)
    for p in pairs:
        if p.busbw_gbps < limit and _tested_once(nodes, p.a) and _tested_once(nodes, p.b):
            yield hit([f"host:{p.a}", f"host:{p.b}"], severity=Severity.WARNING, variant="pair_only",
                      evidence=[Evidence("busbw_pairs", None, p.line_no)],
                      expectation=f"every pair at or above {fraction:g} x the best pair ({best:g} GB/s)",
                      a=p.a, b=p.b, busbw=f"{p.busbw_gbps:g}", best=f"{best:g}", min_fraction=fraction)
