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
     recommended: {tp, pp, dp, ep, label, comm_s, bubble, micro_batches, state_gb_per_gpu, fits_memory,
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
BASIS = ("time = the bytes one GPU moves / the per-GPU bandwidth of the layer it moves them on (nccl-tests' "
         "busbw is that ratio, so a measured busbw replaces the nominal figure); nominal NVLink is counted over "
         "both directions and a NIC at its line rate, as the article counts them")

__all__ = ["plan", "plan_from", "model_spec", "ModelSpec", "Layout", "measure"]


def plan_from(paths: Optional[Sequence[str]], *, nodes: int = 1, model: Optional[ModelSpec] = None,
              tp: Optional[int] = None, pp: Optional[int] = None, dp: Optional[int] = None,
              ep: Optional[int] = None, micro_batches: Optional[int] = None) -> dict:
    """Load the node (saved outputs, a bundle, or this node live when `paths` is None), measure its
    layers and plan. Raises UsageError for bad numbers and InputError when the inputs show no GPU."""
    from ..pipeline import build_topology, collect_live, load

    gathered = load(paths) if paths is not None else collect_live()
    topology = build_topology(gathered)
    tests = getattr(gathered.engine_inputs().get("nccl_tests"), "items", ())
    node = measure(topology, list(tests))
    if not node.gpus:
        raise InputError(", ".join(paths or ["live"]), "no GPU in the inputs: give `nvidia-smi topo -m` output "
                         "(and `nvidia-smi nvlink -s`, `ibstat`) of the node")
    return plan(node, nodes=nodes, model=model, tp=tp, pp=pp, dp=dp, ep=ep, micro_batches=micro_batches)


def plan(node: NodeLayers, *, nodes: int = 1, model: Optional[ModelSpec] = None, tp: Optional[int] = None,
         pp: Optional[int] = None, dp: Optional[int] = None, ep: Optional[int] = None,
         micro_batches: Optional[int] = None) -> dict[str, Any]:
    """The plan for `nodes` nodes like `node` (the JSON shape in the module docstring)."""
    if nodes < 1:
        raise UsageError(f"--nodes: must be at least 1, got {nodes}")
    check_bounds(nodes=nodes, tp=tp, pp=pp, dp=dp, ep=ep, micro_batches=micro_batches)
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
    # One M for every layout: micro-batches per step belong to the training, not to the layout.
    m = micro_batches_for(max(best.pp, given.pp if given else 1), micro_batches)
    rec = evaluate(best, model, node, m)
    out_given = None
    if given is not None:
        out_given = evaluate(given, model, node, m)
        out_given["loses"] = losses(out_given, rec)
    alts = []
    for lay in alternatives(best, nodes, node, model):
        alt = evaluate(lay, model, node, m)
        alt["vs_recommended"] = versus(alt, rec)
        alts.append(alt)
    return {"schema_version": SCHEMA_VERSION, "kind": "plan", "nodes": nodes, "gpus_per_node": len(node.gpus),
            "node": node.to_json(), "model": model.to_json(), "micro_batches": m, "recommended": rec,
            "given": out_given, "alternatives": alts, "notes": notes + list(node.notes), "basis": BASIS}


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
            other = f"{fmt_s(bt)} at {_place(b)}" if b is not None else f"none at {dim.upper()}=1"
            out.append(f"{_place(g)}: {fmt_s(g['time_s'])} of {g['collective']} per step vs {other}{ratio}")
    if given["bubble"] > best["bubble"] + 1e-9:
        out.append(f"PP={given['pp']}: the pipeline bubble idles {given['bubble']:.0%} of each step "
                   f"(M={given['micro_batches']}) vs {best['bubble']:.0%}")
    if given["fits_memory"] is False and best["fits_memory"] is not False:
        out.append(f"{given['state_gb_per_gpu']:.0f} GB of training state per GPU does not fit the GPU's memory")
    if given["comm_s"] is not None and best["comm_s"] is not None and given["comm_s"] > best["comm_s"] * 1.05:
        out.append(f"in all: {fmt_s(given['comm_s'])} of communication per step vs {fmt_s(best['comm_s'])}")
    if not out:
        out.append("nothing measurable: it communicates no more than the recommended layout")
    return out


def versus(alt: dict, best: dict) -> str:
    """One line: an alternative's communication per step against the recommended layout's."""
    parts = [f"{alt['label']}: {fmt_s(alt['comm_s'])} of communication per step vs {fmt_s(best['comm_s'])} at "
             f"{best['label']}"]
    changed = [d for d in ("tp", "dp", "pp", "ep") if _dim(alt, d) and (_dim(best, d) is None
               or _dim(alt, d)["layer"] != _dim(best, d)["layer"] or _dim(alt, d)["size"] != _dim(best, d)["size"])]
    for d in changed[:2]:
        parts.append(f"{_place(_dim(alt, d))}: {fmt_s(_dim(alt, d)['time_s'])}")
    if alt["bubble"] > 0:
        parts.append(f"bubble {alt['bubble']:.0%}")
    return "; ".join(parts)
