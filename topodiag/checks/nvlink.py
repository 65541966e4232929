"""NVL rules over `nvidia-smi nvlink -s`: inactive links, links below nominal speed, unequal counts.

GPUs the parser marks `truncated` (links elided, or the paste ends inside the GPU) are never judged
on how many links they have: only the lines actually printed count. What "expected" means comes,
in order, from a profile, the GPU model (knowledge.gpu_facts), and `topo -m`'s NV# counts.
"""

from __future__ import annotations

from .. import knowledge
from ..engine import Evidence, check, hit, when
from ._facts import counted


def _gpu_nvlink(topology):
    """(gpu id, attrs, nvlink facts) for every GPU that `nvlink -s` reported."""
    for gpu in topology.gpus():
        attrs = topology.node(gpu)
        nvl = attrs.get("nvlink")
        if nvl is not None:
            yield gpu, attrs, nvl


def _facts(attrs):
    model = attrs.get("model")
    return knowledge.gpu_facts(model) if model else None


def _links_text(links) -> str:
    return ", ".join(str(ln["link"]) for ln in links)


def _accepted(attrs, facts, profile) -> tuple[tuple[int, ...], str]:
    """The active-link counts that are right for this GPU and where that comes from: the profile, the
    model's accepted counts, topo -m's NV# sum, or nothing known."""
    if getattr(profile, "nvlinks_per_gpu", None) is not None:
        return (profile.nvlinks_per_gpu,), f"profile {profile.name}"
    if facts is not None and facts.nvlink_generation is not None:
        return facts.nvlinks_accepted, f"GPU model {facts.model}"
    if attrs.get("topo_nvlink_count") is not None:
        return (attrs["topo_nvlink_count"],), "nvidia-smi topo -m NV# counts"
    return (), "links nvlink -s prints"


@check("NVL001")
def nvlink_inactive(topology, params, profile=None):
    for gpu, attrs, nvl in _gpu_nvlink(topology):
        if nvl.get("nvlink_unsupported"):
            continue
        found = _inactive(gpu, attrs, nvl, profile)
        if found is not None:
            yield found


def _inactive_evidence(nvl, inactive) -> list:
    """The GPU's block, and the line of its first inactive link."""
    return [nvl["source"]] + [{**nvl["source"], "line_no": ln["line_no"]} for ln in inactive[:1]]


def _inactive(gpu, attrs, nvl, profile):
    """The GPU's finding: links inactive or missing, a truncated GPU's inactive printed links, a bridged
    card without a bridge (info); None when its links are as designed."""
    facts = _facts(attrs)
    accepted, expectation = _accepted(attrs, facts, profile)
    expected = max(accepted) if accepted else None
    active = nvl["active_count"]
    inactive = [ln for ln in nvl["links"] if not ln["active"]]
    base = dict(evidence=_inactive_evidence(nvl, inactive), expectation=expectation, gpu=gpu,
                model=attrs.get("model") or "?", active=active, shown=nvl["shown_count"], links=_links_text(inactive))
    if nvl["truncated"]:  # elided or cut off: no conclusion about the count, only about printed links
        return hit([gpu], variant="truncated", count=len(inactive), expected=expected or "?", **base) if inactive else None
    if _no_bridge(facts, accepted, active):
        return hit([gpu], severity="info", variant="no_bridge", bridge_model=facts.model,
                   expected=" or ".join(str(n) for n in sorted(accepted)), **base)
    if not inactive and (active in accepted or expected is None or active > expected):
        return None  # as designed, or more links than expected: nothing is inactive
    if _bridged_full(facts, accepted, active):
        return None  # a bridged card with every link its bridges carry: the others cannot be connected
    return _down(gpu, nvl, facts, expected, inactive, base)


def _bridged_full(facts, accepted, active: int) -> bool:
    """A bridged card (H100 NVL, A100 PCIe, RTX A6000) whose active links are exactly what its bridges carry:
    nvlink -s also prints the links the product cannot connect (<inactive>), by design."""
    return facts is not None and bool(facts.nvlink_bridge) and active > 0 and active == max(accepted)


def _no_bridge(facts, accepted, active: int) -> bool:
    """A bridged card with no bridge fitted: no NVLink is by design."""
    return active == 0 and active in accepted and facts is not None and bool(facts.nvlink_bridge)


def _down(gpu, nvl, facts, expected, inactive, base):
    """Links inactive (all of them, some, or fewer listed than expected), with the bandwidth lost when
    the GPU's NVLink generation is known."""
    active = base["active"]
    fewer = expected is not None and active < expected
    gen = knowledge.NVLINK_GENS[facts.nvlink_generation] if fewer and facts is not None \
        and facts.nvlink_generation is not None else None
    per_link = gen.per_link_one_way_gbyte_s if gen is not None else 0
    all_inactive = nvl.get("all_links_inactive") and active == 0
    return hit([gpu], variant="all_inactive" if all_inactive else "default" if inactive else "only_listed",
               notes=when(up=fewer, bandwidth_lost=gen is not None), expected="?" if expected is None else expected,
               lost=f"{((expected or 0) - active) * per_link:.0f}", total=f"{(expected or 0) * per_link:.0f}",
               **base)


