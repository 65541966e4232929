"""`topodiag plan`: the article's arithmetic on the user's own node (docs/domain.md "Why parallelism
follows the interconnect"): which layer each parallel dimension lands on, what it moves and costs per
step, the recommended TP/PP/DP/EP and the alternatives side by side; with a layout given, what that
layout loses against the recommendation.

    from topodiag.plan import plan_from
    result = plan_from(["fixtures/hosts/hgx-h100-healthy-assembled"], nodes=2, model=model_spec("70b"))
    result["recommended"]["tp"], result["recommended"]["dimensions"]

JSON shape (`topodiag plan --format json`, schema_version 1):
    {schema_version, kind: "plan", nodes, gpus_per_node, node: {host, gpus, gpu_model, memory_gb,
     nvlink_domains: [{gpus, size, slowest_pair, links_per_gpu, gbyte_s, basis}], pcie: {name, gbyte_s,
     basis, how}, network: {...}, notes}, model: {name, params, layers, hidden, seq, micro_batch, dtype,
     activation_bytes, gradient_bytes, tp_bytes_moved}, micro_batches,
     global_micro_batches (the global batch every layout is judged at, in micro-batches), tflops,
     recommended: {tp, pp, dp, ep, label, comm_s, compute_s, bubble, bubble_s, step_s, micro_batches,
                   global_micro_batches, state_gb_per_gpu, fits_memory,
                   dimensions: [{dim, size, layer, gbyte_s, ops_per_step, bytes_each, bytes_per_step,
                                 time_s, groups, slow_groups, collective, per, ...}]},
     given: null | {same as recommended, loses: [sentence...]},
     alternatives: [{same as recommended, vs_recommended: sentence}],
     notes: [sentence...], basis: sentence}
Times are seconds per training step per GPU; bytes decimal; gbyte_s per GPU.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from ..errors import InputError, UsageError
from .layers import NodeLayers, measure
from .models import ModelSpec, check_bounds, model_spec
from .recommend import Layout, alternatives, evaluate, given_layout, micro_batches_for, recommend

SCHEMA_VERSION = 1
BASIS = ("time = the bytes one GPU moves / the per-GPU bandwidth of the layer it moves them on, one direction "
         "on every layer (nccl-tests' busbw is that ratio, so a measured busbw replaces the nominal figure): NVLink "
         "links x per-link one way (H100: 18 x 25 = 450 GB/s), PCIe x16 one way (5.0: 64 GB/s), a NIC at its line "
         "rate (NDR 400 Gb/s = 50 GB/s); every layout at the same global batch; step = (communication + compute) / "
         "(1 - bubble)")

__all__ = ["plan", "plan_from", "model_spec", "ModelSpec", "Layout", "measure"]


def plan_from(paths: Optional[Sequence[str]], *, nodes: int = 1, model: Optional[ModelSpec] = None,
              tp: Optional[int] = None, pp: Optional[int] = None, dp: Optional[int] = None,
              ep: Optional[int] = None, micro_batches: Optional[int] = None, tflops: Optional[float] = None) -> dict:
    """Load the node (saved outputs, a bundle, or this node live when `paths` is None), measure its
    layers and plan. Raises UsageError for bad numbers and InputError when the inputs show no GPU."""
    from ..pipeline import build_topology, collect_live, load

    gathered = load(paths) if paths is not None else collect_live()
    topology = build_topology(gathered)
    inputs = gathered.engine_inputs()
    tests = getattr(inputs.get("nccl_tests"), "items", ())
    node = measure(topology, list(tests), _fabric(inputs))
    if not node.gpus:
        raise InputError(", ".join(paths or ["live"]), "no GPU in the inputs: give `nvidia-smi topo -m` output "
                         "(and `nvidia-smi nvlink -s`, `ibstat`) of the node")
    return plan(node, nodes=nodes, model=model, tp=tp, pp=pp, dp=dp, ep=ep, micro_batches=micro_batches,
                tflops=tflops)


def _fabric(inputs: dict) -> list[dict]:
    """Each GPU's NVLink fabric registration ({state, clique_id, cluster_uuid}) from nvidia-smi -q or
    NVML, whichever the inputs hold."""
    out = []
    for source in ("nvidia_smi_q", "nvml"):
        for parsed, _ in getattr(inputs.get(source), "items", ()):  # engine_inputs: an Each per source
            for gpu in getattr(parsed, "gpus", ()) or ():
                fab = getattr(gpu, "fabric", None)
                if fab is not None and not isinstance(fab, str):
                    out.append({"state": getattr(fab, "state", None), "clique_id": getattr(fab, "clique_id", None),
                                "cluster_uuid": getattr(fab, "cluster_uuid", None)})
        if out:
            return out
    return out


def plan(node: NodeLayers, *, nodes: int = 1, model: Optional[ModelSpec] = None, tp: Optional[int] = None,
         pp: Optional[int] = None, dp: Optional[int] = None, ep: Optional[int] = None,
         micro_batches: Optional[int] = None, tflops: Optional[float] = None) -> dict[str, Any]:
    """The plan for `nodes` nodes like `node` (the JSON shape in the module docstring). Every layout is
    judged at one global batch: `micro_batches` per DP replica of the layout the user gave (else of the
    article's rule), G = M x DP micro-batches per step, each layout's M = G / its DP."""
    if nodes < 1:
        raise UsageError(f"--nodes: must be at least 1, got {nodes}")
    check_bounds(nodes=nodes, tp=tp, pp=pp, dp=dp, ep=ep, micro_batches=micro_batches)
    if tflops is not None and not (0 < tflops < 1e6):  # NaN fails both comparisons: refused too
        raise UsageError(f"--tflops: achieved TFLOP/s per GPU, above 0 and below 1e6, got {tflops}")
    model = model or model_spec()
    total = len(node.gpus) * nodes
    best, notes = recommend(node, nodes, model, ep=1)
    given = None
    if any(v is not None for v in (tp, pp, dp)):  # --ep alone sizes EP in the recommendation
        given = given_layout(total, tp, pp, dp, ep)
    if ep and ep > 1:
        if best.dp % ep:
            if given is None:
                raise UsageError(f"--ep {ep} must divide DP ({best.dp}) of the recommended layout")
        else:
            best = Layout(best.tp, best.pp, best.dp, ep)
    # One global batch for every layout: it belongs to the training, not to the layout.
    anchor = given or best
    m = micro_batches_for(max(best.pp, anchor.pp), micro_batches)
    g = m * anchor.dp
    rule = evaluate(best, model, node, g, tflops)
    others = [evaluate(lay, model, node, g, tflops) for lay in alternatives(best, nodes, node, model)]
    rec, why = _cheapest(rule, others)
    if why:
        notes.append(why)
    out_given = None
    if given is not None:
        out_given = evaluate(given, model, node, g, tflops)
        out_given["loses"] = losses(out_given, rec)
    alts = []
    for alt in [rule] + others:
        if alt is rec or alt["label"] == (out_given or {}).get("label"):
            continue  # neither the recommendation nor the layout given, compared with itself
        alt["vs_recommended"] = versus(alt, rec)
        alts.append(alt)
    return {"schema_version": SCHEMA_VERSION, "kind": "plan", "nodes": nodes, "gpus_per_node": len(node.gpus),
            "node": node.to_json(), "model": model.to_json(), "micro_batches": rec["micro_batches"],
            "global_micro_batches": g, "tflops": tflops, "recommended": rec,
            "given": out_given, "alternatives": alts, "notes": notes + list(node.notes), "basis": BASIS}


CHEAPER = 0.95  # an alternative replaces the article's rule only when its step is 5% shorter or more


def _tp_layer(block: dict) -> Optional[str]:
    row = _dim(block, "tp")
    return None if row is None else row["layer"]


def _cheapest(rule: dict, others: list[dict]) -> tuple[dict, str]:
    """The recommendation: the layout of the article's rule (TP fills the NVLink domain, PP only for
    memory), unless another that fits memory and keeps TP on NVLink has a step at least 5% shorter;
    then that one. A cheaper layout not taken is named with the reason."""
    fit = [o for o in others if o["fits_memory"] is not False and o["step_s"] is not None]
    if rule["step_s"] is None or not fit:
        return rule, ""
    eligible = [o for o in fit if _tp_layer(o) in (None, "nvlink")]
    best = min(eligible, key=lambda o: o["step_s"]) if eligible else None
    if best is not None and (rule["fits_memory"] is False or best["step_s"] < CHEAPER * rule["step_s"]):
        if rule["fits_memory"] is False:
            return best, (f"{rule['label']} (TP filling the NVLink domain) does not fit the GPU memory; "
                          f"{best['label']} is the cheapest that does ({fmt_s(best['step_s'])} per step)")
        return best, (f"{best['label']} takes {fmt_s(best['step_s'])} per step against {fmt_s(rule['step_s'])} "
                      f"for {rule['label']} (TP filling the NVLink domain, PP only for memory): recommended as "
                      f"the cheaper")
    cheaper = [o for o in fit if o not in eligible and o["step_s"] < CHEAPER * rule["step_s"]]
    if cheaper:
        o = min(cheaper, key=lambda x: x["step_s"])
        return rule, (f"{o['label']} counts less communication ({fmt_s(o['step_s'])} per step vs "
                      f"{fmt_s(rule['step_s'])}) but puts TP on {_tp_layer(o)}: TP's AllReduces sit on the "
                      f"critical path of every layer, while DP's gradient AllReduce overlaps the backward pass "
                      f"(an overlap this count leaves out), so {rule['label']} stays recommended")
    return rule, ""


def _dim(row_set: dict, dim: str) -> Optional[dict]:
    return next((r for r in row_set["dimensions"] if r["dim"] == dim), None)


def fmt_s(seconds: Optional[float]) -> str:
    if seconds is None:
        return "unknown"
    if seconds == 0:
        return "0 s"
    if seconds < 0.1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


_WHERE = {"nvlink": "inside the NVLink domain", "pcie": "over PCIe", "network": "across nodes"}


def _place(row: Optional[dict]) -> str:
    if row is None:
        return "none"
    return f"{row['dim'].upper()}={row['size']} {_WHERE.get(row['layer'], '?')}"


def losses(given: dict, best: dict) -> list[str]:
    """What a given layout loses against the recommended one, dimension by dimension."""
    out = []
    for dim in ("tp", "dp", "pp", "ep"):
        g, b = _dim(given, dim), _dim(best, dim)
        if g is None or g["time_s"] is None:
            continue
        bt = b["time_s"] if b is not None else 0.0
        if bt is not None and g["time_s"] > bt * 1.05 + 1e-9:
            ratio = f" ({g['time_s'] / bt:.3g}x)" if bt else ""
            if b is not None and bt and g["ops_per_step"] != b["ops_per_step"]:
                each = g["time_s"] / g["ops_per_step"] / (bt / b["ops_per_step"])
                ratio = (f" ({g['time_s'] / bt:.3g}x; per operation {each:.3g}x: the rest is {g['ops_per_step']} vs "
                         f"{b['ops_per_step']} {dim.upper()} operations per step, PP={given['pp']} "
                         f"M={given['micro_batches']} vs PP={best['pp']} M={best['micro_batches']})")
            other = f"{fmt_s(bt)} at {_place(b)}" if b is not None else f"none at {dim.upper()}=1"
            out.append(f"{_place(g)}: {fmt_s(g['time_s'])} of {g['collective']} per step vs {other}{ratio}")
    if given["bubble"] > best["bubble"] + 1e-9:
        out.append(f"PP={given['pp']}: the pipeline bubble idles {given['bubble']:.0%} of each step "
                   f"(M={given['micro_batches']}) vs {best['bubble']:.0%}")
    if given["fits_memory"] is False and best["fits_memory"] is not False:
        out.append(f"{given['state_gb_per_gpu']:.0f} GB of training state per GPU does not fit the GPU's memory")
    if given["step_s"] is not None and best["step_s"] is not None and given["step_s"] > best["step_s"] * 1.05:
        ratio = f" ({given['step_s'] / best['step_s']:.3g}x)" if best["step_s"] else ""
        out.append(f"in all: a step of {fmt_s(given['step_s'])} vs {fmt_s(best['step_s'])}{ratio} (communication "
                   f"{fmt_s(given['comm_s'])} vs {fmt_s(best['comm_s'])}, at the same global batch)")
    if not out:
        out.append("nothing measurable: it communicates no more than the recommended layout")
    return out


def versus(alt: dict, best: dict) -> str:
    """One line: an alternative's step (and communication) against the recommended layout's."""
    parts = [f"{alt['label']}: a step of {fmt_s(alt['step_s'])} vs {fmt_s(best['step_s'])} at {best['label']} "
             f"(communication {fmt_s(alt['comm_s'])} vs {fmt_s(best['comm_s'])})"]
    changed = [d for d in ("tp", "dp", "pp", "ep") if _dim(alt, d) and (_dim(best, d) is None
               or _dim(alt, d)["layer"] != _dim(best, d)["layer"] or _dim(alt, d)["size"] != _dim(best, d)["size"])]
    for d in changed[:2]:
        parts.append(f"{_place(_dim(alt, d))}: {fmt_s(_dim(alt, d)['time_s'])}")
    if alt["bubble"] > 0:
        parts.append(f"bubble {alt['bubble']:.0%}")
    return "; ".join(parts)
