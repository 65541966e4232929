"""Where each parallel dimension lands, what it costs per step, and the recommended layout.

Ranks are numbered with TP fastest, then DP, then PP (Megatron's order; EP groups are carved out of
DP, consecutive DP ranks): rank = tp_i + TP x (dp_i + DP x pp_i), GPU `rank % gpus_per_node` of node
`rank // gpus_per_node`. A group of one dimension runs on the network when it spans nodes, on NVLink
when all its GPUs share one NVLink domain, else on PCIe; the slowest group sets the dimension's
speed (a ring AllReduce runs at the speed of its slowest link).

The recommendation follows the article: TP as large as one NVLink domain allows (the largest power
of two whose groups all sit inside a domain), PP only as far as the model's training state must be
split to fit the GPUs' memory (16 bytes per parameter: bf16 weights and gradients, fp32 Adam moments
and master weights; activations not counted), DP for the rest: it crosses nodes first, PP next.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from ..errors import UsageError
from . import traffic
from .layers import NodeLayers
from .models import ModelSpec

STATE_BYTES_PER_PARAM = 16
MEMORY_HEADROOM = 0.8  # training state may take this share of a GPU's memory; activations need the rest
_ORDER = {"nvlink": 0, "pcie": 1, "network": 2}


@dataclass(frozen=True)
class Layout:
    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.dp

    def label(self) -> str:
        return " ".join(f"{k.upper()}={v}" for k, v in (("tp", self.tp), ("pp", self.pp), ("dp", self.dp),
                                                          ("ep", self.ep)) if v > 1 or k in ("tp",)) or "TP=1"

    def to_json(self) -> dict:
        return {"tp": self.tp, "pp": self.pp, "dp": self.dp, "ep": self.ep}


def _groups(layout: Layout, dim: str) -> list[list[int]]:
    t, d, p, e = layout.tp, layout.dp, layout.pp, layout.ep
    rank = lambda ti, di, pi: ti + t * (di + d * pi)  # noqa: E731
    if dim == "tp":
        return [[rank(ti, di, pi) for ti in range(t)] for pi in range(p) for di in range(d)]
    if dim == "dp":
        return [[rank(ti, di, pi) for di in range(d)] for pi in range(p) for ti in range(t)]
    if dim == "pp":
        return [[rank(ti, di, pi) for pi in range(p)] for di in range(d) for ti in range(t)]
    return [[rank(ti, g * e + j, pi) for j in range(e)] for pi in range(p) for ti in range(t) for g in range(d // e)]


def _group_layer(group: list[int], node: NodeLayers) -> tuple[str, Optional[float]]:
    per_node = len(node.gpus)
    if len({r // per_node for r in group}) > 1:
        multi = node.multinode
        if multi and multi["gpus"] >= per_node and len({r // per_node // (multi["gpus"] // per_node) for r in group}) == 1:
            return "nvlink", node.domains[0].gbyte_s  # across trays inside one NVL domain (GB200 NVL72)
        return "network", node.network.gbyte_s
    gpus = [node.gpus[r % per_node] for r in group]
    domain = node.domain_of(gpus[0])
    if domain is not None and all(g in domain.gpus for g in gpus):
        return "nvlink", domain.gbyte_s
    return "pcie", node.pcie.gbyte_s


def place(layout: Layout, dim: str, node: NodeLayers) -> dict:
    """{layer, gbyte_s, groups, crossing}: the slowest layer the dimension's groups use."""
    size = getattr(layout, dim)
    if size <= 1:
        return {"layer": None, "gbyte_s": None, "groups": 0, "slow_groups": 0}
    groups = _groups(layout, dim)
    seen = [_group_layer(g, node) for g in groups]
    worst = max(seen, key=lambda x: (_ORDER[x[0]], -(x[1] or 0)))
    slow = sum(1 for s in seen if s[0] == worst[0])
    return {"layer": worst[0], "gbyte_s": worst[1], "groups": len(groups), "slow_groups": slow}


def _row(dim: str, size: int, where: dict, ops: int, each: float, **extra) -> dict:
    total = ops * each
    gbs = where["gbyte_s"]
    time_s = traffic.transfer_s(total, gbs) if (gbs and total) else (0.0 if not total else None)
    return {"dim": dim, "size": size, "layer": where["layer"], "gbyte_s": gbs, "ops_per_step": ops,
            "bytes_each": each, "bytes_per_step": total, "time_s": time_s, "groups": where["groups"],
            "slow_groups": where["slow_groups"], **extra}