def _nominal(facts, profile, rel_tol: float):
    """(nominal GB/s per link, where it comes from, is-low test for a link speed), or None for an unknown model."""
    if getattr(profile, "nvlink_speed_gbps", None):
        nominal = profile.nvlink_speed_gbps
        return nominal, f"profile {profile.name}", lambda speed: speed < nominal * (1 - rel_tol)
    if facts is None or facts.nvlink_generation is None:
        return None
    nominal = knowledge.nvlink_nominal_speed_gbps(facts.nvlink_generation, bridge=facts.nvlink_bridge)
    if facts.nvlink_bridge and facts.nvlink_speed_gbps:
        nominal = facts.nvlink_speed_gbps
    return (nominal, f"GPU model {facts.model} (NVLink {facts.nvlink_generation}.0)",
            lambda speed: not knowledge.nvlink_speed_ok(speed, facts.nvlink_generation, bridge=facts.nvlink_bridge,
                                                        rel_tol=rel_tol))


@check("NVL002")
def nvlink_speed_low(topology, params, profile=None):
    rel_tol = float(params.get("rel_tol", knowledge.NVLINK_SPEED_REL_TOL))
    for gpu, attrs, nvl in _gpu_nvlink(topology):
        judged = _nominal(_facts(attrs), profile, rel_tol)
        if judged is None:
            continue  # unknown model: no nominal to compare with
        nominal, expectation, is_low = judged
        low = [ln for ln in nvl["links"] if ln["active"] and ln["speed_gbps"] is not None and is_low(ln["speed_gbps"])]
        if not low:
            continue
        slowest = min(ln["speed_gbps"] for ln in low)
        yield hit([gpu], evidence=[{**nvl["source"], "line_no": low[0]["line_no"]}], expectation=expectation,
                  gpu=gpu, model=attrs.get("model") or "?", links=_links_text(low), count=len(low),
                  speed=f"{slowest:g}", nominal=f"{nominal:g}", fraction=f"{slowest / nominal:.0%}")


def _bridged(model: str, counts: list[int]) -> bool:
    facts = knowledge.gpu_facts(model) if model != "?" else None
    return facts is not None and facts.nvlink_bridge and set(counts) <= set(facts.nvlinks_accepted)


def _counts_by_model(topology) -> dict[str, list[tuple[str, int, dict]]]:
    """(GPU, active link count, nvlink facts) by GPU model, GPUs whose count is unknown left out."""
    by_model: dict[str, list[tuple[str, int, dict]]] = {}
    for gpu, attrs, nvl in _gpu_nvlink(topology):
        if nvl["truncated"] or nvl.get("nvlink_unsupported"):
            continue  # an elided GPU's count is unknown
        by_model.setdefault(attrs.get("model") or "?", []).append((gpu, nvl["active_count"], nvl))
    return by_model


def _unequal(model: str, rows: list, counts: list[int]) -> bool:
    """Two GPUs or more of the model with different counts; not bridged cards some of which have no bridge
    (NVL001 says so, as info: nothing is unequal by fault)."""
    if len(rows) < 2 or len(counts) < 2:
        return False
    return not (all(c == 0 or c == max(counts) for c in counts) and _bridged(model, counts))


@check("NVL003")
def nvlink_count_unequal(topology, params):
    for model, rows in _counts_by_model(topology).items():
        counts = sorted({c for _, c, _ in rows})
        if not _unequal(model, rows, counts):
            continue
        most = max(counts)
        fewer = [(g, c, n) for g, c, n in rows if c < most]
        yield hit([g for g, _, _ in fewer], evidence=[n["source"] for _, _, n in fewer[:1]],
                  expectation="all GPUs of one model alike (the best GPU on the node)",
                  model=model, most=most, per_gpu=", ".join(f"{g}: {c}" for g, c, _ in rows),
                  fewer=", ".join(g for g, _, _ in fewer))


_SATURATED = {65535: "16-bit", 4294967295: "32-bit"}


@check("NVL004")
def nvlink_errors(nvidia_smi_nvlink_e, params, rule):
    """GPUs whose NVLink error counters (`nvidia-smi nvlink -e`) are above zero: one finding per GPU,
    error when a link recovered or a counter reached `error_count` (or its ceiling), else warning."""
    threshold = int(params.get("error_count", 1000))
    for g in nvidia_smi_nvlink_e.gpus:
        if not g.nonzero:
            continue
        gpu = f"gpu:{g.index}" if g.index is not None else "gpu:?"
        serious = any(n.value >= threshold or "recovery" in n.counter for n in g.nonzero)
        yield hit([gpu], severity="error" if serious else None,
                  evidence=[Evidence("nvidia_smi_nvlink_e", None, n.line_no) for n in g.nonzero[:3]],
                  expectation="every NVLink error counter at 0", notes=when(truncated=g.truncated),
                  gpu=gpu, model=g.model or "?", links=len({n.link for n in g.nonzero}),
                  counters=counted((_counter(rule, n) for n in g.nonzero), 8))


def _counter(rule, n) -> str:
    """One counter as the rule words it ("link 3 replay errors 211"), at a counter's ceiling said so."""
    facts = {"link": n.link, "counter": n.counter.replace("_", " "), "value": n.value, "bits": _SATURATED.get(n.value)}
    return rule.format_message(facts, variant="counter_at_ceiling" if n.value in _SATURATED else "counter")
