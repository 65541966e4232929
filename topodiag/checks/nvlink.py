"""NVL rules over `nvidia-smi nvlink -s`: inactive links, links below nominal speed, unequal counts.

GPUs the parser marks `truncated` (links elided, or the paste ends inside the GPU) are never judged
on how many links they have: only the lines actually printed count. What "expected" means comes,
in order, from a profile, the GPU model (knowledge.gpu_facts), and `topo -m`'s NV# counts.
"""

from __future__ import annotations

from .. import knowledge
from ..engine import Evidence, check, hit


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


@check("NVL001")
def nvlink_inactive(topology, params, profile=None):
    for gpu, attrs, nvl in _gpu_nvlink(topology):
        if nvl.get("nvlink_unsupported"):
            continue
        facts = _facts(attrs)
        active = nvl["active_count"]
        inactive = [ln for ln in nvl["links"] if not ln["active"]]
        evidence = [nvl["source"]] + [{**nvl["source"], "line_no": ln["line_no"]} for ln in inactive[:1]]
        # What is expected: profile, the model's accepted counts, topo -m's NV# sum.
        if getattr(profile, "nvlinks_per_gpu", None) is not None:
            accepted, expectation = (profile.nvlinks_per_gpu,), f"profile {profile.name}"
        elif facts is not None and facts.nvlink_generation is not None:
            accepted, expectation = facts.nvlinks_accepted, f"GPU model {facts.model}"
        elif attrs.get("topo_nvlink_count") is not None:
            accepted, expectation = (attrs["topo_nvlink_count"],), "nvidia-smi topo -m NV# counts"
        else:
            accepted, expectation = (), "links nvlink -s prints"
        expected = max(accepted) if accepted else None
        if nvl["truncated"]:
            if not inactive:
                continue  # elided or cut off: no conclusion about the count
            detail = (f"{len(inactive)} printed link(s) inactive ({_links_text(inactive)}); the output of "
                      f"this GPU is truncated, so the other links are unknown")
            yield hit([gpu], evidence=evidence, expectation=expectation, gpu=gpu, model=attrs.get("model") or "?",
                      active=active, shown=nvl["shown_count"], expected=expected if expected else "?",
                      detail=detail)
            continue
        if active in accepted and facts is not None and facts.nvlink_bridge and active == 0:
            # a bridged card with no bridge fitted: no NVLink is by design
            yield hit([gpu], evidence=evidence, severity="info", expectation=expectation, gpu=gpu,
                      model=attrs.get("model") or "?", active=0, shown=nvl["shown_count"],
                      expected=" or ".join(str(n) for n in sorted(accepted)),
                      detail=(f"no active NVLink; {facts.model} has NVLink only through a bridge between cards, "
                              "so this GPU has no bridge fitted (by design when bridges join pairs), or the "
                              "bridge is loose"))
            continue
        if not inactive and (active in accepted or expected is None or active > expected):
            continue  # as designed, or more links than expected: nothing is inactive
        expected_text = "?" if expected is None else expected
        if nvl.get("all_links_inactive") and active == 0:
            detail = "all links inactive (NVML: Unable to retrieve NVLink information as all links are inActive)"
        elif inactive:
            detail = f"link(s) {_links_text(inactive)} inactive"
        else:
            detail = f"only {active} link(s) listed"
        if expected is not None and active < expected:
            detail += f"; {active} of {expected} up"
            if facts is not None and facts.nvlink_generation is not None:
                gen = knowledge.NVLINK_GENS[facts.nvlink_generation]
                lost = (expected - active) * gen.per_link_one_way_gbyte_s
                detail += (f": about {lost:.0f} of {expected * gen.per_link_one_way_gbyte_s:.0f} GB/s one-way "
                           f"NVLink bandwidth of this GPU lost")
        yield hit([gpu], evidence=evidence, expectation=expectation, gpu=gpu, model=attrs.get("model") or "?",
                  active=active, shown=nvl["shown_count"], expected=expected_text, detail=detail)


