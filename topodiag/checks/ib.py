"""IB rules over the HCA ports the IB tools reported (ibstat, ibv_devinfo, ibstatus), merged in the model.

Every check reads `topology.ib_ports()` (one record per port, whichever tools spoke of it) and the
NIC nodes' facts (ca_type, firmware, system_guid); a profile, when one was chosen, sets what
"right" means (nic_rate_gbps, link_layer, nics). Decisions:

- IB001: a Down / Disabled port whose card (same System image GUID, or another port of the same
  CA) has an Active port is the unused second port of a dual-port card: warning, not error. Every
  other not-Active or not-LinkUp port is an error. Ports neither state of which is known are skipped.
- IB002 judges only Active ports (a Disabled port's "Rate: 10" is no rate; IB001 reports it), each
  against the first expectation that applies: the rule's `expected_rate_gbps` param (site), the
  profile's nic_rate_gbps, the best Active port of the same link layer on the host (error when
  that port is the same HCA model, warning otherwise), and for InfiniBand ports the HCA model's
  top rate (ConnectX-7: NDR 400; warning: a slower switch may be by design).
- IB003: all-Ethernet hosts are RoCE clusters and pass unless the profile says InfiniBand.
- IB005 (added): the tools' own failures. "No IB devices found" / "sys files not found" is a finding
  about the host (no RDMA device registered: NCCL falls back to sockets), not a collection failure
  (SYS001 is for a tool that did not run); "ibpanic: stat of IB device 'X' failed" is a warning
  (ibstat stopped there: X and the devices after it are unlisted), info when another tool in the
  input reported X's ports.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Iterable

from .. import knowledge
from ..engine import Evidence, Severity, check, hit

IB_SOURCES = ("ibstat", "ibv_devinfo", "ibstatus")
OK_STATES = ("Active", "ActiveDefer")
RATE_TOL = knowledge.IB_RATE_REL_TOL

# CA type (PCI device id as ibstat prints it) -> (model, top InfiniBand rate in Gb/s; None: Ethernet
# only). VFs (odd ids) report their PF's link. ConnectX-4 Lx / 6 Lx / 6 Dx are Ethernet-only parts.
HCA_MODELS: dict[str, tuple[str, float | None]] = {
    "MT4099": ("ConnectX-3", 56.0),
    "MT4103": ("ConnectX-3 Pro", 56.0),
    "MT4113": ("Connect-IB", 56.0),
    "MT4115": ("ConnectX-4", 100.0),
    "MT4116": ("ConnectX-4 VF", 100.0),
    "MT4117": ("ConnectX-4 Lx", None),
    "MT4119": ("ConnectX-5", 100.0),
    "MT4120": ("ConnectX-5 VF", 100.0),
    "MT4121": ("ConnectX-5 Ex", 100.0),
    "MT4123": ("ConnectX-6", 200.0),
    "MT4124": ("ConnectX-6 VF", 200.0),
    "MT4125": ("ConnectX-6 Dx", None),
    "MT4127": ("ConnectX-6 Lx", None),
    "MT4129": ("ConnectX-7", 400.0),
    "MT4131": ("ConnectX-8", 800.0),
}
# Rates below the knowledge table (SDR..FDR: per-lane speeds it does not list), 4x links.
_LEGACY_RATE_NAMES = {10.0: "SDR", 20.0: "DDR", 40.0: "QDR/FDR10", 56.0: "FDR"}


def rate_name(rate_gbps: float | None) -> str:
    """400 -> "NDR", 56 -> "FDR", 25 -> "25G"; "unknown" for None."""
    if rate_gbps is None:
        return "unknown"
    name = knowledge.ib_rate_name(rate_gbps) or _LEGACY_RATE_NAMES.get(float(rate_gbps))
    return name or f"{rate_gbps:g}G"


def hca_model(ca_type: str | None) -> str | None:
    return HCA_MODELS.get(ca_type or "", (None, None))[0]


def _num(x: float) -> str:
    return f"{x:g}"


def _gbyte(gbit: float) -> str:
    return _num(round(knowledge.gbit_to_gbyte(gbit), 2))


# -- the ports, joined with their NIC's facts --------------------------------------------------

def _ports(topology) -> list[dict[str, Any]]:
    """Every HCA port (switches left out) as {nic, name, port, state, ..., ca_type, firmware, ...}."""
    out = []
    for nic, p in topology.ib_ports():
        facts = topology.node(nic)
        if facts.get("node_type") not in (None, "CA"):
            continue
        out.append({**p, "nic": nic, "name": facts.get("name") or nic.split(":", 1)[1],
                    "ca_type": facts.get("ca_type"), "firmware": facts.get("firmware"),
                    "system_guid": facts.get("system_guid"), "nic_sources": facts.get("sources") or []})
    return out


def _label(p: dict[str, Any]) -> str:
    return f"{p['name']} port {p['port']}"


def _is_active(p: dict[str, Any]) -> bool:
    return p.get("state") in OK_STATES and p.get("physical_state") in (None, "LinkUp")


def _evidence(ports: Iterable[dict[str, Any]]) -> list:
    out = []
    for p in ports:
        for ref in (p.get("sources") or p.get("nic_sources") or [])[:1]:
            if ref not in out:
                out.append(ref)
    return out


def _names(ports: Iterable[dict[str, Any]]) -> str:
    return ", ".join(_label(p) for p in ports)


# -- IB001 -------------------------------------------------------------------------------------

def _down_meaning(state: str | None, phys: str | None, link_layer: str | None) -> str:
    eth = link_layer == "Ethernet"
    if phys == "Disabled":
        return "the port is disabled (administratively, or no cable / module detected): it carries no traffic"
    if phys == "Polling":
        return "no link partner answers: cable unplugged or faulty, or the switch port is down"
    if phys == "LinkUp":
        if eth:
            return "the physical link is up but the port is not active: check the netdev (ip link) and the RoCE setup"
        return ("the physical link is up but the subnet manager has not activated the port (no LID): "
                "no SM running, or the SM does not serve this port / virtual function")
    if phys in ("PortConfigurationTraining", "LinkErrorRecovery", "Sleep", "PhyTest"):
        return "the link is not trained: check the cable, the transceiver and the switch port"
    if phys is None:
        return "the port is not active (this tool does not print the physical state: run ibstat or ibv_devinfo -v)"
    return "the port cannot carry traffic until it is Active / LinkUp"


def _odd_card(p: dict[str, Any], ports: list[dict[str, Any]]) -> str:
    """Why a disabled port looks like an extra card, not a compute rail ("" when it does not): its
    HCA model has no Active port on the host and fewer ports than the model whose ports are Active
    (a B300's seven disabled ConnectX-8 next to four Active ConnectX-7 are the rails, not extras)."""
    model = p.get("ca_type")
    if not model:
        return ""
    active: dict[str, int] = defaultdict(int)
    count: dict[str, int] = defaultdict(int)
    for q in ports:
        if q.get("ca_type"):
            count[q["ca_type"]] += 1
            active[q["ca_type"]] += _is_active(q)
    active = {m: n for m, n in active.items() if n}
    if model in active or not active:
        return ""
    main, n_main = max(active.items(), key=lambda kv: kv[1])
    if count[model] >= n_main:
        return ""
    name, main_name = hca_model(model) or model, hca_model(main) or main
    what = f"the host's only {name} ({model}) port" if count[model] == 1 else \
        f"one of {count[model]} {name} ({model}) ports, none Active,"
    return f"{what} next to {n_main} Active {main_name} ({main}) port(s)"


@check("IB001")
def ib001(topology, params, profile=None):
    ports = _ports(topology)
    by_card: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in ports:
        by_card[p.get("system_guid") or p["nic"]].append(p)
        if p.get("system_guid"):
            by_card[p["nic"]].append(p)
    for p in ports:
        state, phys = p.get("state"), p.get("physical_state")
        if state is None and phys is None:
            continue
        if state in (None, *OK_STATES) and phys in (None, "LinkUp"):
            continue
        siblings = [q for key in {p.get("system_guid") or p["nic"], p["nic"]} for q in by_card[key] if q is not p]
        disabled = phys == "Disabled" and state in (None, "Down")
        spare = disabled and any(_is_active(q) for q in siblings)
        odd = disabled and not spare and _odd_card(p, ports)
        meaning = _down_meaning(state, phys, p.get("link_layer"))
        if spare:
            active = sorted({_label(q) for q in siblings if _is_active(q)})
            meaning += f"; another port of the same card ({', '.join(active)}) is Active, so this is an unused " \
                       "second port: exclude it from NCCL_IB_HCA, or cable it if it should be a rail"
        elif odd:
            meaning += f"; it is {odd}: likely a storage/management or spare card rather than a compute rail; " \
                       "exclude it from NCCL_IB_HCA (or cable it if it should carry jobs)"
        spare = spare or bool(odd)
        yield hit(
            [p["nic"]], evidence=_evidence([p]),
            severity=Severity.WARNING if spare else None,
            expectation="every HCA port Active / LinkUp" + (" (unused port of a multi-port card)" if spare else ""),
            nic=p["name"], port=p["port"], state=state or "unknown", physical_state=phys or "not printed",
            link_layer=p.get("link_layer") or "link layer unknown", meaning=meaning,
        )


# -- IB002 -------------------------------------------------------------------------------------

@check("IB002")
def ib002(topology, params, profile=None):
    active = [p for p in _ports(topology) if _is_active(p) and p.get("rate_gbps")]
    site = float(params.get("expected_rate_gbps") or 0)
    prof_rate = getattr(profile, "nic_rate_gbps", None) if profile is not None else None
    prof_layer = getattr(profile, "link_layer", None) if profile is not None else None
    best: dict[str, dict[str, Any]] = {}
    for p in active:
        layer = p.get("link_layer")
        if layer and (layer not in best or p["rate_gbps"] > best[layer]["rate_gbps"]):
            best[layer] = p
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for p in active:
        rate, layer = p["rate_gbps"], p.get("link_layer")
        verdict = None
        if site > 0 and (prof_layer is None or layer in (None, prof_layer)):  # unknown layer: judged too
            verdict = (site, "the site config (expected_rate_gbps)", Severity.ERROR, "params.expected_rate_gbps")
        elif prof_rate and layer is not None and (prof_layer is None or layer == prof_layer):
            verdict = (float(prof_rate), f"profile {profile.name} (nic_rate_gbps)", Severity.ERROR,
                       f"profile {profile.name}: nic_rate_gbps = {_num(float(prof_rate))}")
        if verdict is None or rate >= verdict[0] * (1 - RATE_TOL):
            verdict = None
            peer = best.get(layer) if layer else None
            if peer is not None and rate < peer["rate_gbps"] * (1 - RATE_TOL):
                same = peer.get("ca_type") is not None and peer.get("ca_type") == p.get("ca_type")
                what = f"the best {layer} port on the host ({_label(peer)}" + (", same HCA model)" if same else ")")
                verdict = (peer["rate_gbps"], what, Severity.ERROR if same else Severity.WARNING,
                           f"best peer port of the same link layer: {_label(peer)}")
            elif layer == "InfiniBand":
                model, top = HCA_MODELS.get(p.get("ca_type") or "", (None, None))
                if top and rate < top * (1 - RATE_TOL):
                    verdict = (top, f"what a {model} ({p['ca_type']}) links at on InfiniBand", Severity.WARNING,
                               f"HCA model capability: {model} {rate_name(top)} {_num(top)} Gb/s")
        if verdict is not None:
            groups[(rate, verdict)].append(p)
    for (rate, (expected, basis, severity, expectation)), ps in groups.items():
        yield hit(
            [p["nic"] for p in ps], evidence=_evidence(ps), severity=severity, expectation=expectation,
            ports=_names(ps), rate_gbps=_num(rate), rate_name=rate_name(rate), expected_gbps=_num(expected),
            expected_name=rate_name(expected), basis=basis, rate_gbyte_s=_gbyte(rate),
            expected_gbyte_s=_gbyte(expected),
        )


# -- IB003 -------------------------------------------------------------------------------------

def _nccl_mix(nccl_debug) -> Any:
    """IB003 from an NCCL log alone: its "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_2:1/IB" line lists
    RoCE and InfiniBand devices together (no ibstat/ibv_devinfo to read the ports from)."""
    devices = [d for d in getattr(nccl_debug, "net_devices", ()) if d.kind == "ib"]
    roce = [d for d in devices if d.link_layer == "RoCE"]
    ib = [d for d in devices if d.link_layer == "IB"]
    if not (roce and ib):
        return None
    label = lambda ds: ", ".join(f"{d.name}:{d.port}" if d.port is not None else d.name for d in ds)  # noqa: E731
    return hit([f"nic:{d.name}" for d in roce], evidence=[Evidence("nccl_debug", None, None)],
               expectation="one link layer among the devices NCCL uses",
               ethernet=label(roce), infiniband=label(ib),
               detail="NCCL's NET/IB device list mixes RoCE and InfiniBand devices: rings that pair a RoCE "
                      "rail with an IB rail cannot connect or run at the slower rate; pin the compute HCAs "
                      "with NCCL_IB_HCA")


@check("IB003")
def ib003(topology, params, profile=None, nccl_debug=None):
    active = [p for p in _ports(topology) if _is_active(p) and p.get("link_layer")]
    ib = [p for p in active if p["link_layer"] == "InfiniBand"]
    eth = [p for p in active if p["link_layer"] == "Ethernet"]
    if not active and nccl_debug is not None:  # no IB tool output: what NCCL listed is the evidence
        mixed = _nccl_mix(nccl_debug)
        if mixed is not None:
            yield mixed
        return
    if not eth:
        return
    prof_layer = getattr(profile, "link_layer", None) if profile is not None else None
    if prof_layer == "InfiniBand":
        nics = getattr(profile, "nics", None)
        if nics and len(ib) >= nics:
            return  # the compute rails are there; the Ethernet ports are storage / management
        have = f"{len(ib)} InfiniBand port(s)" + (f" of the {nics} compute NICs expected" if nics else "")
        yield hit([p["nic"] for p in eth], evidence=_evidence(eth), severity=Severity.ERROR,
                  expectation=f"profile {profile.name}: link_layer = InfiniBand",
                  ethernet=_names(eth), infiniband=_names(ib) or "none",
                  detail=f"profile {profile.name} expects InfiniBand and the host has {have}: these Ethernet "
                         "ports run RoCE (~2-5 us, congestion control by ECN/PFC), not native IB")
        return
    if ib:
        yield hit([p["nic"] for p in eth], evidence=_evidence(eth + ib),
                  expectation="one link layer among a host's compute NICs",
                  ethernet=_names(eth), infiniband=_names(ib),
                  detail="IB and RoCE mixed on one host: NCCL lists both kinds of device and may stripe across "
                         "rails that cannot reach each other; pin the compute HCAs with NCCL_IB_HCA")


# -- IB004 -------------------------------------------------------------------------------------

def _split(items: list[tuple[Any, dict[str, Any]]]) -> tuple[str, list[dict[str, Any]]]:
    """("a on x, y; b on z", the members outside the largest group) for (value, member) pairs."""
    by_value: dict[Any, list[dict[str, Any]]] = defaultdict(list)
    for value, m in items:
        by_value[value].append(m)
    # The largest group first; on a tie the newer firmware / higher rate, so the odd one is the lagging one.
    ordered = sorted(by_value.items(), key=lambda kv: (-len(kv[1]), [-int(n) for n in re.findall(r"\d+", str(kv[0]))]))
    text = "; ".join(f"{v} on {', '.join(sorted({m['name'] for m in ms}))}" for v, ms in ordered)
    return text, [m for _, ms in ordered[1:] for m in ms]


@check("IB004")
def ib004(topology, params):
    ports = _ports(topology)
    cas: dict[str, dict[str, Any]] = {}
    for p in ports:
        cas.setdefault(p["nic"], p)
    for nic in topology.nics():  # CAs without ports still carry firmware
        facts = topology.node(nic)
        if nic not in cas and facts.get("ca_type") and facts.get("node_type") in (None, "CA"):
            cas[nic] = {"nic": nic, "name": facts.get("name") or nic, "ca_type": facts["ca_type"],
                        "firmware": facts.get("firmware"), "nic_sources": facts.get("sources") or []}
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cas.values():
        if c.get("ca_type"):
            by_type[c["ca_type"]].append(c)
    for ca_type, members in sorted(by_type.items()):
        model = hca_model(ca_type)
        label = f"{model} ({ca_type})" if model else ca_type
        fw = [(c["firmware"], c) for c in members if c.get("firmware")]
        if len({v for v, _ in fw}) > 1:
            text, odd = _split(fw)
            yield hit([c["nic"] for c in odd], evidence=[r for c in odd for r in c["nic_sources"][:1]],
                      expectation=f"all {label} HCAs on the host alike", hca=label, what="firmware", values=text)
        for layer in ("InfiniBand", "Ethernet"):
            rates = [(f"{_num(p['rate_gbps'])} Gb/s", p) for p in ports
                     if p.get("ca_type") == ca_type and p.get("link_layer") == layer and _is_active(p)
                     and p.get("rate_gbps")]
            if len({v for v, _ in rates}) > 1:
                text, odd = _split(rates)
                yield hit([p["nic"] for p in odd], evidence=_evidence(odd),
                          expectation=f"all {label} HCAs on the host alike",
                          hca=label, what=f"{layer} rate of the Active ports", values=text)


# -- IB005 -------------------------------------------------------------------------------------

_STAT_FAILED = re.compile(r"stat of IB device '([^']+)' failed")
_NO_DEVICE = re.compile(r"No IB devices found|sys files not found|No devices|Failed to get IB devices list", re.I)
_PROVIDER = re.compile(r"libibverbs: Warning: couldn't load driver '([^']+)'")


@check("IB005")
def ib005(topology, params):
    have_ports = {nic for nic, _ in topology.ib_ports()}
    for obs in topology.observations():
        source = obs.get("source")
        if source not in IB_SOURCES:
            continue
        errors = obs.get("errors") or []
        providers = [m.group(1) for e in errors if (m := _PROVIDER.search(e.get("text", "")))]
        for e in errors:
            text = e.get("text", "")
            ev = [{"source": source, "file": obs.get("file"), "line_no": e.get("line_no")}]
            m = _STAT_FAILED.search(text)
            if m:
                dev = m.group(1)
                seen = f"nic:{dev}" in have_ports
                meaning = (f"{source} stopped at {dev}: that device and any listed after it are missing from its "
                           "output (often an Ethernet-only or accelerated-networking device without an IB port)")
                if seen:
                    meaning += f"; another block in this input reports {dev}'s ports"
                yield hit([f"nic:{dev}"], evidence=ev, severity=Severity.INFO if seen else Severity.WARNING,
                          expectation="the IB tool lists every device", tool=source, line_no=e.get("line_no"),
                          text=text, meaning=meaning)
            elif _NO_DEVICE.search(text):
                meaning = ("no RDMA device is registered (driver not loaded, or the HCA failed to initialise): "
                           "NCCL prints 'NET/IB : No device found' and falls back to NET/Socket (TCP, 50-100 us)")
                if providers:
                    meaning += f"; libibverbs could not load {', '.join(providers)} (rdma-core provider missing)"
                yield hit([topology.host() or "host:local"], evidence=ev,
                          severity=Severity.WARNING if have_ports else None,
                          expectation="an RDMA device on a host that runs multi-node jobs",
                          tool=source, line_no=e.get("line_no"), text=text, meaning=meaning)
            elif _PROVIDER.search(text):
                continue  # folded into the no-device finding; alone it is a harmless stale provider
            else:
                yield hit([topology.host() or "host:local"], evidence=ev, severity=Severity.WARNING,
                          expectation="the IB tool runs without errors", tool=source, line_no=e.get("line_no"),
                          text=text, meaning="the tool reported a failure: its output may be incomplete")