def dimensions(layout: Layout, model: ModelSpec, node: NodeLayers, micro_batches: int) -> list[dict]:
    """The per-dimension table: per step and per GPU, the bytes, the layer and the time."""
    stage_layers = math.ceil(model.layers / layout.pp)
    act = model.activation_bytes
    rows = []
    if layout.tp > 1:
        each = model.tp_bytes_moved if model.tp_bytes_moved is not None else traffic.ring_allreduce_bytes(act, layout.tp)
        rows.append(_row("tp", layout.tp, place(layout, "tp", node), traffic.tp_allreduces(stage_layers, micro_batches),
                         each, collective="all_reduce", per="4 per layer per micro-batch"))
    if layout.dp > 1:
        grads = model.gradient_bytes / (layout.tp * layout.pp)
        rows.append(_row("dp", layout.dp, place(layout, "dp", node), 1, traffic.ring_allreduce_bytes(grads, layout.dp),
                         collective="all_reduce", per="once per step (ZeRO: reduce-scatter + all-gather, the same bytes)",
                         gradient_bytes=grads))
    if layout.pp > 1:
        rows.append(_row("pp", layout.pp, place(layout, "pp", node), 2 * micro_batches, act, collective="send/recv",
                         per="activation forward and gradient back, per micro-batch",
                         bubble=traffic.bubble_fraction(layout.pp, micro_batches)))
    if layout.ep > 1:
        rows.append(_row("ep", layout.ep, place(layout, "ep", node),
                         traffic.ALLTOALLS_PER_LAYER * stage_layers * micro_batches,
                         traffic.alltoall_bytes(act * model.top_k, layout.ep), collective="alltoall",
                         per=f"4 per MoE layer per micro-batch (top-{model.top_k} routing)"))
    return rows


def micro_batches_at(layout: Layout, global_micro_batches: int) -> int:
    """Micro-batches per step of each DP replica that keep the global batch: G / DP (at least 1)."""
    return max(1, math.ceil(global_micro_batches / layout.dp))


def compute_s(model: ModelSpec, global_micro_batches: int, gpus: int, tflops: Optional[float]) -> Optional[float]:
    """Compute per step per GPU: 6 FLOPs per parameter per token (forward 2, backward 4) over the global
    batch's tokens, shared by every GPU at `tflops` achieved TFLOP/s each; None without --tflops."""
    if not tflops:
        return None
    tokens = global_micro_batches * model.micro_batch * model.seq
    return 6 * model.params * tokens / (gpus * tflops * 1e12)


def evaluate(layout: Layout, model: ModelSpec, node: NodeLayers, global_micro_batches: int,
             tflops: Optional[float] = None) -> dict:
    """A layout at the global batch of `global_micro_batches` micro-batches per step: per-dimension
    communication, the bubble, and the step time (communication + compute) / (1 - bubble)."""
    micro_batches = micro_batches_at(layout, global_micro_batches)
    rows = dimensions(layout, model, node, micro_batches)
    times = [r["time_s"] for r in rows]
    comm = None if any(t is None for t in times) else sum(times)
    need = model.params * STATE_BYTES_PER_PARAM / (layout.tp * layout.pp) / 1e9
    fits = None if node.memory_gb is None else need <= MEMORY_HEADROOM * node.memory_gb
    bubble = traffic.bubble_fraction(layout.pp, micro_batches)
    compute = compute_s(model, micro_batches * layout.dp, layout.gpus, tflops)
    busy = None if comm is None else comm + (compute or 0.0)
    step = None if busy is None else busy / (1 - bubble)
    return {**layout.to_json(), "label": layout.label(), "dimensions": rows, "comm_s": comm,
            "bubble": bubble, "micro_batches": micro_batches,
            "global_micro_batches": micro_batches * layout.dp, "compute_s": compute,
            "bubble_s": None if step is None else step - busy, "step_s": step,
            "state_gb_per_gpu": round(need, 3), "fits_memory": fits}