@check("NVL002")
def nvlink_speed_low(topology, params, profile=None):
    rel_tol = float(params.get("rel_tol", knowledge.NVLINK_SPEED_REL_TOL))
    for gpu, attrs, nvl in _gpu_nvlink(topology):
        facts = _facts(attrs)
        if getattr(profile, "nvlink_speed_gbps", None):
            nominal, expectation = profile.nvlink_speed_gbps, f"profile {profile.name}"
            low = [ln for ln in nvl["links"] if ln["active"] and ln["speed_gbps"] is not None
                   and ln["speed_gbps"] < nominal * (1 - rel_tol)]
        elif facts is not None and facts.nvlink_generation is not None:
            nominal = knowledge.nvlink_nominal_speed_gbps(facts.nvlink_generation, bridge=facts.nvlink_bridge)
            if facts.nvlink_bridge and facts.nvlink_speed_gbps:
                nominal = facts.nvlink_speed_gbps
            expectation = f"GPU model {facts.model} (NVLink {facts.nvlink_generation}.0)"
            low = [ln for ln in nvl["links"] if ln["active"] and ln["speed_gbps"] is not None
                   and not knowledge.nvlink_speed_ok(ln["speed_gbps"], facts.nvlink_generation,
                                                     bridge=facts.nvlink_bridge, rel_tol=rel_tol)]
        else:
            continue  # unknown model: no nominal to compare with
        if not low:
            continue
        slowest = min(ln["speed_gbps"] for ln in low)
        yield hit([gpu], evidence=[{**nvl["source"], "line_no": low[0]["line_no"]}], expectation=expectation,
                  gpu=gpu, model=attrs.get("model") or "?", links=_links_text(low), count=len(low),
                  speed=f"{slowest:g}", nominal=f"{nominal:g}", fraction=f"{slowest / nominal:.0%}")


def _bridged(model: str, counts: list[int]) -> bool:
    facts = knowledge.gpu_facts(model) if model != "?" else None
    return facts is not None and facts.nvlink_bridge and set(counts) <= set(facts.nvlinks_accepted)


@check("NVL003")
def nvlink_count_unequal(topology, params):
    by_model: dict[str, list[tuple[str, int, dict]]] = {}
    for gpu, attrs, nvl in _gpu_nvlink(topology):
        if nvl["truncated"] or nvl.get("nvlink_unsupported"):
            continue  # an elided GPU's count is unknown
        by_model.setdefault(attrs.get("model") or "?", []).append((gpu, nvl["active_count"], nvl))
    for model, rows in by_model.items():
        counts = sorted({c for _, c, _ in rows})
        if len(rows) < 2 or len(counts) < 2:
            continue
        if all(c == 0 or c == max(counts) for c in counts) and _bridged(model, counts):
            continue  # bridged cards without a bridge: NVL001 says so (info), nothing is unequal by fault
        most = max(counts)
        fewer = [(g, c, n) for g, c, n in rows if c < most]
        per_gpu = ", ".join(f"{g}: {c}" for g, c, _ in rows)
        yield hit([g for g, _, _ in fewer], evidence=[n["source"] for _, _, n in fewer[:1]],
                  expectation="all GPUs of one model alike (the best GPU on the node)",
                  model=model, most=most, per_gpu=per_gpu,
                  fewer=", ".join(g for g, _, _ in fewer))


_SATURATED = {65535: "16-bit", 4294967295: "32-bit"}


@check("NVL004")
def nvlink_errors(nvidia_smi_nvlink_e, params):
    """GPUs whose NVLink error counters (`nvidia-smi nvlink -e`) are above zero: one finding per GPU,
    error when a link recovered or a counter reached `error_count` (or its ceiling), else warning."""
    threshold = int(params.get("error_count", 1000))
    for g in nvidia_smi_nvlink_e.gpus:
        if not g.nonzero:
            continue
        gpu = f"gpu:{g.index}" if g.index is not None else "gpu:?"
        links = sorted({n.link for n in g.nonzero})
        parts = []
        serious = False
        for n in g.nonzero:
            text = f"link {n.link} {n.counter.replace('_', ' ')} {n.value}"
            if n.value in _SATURATED:
                text += f" (the {_SATURATED[n.value]} counter's ceiling: at least that many)"
            parts.append(text)
            serious = serious or n.value >= threshold or "recovery" in n.counter
        yield hit([gpu], severity="error" if serious else None,
                  evidence=[Evidence("nvidia_smi_nvlink_e", None, n.line_no) for n in g.nonzero[:3]],
                  expectation="every NVLink error counter at 0",
                  gpu=gpu, model=g.name or "?", links=len(links), detail="; ".join(parts[:8]) +
                  (f"; and {len(parts) - 8} more" if len(parts) > 8 else ""),
                  note="; the output of this GPU is truncated, other links are unknown" if g.truncated else "")
