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
- Software RDMA devices (Soft RoCE rxe, Soft iWARP siw; the model's `software_rdma`) are no HCAs:
  IB001-IB004 leave them out (a disabled rxe port is no HCA port down, an rxe is no RoCE rail).
- IB003: all-Ethernet hosts are RoCE clusters and pass unless the profile says InfiniBand.
- IB004 compares the CAs of one model (CA type), and among them only those of one board_id (PSID) when
  the host has several boards of that model: each board variant has its own firmware line.
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

from .. import catalogues, knowledge
from ..parsers.ib_records import interface_id
from ..engine import Evidence, Severity, check, hit, when

IB_SOURCES = ("ibstat", "ibv_devinfo", "ibstatus", "iblinkinfo", "ibnetdiscover")
OK_STATES = ("Active", "ActiveDefer")
RATE_TOL = knowledge.IB_RATE_REL_TOL

# The legacy rate names: hardware facts, from knowledge/ib.toml (HCA models: knowledge.hca_models()).
_LEGACY_RATE_NAMES = knowledge.IB_LEGACY_RATE_NAMES


def rate_name(rate_gbps: float | None) -> str:
    """400 -> "NDR", 56 -> "FDR", 25 -> "25G"; "unknown" for None."""
    if rate_gbps is None:
        return "unknown"
    name = knowledge.ib_rate_name(rate_gbps) or _LEGACY_RATE_NAMES.get(float(rate_gbps))
    return name or f"{rate_gbps:g}G"


def hca_model(ca_type: str | None) -> str | None:
    return knowledge.hca_model(ca_type)


def _num(x: float) -> str:
    return f"{x:g}"


def _gbyte(gbit: float) -> str:
    return _num(round(knowledge.gbit_to_gbyte(gbit), 2))


# -- the ports, joined with their NIC's facts --------------------------------------------------

def _ports(topology) -> list[dict[str, Any]]:
    """Every HCA port (switches and software RDMA devices left out) as {nic, name, port, state, ...,
    ca_type, firmware, ...}."""
    out = []
    for nic, p in topology.ib_ports():
        facts = topology.node(nic)
        if facts.get("node_type") not in (None, "CA") or facts.get("software_rdma"):
            continue
        out.append({**p, "nic": nic, "name": facts.get("name") or nic.split(":", 1)[1],
                    "ca_type": facts.get("ca_type"), "firmware": facts.get("firmware"),
                    "system_guid": facts.get("system_guid"), "node_guid": facts.get("node_guid"),
                    "nic_sources": facts.get("sources") or [], "board_id": facts.get("board_id")})
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

_UNTRAINED = ("PortConfigurationTraining", "LinkErrorRecovery", "Sleep", "PhyTest")


def _lone(odd: dict[str, Any] | None) -> bool:
    return (odd or {}).get("card_ports") == 1


def _down_expectation(spare: bool, expected: bool) -> str:
    if expected:
        return "every HCA port Active / LinkUp (the site config or the profile expects this port)"
    return "every HCA port Active / LinkUp" + (" (unused port of a multi-port card)" if spare else "")


def _down_variant(phys: str | None, link_layer: str | None) -> str:
    """The IB001 message for a port's physical state (what stopped it)."""
    if phys == "Disabled":
        return "disabled"
    if phys == "Polling":
        return "polling"
    if phys == "LinkUp":
        return "linkup_ethernet" if link_layer == "Ethernet" else "linkup"
    if phys in _UNTRAINED:
        return "untrained"
    if phys is None:
        return "no_physical_state"
    return "default"


def _ports_by_model(ports: list[dict[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """(ports per HCA model, Active ports per model that has any) over the host."""
    active: dict[str, int] = defaultdict(int)
    count: dict[str, int] = defaultdict(int)
    for q in ports:
        if q.get("ca_type"):
            count[q["ca_type"]] += 1
            active[q["ca_type"]] += _is_active(q)
    return count, {m: n for m, n in active.items() if n}


def _odd_card(p: dict[str, Any], ports: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Why a disabled port looks like an extra card, not a compute rail (None when it does not): its
    HCA model has no Active port on the host and fewer ports than the model whose ports are Active
    (a B300's seven disabled ConnectX-8 next to four Active ConnectX-7 are the rails, not extras)."""
    model = p.get("ca_type")
    if not model:
        return None
    count, active = _ports_by_model(ports)
    if model in active or not active:
        return None
    main, n_main = max(active.items(), key=lambda kv: kv[1])
    if count[model] >= n_main:
        return None
    return {"card": hca_model(model) or model, "card_type": model, "card_ports": count[model],
            "main_card": hca_model(main) or main, "main_type": main, "main_ports": n_main}


_NULL_GUIDS = (None, "0x0000000000000000", "0xffffffffffffffff")


def _guid_pair(p: dict[str, Any]) -> str | None:
    """The card of a port whose tool printed no System image GUID, from a GUID that proves it: the
    node / port GUID (or the GID's interface id) with its lowest bit cleared, since the two PFs of a
    dual-port card are numbered ...26 / ...27 (mlx5_0 / mlx5_1 are paired only when the GUIDs say so)."""
    for raw in (p.get("node_guid"), p.get("port_guid"), p.get("default_gid")):
        iid = interface_id(raw)
        if iid is not None and f"0x{iid}" not in _NULL_GUIDS and iid[6:10] != "fffe":
            return f"guid-pair:0x{int(iid, 16) & ~1:016x}"
    return None


def _card_key(p: dict[str, Any]) -> str:
    """What identifies a port's card: its System image GUID (an all-zero one, as some VFs print, says
    nothing), else a GUID pair, else its NIC."""
    guid = p.get("system_guid")
    if guid not in _NULL_GUIDS:
        return guid
    return _guid_pair(p) or p["nic"]


def _cards(ports: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Ports by card (see _card_key), and by NIC too."""
    by_card: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in ports:
        key = _card_key(p)
        by_card[key].append(p)
        if key != p["nic"]:
            by_card[p["nic"]].append(p)
    return by_card


def _is_down(p: dict[str, Any]) -> bool:
    state, phys = p.get("state"), p.get("physical_state")
    if state is None and phys is None:
        return False  # neither state known: nothing to judge
    return not (state in (None, *OK_STATES) and phys in (None, "LinkUp"))


@check("IB001")
def ib001(topology, params, profile=None):
    ports = _ports(topology)
    by_card = _cards(ports)
    wanted = _expected_ports(params, profile, ports)
    for p in ports:
        if _is_down(p):
            yield _down_hit(p, ports, by_card, wanted(p))


def _expected_ports(params, profile, ports: list[dict[str, Any]]):
    """Whether the site config or the profile expects a port to carry traffic (then a spare-looking
    port is still an error): the site's `expected_ports` ("mlx5_1" or "mlx5_1/1"), or a profile whose
    compute NICs (`nics`) are not all there as Active ports of its link layer."""
    listed = {str(x) for x in (params.get("expected_ports") or [])}
    nics = getattr(profile, "nics", None) if profile is not None else None
    layer = getattr(profile, "link_layer", None) if profile is not None else None
    active = sum(1 for q in ports if _is_active(q) and (layer is None or q.get("link_layer") in (None, layer)))
    short = bool(nics) and active < nics
    return lambda p: (p["name"] in listed or f"{p['name']}/{p['port']}" in listed
                      or (short and (layer is None or p.get("link_layer") in (None, layer))))


def _spare(p: dict[str, Any], ports: list[dict[str, Any]], by_card: dict[str, list[dict[str, Any]]]):
    """Why a Down port looks unused by design: (the Active ports of its card, the facts of a lone card
    of another model beside the Active rails); ([], None) when neither. A port counts when it is
    Down / Disabled, or Down with no physical state printed (plain ibv_devinfo): the same port reads
    the same whichever tool printed it. Down / Polling (enabled, looking for a peer) does not."""
    if p.get("physical_state") not in ("Disabled", None) or p.get("state") not in (None, "Down"):
        return [], None
    siblings = [q for key in {_card_key(p), p["nic"]} for q in by_card[key] if q is not p]
    active = sorted({_label(q) for q in siblings if _is_active(q)})
    return active, (None if active else _odd_card(p, ports))


def _down_hit(p: dict[str, Any], ports: list[dict[str, Any]], by_card: dict[str, list[dict[str, Any]]],
              expected: bool = False):
    """A port not Active / LinkUp: an error, or a warning for the unused port of a card whose other
    port is Active, or of a lone card of another model beside the Active rails, unless the site
    config or the profile expects the port."""
    active, odd = _spare(p, ports, by_card)
    looks_spare = bool(active) or odd is not None
    expected = expected and looks_spare  # only a spare-looking port needs saying so
    spare = looks_spare and not expected
    lone = _lone(odd)
    return hit(
        [p["nic"]], evidence=_evidence([p]), severity=Severity.WARNING if spare else None,
        expectation=_down_expectation(spare, expected),
        variant=_down_variant(p.get("physical_state"), p.get("link_layer")),
        notes=when(spare=active and not expected, odd_only=odd and lone and not expected,
                   odd_one_of=odd and not lone and not expected, expected=expected),
        nic=p["name"], port=p["port"], state=p.get("state") or "unknown",
        physical_state=p.get("physical_state") or "not printed",
        link_layer=p.get("link_layer") or "link layer unknown", siblings=", ".join(active), **(odd or {}),
    )


# -- IB002 -------------------------------------------------------------------------------------

def _best_ports(active: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The fastest Active port of each link layer."""
    best: dict[str, dict[str, Any]] = {}
    for p in active:
        layer = p.get("link_layer")
        if layer and (layer not in best or p["rate_gbps"] > best[layer]["rate_gbps"]):
            best[layer] = p
    return best


def _facts(**facts: Any) -> tuple:
    """The message facts of a verdict (its variant among them), hashable: ports group by verdict."""
    return tuple(facts.items())


def _configured(p: dict[str, Any], site: float, profile) -> tuple | None:
    """What the site config or the profile says this port should link at, when it says so for its layer:
    (expected Gb/s, severity, expectation, message facts)."""
    layer = p.get("link_layer")
    prof_rate = getattr(profile, "nic_rate_gbps", None) if profile is not None else None
    prof_layer = getattr(profile, "link_layer", None) if profile is not None else None
    if site > 0 and (prof_layer is None or layer in (None, prof_layer)):  # unknown layer: judged too
        return site, Severity.ERROR, "params.expected_rate_gbps", _facts(variant="site")
    if prof_rate and layer is not None and (prof_layer is None or layer == prof_layer):
        return (float(prof_rate), Severity.ERROR, f"profile {profile.name}: nic_rate_gbps = {_num(float(prof_rate))}",
                _facts(variant="profile", profile=profile.name))
    return None


def _observed(p: dict[str, Any], best: dict[str, dict[str, Any]]) -> tuple | None:
    """What the host itself says this port should link at: the best Active port of its link layer (error
    when the same HCA model), else for InfiniBand what its HCA model links at (warning)."""
    rate, layer = p["rate_gbps"], p.get("link_layer")
    peer = best.get(layer) if layer else None
    if peer is not None and rate < peer["rate_gbps"] * (1 - RATE_TOL):
        same = peer.get("ca_type") is not None and peer.get("ca_type") == p.get("ca_type")
        return (peer["rate_gbps"], Severity.ERROR if same else Severity.WARNING,
                f"best peer port of the same link layer: {_label(peer)}",
                _facts(variant="peer_same_model" if same else "default", layer=layer, peer=_label(peer)))
    if layer != "InfiniBand":
        return None
    return _against_sku(p, rate)


def _against_sku(p: dict[str, Any], rate: float) -> tuple | None:
    """An InfiniBand port against its board: the native rate of the SKU its PSID names (warning below it),
    else the model's top rate (warning), except at the native rate of a lower SKU of that model
    (ConnectX-6 HDR100 at 100, ConnectX-3 QDR at 40): info, by design if the board is that SKU."""
    model, top = knowledge.hca_model(p.get("ca_type")), knowledge.hca_top_gbit_s(p.get("ca_type"))
    sku = knowledge.hca_sku(board_id=p.get("board_id"))
    if sku is not None:
        if rate >= sku.native_gbit_s * (1 - RATE_TOL):
            return None
        return (sku.native_gbit_s, Severity.WARNING, f"board {sku.part} ({p.get('board_id')}): native "
                f"{rate_name(sku.native_gbit_s)} {_num(sku.native_gbit_s)} Gb/s",
                _facts(variant="sku_native", model=model, ca_type=p["ca_type"], part=sku.part, psid=p.get("board_id")))
    if not top or rate >= top * (1 - RATE_TOL):
        return None
    if any(abs(rate - lower) <= lower * RATE_TOL for lower in knowledge.hca_lower_skus(model)):
        return (top, Severity.INFO, f"HCA model {model}: SKUs at {_num(top)} and at {_num(rate)} Gb/s natively",
                _facts(variant="lower_sku", model=model, ca_type=p["ca_type"]))
    return (top, Severity.WARNING, f"HCA model capability: {model} {rate_name(top)} {_num(top)} Gb/s",
            _facts(variant="model_top", model=model, ca_type=p["ca_type"]))


def _verdict(p: dict[str, Any], site: float, profile, best: dict[str, dict[str, Any]]) -> tuple | None:
    """The first expectation this port falls short of (configured, else observed), or None."""
    verdict = _configured(p, site, profile)
    if verdict is not None and p["rate_gbps"] < verdict[0] * (1 - RATE_TOL):
        return verdict
    return _observed(p, best)


@check("IB002")
def ib002(topology, params, profile=None):
    active = [p for p in _ports(topology) if _is_active(p) and p.get("rate_gbps")]
    site = float(params.get("expected_rate_gbps") or 0)
    best = _best_ports(active)
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for p in active:
        verdict = _verdict(p, site, profile, best)
        if verdict is not None:
            groups[(p["rate_gbps"], verdict)].append(p)
    for (rate, (expected, severity, expectation, facts)), ps in groups.items():
        yield hit(
            [p["nic"] for p in ps], evidence=_evidence(ps), severity=severity, expectation=expectation,
            ports=_names(ps), rate_gbps=_num(rate), rate_name=rate_name(rate),
            expected_gbps=_num(expected), expected_name=rate_name(expected), rate_gbyte_s=_gbyte(rate),
            expected_gbyte_s=_gbyte(expected), **dict(facts),
        )


# -- IB003 -------------------------------------------------------------------------------------

def _nccl_label(devices) -> str:
    return ", ".join(f"{d.name}:{d.port}" if d.port is not None else d.name for d in devices)


def _nccl_mix(nccl_debug, profile=None) -> Any:
    """IB003 from an NCCL log alone: its "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_2:1/IB" line lists
    RoCE and InfiniBand devices together (no ibstat/ibv_devinfo to read the ports from), or lists only
    RoCE devices where the profile (given or detected) says InfiniBand."""
    devices = [d for d in getattr(nccl_debug, "net_devices", ()) if d.kind == "ib"]
    roce = [d for d in devices if d.link_layer == "RoCE"]
    ib = [d for d in devices if d.link_layer == "IB"]
    if roce and not ib and getattr(profile, "link_layer", None) == "InfiniBand":
        return hit([f"nic:{d.name}" for d in roce], evidence=[Evidence("nccl_debug", None, None)],
                   severity=Severity.ERROR, variant="nccl_profile_infiniband",
                   expectation=f"profile {profile.name}: link_layer = InfiniBand",
                   ethernet=_nccl_label(roce), profile=profile.name)
    if not (roce and ib):
        return None
    return hit([f"nic:{d.name}" for d in roce], evidence=[Evidence("nccl_debug", None, None)],
               expectation="one link layer among the devices NCCL uses", variant="nccl_mix",
               ethernet=_nccl_label(roce), infiniband=_nccl_label(ib))


def _profile_wants_ib(profile, ib: list[dict[str, Any]], eth: list[dict[str, Any]]):
    """Ethernet ports on a host whose profile says InfiniBand: an error, unless the profile's compute
    NICs are all there as InfiniBand ports (then the Ethernet ones are storage / management)."""
    nics = getattr(profile, "nics", None)
    if nics and len(ib) >= nics:
        return None
    return hit([p["nic"] for p in eth], evidence=_evidence(eth), severity=Severity.ERROR,
               expectation=f"profile {profile.name}: link_layer = InfiniBand", variant="profile_infiniband",
               notes=when(compute_nics=nics), ethernet=_names(eth), infiniband=_names(ib) or "none",
               profile=profile.name, ib_ports=len(ib), nics=nics)


@check("IB003")
def ib003(topology, params, profile=None, nccl_debug=None):
    active = [p for p in _ports(topology) if _is_active(p) and p.get("link_layer")]
    ib = [p for p in active if p["link_layer"] == "InfiniBand"]
    eth = [p for p in active if p["link_layer"] == "Ethernet"]
    if not active and nccl_debug is not None:  # no IB tool output: what NCCL listed is the evidence
        return _nccl_mix(nccl_debug, profile)
    if not eth:
        return None
    if getattr(profile, "link_layer", None) == "InfiniBand":
        return _profile_wants_ib(profile, ib, eth)
    if ib:
        return hit([p["nic"] for p in eth], evidence=_evidence(eth + ib),
                   expectation="one link layer among a host's compute NICs",
                   ethernet=_names(eth), infiniband=_names(ib))
    return None


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


def _cas(topology, ports: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The host's CAs (first port of each, or the NIC's facts for a CA without ports) by CA type."""
    cas: dict[str, dict[str, Any]] = {}
    for p in ports:
        cas.setdefault(p["nic"], p)
    for nic in topology.nics():  # CAs without ports still carry firmware
        facts = topology.node(nic)
        if (nic not in cas and facts.get("ca_type") and facts.get("node_type") in (None, "CA")
                and not facts.get("software_rdma")):
            cas[nic] = {"nic": nic, "name": facts.get("name") or nic, "ca_type": facts["ca_type"],
                        "firmware": facts.get("firmware"), "nic_sources": facts.get("sources") or []}
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cas.values():
        if c.get("ca_type"):
            by_type[c["ca_type"]].append({**c, "board_id": topology.node(c["nic"]).get("board_id")})
    return by_type


def _boards(members: list[dict[str, Any]]) -> list[tuple[str | None, list[dict[str, Any]]]]:
    """The CAs of one model as the sets compared with each other: one set when at most one board_id (PSID)
    is known among them (a CA whose board is unknown is taken to be that board); else one set per
    board_id, the CAs of unknown board a set of their own (a different PSID is a different board variant
    with its own firmware line: its version is no lag behind the other board's)."""
    known = sorted({c["board_id"] for c in members if c.get("board_id")})
    if len(known) <= 1:
        return [(None, members)]
    sets: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
    for c in members:
        sets[c.get("board_id")].append(c)
    return sorted(sets.items(), key=lambda kv: (kv[0] is None, kv[0] or ""))


def _layer_rates(ports: list[dict[str, Any]], nics: set[str], layer: str) -> list[tuple[str, dict[str, Any]]]:
    return [(f"{_num(p['rate_gbps'])} Gb/s", p) for p in ports
            if p["nic"] in nics and p.get("link_layer") == layer and _is_active(p) and p.get("rate_gbps")]


def _board_label(model: str | None, ca_type: str, board: str | None) -> str:
    """"ConnectX-7 (MT4129)", "ConnectX-7 (MT4129, board MT_0000000838)" when boards are told apart."""
    board_text = f"board {board}" if board is not None else None
    if model:
        return f"{model} ({', '.join(x for x in (ca_type, board_text) if x)})"
    return f"{ca_type} ({board_text})" if board_text else ca_type


def _differences(ports: list[dict[str, Any]], members: list[dict[str, Any]], label: str):
    """IB004's hits within one compared set of CAs: firmware, then the Active rate of each link layer."""
    expectation = f"all {label} HCAs on the host alike"
    fw = [(c["firmware"], c) for c in members if c.get("firmware")]
    if len({v for v, _ in fw}) > 1:
        text, odd = _split(fw)
        yield hit([c["nic"] for c in odd], evidence=[r for c in odd for r in c["nic_sources"][:1]],
                  expectation=expectation, hca=label, values=text)
    nics = {c["nic"] for c in members}
    for layer in ("InfiniBand", "Ethernet"):
        rates = _layer_rates(ports, nics, layer)
        if len({v for v, _ in rates}) > 1:
            text, odd = _split(rates)
            yield hit([p["nic"] for p in odd], evidence=_evidence(odd), expectation=expectation,
                      variant="rate", hca=label, layer=layer, values=text)


@check("IB004")
def ib004(topology, params):
    ports = _ports(topology)
    for ca_type, all_members in sorted(_cas(topology, ports).items()):
        model = hca_model(ca_type)
        for board, members in _boards(all_members):
            yield from _differences(ports, members, _board_label(model, ca_type, board))
    yield from _mix(ports)


def _families(ports: list[dict[str, Any]]):
    """HCA models with Active ports on the host, when there are two or more: a finding naming the
    models outside the largest group to leave out of NCCL_IB_HCA (warning when they share the main
    model's link layer, so NCCL would use them by default; info otherwise)."""
    by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in ports:
        if _is_active(p) and p.get("ca_type"):
            by_model[p["ca_type"]].append(p)
    if len(by_model) < 2:
        return None
    ordered = sorted(by_model.items(), key=_family_rank)
    main_type, main = ordered[0]
    odd = [p for _, ps in ordered[1:] for p in ps]
    return hit([p["nic"] for p in odd], evidence=_evidence(odd),
               severity=Severity.WARNING if _shares_layer(odd, main) else Severity.INFO,
               expectation="one HCA model among a host's Active ports", variant="families",
               main=_model_on(main_type, main), others="; ".join(_model_on(t, ps) for t, ps in ordered[1:]),
               exclude=",".join(sorted({p["name"] for p in odd})))


def _family_rank(item: tuple[str, list[dict[str, Any]]]) -> tuple:
    """The main family first: most Active ports, then one with InfiniBand ports, then the faster."""
    ca_type, ports = item
    ib = any(p.get("link_layer") == "InfiniBand" for p in ports)
    return (-len(ports), not ib, -max(p.get("rate_gbps") or 0 for p in ports), ca_type)


def _shares_layer(odd: list[dict[str, Any]], main: list[dict[str, Any]]) -> bool:
    layers = {p.get("link_layer") for p in main} - {None}
    return any(p.get("link_layer") in layers for p in odd)


def _model_on(ca_type: str, ports: list[dict[str, Any]]) -> str:
    """"ConnectX-7 (MT4129) on mlx5_0, mlx5_1"."""
    model = hca_model(ca_type)
    return (f"{model} ({ca_type})" if model else ca_type) + f" on {', '.join(sorted({p['name'] for p in ports}))}"


def _subnets(ports: list[dict[str, Any]]):
    """Active InfiniBand ports answering to different subnet managers (SM LIDs): different fabrics, or a
    split one. A warning naming the ports outside the largest group to leave out of NCCL_IB_HCA."""
    by_sm: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for p in ports:
        if _is_active(p) and p.get("link_layer") == "InfiniBand" and p.get("sm_lid"):
            by_sm[p["sm_lid"]].append(p)
    if len(by_sm) < 2:
        return None
    ordered = sorted(by_sm.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    odd = [p for _, ps in ordered[1:] for p in ps]
    return hit([p["nic"] for p in odd], evidence=_evidence(odd), severity=Severity.WARNING,
               expectation="every Active InfiniBand port of a host on one subnet", variant="subnets",
               values="; ".join(f"SM lid {sm} on {_names(ps)}" for sm, ps in ordered),
               exclude=",".join(sorted({p["name"] for p in odd})))


def _mix(ports: list[dict[str, Any]]):
    """IB004's host-wide variants: HCA families and subnets mixed among the Active ports."""
    for found in (_families(ports), _subnets(ports)):
        if found is not None:
            yield found


# -- IB005 -------------------------------------------------------------------------------------

_STAT_FAILED = re.compile(r"stat of IB device '([^']+)' failed")
_NO_DEVICE = re.compile(r"No IB devices found|sys files not found|No devices|Failed to get IB devices list", re.I)
_PROVIDER = re.compile(r"libibverbs: Warning: couldn't load driver '([^']+)'")


@check("IB005")
def ib005(topology, params, iblinkinfo=None, ibnetdiscover=None):
    have_ports = {nic for nic, _ in topology.ib_ports()}
    host = topology.host() or "host:local"
    for obs in [*topology.observations(), *_fabric_tool_errors(iblinkinfo, ibnetdiscover)]:
        source = obs.get("source")
        if source not in IB_SOURCES:
            continue
        errors = obs.get("errors") or []
        providers = [m.group(1) for e in errors if (m := _PROVIDER.search(e.get("text", "")))]
        found = [f for f in (_tool_error(e, obs, have_ports, host, providers) for e in _first_per_entry(errors))
                 if f is not None]
        yield from found or _providers_only(errors, obs, have_ports, host)


def _tool_error(e: dict[str, Any], obs: dict[str, Any], have_ports: set[str], host: str, providers: list[str]):
    """One error line of an IB tool as a finding: a device it stopped at, no RDMA device at all, or
    another failure; None for a libibverbs provider warning (folded into the no-device finding; alone
    it is a harmless stale provider)."""
    source, text = obs.get("source"), e.get("text", "")
    facts = dict(evidence=[{"source": source, "file": obs.get("file"), "line_no": e.get("line_no")}],
                 tool=source, line_no=e.get("line_no"), text=text)
    m = _STAT_FAILED.search(text)
    if m:
        seen = f"nic:{m.group(1)}" in have_ports
        return hit([f"nic:{m.group(1)}"], severity=Severity.INFO if seen else Severity.WARNING,
                   expectation="the IB tool lists every device", variant="stopped_at", notes=when(reported=seen),
                   device=m.group(1), **facts)
    if _NO_DEVICE.search(text):
        return hit([host], severity=Severity.WARNING if have_ports else None,
                   expectation="an RDMA device on a host that runs multi-node jobs", variant="no_device",
                   notes=when(providers=providers), providers=", ".join(providers), **facts)
    if _PROVIDER.search(text) or e.get("class") == "tool-missing-module":
        return None
    if e.get("class"):
        return _classified(e, host, facts)
    return hit([host], severity=Severity.WARNING, expectation="the IB tool runs without errors",
               variant="panic" if text.startswith("ibpanic:") else "default", **facts)


def _fabric_tool_errors(iblinkinfo, ibnetdiscover) -> list[dict[str, Any]]:
    """iblinkinfo's and ibnetdiscover's error lines in the shape of the IB tools' observations (those
    two are read as fabric views, not merged into the topology)."""
    out = []
    for source, result in (("iblinkinfo", iblinkinfo), ("ibnetdiscover", ibnetdiscover)):
        errors = getattr(result, "errors", None) or ()
        if errors:
            out.append({"source": source, "cas_listed": len(getattr(result, "nodes", ()) or ()),
                        "errors": [{"line_no": e.line_no, "text": e.text, "class": getattr(e, "class_", None),
                                    "entry": getattr(e, "entry", None), "severity": getattr(e, "severity", None)}
                                   for e in errors]})
    return out


def _first_per_entry(errors: list) -> list:
    """The error lines, a catalogue entry's repeats after its first left out ("Failed to open device"
    once per device the container was not given)."""
    seen: set = set()
    out = []
    for e in errors:
        key = e.get("entry")
        if key is None or key not in seen:
            out.append(e)
        seen.add(key)
    return out


def _providers_only(errors: list, obs: dict[str, Any], have_ports: set[str], host: str) -> list:
    """libibverbs found devices but no userspace provider for them, and the tool listed no device: no
    RDMA device is usable (a container image without the host's providers): the no-device finding."""
    missing = [e for e in errors if e.get("class") == "tool-missing-module"]
    if not missing or obs.get("cas_listed"):
        return []
    e = missing[0]
    facts = dict(evidence=[{"source": obs.get("source"), "file": obs.get("file"), "line_no": e.get("line_no")}],
                 tool=obs.get("source"), line_no=e.get("line_no"), text=e.get("text", ""))
    return [hit([host], severity=Severity.WARNING if have_ports else None,
                expectation="an RDMA device on a host that runs multi-node jobs", variant="no_device",
                notes=when(unusable=True), count=len(missing), **facts)]


_SEVERITY = {"info": Severity.INFO, "warning": Severity.WARNING, "error": Severity.ERROR, "critical": Severity.CRITICAL}


def _classified(e: dict[str, Any], host: str, facts: dict[str, Any]):
    """An error line a catalogue entry explains (rdma-core, infiniband-diags): its class, meaning and
    fix, at the entry's severity."""
    entry = next((x for c in catalogues.for_reader(facts["tool"]) for x in c.entries if x.id == e.get("entry")), None)
    meaning = entry.meaning if entry else ""
    fix = entry.fix if entry else ""
    return hit([host], severity=_SEVERITY.get(e.get("severity") or "", Severity.WARNING),
               expectation="the IB tool runs without errors", variant="classified", cls=e.get("class"),
               entry=e.get("entry"), meaning=meaning.rstrip("."), fix=fix, **facts)
