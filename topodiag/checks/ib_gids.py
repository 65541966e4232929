"""IB006 roce-gid-index: which GID index NCCL must use on RoCE ports, from `show_gids` or
`ibv_devinfo -v` GID tables.

On RoCE every port carries several GIDs: RoCE v1 and v2, each for the link-local fe80:: address and
for every IP address of the netdev (IPv4 ones as ::ffff:a.b.c.d). Only a RoCE v2 GID of a routable
address crosses an IP router, and NCCL (before 2.21 picks it itself) uses NCCL_IB_GID_INDEX, one
number for every port of every rank: it is only right when that GID sits at the same index
everywhere. `show_gids` run in two pods prints two tables (GID indexes are per network namespace):
each table is one place the index must agree with.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

from ..engine import Evidence, Severity, check, hit


def _address(gid: str):
    """The GID as an IPv6Address, or None (ipaddress is imported here: only RoCE tables need it)."""
    import ipaddress

    try:
        return ipaddress.IPv6Address(gid.strip())
    except ValueError:
        return None


def _routable(addr) -> bool:
    return not (addr.is_link_local or addr.is_unspecified or addr.is_loopback)


def _shown(addr) -> str:
    return str(addr.ipv4_mapped) if addr.ipv4_mapped else str(addr)


def _tables(show_gids: Any, ibv_devinfo: Any, source: str) -> list[dict]:
    """[{label, line_no, ports: {"mlx5_0:1": [(index, version, address, netdev, line_no)]}, partial:
    [ports whose rows a cut paste may have lost]}]."""
    out = []
    if source == "show_gids":
        for n, table in enumerate(show_gids.tables, 1):
            ports: dict[str, list] = {}
            for row in table.rows:
                addr = _address(row.gid)
                if addr is not None:
                    ports.setdefault(f"{row.device}:{row.port}", []).append(
                        (row.index, (row.version or "").lower(), addr, row.netdev, row.line_no))
            # Without its closing n_gids_found line the table is a cut paste: its last port may miss rows.
            cut = table.n_gids_found is None and ports
            out.append({"label": f"table {n}" if len(show_gids.tables) > 1 else "", "line_no": table.line_no,
                        "ports": ports, "partial": [list(ports)[-1]] if cut else []})
    else:
        ports = {}
        for ca in ibv_devinfo.cas:
            for p in ca.ports:
                for g in p.gids:
                    addr = _address(g.gid)
                    version = {"RoCE v1": "v1", "RoCE v2": "v2"}.get(g.type or "")
                    if addr is not None and version:
                        ports.setdefault(f"{ca.name or '?'}:{p.port if p.port is not None else '?'}", []).append(
                            (g.index, version, addr, None, p.line_no))
        out.append({"label": "", "line_no": None, "ports": ports, "partial": []})
    return [t for t in out if t["ports"]]


def _nic(port: str) -> str:
    return f"nic:{port.rsplit(':', 1)[0]}"


@check("IB006")
def roce_gid_index(params, show_gids=None, ibv_devinfo=None, sysfs_infiniband=None) -> Iterator:
    """Per table and port the index of the routable RoCE v2 GID: agreeing (info: the index to use),
    differing between ports or tables (warning), or missing (warning: link-local only). The sysfs
    probe's GID tables are read like ibv_devinfo -v's (the same records)."""
    if show_gids is not None:
        source, tables = "show_gids", _tables(show_gids, None, "show_gids")
    elif ibv_devinfo is not None:
        source, tables = "ibv_devinfo", _tables(None, ibv_devinfo, "ibv_devinfo")
    else:
        source, tables = "sysfs_infiniband", _tables(None, sysfs_infiniband, "sysfs_infiniband")
    v2_index: dict[tuple[str, str], tuple[int, str, int]] = {}  # (table, port) -> (index, address, line)
    link_local_only: list[tuple[str, str, int]] = []
    link_local_v2: set[int] = set()
    for t in tables:
        for port, gids in t["ports"].items():
            v2 = [g for g in gids if g[1] == "v2"]
            routable = sorted((g for g in v2 if _routable(g[2])), key=lambda g: g[0])
            link_local_v2.update(g[0] for g in v2 if g[2].is_link_local)
            if routable:  # the first routable v2 GID is the one an index must name
                index, _, addr, _, line_no = routable[0]
                v2_index[(t["label"], port)] = (index, _shown(addr), line_no)
            elif v2 and port not in t["partial"]:
                link_local_only.append((t["label"], port, v2[0][4]))
    where = lambda label, port: f"{port}" + (f" ({label})" if label else "")  # noqa: E731
    if link_local_only:
        yield hit(sorted({_nic(p) for _, p, _ in link_local_only}), severity=Severity.WARNING,
                  evidence=[Evidence(source, None, ln) for _, _, ln in link_local_only[:3]],
                  expectation="a routable (IP) RoCE v2 GID on every RoCE port",
                  summary="missing",
                  detail=(f"{', '.join(where(lb, p) for lb, p, _ in link_local_only)} "
                          f"{'has' if len(link_local_only) == 1 else 'have'} only link-local (fe80::) RoCE v2 GIDs: "
                          "the netdev has no IP address, so RoCE v2 cannot leave the L2 segment (NCCL hangs or "
                          "times out in ibv_modify_qp across subnets)"))
    if not v2_index:
        return
    by_index: dict[int, list[tuple[str, str]]] = {}
    for (label, port), (index, _, _) in v2_index.items():
        by_index.setdefault(index, []).append((label, port))
    ll = sorted(link_local_v2 - set(by_index))
    ll_note = (f"; index {'/'.join(map(str, ll))} {'is' if len(ll) == 1 else 'are'} the link-local fe80:: RoCE v2 "
               "GID, not routable") if ll else ""
    evidence = [Evidence(source, None, line) for _, _, line in list(v2_index.values())[:3]]
    if len(by_index) == 1:
        [(index, ports)] = by_index.items()
        addrs = sorted({v[1] for v in v2_index.values()})
        yield hit(sorted({_nic(p) for _, p in ports}), severity=Severity.INFO, evidence=evidence,
                  expectation="one RoCE v2 GID index everywhere (NCCL_IB_GID_INDEX is one number)",
                  summary=f"{index}",
                  detail=(f"the routable RoCE v2 GID ({', '.join(addrs[:4])}{', ...' if len(addrs) > 4 else ''}) is at "
                          f"index {index} on all {len(ports)} RoCE port(s) ({', '.join(where(lb, p) for lb, p in ports[:8])}"
                          f"{', ...' if len(ports) > 8 else ''}): NCCL_IB_GID_INDEX={index} if you set it{ll_note}"))
        return
    parts = []
    for index, ports in sorted(by_index.items()):
        shown = ", ".join(f"{where(lb, p)} {v2_index[(lb, p)][1]}" for lb, p in ports[:4])
        parts.append(f"{index} on {shown}" + (", ..." if len(ports) > 4 else ""))
    yield hit(sorted({_nic(p) for ports in by_index.values() for _, p in ports}), severity=Severity.WARNING,
              evidence=evidence, expectation="one RoCE v2 GID index everywhere (NCCL_IB_GID_INDEX is one number)",
              summary="differs",
              detail=(f"the routable RoCE v2 GID is at index {'; '.join(parts)}: no single NCCL_IB_GID_INDEX "
                      "selects it everywhere, and a rank whose index points at a v1 or link-local GID cannot "
                      f"connect{ll_note}"))
