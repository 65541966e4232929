"""Read the RDMA port counters (sysfs `counters/` and `hw_counters/`), and the MTU and RoCE ECN
switches of each RDMA device's network interfaces, read-only; once, or twice `interval_s` apart.

    probe(root="/", interval_s=0.0) -> {"probe": "ib_counters", "schema_version": 1, "ok", "error",
        "hostname", "interval_s", "samples": [{"ports": [...]}, ...], "netdevs": [...]}

(the schema is in topodiag/parsers/ib_counters.py). One sample is a few hundred small sysfs reads
(about 30 files per port): cheap enough for a prolog. A second sample turns cumulative counters into
rates over a stated window; it costs `interval_s` of waiting, so it is off unless asked for
(`Options.counter_interval_s`, `TOPODIAG_COUNTER_INTERVAL` in the environment of `collect`/`check`).
Every read is guarded: a missing or unreadable file is skipped, only regular files are read (at most
4 KiB), a path whose real location leaves `root` is not followed. The probe never raises.

    python -m topodiag.live.ib_counters_probe [ROOT] [--interval SECONDS]
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import Any, Optional

from .rooted import Rooted

PROBE = "ib_counters"
SCHEMA_VERSION = 1
MAX_INTERVAL_S = 300.0
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,80}$")
RATE_RE = re.compile(r"^\s*(\d{1,6}(?:\.\d{1,6})?)\s*Gb/sec")


def _int(raw: Optional[str]) -> Optional[int]:
    return int(raw) if raw is not None and raw.isdigit() and len(raw) < 21 else None


def _table(r: Rooted, rel: str) -> dict[str, Optional[int]]:
    return {name: _int(r.read(f"{rel}/{name}")) for name in r.listdir(rel) if NAME_RE.match(name)}


def _ports(r: Rooted) -> list[dict[str, Any]]:
    out = []
    for dev in r.listdir("sys/class/infiniband"):
        base = f"sys/class/infiniband/{dev}"
        for port in r.listdir(f"{base}/ports"):
            if not port.isdigit() or len(port) > 3:
                continue
            p = f"{base}/ports/{port}"
            rate = RATE_RE.match(r.read(f"{p}/rate") or "")
            out.append({"device": dev, "port": int(port), "link_layer": r.read(f"{p}/link_layer"),
                        "rate_gbps": float(rate.group(1)) if rate else None,
                        "counters": _table(r, f"{p}/counters"), "hw_counters": _table(r, f"{p}/hw_counters")})
    return out


def _ecn(r: Rooted, ifname: str, side: str) -> dict[str, bool]:
    rel = f"sys/class/net/{ifname}/ecn/roce_{side}/enable"
    out = {}
    for prio in r.listdir(rel):
        value = _int(r.read(f"{rel}/{prio}")) if prio.isdigit() and int(prio) < 8 else None
        if value is not None:
            out[prio] = value != 0
    return out


def _netdevs(r: Rooted) -> list[dict[str, Any]]:
    out = []
    for dev in r.listdir("sys/class/infiniband"):
        for ifname in r.listdir(f"sys/class/infiniband/{dev}/device/net"):
            out.append({"name": ifname, "device": dev, "mtu": _int(r.read(f"sys/class/net/{ifname}/mtu")),
                        "ecn": {"roce_np": _ecn(r, ifname, "np"), "roce_rp": _ecn(r, ifname, "rp")}})
    return out


def probe(root: str = "/", interval_s: float = 0.0) -> dict[str, Any]:
    """The probe JSON; never raises."""
    out: dict[str, Any] = {"probe": PROBE, "schema_version": SCHEMA_VERSION, "ok": False, "error": None,
                           "hostname": None, "interval_s": None, "samples": [], "netdevs": []}
    try:
        root = os.fspath(root)
        r = Rooted(root)
        if not os.path.isdir(os.path.join(root, "sys")):
            out["error"] = f"no sysfs under {root} (sys/ is missing)"
            return out
        out["hostname"] = r.read("proc/sys/kernel/hostname")
        out["samples"].append({"ports": _ports(r)})
        wait = min(max(float(interval_s or 0.0), 0.0), MAX_INTERVAL_S)
        if wait > 0 and out["samples"][0]["ports"]:
            start = time.monotonic()
            time.sleep(wait)
            out["samples"].append({"ports": _ports(r)})
            out["interval_s"] = round(time.monotonic() - start, 3)
        out["netdevs"] = _netdevs(r)
        out["ok"] = True
    except Exception as exc:  # the probe reports, never raises
        out["ok"] = False
        out["error"] = f"ib_counters probe failed: {type(exc).__name__}: {exc}"
    return out


def interval_from_env(environ: Optional[dict] = None) -> float:
    """TOPODIAG_COUNTER_INTERVAL (seconds, 0 to 300); 0 when unset or not a number."""
    raw = (environ if environ is not None else os.environ).get("TOPODIAG_COUNTER_INTERVAL", "")
    try:
        value = float(raw)
    except ValueError:
        return 0.0
    return min(max(value, 0.0), MAX_INTERVAL_S) if value == value else 0.0


def main(argv: Optional[list[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    interval = 0.0
    if "--interval" in args:
        i = args.index("--interval")
        try:
            interval = float(args[i + 1])
        except (IndexError, ValueError):
            print("usage: python -m topodiag.live.ib_counters_probe [ROOT] [--interval SECONDS]", file=sys.stderr)
            return 2
        del args[i:i + 2]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print("usage: python -m topodiag.live.ib_counters_probe [ROOT] [--interval SECONDS]", file=sys.stderr)
        return 2
    result = probe(args[0] if args else "/", interval)
    print(json.dumps(result, indent=1))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
