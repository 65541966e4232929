"""Combiners: one view of a fact from whichever of its sources ("A or B") were given.

Some facts come from more than one tool. A check should judge the fact, not pick between tools, so
each combiner here reads the parsed sources it knows, in its order of preference, and makes one
view; `combine(inputs)` returns the views to add to the engine's inputs under their own names:

- `roce_gids` (RoceGids): the RoCE GID tables, from `show_gids`, else `ibv_devinfo -v`, else the
  sysfs probe's GID tables (`sysfs_infiniband`, the same records as ibv_devinfo's). One view per
  file of the chosen source.
- `ib_links` (IbLinks): the fabric's links, from `iblinkinfo`, else `ibnetdiscover` (each link
  once, though both tools print it from both ends), the ports that are up but not Active, and from
  `ibnetdiscover` the CAs with no link at all. One view per (iblinkinfo file, ibnetdiscover file).

An input is a parsed value or an `Each` (several files of one source, as (value, file) pairs). A view
keeps that: made from an `Each`, it is an `Each` of one view per file (the engine runs a check that
takes it once per item), and each view carries the source and file its evidence names.

Layering: parsers < model < engine < checks; this module imports neither the engine nor the checks.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional

from ..records import Each

FULL_WIDTH = 4  # lanes of an InfiniBand link (4X)

# combined input -> the sources it is made from, in order of preference
COMBINED: dict[str, tuple[str, ...]] = {
    "roce_gids": ("show_gids", "ibv_devinfo", "sysfs_infiniband"),
    "ib_links": ("iblinkinfo", "ibnetdiscover"),
}


def combine(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The combined views the inputs allow, by name (see COMBINED); none for a view without sources."""
    out = {}
    for name, make in _MAKERS.items():
        view = make(inputs)
        if view is not None:
            out[name] = view
    return out


# -- inputs: a value or an Each ----------------------------------------------------------------

def _present(inputs: Mapping[str, Any], name: str) -> bool:
    value = inputs.get(name)
    return value is not None and not (isinstance(value, Each) and not value.items)


def _items(value: Any) -> tuple[tuple[Any, Optional[str]], ...]:
    """(value, file) pairs of an input: an Each's items, a plain value without a file, or one (None, None)."""
    if isinstance(value, Each):
        return value.items
    return ((value, None),)


def _per_file(value: Any, make: Callable[[Any, Optional[str]], Any]) -> Any:
    """make(value, file) for a plain value, an Each of make() per item for an Each."""
    if isinstance(value, Each):
        return Each.of((make(v, f), f) for v, f in value.items)
    return make(value, None)


# -- roce_gids: show_gids | ibv_devinfo -v | sysfs GID tables ----------------------------------

@dataclass(frozen=True)
class Gid:
    """One GID of a port: its index, RoCE version ("v1", "v2"; from show_gids as printed, lowercased),
    the address (an ipaddress.IPv6Address), the netdev (show_gids only) and the line it was read from."""

    index: Any
    version: str
    address: Any
    netdev: Optional[str]
    line_no: Optional[int]


@dataclass(frozen=True)
class GidTable:
    """The GIDs of each port ("mlx5_0:1") as one place (a pod, a host) shows them. `label` tells the
    tables of one show_gids paste apart ("table 2"; "" when there is one); `partial` lists the ports a
    cut paste may have lost rows of."""

    label: str
    line_no: Optional[int]
    ports: Mapping[str, tuple[Gid, ...]]
    partial: tuple[str, ...] = ()


@dataclass(frozen=True)
class RoceGids:
    """The GID tables of one file of one source (`source`, `file`: what evidence names)."""

    source: str
    file: Optional[str]
    tables: tuple[GidTable, ...]


_VERBS_VERSIONS = {"RoCE v1": "v1", "RoCE v2": "v2"}


def _address(gid: str | None) -> Any:
    """The GID as an IPv6Address, or None (also for a redacted GID; ipaddress is imported here: only
    RoCE tables need it)."""
    import ipaddress

    if not gid:
        return None
    try:
        return ipaddress.IPv6Address(gid.strip())
    except ValueError:
        return None


def _show_gids_tables(show_gids: Any) -> tuple[GidTable, ...]:
    """One table per show_gids header (a paste of two pods is two tables), ports with a readable GID."""
    tables = []
    many = len(show_gids.tables) > 1
    for n, table in enumerate(show_gids.tables, 1):
        ports: dict[str, list[Gid]] = {}
        for row in table.rows:
            addr = _address(row.gid)
            if addr is not None:
                gid = Gid(row.index, (row.version or "").lower(), addr, row.netdev, row.line_no)
                ports.setdefault(f"{row.device}:{row.port}", []).append(gid)
        # Without its closing n_gids_found line the table is a cut paste: its last port may miss rows.
        cut = (list(ports)[-1],) if table.n_gids_found is None and ports else ()
        tables.append(GidTable(f"table {n}" if many else "", table.line_no,
                               {p: tuple(g) for p, g in ports.items()}, cut))
    return tuple(t for t in tables if t.ports)


