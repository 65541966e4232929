"""Parser for the sysfs probe's JSON (topodiag.live.sysfs_probe), and the pyverbs probe's.

    {
      "probe": "sysfs",
      "schema_version": 1,
      "infiniband": [
        {
          "name": "mlx5_0",
          "node_guid": "0xa088c2030074cfda",
          "ports": [
            {
              "port": 1,
              "state": "Active",
              "state_raw": "4: ACTIVE",
              "rate_raw": "400 Gb/sec (4X NDR)",

Both probes write the same "infiniband" section (sysfs_probe's docstring has the schema); the
pyverbs probe has no "pci". The HCAs become the ib_records CA / Port / Gid records ibstat and
ibv_devinfo build, so the model merges them the same way (CA.printed_by and Port provenance say
"sysfs" or "pyverbs"). Mapping: hca_type -> type, fw_ver -> firmware, hw_rev ->
hardware_version, sys_image_guid -> system_guid, number of port entries -> num_ports; port lid ->
base_lid, phys_state -> physical_state, cap_mask -> capability_mask, GID 0 -> default_gid (as
ibstatus shows it), speed_name -> active_speed_gbps (per lane: NDR 100.0). What only sysfs knows
about an HCA (PCI address, NUMA node, netdevs, node_desc) is in `hcas`, the netdev of each RoCE
GID in `gid_netdevs`, the PCI functions of HCAs and NVIDIA GPUs (with their path from the root
complex and link speed / width) in `pci`.

JSON: {source: "sysfs_infiniband", probe ("sysfs" | "pyverbs"), schema_version, ok, error, root,
hostname, kernel_release, cas: [CA], hcas: [{name, node_desc, pci_address, numa_node, netdevs
[{name, operstate}], line_no}], gid_netdevs: [{device, port, index, ndev, line_no}], pci: [{bdf,
kind ("gpu" | "hca" | "nic"), pci_class, vendor, device, driver, numa_node, rdma_devices, path,
current_link_speed, current_link_speed_gts, current_link_width, current_link_width_raw, max_...,
line_no}], skipped: [{path, reason}], errors: [{line_no, text}]} (a probe that was not ok puts
its error in `errors`). Line numbers are those of the JSON text (the device's "name" line, the
port's "port" line, the PCI function's "bdf" line). A probe JSON of a newer schema_version,
or anything that is not a probe JSON, is refused.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from .base import ParseError, ParserInfo, probe_object
from .ib_records import (
    CA,
    IB_SPEEDS,
    ErrorLine,
    Gid,
    Port,
    norm_guid,
    norm_link_layer,
    norm_mask,
    norm_physical_state,
    norm_state,
)
from .sniff.sysfs_infiniband import sniff

INFO = ParserInfo(
    source="sysfs_infiniband",
    tool="python -m topodiag.live.sysfs_probe",
    description="the sysfs (or pyverbs) probe's JSON: RDMA ports, GIDs, PCIe placement of HCAs and GPUs",
    timeout_s=10.0,
    prolog_safe=True,
    probe="sysfs",
)
SOURCE = INFO.source
SCHEMA_VERSION = 1
PROBES = ("sysfs", "pyverbs")


@dataclass(frozen=True)
class Netdev:
    name: str
    operstate: str | None


@dataclass(frozen=True)
class HcaPlacement:
    """Where an HCA sits: what sysfs says beyond ibstat."""

    name: str
    node_desc: str | None
    pci_address: str | None
    numa_node: int | None
    netdevs: tuple[Netdev, ...]
    line_no: int


@dataclass(frozen=True)
class GidNetdev:
    """The network device a RoCE GID belongs to (sysfs gid_attrs/ndevs)."""

    device: str
    port: int | None
    index: int
    ndev: str
    line_no: int


@dataclass(frozen=True)
class PciDevice:
    """One PCI function: an HCA's, an NVIDIA GPU's, or a Mellanox NIC's without an RDMA device."""

    bdf: str
    kind: str | None
    pci_class: str | None
    vendor: str | None
    device: str | None
    driver: str | None
    numa_node: int | None
    rdma_devices: tuple[str, ...]
    path: tuple[str, ...] | None  # root complex ("pci0000:00") .. the function itself
    current_link_speed: str | None
    current_link_speed_gts: float | None
    current_link_width: int | None
    current_link_width_raw: str | None
    max_link_speed: str | None
    max_link_speed_gts: float | None
    max_link_width: int | None
    max_link_width_raw: str | None
    line_no: int


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True)
class SysfsInfinibandReport:
    source: str = SOURCE
    probe: str = "sysfs"
    schema_version: int = SCHEMA_VERSION
    ok: bool = True
    error: str | None = None
    root: str | None = None
    hostname: str | None = None
    kernel_release: str | None = None
    cas: tuple[CA, ...] = ()
    hcas: tuple[HcaPlacement, ...] = ()
    gid_netdevs: tuple[GidNetdev, ...] = ()
    pci: tuple[PciDevice, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    errors: tuple[ErrorLine, ...] = ()


# -- line numbers of a pretty-printed probe JSON -----------------------------------------------

class _Lines:
    """Finds the line of `"key": value` at or after a cursor, so records carry a line number."""

    def __init__(self, text: str):
        self.lines = text.split("\n")

    def find(self, key: str, value: Any, start: int) -> int:
        """1-based line of the first `"key": value` at or after line `start` (1-based); `start`
        itself when not found (compact JSON, or an unusual layout)."""
        try:
            needle = re.compile(re.escape(json.dumps(key)) + r"\s*:\s*" + re.escape(json.dumps(value)) + r"\s*[,}\]]?\s*$")
        except (TypeError, ValueError):
            return start
        for i in range(max(start, 1) - 1, len(self.lines)):
            if needle.search(self.lines[i]):
                return i + 1
        return start


# -- typed access with errors a person can read --------------------------------------------------

def _fail(where: str, what: str, value: Any, line_no: int) -> ParseError:
    try:
        shown = repr(value[:40]) if isinstance(value, str) else json.dumps(value)[:40]
    except (TypeError, ValueError, RecursionError):
        shown = type(value).__name__
    return ParseError(f"{where}: expected {what}, found {shown}", line_no)


def _str(obj: dict, key: str, where: str, line_no: int) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise _fail(f"{where}.{key}", "a string or null", value, line_no)


def _int(obj: dict, key: str, where: str, line_no: int) -> int | None:
    value = obj.get(key)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise _fail(f"{where}.{key}", "an integer or null", value, line_no)


def _float(obj: dict, key: str, where: str, line_no: int) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    raise _fail(f"{where}.{key}", "a number or null", value, line_no)


def _list(obj: dict, key: str, where: str, line_no: int) -> list:
    value = obj.get(key)
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise _fail(f"{where}.{key}", "a list", value, line_no)


def _obj(value: Any, where: str, line_no: int) -> dict:
    if isinstance(value, dict):
        return value
    raise _fail(where, "an object", value, line_no)


def _strs(obj: dict, key: str, where: str, line_no: int) -> tuple[str, ...]:
    items = _list(obj, key, where, line_no)
    if not all(isinstance(s, str) for s in items):
        raise _fail(f"{where}.{key}", "a list of strings", items, line_no)
    return tuple(items)


# -- records ---------------------------------------------------------------------------------

def _gids(port: dict, where: str, line_no: int, device: str, port_no: int | None,
          netdevs: list[GidNetdev]) -> tuple[Gid, ...]:
    out = []
    for j, raw in enumerate(_list(port, "gids", where, line_no)):
        g = _obj(raw, f"{where}.gids[{j}]", line_no)
        index = _int(g, "index", f"{where}.gids[{j}]", line_no)
        gid = _str(g, "gid", f"{where}.gids[{j}]", line_no)
        if index is None or gid is None:
            raise ParseError(f"{where}.gids[{j}]: a GID needs an index and a gid", line_no)
        kind = _str(g, "type", f"{where}.gids[{j}]", line_no)
        out.append(Gid(index, gid, kind if kind in ("IB", "RoCE v1", "RoCE v2") else None))
        ndev = _str(g, "ndev", f"{where}.gids[{j}]", line_no)
        if ndev:
            netdevs.append(GidNetdev(device, port_no, index, ndev, line_no))
    return tuple(out)


def _port(raw: Any, where: str, lines: _Lines, start: int, device: str,
          netdevs: list[GidNetdev]) -> tuple[Port, int]:
    p = _obj(raw, where, start)
    number = _int(p, "port", where, start)
    line_no = lines.find("port", number, start) if number is not None else start
    state, state_raw = _str(p, "state", where, line_no), _str(p, "state_raw", where, line_no)
    phys, phys_raw = _str(p, "phys_state", where, line_no), _str(p, "phys_state_raw", where, line_no)
    link_layer = _str(p, "link_layer", where, line_no)
    guid, cap = _str(p, "port_guid", where, line_no), _str(p, "cap_mask", where, line_no)
    speed = _str(p, "speed_name", where, line_no)
    width = _str(p, "active_width", where, line_no)
    for key in ("lid", "sm_lid", "lmc", "active_mtu", "max_mtu", "state_num", "phys_state_num"):
        _int(p, key, where, line_no)
    gids = _gids(p, where, line_no, device, number, netdevs)
    default_gid = next((g.gid for g in gids if g.index == 0), None)
    port = Port(
        port=number,
        state=norm_state(state) or norm_state(state_raw),
        state_raw=state_raw if state_raw is not None else state,
        physical_state=norm_physical_state(phys) or norm_physical_state(phys_raw),
        physical_state_raw=phys_raw if phys_raw is not None else phys,
        rate_gbps=_float(p, "rate_gbps", where, line_no),
        rate_raw=_str(p, "rate_raw", where, line_no),
        link_layer=norm_link_layer(link_layer),
        base_lid=p.get("lid"),
        sm_lid=p.get("sm_lid"),
        lmc=p.get("lmc"),
        port_guid=norm_guid(guid) if guid else None,
        capability_mask=norm_mask(cap) if cap else None,
        default_gid=default_gid,
        active_mtu=p.get("active_mtu"),
        max_mtu=p.get("max_mtu"),
        active_width=width if width and re.fullmatch(r"[0-9]{1,2}X", width) else None,
        active_speed_gbps=IB_SPEEDS[speed][1] if speed in IB_SPEEDS else None,
        gids=gids,
        line_no=line_no,
    )
    return port, line_no


def _device(raw: Any, i: int, probe: str, lines: _Lines, start: int,
            netdevs: list[GidNetdev]) -> tuple[CA, HcaPlacement, int]:
    where = f"infiniband[{i}]"
    d = _obj(raw, where, start)
    name = _str(d, "name", where, start)
    if not name:
        raise ParseError(f"{where}: an RDMA device needs a name", start)
    line_no = lines.find("name", name, start)
    ports = []
    cursor = line_no
    for j, p in enumerate(_list(d, "ports", where, line_no)):
        port, cursor = _port(p, f"{where}.ports[{j}]", lines, cursor, name, netdevs)
        ports.append(port)
    node_guid, sys_guid = _str(d, "node_guid", where, line_no), _str(d, "sys_image_guid", where, line_no)
    nets = []
    for k, n in enumerate(_list(d, "netdevs", where, line_no)):
        n = _obj(n, f"{where}.netdevs[{k}]", line_no)
        ifname = _str(n, "name", f"{where}.netdevs[{k}]", line_no)
        if ifname:
            nets.append(Netdev(ifname, _str(n, "operstate", f"{where}.netdevs[{k}]", line_no)))
    ca = CA(
        name=name,
        node_type=_str(d, "node_type", where, line_no),
        type=_str(d, "hca_type", where, line_no),
        num_ports=len(ports),
        firmware=_str(d, "fw_ver", where, line_no),
        hardware_version=_str(d, "hw_rev", where, line_no),
        node_guid=norm_guid(node_guid) if node_guid else None,
        system_guid=norm_guid(sys_guid) if sys_guid else None,
        transport=None,
        vendor_id=_str(d, "vendor_id", where, line_no),
        vendor_part_id=_int(d, "vendor_part_id", where, line_no),
        board_id=_str(d, "board_id", where, line_no),
        printed_by=probe,
        line_no=line_no,
        ports=tuple(ports),
    )
    placement = HcaPlacement(
        name=name,
        node_desc=_str(d, "node_desc", where, line_no),
        pci_address=_str(d, "pci_address", where, line_no),
        numa_node=_int(d, "numa_node", where, line_no),
        netdevs=tuple(nets),
        line_no=line_no,
    )
    return ca, placement, max(cursor, line_no)


def _pci(raw: Any, i: int, lines: _Lines, start: int) -> PciDevice:
    where = f"pci[{i}]"
    d = _obj(raw, where, start)
    bdf = _str(d, "bdf", where, start)
    if not bdf:
        raise ParseError(f"{where}: a PCI function needs a bdf", start)
    line_no = lines.find("bdf", bdf, start)
    path = d.get("path")
    return PciDevice(
        bdf=bdf,
        kind=_str(d, "kind", where, line_no),
        pci_class=_str(d, "class", where, line_no),
        vendor=_str(d, "vendor", where, line_no),
        device=_str(d, "device", where, line_no),
        driver=_str(d, "driver", where, line_no),
        numa_node=_int(d, "numa_node", where, line_no),
        rdma_devices=_strs(d, "rdma_devices", where, line_no),
        path=_strs(d, "path", where, line_no) if path is not None else None,
        current_link_speed=_str(d, "current_link_speed", where, line_no),
        current_link_speed_gts=_float(d, "current_link_speed_gts", where, line_no),
        current_link_width=_int(d, "current_link_width", where, line_no),
        current_link_width_raw=_str(d, "current_link_width_raw", where, line_no),
        max_link_speed=_str(d, "max_link_speed", where, line_no),
        max_link_speed_gts=_float(d, "max_link_speed_gts", where, line_no),
        max_link_width=_int(d, "max_link_width", where, line_no),
        max_link_width_raw=_str(d, "max_link_width_raw", where, line_no),
        line_no=line_no,
    )


def parse(text: str) -> SysfsInfinibandReport:
    """Probe JSON -> SysfsInfinibandReport; ParseError for anything else."""
    data = probe_object(text, PROBES, "a sysfs or pyverbs probe JSON")
    lines = _Lines(text)
    top = lines.find("probe", data["probe"], 1)
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _fail("schema_version", "a positive integer", version, top)
    if version > SCHEMA_VERSION:
        raise ParseError(f"probe schema_version {version} is newer than this topodiag reads "
                         f"({SCHEMA_VERSION}); upgrade topodiag", lines.find("schema_version", version, 1))
    ok = data.get("ok", True)
    if not isinstance(ok, bool):
        raise _fail("ok", "true or false", ok, top)
    error = _str(data, "error", "probe", top)
    netdevs: list[GidNetdev] = []
    cas, hcas = [], []
    cursor = top
    for i, raw in enumerate(_list(data, "infiniband", "probe", top)):
        ca, placement, cursor = _device(raw, i, data["probe"], lines, cursor, netdevs)
        cas.append(ca)
        hcas.append(placement)
    pci = []
    for i, raw in enumerate(_list(data, "pci", "probe", top)):
        pci.append(_pci(raw, i, lines, cursor))
        cursor = pci[-1].line_no
    skipped = []
    for i, raw in enumerate(_list(data, "skipped", "probe", top)):
        s = _obj(raw, f"skipped[{i}]", top)
        skipped.append(Skipped(_str(s, "path", f"skipped[{i}]", top) or "", _str(s, "reason", f"skipped[{i}]", top) or ""))
    errors = ()
    if not ok or error:
        errors = (ErrorLine(lines.find("error", error, 1) if error else top,
                            f"{data['probe']} probe: {error or 'not ok'}"),)
    return SysfsInfinibandReport(
        probe=data["probe"],
        schema_version=version,
        ok=ok,
        error=error,
        root=_str(data, "root", "probe", top),
        hostname=_str(data, "hostname", "probe", top),
        kernel_release=_str(data, "kernel_release", "probe", top),
        cas=tuple(cas),
        hcas=tuple(hcas),
        gid_netdevs=tuple(netdevs),
        pci=tuple(pci),
        skipped=tuple(skipped),
        errors=errors,
    )
