"""Ask rdma-core's Python bindings (pyverbs) for the RDMA devices, their ports and GID types.

pyverbs comes with the host's rdma-core (distribution package `python3-pyverbs`); the PyPI sdist
needs a matching rdma-core to build and run, so it is never a dependency of topodiag. When
`import pyverbs.device` fails, or the device list cannot be read (pyverbs raises
PyverbsRDMAError when there are no devices), the probe says "not available" and the sysfs probe
serves. Calls used (rdma-core pyverbs/device.pyx): `device.get_device_list()` -> Device (.name
bytes, .node_type, .guid host order), `device.Context(name=...)` -> .query_device() (fw_version,
sys_image_guid (big-endian as stored), vendor_id, vendor_part_id, hw_ver, phys_port_cnt),
.query_port(p) (state, phys_state, link_layer, lid, sm_lid, lmc, port_cap_flags, active_width,
active_speed, active_mtu, max_mtu, gid_tbl_len), .query_gid(p, i).gid ("xxxx:...:xxxx") and
.query_gid_type(p, i) (0 "IB/RoCE v1", 1 "RoCE v2", as sysfs names them).

Probe JSON (schema_version 1), the "infiniband" section shaped as the sysfs probe's (see
sysfs_probe; what only sysfs knows, such as pci_address, numa_node, netdevs, is null there):

    {"probe": "pyverbs", "schema_version": 1, "ok": true, "error": null,
     "infiniband": [{"name": "mlx5_0", "node_type": "CA", ..., "ports": [{..., "gids": [...]}]}],
     "skipped": [{"path": "mlx5_1/ports/1", "reason": "..."}]}

and, when not available: {"probe": "pyverbs", "schema_version": 1, "ok": false,
"error": "pyverbs not importable: ..." | "no RDMA devices" | ..., "infiniband": [], "skipped": []}.

Live collection runs `python -m topodiag.live.pyverbs_probe --progress` in a child process under
the source's timeout (live/child.py): a verbs call that crashes or hangs gives that blank JSON with
an error naming it ("pyverbs probe died with signal 11 (SIGSEGV) in query_port(port=1)") and a
`died` object {how, signal, rc, last_call, seconds} (schema_version 1 still; absent otherwise).
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

from ..parsers.ib_records import IB_SPEEDS
from .sysfs_probe import natural_key, port_guid_of

PROBE = "pyverbs"
SCHEMA_VERSION = 1
MAX_GIDS = 256  # entries read per port (CX7 RoCE tables hold 255)

PORT_STATES = {0: ("NOP", None), 1: ("PORT_DOWN", "Down"), 2: ("PORT_INIT", "Initializing"),
               3: ("PORT_ARMED", "Armed"), 4: ("PORT_ACTIVE", "Active"), 5: ("PORT_ACTIVE_DEFER", "ActiveDefer")}
PHYS_STATES = {1: ("SLEEP", "Sleep"), 2: ("POLLING", "Polling"), 3: ("DISABLED", "Disabled"),
               4: ("PORT_CONFIGURATION_TRAINNING", "PortConfigurationTraining"), 5: ("LINK_UP", "LinkUp"),
               6: ("LINK_ERROR_RECOVERY", "LinkErrorRecovery"), 7: ("PHY_TEST", "PhyTest")}
NODE_TYPES = {1: "CA", 2: "Switch", 3: "Router", 4: "iWARP RNIC", 5: "usNIC", 6: "usNIC UDP"}
LINK_LAYERS = {0: "InfiniBand", 1: "InfiniBand", 2: "Ethernet"}  # 0 = unspecified: IB, as libibverbs reads it
WIDTHS = {1: "1X", 2: "4X", 4: "8X", 8: "12X", 16: "2X"}
SPEEDS = {1: "SDR", 2: "DDR", 4: "QDR", 8: "FDR10", 16: "FDR", 32: "EDR", 64: "HDR", 128: "NDR", 256: "XDR"}
MTUS = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
GID_TYPES = {0: "IB/RoCE v1", 1: "RoCE v2"}
MELLANOX_VENDOR_IDS = {0x02C9, 0x15B3}


def _empty() -> dict[str, Any]:
    return {"probe": PROBE, "schema_version": SCHEMA_VERSION, "ok": False, "error": None,
            "infiniband": [], "skipped": []}


def blank() -> dict[str, Any]:
    """The probe JSON of a probe that collected nothing (ok false, no error yet)."""
    return _empty()


def _quiet(call: str) -> None:
    pass


# Told each verbs call before it is made (the child's progress, live/child.py); quiet in-process.
_say = _quiet


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]


def _guid(value: Any, swap: bool = False) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 64:
        return None
    if swap and sys.byteorder == "little":  # ibv_device_attr keeps GUIDs big-endian
        value = int.from_bytes(value.to_bytes(8, "little"), "big")
    return f"0x{value:016x}"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _name(value: Any) -> str | None:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value if isinstance(value, str) else None


def _gid_type(raw: str | None, link_layer: str | None) -> str | None:
    if raw == "RoCE v2":
        return raw
    if raw == "IB/RoCE v1":
        return {"InfiniBand": "IB", "Ethernet": "RoCE v1"}.get(link_layer or "")
    return None


def _gids(ctx: Any, port: int, count: int, link_layer: str | None) -> list[dict[str, Any]]:
    out = []
    for index in range(min(count, MAX_GIDS)):
        try:
            _say(f"query_gid(port={port}, index={index})")
            gid = str(ctx.query_gid(port, index).gid)
        except Exception:
            continue
        if not gid.replace("0", "").replace(":", ""):  # the all-zero GID: an unused slot
            continue
        try:
            type_raw = GID_TYPES.get(_int(ctx.query_gid_type(port, index)))
        except Exception:
            type_raw = None
        out.append({"index": index, "gid": gid, "type": _gid_type(type_raw, link_layer),
                    "type_raw": type_raw, "ndev": None})
    return out


def _port(ctx: Any, port: int) -> dict[str, Any]:
    _say(f"query_port(port={port})")
    attr = ctx.query_port(port)
    state = _int(getattr(attr, "state", None))
    phys = _int(getattr(attr, "phys_state", None))
    link_layer = LINK_LAYERS.get(_int(getattr(attr, "link_layer", None)))
    width = WIDTHS.get(_int(getattr(attr, "active_width", None)))
    speed = SPEEDS.get(_int(getattr(attr, "active_speed", None)))
    rate = float(int(width[:-1]) * IB_SPEEDS[speed][1]) if width and speed else None
    cap = _int(getattr(attr, "port_cap_flags", None))
    gids = _gids(ctx, port, _int(getattr(attr, "gid_tbl_len", None)) or 0, link_layer)
    gid0 = next((g["gid"] for g in gids if g["index"] == 0), None)
    return {
        "port": port,
        "state": PORT_STATES.get(state, (None, None))[1],
        "state_num": state,
        "state_raw": f"{PORT_STATES[state][0]} ({state})" if state in PORT_STATES else None,
        "phys_state": PHYS_STATES.get(phys, (None, None))[1],
        "phys_state_num": phys,
        "phys_state_raw": f"{PHYS_STATES[phys][0]} ({phys})" if phys in PHYS_STATES else None,
        "rate_gbps": rate,
        "rate_raw": None,
        "active_width": width,
        "speed_name": speed,
        "link_layer": link_layer,
        "lid": _int(getattr(attr, "lid", None)),
        "sm_lid": _int(getattr(attr, "sm_lid", None)),
        "lmc": _int(getattr(attr, "lmc", None)),
        "cap_mask": f"0x{cap:08x}" if cap is not None and 0 <= cap < 1 << 32 else None,
        "port_guid": port_guid_of(gid0),
        "active_mtu": MTUS.get(_int(getattr(attr, "active_mtu", None))),
        "max_mtu": MTUS.get(_int(getattr(attr, "max_mtu", None))),
        "gids": gids,
    }


def _device(pv: Any, dev: Any, skipped: list[dict[str, str]]) -> dict[str, Any] | None:
    name = _name(getattr(dev, "name", None))
    if not name:
        return None
    entry: dict[str, Any] = {
        "name": name,
        "node_type": NODE_TYPES.get(_int(getattr(dev, "node_type", None))),
        "node_type_raw": str(dev.node_type) if _int(getattr(dev, "node_type", None)) is not None else None,
        "node_guid": _guid(getattr(dev, "guid", None)),
        "sys_image_guid": None, "fw_ver": None, "hw_rev": None, "hca_type": None, "board_id": None,
        "node_desc": None, "vendor_id": None, "vendor_part_id": None,
        "pci_address": None, "numa_node": None, "netdevs": [], "ports": [],
    }
    try:
        _say(f"Context(name={name})")
        ctx = pv.device.Context(name=name)
    except Exception as exc:
        skipped.append({"path": name, "reason": f"cannot open: {_one_line(exc)}"})
        return entry
    try:
        try:
            _say(f"query_device({name})")
            attr = ctx.query_device()
        except Exception as exc:
            skipped.append({"path": name, "reason": f"query_device failed: {_one_line(exc)}"})
            return entry
        vendor = _int(getattr(attr, "vendor_id", None))
        part = _int(getattr(attr, "vendor_part_id", None))
        hw = _int(getattr(attr, "hw_ver", None))
        fw = getattr(attr, "fw_version", None)
        entry.update(
            sys_image_guid=_guid(getattr(attr, "sys_image_guid", None), swap=True),
            fw_ver=fw if isinstance(fw, str) and fw else None,
            hw_rev=f"0x{hw:x}" if hw is not None else None,
            hca_type=f"MT{part}" if vendor in MELLANOX_VENDOR_IDS and part is not None else None,
            vendor_id=f"0x{vendor:04x}" if vendor is not None else None,
            vendor_part_id=part,
        )
        for port in range(1, min(_int(getattr(attr, "phys_port_cnt", None)) or 0, 255) + 1):
            try:
                entry["ports"].append(_port(ctx, port))
            except Exception as exc:
                skipped.append({"path": f"{name}/ports/{port}", "reason": f"query_port failed: {_one_line(exc)}"})
    finally:
        try:
            ctx.close()
        except Exception:
            pass
    return entry


def _is_rdma_error(pv: Any, exc: BaseException) -> bool:
    cls = getattr(getattr(pv, "pyverbs_error", None), "PyverbsRDMAError", None)
    if isinstance(cls, type) and isinstance(exc, cls):
        return True
    return type(exc).__name__ == "PyverbsRDMAError"


def probe(pyverbs: Any = None) -> dict[str, Any]:
    """The probe JSON; `pyverbs` is the imported package (tests pass a fake), None imports it.
    Never raises."""
    out = _empty()
    pv = pyverbs
    if pv is None:
        try:
            _say("import pyverbs")
            pv = importlib.import_module("pyverbs")
            importlib.import_module("pyverbs.device")
            try:
                importlib.import_module("pyverbs.pyverbs_error")
            except Exception:
                pass
        except Exception as exc:  # ImportError, or an OSError from a missing libibverbs
            out["error"] = f"pyverbs not importable: {_one_line(exc)}"
            return out
    try:
        _say("get_device_list()")
        devices = list(pv.device.get_device_list())
    except Exception as exc:
        if _is_rdma_error(pv, exc):
            out["error"] = f"no RDMA devices ({_one_line(exc)})"
        else:
            out["error"] = f"pyverbs failed: {type(exc).__name__}: {_one_line(exc)}"
        return out
    if not devices:
        out["error"] = "no RDMA devices"
        return out
    try:
        skipped: list[dict[str, str]] = []
        found = [d for d in (_device(pv, dev, skipped) for dev in devices) if d is not None]
        out["infiniband"] = sorted(found, key=lambda d: natural_key(d["name"]))
        out["skipped"] = skipped
        out["ok"] = True
    except Exception as exc:  # a binding that misbehaves must not crash the run
        out["infiniband"] = []
        out["error"] = f"pyverbs failed: {type(exc).__name__}: {_one_line(exc)}"
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the probe JSON; exit 1 when it says ok false. With --progress, each verbs call is
    announced on stderr before it is made (live/child.py)."""
    global _say
    from .child import say, wants_progress

    if wants_progress(argv):
        _say = say
    result = probe()
    print(json.dumps(result, indent=2))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