def _verbs_tables(result: Any) -> tuple[GidTable, ...]:
    """ibv_devinfo -v (or the sysfs probe, same records): the RoCE v1/v2 GIDs of every port, one table."""
    ports: dict[str, list[Gid]] = {}
    for ca in result.cas:
        for p in ca.ports:
            port = f"{ca.name or '?'}:{p.port if p.port is not None else '?'}"
            for g in p.gids:
                addr, version = _address(g.gid), _VERBS_VERSIONS.get(g.type or "")
                if addr is not None and version:
                    ports.setdefault(port, []).append(Gid(g.index, version, addr, None, p.line_no))
    return (GidTable("", None, {p: tuple(g) for p, g in ports.items()}),) if ports else ()


_GID_TABLES = {"show_gids": _show_gids_tables, "ibv_devinfo": _verbs_tables, "sysfs_infiniband": _verbs_tables}


def roce_gids(inputs: Mapping[str, Any]) -> Any:
    """RoceGids (or an Each of them) from the first of show_gids, ibv_devinfo, sysfs_infiniband given."""
    for source in COMBINED["roce_gids"]:
        if _present(inputs, source):
            tables = _GID_TABLES[source]
            return _per_file(inputs[source], lambda value, file: RoceGids(source, file, tables(value)))
    return None


# -- ib_links: iblinkinfo | ibnetdiscover ------------------------------------------------------

@dataclass(frozen=True)
class FabricLink:
    """A link that is up, once: its two ends ("<node> port <n>"), width in lanes, rate (Gb/s), speed
    name, iblinkinfo's "Could be ..." note, and the line it was read from."""

    a: str
    b: str
    width_lanes: Optional[int]
    rate_gbps: Optional[float]
    speed_name: Optional[str]
    could_be: Optional[str]
    line_no: Optional[int]


@dataclass(frozen=True)
class PortNotActive:
    """A port physically up (LinkUp) whose logical state is not Active (Initializing, Armed)."""

    a: str
    state: str
    line_no: Optional[int]


@dataclass(frozen=True)
class IsolatedCa:
    """A CA ibnetdiscover found with no connection (the host is not on the fabric)."""

    name: str
    nports: Optional[int]
    line_no: Optional[int]


@dataclass(frozen=True)
class IbLinks:
    """The fabric as one file (pair) shows it. `source`, `file`: where the links were read (what evidence
    names, the isolated CAs' too)."""

    source: str
    file: Optional[str]
    links: tuple[FabricLink, ...]
    not_active: tuple[PortNotActive, ...]
    isolated: tuple[IsolatedCa, ...]


def _name(description: Optional[str], guid: Optional[str], lid: Optional[int]) -> str:
    if description:
        return description
    if guid:
        return guid
    return f"LID {lid}" if lid is not None else "?"


def _iblinkinfo_links(iblinkinfo: Any) -> tuple[list[FabricLink], list[PortNotActive]]:
    """Active links keyed by their two (LID, port) ends, a "Could be" note kept from either end; and the
    ports up but not Active."""
    links: dict[frozenset, dict[str, Any]] = {}
    not_active: list[PortNotActive] = []
    for node in iblinkinfo.nodes:
        for ln in node.links:
            a = f"{_name(node.description, node.guid, ln.lid)} port {ln.port}"
            if ln.state in ("Initializing", "Armed") and ln.physical_state == "LinkUp":
                not_active.append(PortNotActive(a, ln.state, ln.line_no))
            elif ln.state == "Active" and ln.peer is not None:
                _add_iblinkinfo_link(links, a, ln, node.description)
    return [FabricLink(**x) for x in links.values()], not_active


def _add_iblinkinfo_link(links: dict[frozenset, dict[str, Any]], a: str, ln: Any, desc: Optional[str]) -> None:
    # a redacted LID (None) is told apart by the node's description, so masked ends do not merge
    key = frozenset({(ln.lid if ln.lid is not None else desc, ln.port),
                     (ln.peer.lid if ln.peer.lid is not None else ln.peer.description, ln.peer.port)})
    seen = links.get(key)
    if seen is None:
        b = f"{ln.peer.description or f'LID {ln.peer.lid}'} port {ln.peer.port}"
        links[key] = {"a": a, "b": b, "width_lanes": ln.width_lanes, "rate_gbps": ln.rate_gbps,
                      "speed_name": ln.speed_name, "could_be": ln.could_be, "line_no": ln.line_no}
    elif ln.could_be and not seen["could_be"]:
        seen["could_be"] = ln.could_be


