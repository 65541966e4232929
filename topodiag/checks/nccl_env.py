"""NCCL environment rules (NCCL009-NCCL011): the NCCL_* settings a job runs with, from a collected
environment (the nccl_env source: `env`, /proc/<pid>/environ, a job script, the live probe) or from the
"NCCL_X set by environment to Y" lines of an NCCL log (nccl_debug's `env`).

- NCCL009 NCCL_IB_HCA: its syntax (optional `^` to exclude, then optional `=` for exact names, then
  comma-separated `name[:port]`), names no device of the host has, prefix collisions (without `=`,
  mlx5_1 also selects mlx5_10..mlx5_19), Ethernet (RoCE/storage) ports selected next to InfiniBand ones,
  selected devices whose ports are all down (where an IB tool gave port states).
- NCCL010 NCCL_SOCKET_IFNAME selecting loopback or a container/VM bridge (lo, docker*, veth*, virbr*,
  br-*, cni*, flannel*, cali*).
- NCCL011 switches left set: NCCL_P2P_DISABLE=1, NCCL_P2P_LEVEL=LOC/0, NCCL_IB_DISABLE=1 where IB is
  present, NCCL_NET_GDR_LEVEL=LOC/0, NCCL_SHM_DISABLE=1, NCCL_ALGO / NCCL_PROTO forced. From an NCCL log
  the P2P and IB switches are NCCL003's and NCCL001's findings (they judge what the job then did), so
  NCCL011 names them only from a collected environment.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Mapping, Optional

from ..engine import Evidence, Severity, check, hit, when
from ..parsers.base import listing
from .nccl import _as_dict, _hosts_subject

HOST = "host:local"
_VIRTUAL = re.compile(r"^(lo|docker|veth|virbr|br-|cni|flannel|cali|podman|vnet|tun|tap)", re.I)
_PORT_RE = re.compile(r"^\d+$")


def _settings(nccl_env, nccl_debug) -> list[dict]:
    """Each NCCL_* setting with where it was read: the collected environment first, then the log's."""
    out: list[dict] = []
    if nccl_env is not None:
        for name, value in nccl_env.env.items():
            out.append({"name": name, "value": value, "source": "nccl_env", "line": nccl_env.lines.get(name)})
    if nccl_debug is not None:
        have = {s["name"] for s in out}
        for name, value in (_as_dict(nccl_debug).get("env") or {}).items():
            if name not in have:
                out.append({"name": name, "value": str(value), "source": "nccl_debug", "line": None})
    return out


def _setting(settings: list[dict], name: str) -> Optional[dict]:
    return next((s for s in settings if s["name"] == name), None)


def _ev(s: Mapping[str, Any]) -> list[Evidence]:
    return [Evidence(s["source"], None, s["line"])]


def _subjects(nccl_debug, topology) -> list[str]:
    if nccl_debug is not None:
        return _hosts_subject(_as_dict(nccl_debug))
    host = topology.host() if topology is not None else None
    return [host or HOST]


def _item_problems(raw: str) -> list[str]:
    out = []
    if raw != raw.strip() or " " in raw or ";" in raw:
        out.append(f"'{raw}' holds a blank or ';': NCCL does not trim, so it matches no device (separate with ',' only)")
    port = raw.partition(":")[2].split(":")[0]
    if raw.partition(":")[1] and not _PORT_RE.match(port):
        out.append(f"'{raw}': the port '{port}' is not a number")
    return out


def _item(raw: str) -> tuple[str, Optional[int], str]:
    name, _, rest = raw.partition(":")
    port = rest.split(":")[0]
    return name.strip(), int(port) if _PORT_RE.match(port) else None, raw


def _quoted(v: str) -> bool:
    return v[:1] in ("'", '"')


def parse_list(value: str) -> dict:
    """NCCL's parseStringList: {exclude, exact, items [(name, port or None, raw)], problems [str]}."""
    v = value.strip()
    problems = []
    if _quoted(v):
        problems.append(f"quotes are part of the value ({value!r}): NCCL reads them as part of the first name")
    exclude = v.startswith("^")
    v = v[1:] if exclude else v
    exact = v.startswith("=")
    v = v[1:] if exact else v
    if v.startswith("^"):
        problems.append("'^' after '=': NCCL reads '^' first, so here it is part of the first name and excludes nothing")
    raws = v.split(",")
    for raw in raws:
        problems.extend(_item_problems(raw))
    items = [_item(raw) for raw in raws if raw.partition(":")[0].strip()]
    return {"exclude": exclude, "exact": exact, "items": items, "problems": problems}


def _devices(topology, nccl_debug) -> dict[str, Optional[str]]:
    """RDMA device name -> link layer ("InfiniBand", "Ethernet" or None) from the IB tools, else from the
    log's NET/IB device list (IB / RoCE)."""
    devs: dict[str, Optional[str]] = {}
    if topology is not None:
        for nic in topology.nics():
            devs.setdefault(nic.split(":", 1)[-1], None)
        for nic, port in topology.ib_ports():
            name = nic.split(":", 1)[-1]
            if port.get("link_layer") and devs.get(name) is None:
                devs[name] = port["link_layer"]
    if not devs and nccl_debug is not None:
        for d in _as_dict(nccl_debug).get("net_devices") or []:
            if isinstance(d, Mapping) and d.get("kind") == "ib":
                layer = {"IB": "InfiniBand", "RoCE": "Ethernet"}.get(d.get("link_layer") or "")
                devs.setdefault(str(d.get("name")), layer)
    return devs