def _tp_fits(t: int, node: NodeLayers, total: int) -> bool:
    if total % t:
        return False
    return place(Layout(tp=t, dp=total // t), "tp", node)["layer"] in (None, "nvlink")


def largest_tp(node: NodeLayers, nodes: int = 1) -> int:
    """The largest power of two whose TP groups each sit inside one NVLink domain (1 if none); across
    nodes only inside a multi-node NVLink domain (GB200 NVL72)."""
    total = len(node.gpus) * (nodes if node.multinode else 1)
    t = 1
    while t * 2 <= total and _tp_fits(t * 2, node, total):
        t *= 2
    return t


def _pp_for_memory(t: int, total: int, model: ModelSpec, node: NodeLayers) -> tuple[int, str]:
    if node.memory_gb is None:
        return 1, "GPU memory unknown (no GPU model with its size): PP not sized for memory"
    p = 1
    while True:
        need = model.params * STATE_BYTES_PER_PARAM / (t * p) / 1e9
        if need <= MEMORY_HEADROOM * node.memory_gb:
            return p, f"training state {need:.0f} GB per GPU at TP={t} PP={p} fits {node.memory_gb:g} GB"
        if total % (t * p * 2):
            return p, (f"training state {need:.0f} GB per GPU at TP={t} PP={p} does not fit {node.memory_gb:g} GB "
                       f"and PP cannot grow on {total} GPUs: shard it over DP (ZeRO-3/FSDP) or add nodes")
        p *= 2


def micro_batches_for(pp: int, given: Optional[int]) -> int:
    if given is not None:
        if given < 1:
            raise UsageError(f"--micro-batches: must be at least 1, got {given}")
        return given
    return 1 if pp == 1 else 4 * pp


def given_layout(total: int, tp: Optional[int], pp: Optional[int], dp: Optional[int], ep: Optional[int]) -> Layout:
    """A layout from --tp/--pp/--dp/--ep, the missing ones filled so that TP x PP x DP = the GPUs."""
    for name, v in (("tp", tp), ("pp", pp), ("dp", dp), ("ep", ep)):
        if v is not None and v < 1:
            raise UsageError(f"--{name}: must be at least 1, got {v}")
    t, p = tp or 1, pp or 1
    d = dp if dp is not None else total // (t * p)
    if t * p * d != total:
        raise UsageError(f"--tp {t} x --pp {p} x --dp {d} = {t * p * d} GPUs, but the nodes have {total}")
    e = ep or 1
    if d % e:
        raise UsageError(f"--ep {e} must divide DP ({d}): expert groups are carved out of DP")
    return Layout(t, p, d, e)


def recommend(node: NodeLayers, nodes: int, model: ModelSpec, ep: int = 1) -> tuple[Layout, list[str]]:
    per_node = len(node.gpus)
    total = per_node * nodes
    t = largest_tp(node, nodes)
    notes = []
    if t > per_node:
        notes.append(f"TP={t} spans {t // per_node} nodes inside the multi-node NVLink domain "
                     f"({node.multinode['how']})")
    elif t < per_node or (not node.domains and node.nvlink_seen):
        notes.append(_why_tp_small(t, node))
    p, why = _pp_for_memory(t, total, model, node)
    notes.append(why)
    d = total // (t * p)
    if d % ep:
        raise UsageError(f"--ep {ep} must divide DP ({d}) of the recommended layout")
    return Layout(t, p, d, ep), notes


def _why_tp_small(t: int, node: NodeLayers) -> str:
    sizes = [len(d.gpus) for d in node.domains]
    outside = [g for g in node.gpus if node.domain_of(g) is None]
    if not node.domains and node.nvlink_seen:
        return (f"nvlink -s shows active NVLinks on {node.nvlink_seen} GPU(s) but no input says which GPUs they "
                f"join (give `nvidia-smi topo -m`): the NVLink domains are unknown, so TP={t}")
    if not node.domains:
        return f"no NVLink between the GPUs: TP={t}; a larger TP runs over PCIe"
    text = f"the NVLink domain{'s are' if len(sizes) > 1 else ' is'} {', '.join(map(str, sizes))}, not {len(node.gpus)}"
    if outside:
        text += f" ({', '.join(outside)} off NVLink)"
    return f"{text}: TP={len(node.gpus)} crosses PCIe; TP={t} is the largest whose groups stay on NVLink"


def alternatives(best: Layout, nodes: int, node: NodeLayers, model: ModelSpec) -> list[Layout]:
    total = len(node.gpus) * nodes
    out = []
    for t in (best.tp * 2, best.tp // 2):
        if t >= 1 and total % (t * best.pp) == 0 and (t * best.pp) <= total:
            d = total // (t * best.pp)
            out.append(Layout(t, best.pp, d, best.ep if d % best.ep == 0 else 1))
    if nodes > 1 and best.dp % nodes == 0 and (best.dp // nodes) % best.ep == 0:
        out.append(Layout(best.tp, best.pp * nodes, best.dp // nodes, best.ep))
    if nodes > 1 and best.pp % nodes == 0:
        out.append(Layout(best.tp, best.pp // nodes, best.dp * nodes, best.ep))
    seen, unique = {best}, []
    for lay in out:
        if lay not in seen:
            seen.add(lay)
            unique.append(lay)
    return unique