def _narrower(width: Optional[int], than: Optional[int]) -> bool:
    return (width or FULL_WIDTH) < (than or FULL_WIDTH)


def _ibnetdiscover_links(ibnetdiscover: Any) -> list[FabricLink]:
    """Connections keyed by their two (GUID, port) ends, the narrower end's view kept; then the records
    of `ibnetdiscover -p` (one per port; unconnected ones have no rate)."""
    links: dict[frozenset, dict[str, Any]] = {}
    for node in ibnetdiscover.nodes:
        for c in node.connections:
            _add_connection(links, node, c)
    for p in ibnetdiscover.ports:
        if p.rate_gbps is not None and p.peer_lid is not None:
            _add_port_record(links, p)
    return [FabricLink(**x) for x in links.values()]


def _add_connection(links: dict[frozenset, dict[str, Any]], node: Any, c: Any) -> None:
    # a masked GUID (None; every "S-xxxx" alike) is told apart by the name and description
    key = frozenset({(node.guid or (node.name, node.description), c.port),
                     (c.peer_guid or (c.peer_name, c.peer_description), c.peer_port)})
    seen = links.get(key)
    if seen is not None:  # the far end's view of the same link: keep the narrower / slower report
        if _narrower(c.width_lanes, seen["width_lanes"]):
            seen.update(width_lanes=c.width_lanes, rate_gbps=c.rate_gbps, line_no=c.line_no)
        return
    links[key] = {"a": f"{_name(node.description, node.guid, node.lid)} port {c.port}",
                  "b": f"{c.peer_description or c.peer_name} port {c.peer_port}",
                  "width_lanes": c.width_lanes, "rate_gbps": c.rate_gbps, "speed_name": c.speed,
                  "could_be": None, "line_no": c.line_no}


def _add_port_record(links: dict[frozenset, dict[str, Any]], p: Any) -> None:
    key = frozenset({(p.lid, p.port), (p.peer_lid, p.peer_port)})
    seen = links.get(key)
    if seen is not None and not _narrower(p.width_lanes, seen["width_lanes"]):
        return
    links[key] = {"a": f"{_name(p.description, p.port_guid, p.lid)} port {p.port}",
                  "b": f"{p.peer_description or f'LID {p.peer_lid}'} port {p.peer_port}",
                  "width_lanes": p.width_lanes, "rate_gbps": p.rate_gbps, "speed_name": p.speed,
                  "could_be": None, "line_no": p.line_no}


def _isolated(ibnetdiscover: Any) -> list[IsolatedCa]:
    """The CAs of an ibnetdiscover topology with no connection (not from a cut or elided one)."""
    if ibnetdiscover is None or ibnetdiscover.format != "topology" or ibnetdiscover.elided:
        return []
    return [IsolatedCa(n.description or n.guid, n.nports, n.line_no)
            for n in ibnetdiscover.nodes if n.kind == "Ca" and not n.connections]


def _links_view(iblinkinfo: Any, iblinkinfo_file: Optional[str], ibnetdiscover: Any,
                ibnetdiscover_file: Optional[str]) -> IbLinks:
    if iblinkinfo is not None:
        links, not_active = _iblinkinfo_links(iblinkinfo)
        source, file = "iblinkinfo", iblinkinfo_file
    else:
        links, not_active = _ibnetdiscover_links(ibnetdiscover), []
        source, file = "ibnetdiscover", ibnetdiscover_file
    return IbLinks(source, file, tuple(links), tuple(not_active), tuple(_isolated(ibnetdiscover)))


def ib_links(inputs: Mapping[str, Any]) -> Any:
    """IbLinks from iblinkinfo (else ibnetdiscover) and ibnetdiscover's isolated CAs; an Each of one view
    per (iblinkinfo file, ibnetdiscover file) when either source is several files."""
    given = {s: inputs[s] if _present(inputs, s) else None for s in COMBINED["ib_links"]}
    if all(v is None for v in given.values()):
        return None
    views = [(_links_view(lk, lk_file, nd, nd_file), lk_file if lk is not None else nd_file)
             for (lk, lk_file), (nd, nd_file) in itertools.product(*map(_items, given.values()))]
    if any(isinstance(v, Each) for v in given.values()):
        return Each.of(views)
    return views[0][0]


_MAKERS: dict[str, Callable[[Mapping[str, Any]], Any]] = {"roce_gids": roce_gids, "ib_links": ib_links}


def names() -> Iterable[str]:
    """The names combine() may add."""
    return tuple(COMBINED)
