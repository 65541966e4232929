"""When, what and from what a report was made: the block at the top of every report (JSON `run`,
the text report's second line, the HTML header), as nvidia-bug-report.sh and `dcgmi diag` open.

    {generated_at: "2026-12-05T07:00:19Z" (UTC, when this report was written),
     collected_at: the bundle manifest's `created`, or when a live check collected; null for loose files,
     command: "topodiag check --from node017.tar.gz" (null from the Python API),
     tool: {name, version}, host,
     versions: {driver, cuda, nccl, ofed, kernel}: each only where an input names it}
"""

from __future__ import annotations

import re
import time
from typing import Any, Optional

# version name -> the observation or node keys that carry it, first found wins
VERSION_KEYS: dict[str, tuple[str, ...]] = {
    "driver": ("driver_version",),
    "cuda": ("cuda_driver_version", "cuda_version"),
    "nccl": ("nccl_version",),
    "ofed": ("ofed_version",),
    "kernel": ("kernel_version", "kernel_release"),
}


def host_name(topology) -> str | None:
    host = topology.host()
    return topology.node(host).get("name") if host else None


def now_utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _scalar(value: Any) -> Optional[str]:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
        from .sanitise import line

        return line(str(value), 60)
    return None


ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")


def versions(topology, facts: Optional[dict] = None) -> dict[str, str]:
    """{driver, cuda, nccl, ofed, kernel}: the first value an observation (or a GPU/NIC/host node)
    gives for each, then the collecting host's facts (a bundle manifest's kernel and OFED, a live
    check's kernel); absent where no input names it."""
    out: dict[str, str] = {}
    for name in ("kernel", "ofed"):
        value = _scalar((facts or {}).get(name))
        if value:
            out[name] = value
    places = list(topology.observations())
    places += [topology.node(n) for n in topology.nodes()]
    for name, keys in VERSION_KEYS.items():
        for attrs in places if name not in out else ():
            found = next((v for v in (_scalar(attrs.get(k)) for k in keys) if v), None)
            if found:
                out[name] = found
                break
    return out


def run_meta(diagnosis) -> dict[str, Any]:
    """The block every report opens with (see the module docstring)."""
    from .. import __version__

    info = dict(getattr(diagnosis, "run_info", None) or {})
    return {
        "generated_at": info.get("generated_at") or now_utc(),
        "collected_at": _iso(getattr(diagnosis, "collected_at", None)),
        "command": info.get("command"),
        "tool": {"name": "topodiag", "version": __version__},
        "host": host_name(diagnosis.topology),
        "versions": _ordered(versions(diagnosis.topology, getattr(diagnosis, "host_facts", None))),
    }


def _iso(value: Any) -> Optional[str]:
    """A UTC ISO 8601 time as collect writes it; anything else (a hand-edited manifest) is not claimed."""
    return value if isinstance(value, str) and ISO_UTC.fullmatch(value) else None


def _ordered(found: dict[str, str]) -> dict[str, str]:
    return {k: found[k] for k in VERSION_KEYS if k in found}


def meta_line(meta: dict[str, Any]) -> str:
    """One line for people: "generated 2026-12-05T07:00:19Z, collected ..., topodiag 0.9, driver 550.54.15,
    ..." (the text report wraps it)."""
    parts = [f"Generated {meta['generated_at']}"]
    parts.append(f"collected {meta['collected_at']}" if meta.get("collected_at") else "collected: not recorded")
    parts.append(f"topodiag {meta['tool']['version']}")
    parts += [f"{k} {v}" for k, v in meta.get("versions", {}).items()]
    return ", ".join(parts)
