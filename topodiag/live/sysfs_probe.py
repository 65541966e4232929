"""Read the RDMA devices and the PCIe placement of HCAs and NVIDIA GPUs from sysfs, read-only.

`probe(root="/")` walks `<root>/sys` (and two procfs files) the way ibstat / ibstatus / show_gids
do, without running anything. `root` lets tests and offline analysis use a recorded tree. Every
read is guarded: a missing or unreadable file is a null, never an exception; a symlink whose
target leaves `root` is not followed (it is listed under `skipped`); only regular files are read
(at most 64 KiB each), so a FIFO or a directory in a file's place cannot block or crash the probe.

Probe JSON (schema_version 1; a key is always present, null when sysfs did not say):

    {"probe": "sysfs", "schema_version": 1, "root": "/", "ok": true, "error": null,
     "hostname": "gpu-node-01",          proc/sys/kernel/hostname
     "kernel_release": "5.15.0-105-generic",   proc/sys/kernel/osrelease
     "infiniband": [{                    one per sys/class/infiniband/<name>, natural name order
        "name": "mlx5_0", "node_type": "CA", "node_type_raw": "1: CA",
        "node_guid": "0xa088c2030074cfda", "sys_image_guid": "0x...",   (sysfs "a088:c203:...")
        "fw_ver": "28.43.2026", "hw_rev": "0x0", "hca_type": "MT4129", "board_id": "MT_0000000838",
        "node_desc": "gpu-node-01 mlx5_0", "vendor_id": null, "vendor_part_id": null (pyverbs only),
        "pci_address": "0000:1b:00.0",   basename of the resolved `device` link
        "numa_node": 0,                  device/numa_node; -1 -> null
        "netdevs": [{"name": "ibp27s0", "operstate": "up"}],   device/net/*
        "ports": [{
           "port": 1,
           "state": "Active", "state_num": 4, "state_raw": "4: ACTIVE",
           "phys_state": "LinkUp", "phys_state_num": 5, "phys_state_raw": "5: LinkUp",
           "rate_gbps": 400.0, "rate_raw": "400 Gb/sec (4X NDR)", "active_width": "4X", "speed_name": "NDR",
           "link_layer": "InfiniBand", "lid": 50, "sm_lid": 1, "lmc": 0, "cap_mask": "0xa751e848",
           "port_guid": "0xa088c2030074cfda",   interface id of GID 0, as ibstat reports it
           "active_mtu": null, "max_mtu": null,   (pyverbs only)
           "gids": [{"index": 0, "gid": "fe80:0000:0000:0000:a088:c203:0074:cfda",
                     "type": "IB", "type_raw": "IB/RoCE v1", "ndev": null}]}]}],
     "pci": [{                           HCAs' PCI functions, NVIDIA GPUs (vendor 0x10de, class
        "bdf": "0000:1b:00.0",           0x03xxxx: display controllers) and Mellanox network functions
        "kind": "hca" | "gpu" | "nic",   (0x15b3, class 0x02xxxx) with no RDMA device ("nic"),
        "class": "0x020700", "vendor": "0x15b3", "device": "0x1021",    sorted by bdf
        "driver": "mlx5_core", "numa_node": 0, "rdma_devices": ["mlx5_0"],
        "path": ["pci0000:1a", "0000:1a:01.0", "0000:1b:00.0"],   root complex .. the device itself
        "current_link_speed": "32.0 GT/s PCIe", "current_link_speed_gts": 32.0,
        "current_link_width": 16, "current_link_width_raw": "16",
        "max_link_speed": "32.0 GT/s PCIe", "max_link_speed_gts": 32.0,
        "max_link_width": 16, "max_link_width_raw": "16"}],
     "skipped": [{"path": "sys/class/infiniband/x", "reason": "link leaves the root"}]}

`ok` is false only when there is no sysfs to read (root missing, or no `sys/` under it) or the
probe itself failed; a host without HCAs is ok with `"infiniband": []`. GID slots holding the
all-zero GID (unused) are left out; the others keep their table index. GID `type` is "IB" for
"IB/RoCE v1" on an InfiniBand port, "RoCE v1" on an Ethernet port, "RoCE v2" as printed.

`probe()` also returns `files_read`: every file read, as [path relative to root, text as read],
and every symlink followed, as [path, "->", target as readlink gives it], paths canonical (no
symlink among their parents). Writing those back (`write_snapshot`) gives a plain tree on which
`probe` reports the same; `probe_json()` is the probe JSON without them.

    python -m topodiag.live.sysfs_probe [ROOT] [--files-read]
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from typing import Any

from ..parsers.ib_records import (
    IB_SPEEDS,
    norm_guid,
    norm_link_layer,
    norm_mask,
    norm_physical_state,
    norm_state,
    parse_int,
)

PROBE = "sysfs"
SCHEMA_VERSION = 1
MAX_READ = 64 * 1024
MAX_LINK_HOPS = 40
MAX_ENTRIES = 4096  # per directory listing: a runaway tree must not stall a prolog

NVIDIA_VENDOR = "0x10de"
MELLANOX_VENDOR = "0x15b3"
GPU_CLASSES = ("0x03",)  # display controllers: VGA compatible 0x0300, 3D 0x0302, other 0x0380

NODE_TYPES = {1: "CA", 2: "Switch", 3: "Router", 4: "iWARP RNIC", 5: "usNIC", 6: "usNIC UDP"}
BDF_RE = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
ROOT_COMPLEX_RE = re.compile(r"^pci[0-9a-f]{4,8}:[0-9a-f]{2}$")
RATE_RE = re.compile(r"^\s*(\d{1,6}(?:\.\d{1,6})?)\s*Gb/sec(?:\s*\((\d{1,2}X)(?:\s+([A-Z0-9]+))?\))?")
CODE_RE = re.compile(r"^\s*(\d{1,9})\s*:\s*(.*)$")
SPEED_RE = re.compile(r"^\s*(\d{1,4}(?:\.\d{1,4})?)\s*GT/s")
ZERO_GID = re.compile(r"^[0:]*$")


class _Tree:
    """Reads under one root: resolves symlinks itself so none leads outside, records what it read."""

    def __init__(self, root: str):
        self.root = os.path.realpath(root)
        self.files_read: list[list[str]] = []
        self.skipped: list[dict[str, str]] = []
        self._links_seen: set[str] = set()
        self._dirs: dict[str, str | None] = {"": ""}
        self._texts: dict[str, str | None] = {}

    # -- path resolution ----------------------------------------------------------------------

    def _abs(self, canon: str) -> str:
        return os.path.join(self.root, canon) if canon else self.root

    def _skip(self, path: str, reason: str) -> None:
        entry = {"path": path, "reason": reason}
        if entry not in self.skipped:
            self.skipped.append(entry)

    def _target_parts(self, link_canon: str, target: str) -> list[str] | None:
        """Components of a link target, relative to the root; None when it starts outside."""
        if target.startswith("/"):
            if self.root == "/":
                return target.split("/")
            if target == self.root or target.startswith(self.root + "/"):
                return target[len(self.root):].split("/")
            return None
        parent = link_canon.rsplit("/", 1)[0] if "/" in link_canon else ""
        return (parent.split("/") if parent else []) + target.split("/")

    def resolve(self, rel: str) -> str | None:
        """The canonical path (relative to root, no symlinks) of `rel`; None when it is missing or
        a link on the way leaves the root (recorded in `skipped`)."""
        rel = rel.strip("/")
        if rel in self._dirs:
            return self._dirs[rel]
        head, _, name = rel.rpartition("/")
        base = self.resolve(head) if head else ""
        out = None if base is None else self._walk(base, [name], rel)
        self._dirs[rel] = out
        return out

    def _walk(self, base: str, parts: list[str], rel: str) -> str | None:
        cur = base.split("/") if base else []
        todo = list(reversed(parts))
        hops = 0
        while todo:
            name = todo.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if not cur:
                    self._skip(rel, "link leaves the root")
                    return None
                cur.pop()
                continue
            canon = "/".join(cur + [name])
            try:
                st = os.lstat(self._abs(canon))
            except (OSError, ValueError):
                return None
            if not stat.S_ISLNK(st.st_mode):
                cur.append(name)
                continue
            hops += 1
            if hops > MAX_LINK_HOPS:
                self._skip(rel, "too many levels of symbolic links")
                return None
            try:
                target = os.readlink(self._abs(canon))
            except (OSError, ValueError):
                self._skip(rel, "unreadable link")
                return None
            tparts = self._target_parts(canon, target)
            if tparts is None:
                self._skip(rel, "link leaves the root")
                return None
            if canon not in self._links_seen:
                self._links_seen.add(canon)
                self.files_read.append([canon, "->", target])
            cur = []
            todo.extend(reversed(tparts))
        return "/".join(cur)

    # -- reads -------------------------------------------------------------------------------

    def read(self, rel: str) -> str | None:
        """The stripped text of a regular file, or None (missing, unreadable, not a file)."""
        canon = self.resolve(rel)
        if canon is None:
            return None
        if canon not in self._texts:
            self._texts[canon] = self._read(rel, canon)
        return self._texts[canon]

    def _read(self, rel: str, canon: str) -> str | None:
        path = self._abs(canon)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self._skip(rel, _reason(exc))
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                self._skip(rel, "not a regular file")
                return None
            data = os.read(fd, MAX_READ)
        except (OSError, ValueError) as exc:
            self._skip(rel, _reason(exc))
            return None
        finally:
            os.close(fd)
        text = data.decode("utf-8", errors="replace")
        self.files_read.append([canon, text])
        value = text.strip()
        return value if value else None

    def listdir(self, rel: str) -> list[str]:
        """Names in a directory (natural order), [] when it is missing or unreadable."""
        canon = self.resolve(rel)
        if canon is None:
            return []
        try:
            names = os.listdir(self._abs(canon))
        except (OSError, ValueError):
            return []
        names = [n for n in names if not n.startswith(".")]
        return sorted(names, key=natural_key)[:MAX_ENTRIES]

    def link_name(self, rel: str) -> str | None:
        """The last component of a symlink's target (a `driver` link), without following it."""
        canon = self.resolve(rel.rsplit("/", 1)[0])
        if canon is None:
            return None
        path = os.path.join(canon, rel.rsplit("/", 1)[1]) if canon else rel.rsplit("/", 1)[1]
        try:
            target = os.readlink(self._abs(path))
        except (OSError, ValueError):
            return None
        if path not in self._links_seen:
            self._links_seen.add(path)
            self.files_read.append([path, "->", target])
        return target.rstrip("/").rsplit("/", 1)[-1] or None

    def is_dir(self, rel: str) -> bool:
        canon = self.resolve(rel)
        return canon is not None and os.path.isdir(self._abs(canon))


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or type(exc).__name__