def _natural(name: str) -> tuple:
    """mlx5_2 before mlx5_10."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


def _matches(name: str, exact: bool, devices) -> list[str]:
    return sorted((d for d in devices if (d == name if exact else d.startswith(name))), key=_natural)


def _missing(parsed: dict, devices: dict) -> tuple[Optional[str], dict]:
    missing = [n for n, _, _ in parsed["items"] if not _matches(n, parsed["exact"], devices)]
    if not missing:
        return None, {}
    return ("missing_exclude" if parsed["exclude"] else "missing"), {
        "names": listing(missing), "devices": listing(sorted(devices, key=_natural))}


def _prefix(parsed: dict, devices: dict) -> tuple[Optional[str], dict]:
    if parsed["exact"]:
        return None, {}
    named = {n for n, _, _ in parsed["items"]}
    extra = {n: [d for d in _matches(n, False, devices) if d != n and d not in named] for n in named}
    extra = {n: ds for n, ds in extra.items() if ds}
    if not extra:
        return None, {}
    return "prefix", {"collisions": "; ".join(f"{n} also {'excludes' if parsed['exclude'] else 'selects'} {listing(ds)}"
                                              for n, ds in sorted(extra.items())),
                      "action": "excludes" if parsed["exclude"] else "selects",
                      "_nics": sorted({d for ds in extra.values() for d in ds}, key=_natural)}


def _ethernet(parsed: dict, devices: dict) -> tuple[Optional[str], dict]:
    named = {n for n, _, _ in parsed["items"]}
    hit_by_list = {d for n in named for d in _matches(n, parsed["exact"], devices)}
    chosen = [d for d in devices if (d in hit_by_list) != parsed["exclude"]]
    eth = sorted((d for d in chosen if devices.get(d) == "Ethernet"), key=_natural)
    ib = sorted((d for d in chosen if devices.get(d) == "InfiniBand"), key=_natural)
    return ("ethernet", {"ethernet": listing(eth), "infiniband": listing(ib), "_nics": eth}) if eth and ib else (None, {})


def _down(parsed: dict, devices: dict, active: Optional[set]) -> tuple[Optional[str], dict]:
    """Devices an include list names none of whose ports is Active (only where an IB tool gave port
    states; with an exclusion list NCCL itself leaves the down ports out)."""
    if active is None or parsed["exclude"]:
        return None, {}
    named = {n for n, _, _ in parsed["items"]}
    hit_by_list = {d for n in named for d in _matches(n, parsed["exact"], devices)}
    chosen = sorted((d for d in devices if (d in hit_by_list) != parsed["exclude"]), key=_natural)
    down = [d for d in chosen if d not in active]
    if not down:
        return None, {}
    up = [d for d in chosen if d in active]
    return ("down" if up else "all_down"), {"down": listing(down), "up": listing(up), "_nics": down}


def _active(topology) -> Optional[set]:
    """RDMA devices with an Active port; None when no IB tool reported port states."""
    if topology is None or not topology.ib_ports():
        return None
    return {nic.split(":", 1)[-1] for nic, p in topology.ib_ports() if p.get("state") == "Active"}


def _hca_judge(i: int, parsed: dict, devices: dict, active: Optional[set]) -> tuple[Optional[str], dict]:
    """The i-th NCCL_IB_HCA judgement against the device list: (variant, facts) or (None, {})."""
    if not devices:
        return None, {}
    return _missing(parsed, devices) if i == 0 else _prefix(parsed, devices) if i == 1 \
        else _ethernet(parsed, devices) if i == 2 else _down(parsed, devices, active)


_HCA_SEVERITY = {"syntax": Severity.WARNING, "missing": Severity.ERROR, "missing_exclude": Severity.INFO,
                 "prefix": Severity.WARNING, "ethernet": Severity.WARNING, "down": Severity.WARNING,
                 "all_down": Severity.ERROR}


@check("NCCL009")
def nccl009(nccl_env=None, nccl_debug=None, topology=None) -> Iterator:
    """NCCL_IB_HCA: syntax mistakes, names the host lacks, prefix collisions, Ethernet ports next to IB."""
    s = _setting(_settings(nccl_env, nccl_debug), "NCCL_IB_HCA")
    if s is None or not s["value"].strip():
        return
    parsed = parse_list(s["value"])
    subjects = _subjects(nccl_debug, topology)
    common = {"value": s["value"], "where": s["source"]}
    if parsed["problems"]:
        yield hit(subjects, variant="syntax", severity=_HCA_SEVERITY["syntax"], evidence=_ev(s),
                  expectation="NCCL_IB_HCA as [^][=]name[:port],name[:port]...",
                  problems="; ".join(parsed["problems"]), **common)
    devices, active = _devices(topology, nccl_debug), _active(topology)
    for i in range(4):
        variant, facts = _hca_judge(i, parsed, devices, active)
        if variant is None:
            continue
        nics = [f"nic:{d}" for d in facts.pop("_nics", [])]
        yield hit(subjects + nics, variant=variant, severity=_HCA_SEVERITY[variant], evidence=_ev(s),
                  expectation="NCCL_IB_HCA selecting exactly the fabric's HCAs present on this host", **common, **facts)


def _multi_node(nccl_debug) -> bool:
    if nccl_debug is None:
        return False
    d = _as_dict(nccl_debug)
    return bool((d.get("nnodes") or 0) > 1 or len(d.get("hosts") or ()) > 1)


@check("NCCL010")
def nccl010(nccl_env=None, nccl_debug=None, topology=None):
    """NCCL_SOCKET_IFNAME selecting loopback or a container/VM bridge (an exclusion list is fine)."""
    s = _setting(_settings(nccl_env, nccl_debug), "NCCL_SOCKET_IFNAME")
    if s is None or not s["value"].strip():
        return None
    parsed = parse_list(s["value"])
    if parsed["exclude"]:
        return None
    bad = [n for n, _, _ in parsed["items"] if _VIRTUAL.match(n)]
    if not bad:
        return None
    loopback = any(n.lower().startswith("lo") for n in bad)
    many = _multi_node(nccl_debug)
    return hit(_subjects(nccl_debug, topology), variant="loopback" if loopback else "default",
               severity=Severity.ERROR if many else Severity.WARNING, evidence=_ev(s),
               expectation="NCCL_SOCKET_IFNAME naming the node's data interface (or excluding lo/docker with '^')",
               value=s["value"], interfaces=listing(bad), where=s["source"], notes=when(multi_node=many))


def _ib_present(topology, nccl_debug) -> bool:
    if topology is not None and any(p.get("link_layer") in (None, "InfiniBand") and p.get("state") == "Active"
                                    for _, p in topology.ib_ports()):
        return True
    return nccl_debug is not None and any(isinstance(d, Mapping) and d.get("kind") == "ib"
                                          for d in _as_dict(nccl_debug).get("net_devices") or [])


def _nvlinked(topology) -> bool:
    return topology is not None and any(cls and cls.startswith("NV") for _, _, cls in topology.gpu_pairs())


def _transport_switch(name: str, value: str, topology, nccl_debug) -> tuple[Optional[str], Optional[Severity]]:
    """P2P and IB switches (read from a collected environment only: from a log they are NCCL003's and NCCL001's)."""
    p2p = Severity.ERROR if _nvlinked(topology) else Severity.WARNING
    if name == "NCCL_P2P_DISABLE" and value == "1":
        return "p2p_disable", p2p
    if name == "NCCL_P2P_LEVEL" and value in ("LOC", "0"):
        return "p2p_level", p2p
    if name == "NCCL_IB_DISABLE" and value == "1":
        return "ib_disable", Severity.ERROR if _ib_present(topology, nccl_debug) else Severity.WARNING
    return None, None


def _tuner_switch(name: str, value: str) -> tuple[Optional[str], Optional[Severity]]:
    """GDR and SHM switches, forced algorithm and protocol."""
    if name == "NCCL_NET_GDR_LEVEL" and value in ("LOC", "0"):
        return "gdr_level", Severity.WARNING
    if name == "NCCL_SHM_DISABLE" and value == "1":
        return "shm_disable", Severity.WARNING
    if name == "NCCL_ALGO" and value:
        return "forced_algo", Severity.INFO
    if name == "NCCL_PROTO" and value:
        return "forced_proto", Severity.WARNING if "LL128" in value and not value.startswith("^") else Severity.INFO
    return None, None


_TRANSPORT = ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_IB_DISABLE")


def _switch(s: dict, topology, nccl_debug) -> tuple[Optional[str], Optional[Severity]]:
    """(variant, severity) for a setting that switches a transport off or forces the tuner, else (None, None)."""
    name, value = s["name"], s["value"].strip().upper()
    if name in _TRANSPORT and s["source"] == "nccl_debug":
        return None, None
    return _transport_switch(name, value, topology, nccl_debug) if name in _TRANSPORT else _tuner_switch(name, value)


@check("NCCL011")
def nccl011(nccl_env=None, nccl_debug=None, topology=None) -> Iterator:
    """Switches left in the environment that turn a transport off or force NCCL's tuner, with their cost."""
    subjects = _subjects(nccl_debug, topology)
    for s in _settings(nccl_env, nccl_debug):
        variant, severity = _switch(s, topology, nccl_debug)
        if variant is None:
            continue
        yield hit(subjects, variant=variant, severity=severity, evidence=_ev(s),
                  expectation="NCCL's defaults (transport and tuner chosen from the topology)",
                  setting=f"{s['name']}={s['value']}", where=s["source"],
                  notes=when(nvlinked=variant.startswith("p2p") and _nvlinked(topology),
                             ib_present=variant == "ib_disable" and _ib_present(topology, nccl_debug)))
