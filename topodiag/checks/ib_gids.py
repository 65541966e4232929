"""IB006 roce-gid-index: which GID index NCCL must use on RoCE ports, from the combined `roce_gids`
view (topodiag/model/combiners.py: `show_gids`, else `ibv_devinfo -v`, else the sysfs GID tables).

On RoCE every port carries several GIDs: RoCE v1 and v2, each for the link-local fe80:: address and
for every IP address of the netdev (IPv4 ones as ::ffff:a.b.c.d). Only a RoCE v2 GID of a routable
address crosses an IP router, and NCCL (before 2.21 picks it itself) uses NCCL_IB_GID_INDEX, one
number for every port of every rank: it is only right when that GID sits at the same index
everywhere. `show_gids` run in two pods prints two tables (GID indexes are per network namespace):
each table is one place the index must agree with.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..engine import Evidence, Severity, check, hit, when
from ._facts import listing

ONE_INDEX = "one RoCE v2 GID index everywhere (NCCL_IB_GID_INDEX is one number)"


def _routable(addr) -> bool:
    return not (addr.is_link_local or addr.is_unspecified or addr.is_loopback)


def _shown(addr) -> str:
    return str(addr.ipv4_mapped) if addr.ipv4_mapped else str(addr)


def _nic(port: str) -> str:
    return f"nic:{port.rsplit(':', 1)[0]}"


def _where(label: str, port: str) -> str:
    return port + (f" ({label})" if label else "")


def _port_indexes(tables) -> tuple[dict, list, set]:
    """({(table, port): (index, address, line)} of each port's first routable RoCE v2 GID (the one an
    index must name), [(table, port, line)] of ports whose RoCE v2 GIDs are all link-local (a cut
    paste's last port excepted), {the indexes of link-local RoCE v2 GIDs})."""
    v2_index: dict[tuple[str, str], tuple[int, str, int]] = {}
    link_local_only: list[tuple[str, str, int]] = []
    link_local_v2: set[int] = set()
    for t in tables:
        for port, gids in t.ports.items():
            v2 = [g for g in gids if g.version == "v2"]
            routable = sorted((g for g in v2 if _routable(g.address)), key=lambda g: g.index)
            link_local_v2.update(g.index for g in v2 if g.address.is_link_local)
            if routable:
                v2_index[(t.label, port)] = (routable[0].index, _shown(routable[0].address), routable[0].line_no)
            elif v2 and port not in t.partial:
                link_local_only.append((t.label, port, v2[0].line_no))
    return v2_index, link_local_only, link_local_v2


@check("IB006")
def roce_gid_index(roce_gids, params) -> Iterator:
    """Per table and port the index of the routable RoCE v2 GID: agreeing (info: the index to use),
    differing between ports or tables (warning), or missing (warning: link-local only)."""
    v2_index, link_local_only, link_local_v2 = _port_indexes(roce_gids.tables)
    if link_local_only:
        yield _missing(roce_gids, link_local_only)
    if v2_index:
        yield _agreement(roce_gids, v2_index, link_local_v2)


def _evidence(view: Any, lines) -> list[Evidence]:
    return [Evidence(view.source, view.file, line) for line in lines]


def _missing(view: Any, ports: list[tuple[str, str, int]]):
    return hit(sorted({_nic(p) for _, p, _ in ports}), severity=Severity.WARNING,
               evidence=_evidence(view, [line for _, _, line in ports[:3]]),
               expectation="a routable (IP) RoCE v2 GID on every RoCE port",
               variant="missing_one" if len(ports) == 1 else "missing_many",
               ports=", ".join(_where(label, p) for label, p, _ in ports))


def _agreement(view: Any, v2_index: dict, link_local_v2: set[int]):
    """One index on every port (info) or several (warning); the link-local v2 indexes noted."""
    by_index: dict[int, list[tuple[str, str]]] = {}
    for (label, port), (index, _, _) in v2_index.items():
        by_index.setdefault(index, []).append((label, port))
    ll = sorted(link_local_v2 - set(by_index))
    facts = dict(evidence=_evidence(view, [line for _, _, line in list(v2_index.values())[:3]]),
                 expectation=ONE_INDEX, notes=when(link_local_one=len(ll) == 1, link_local_many=len(ll) > 1),
                 link_local="/".join(map(str, ll)))
    if len(by_index) == 1:
        [(index, ports)] = by_index.items()
        return hit(sorted({_nic(p) for _, p in ports}), severity=Severity.INFO, **facts, index=index,
                   addresses=listing(sorted({v[1] for v in v2_index.values()}), 4), count=len(ports),
                   ports=listing((_where(label, p) for label, p in ports), 8))
    indexes = [f"{index} on " + listing((f"{_where(label, p)} {v2_index[(label, p)][1]}" for label, p in ports), 4)
               for index, ports in sorted(by_index.items())]
    return hit(sorted({_nic(p) for ports in by_index.values() for _, p in ports}), severity=Severity.WARNING,
               **facts, variant="differs", indexes="; ".join(indexes))