def natural_key(name: str) -> list[Any]:
    """'mlx5_10' after 'mlx5_2'."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", name) if p]


# -- value normalisation ---------------------------------------------------------------------

def _code(raw: str | None) -> int | None:
    m = CODE_RE.match(raw) if raw else None
    return int(m.group(1)) if m else None


def _numa(raw: str | None) -> int | None:
    try:
        value = int(raw) if raw is not None else None
    except ValueError:
        return None
    return value if value is not None and value >= 0 else None


def _int(raw: str | None) -> int | None:
    return parse_int(raw) if raw is not None else None


def _guid(raw: str | None) -> str | None:
    return norm_guid(raw) if raw else None


def _gts(raw: str | None) -> float | None:
    m = SPEED_RE.match(raw) if raw else None
    return float(m.group(1)) if m else None


def gid_type(raw: str | None, link_layer: str | None) -> str | None:
    """sysfs "IB/RoCE v1" -> "IB" on an InfiniBand port, "RoCE v1" on Ethernet; "RoCE v2" as is."""
    if raw is None:
        return None
    key = raw.strip().lower().replace(" ", "")
    if key == "rocev2":
        return "RoCE v2"
    if key in ("ib/rocev1", "rocev1", "ib"):
        if link_layer == "InfiniBand":
            return "IB"
        if link_layer == "Ethernet":
            return "RoCE v1"
        return "IB" if key == "ib" else ("RoCE v1" if key == "rocev1" else None)
    return None


def port_guid_of(gid: str | None) -> str | None:
    """Interface id of a GID ("fe80:0000:0000:0000:a088:c203:0074:cfda" -> "0xa088c2030074cfda")."""
    if not gid:
        return None
    parts = gid.split(":")
    if len(parts) != 8 or not all(re.fullmatch(r"[0-9a-fA-F]{1,4}", p) for p in parts):
        return None
    return "0x" + "".join(p.zfill(4) for p in parts[4:]).lower()


def rate_fields(raw: str | None) -> dict[str, Any]:
    """'400 Gb/sec (4X NDR)' -> rate_gbps 400.0, active_width '4X', speed_name 'NDR'."""
    m = RATE_RE.match(raw) if raw else None
    speed = m.group(3) if m else None
    return {
        "rate_gbps": float(m.group(1)) if m else None,
        "rate_raw": raw,
        "active_width": m.group(2) if m else None,
        "speed_name": speed if speed in IB_SPEEDS else None,
    }


# -- the probe -------------------------------------------------------------------------------

def _port(tree: _Tree, base: str, name: str) -> dict[str, Any]:
    p = f"{base}/ports/{name}"
    state_raw = tree.read(f"{p}/state")
    phys_raw = tree.read(f"{p}/phys_state")
    link_layer = norm_link_layer(tree.read(f"{p}/link_layer"))
    cap = tree.read(f"{p}/cap_mask")
    gids = []
    for idx in tree.listdir(f"{p}/gids"):
        if not idx.isdigit() or len(idx) > 6:
            continue
        gid = tree.read(f"{p}/gids/{idx}")
        if gid is None or ZERO_GID.match(gid):
            continue
        type_raw = tree.read(f"{p}/gid_attrs/types/{idx}")
        gids.append({
            "index": int(idx),
            "gid": gid,
            "type": gid_type(type_raw, link_layer),
            "type_raw": type_raw,
            "ndev": tree.read(f"{p}/gid_attrs/ndevs/{idx}"),
        })
    gids.sort(key=lambda g: g["index"])
    gid0 = next((g["gid"] for g in gids if g["index"] == 0), None)
    return {
        "port": int(name),
        "state": norm_state(state_raw),
        "state_num": _code(state_raw),
        "state_raw": state_raw,
        "phys_state": norm_physical_state(phys_raw),
        "phys_state_num": _code(phys_raw),
        "phys_state_raw": phys_raw,
        **rate_fields(tree.read(f"{p}/rate")),
        "link_layer": link_layer,
        "lid": _int(tree.read(f"{p}/lid")),
        "sm_lid": _int(tree.read(f"{p}/sm_lid")),
        "lmc": _int(tree.read(f"{p}/lid_mask_count")),
        "cap_mask": norm_mask(cap) if cap else None,
        "port_guid": port_guid_of(gid0),
        "active_mtu": None,
        "max_mtu": None,
        "gids": gids,
    }


def _pci_path(canon: str) -> list[str] | None:
    parts = canon.split("/")
    start = next((i for i, p in enumerate(parts) if ROOT_COMPLEX_RE.match(p)), None)
    return parts[start:] if start is not None else None


def _pci(tree: _Tree, rel: str, kind: str, rdma: list[str]) -> dict[str, Any] | None:
    canon = tree.resolve(rel)
    if canon is None:
        return None
    bdf = canon.rsplit("/", 1)[-1]
    entry: dict[str, Any] = {
        "bdf": bdf,
        "kind": kind,
        "class": tree.read(f"{rel}/class"),
        "vendor": tree.read(f"{rel}/vendor"),
        "device": tree.read(f"{rel}/device"),
        "driver": tree.link_name(f"{rel}/driver"),
        "numa_node": _numa(tree.read(f"{rel}/numa_node")),
        "rdma_devices": rdma,
        "path": _pci_path(canon),
    }
    for which in ("current", "max"):
        speed = tree.read(f"{rel}/{which}_link_speed")
        width = tree.read(f"{rel}/{which}_link_width")
        entry[f"{which}_link_speed"] = speed
        entry[f"{which}_link_speed_gts"] = _gts(speed)
        entry[f"{which}_link_width"] = int(width) if width and width.isdigit() and len(width) < 4 else None
        entry[f"{which}_link_width_raw"] = width
    return entry


def _device(tree: _Tree, name: str) -> tuple[dict[str, Any], str | None]:
    base = f"sys/class/infiniband/{name}"
    node_type_raw = tree.read(f"{base}/node_type")
    dev_canon = tree.resolve(f"{base}/device")
    bdf = dev_canon.rsplit("/", 1)[-1] if dev_canon else None
    pci_rel = f"{base}/device" if bdf and BDF_RE.match(bdf) else None
    netdevs = []
    if dev_canon is not None:
        for ifname in tree.listdir(f"{base}/device/net"):
            netdevs.append({"name": ifname, "operstate": tree.read(f"{base}/device/net/{ifname}/operstate")})
    ports = [_port(tree, base, p) for p in tree.listdir(f"{base}/ports") if p.isdigit() and len(p) < 4]
    return {
        "name": name,
        "node_type": NODE_TYPES.get(_code(node_type_raw)) if node_type_raw else None,
        "node_type_raw": node_type_raw,
        "node_guid": _guid(tree.read(f"{base}/node_guid")),
        "sys_image_guid": _guid(tree.read(f"{base}/sys_image_guid")),
        "fw_ver": tree.read(f"{base}/fw_ver"),
        "hw_rev": tree.read(f"{base}/hw_rev"),
        "hca_type": tree.read(f"{base}/hca_type"),
        "board_id": tree.read(f"{base}/board_id"),
        "node_desc": tree.read(f"{base}/node_desc"),
        "vendor_id": None,
        "vendor_part_id": None,
        "pci_address": bdf if pci_rel else None,
        "numa_node": _numa(tree.read(f"{base}/device/numa_node")) if pci_rel else None,
        "netdevs": netdevs,
        "ports": ports,
    }, pci_rel


def _empty(root: str) -> dict[str, Any]:
    return {
        "probe": PROBE, "schema_version": SCHEMA_VERSION, "root": root, "ok": False, "error": None,
        "hostname": None, "kernel_release": None, "infiniband": [], "pci": [], "skipped": [],
        "files_read": [],
    }


def probe(root: str = "/") -> dict[str, Any]:
    """The probe JSON (see the module docstring) plus `files_read`; never raises."""
    root = os.fspath(root)
    out = _empty(root)
    try:
        if not os.path.isdir(root):
            out["error"] = f"{root} is not a directory"
            return out
        tree = _Tree(root)
        if not tree.is_dir("sys"):
            out["error"] = f"no sysfs under {root} (sys/ is missing)"
            return out
        out["hostname"] = tree.read("proc/sys/kernel/hostname")
        out["kernel_release"] = tree.read("proc/sys/kernel/osrelease")
        pci: dict[str, dict[str, Any]] = {}
        hca_functions: dict[str, tuple[str, list[str]]] = {}
        for name in tree.listdir("sys/class/infiniband"):
            device, pci_rel = _device(tree, name)
            out["infiniband"].append(device)
            if pci_rel:
                hca_functions.setdefault(device["pci_address"], (pci_rel, []))[1].append(name)
        for bdf, (rel, names) in hca_functions.items():
            entry = _pci(tree, rel, "hca", names)
            if entry:
                pci[bdf] = entry
        for bdf in tree.listdir("sys/bus/pci/devices"):
            if bdf in pci or not BDF_RE.match(bdf):
                continue
            rel = f"sys/bus/pci/devices/{bdf}"
            vendor = tree.read(f"{rel}/vendor")
            if vendor not in (NVIDIA_VENDOR, MELLANOX_VENDOR):
                continue
            cls = tree.read(f"{rel}/class") or ""
            if vendor == NVIDIA_VENDOR and cls.startswith(GPU_CLASSES):
                kind = "gpu"
            elif vendor == MELLANOX_VENDOR and cls.startswith("0x02"):
                kind = "nic"
            else:
                continue
            entry = _pci(tree, rel, kind, [])
            if entry:
                pci[entry["bdf"]] = entry
        out["pci"] = [pci[b] for b in sorted(pci)]
        out["skipped"] = tree.skipped
        out["files_read"] = tree.files_read
        out["ok"] = True
    except Exception as exc:  # the probe reports, never raises: a diagnostic must not crash a prolog
        out["ok"] = False
        out["error"] = f"sysfs probe failed: {type(exc).__name__}: {exc}"
    return out


def probe_json(result: dict[str, Any]) -> dict[str, Any]:
    """The probe JSON of a probe() result: everything but `files_read`."""
    return {k: v for k, v in result.items() if k != "files_read"}


def write_snapshot(files_read: list[list[str]], dest: str) -> None:
    """Write `files_read` as a plain tree under `dest` (files, and links with their targets as
    read). Refuses absolute paths and `..` in them, so a tampered list cannot write outside."""
    for entry in files_read:
        path = entry[0]
        parts = path.split("/")
        if path.startswith("/") or ".." in parts or "" in parts:
            raise ValueError(f"refusing snapshot path {path!r}")
        full = os.path.join(dest, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if len(entry) == 3 and entry[1] == "->":
            if not os.path.lexists(full):
                os.symlink(entry[2], full)
        else:
            with open(full, "w", encoding="utf-8") as f:
                f.write(entry[1])


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    with_files = "--files-read" in args
    args = [a for a in args if a != "--files-read"]
    if len(args) > 1 or any(a.startswith("-") and a != "-" for a in args):
        print("usage: python -m topodiag.live.sysfs_probe [ROOT] [--files-read]", file=sys.stderr)
        return 2
    result = probe(args[0] if args else "/")
    print(json.dumps(result if with_files else probe_json(result), indent=2))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
