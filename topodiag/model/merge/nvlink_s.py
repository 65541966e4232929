"""`nvidia-smi nvlink -s`: per GPU the `nvlink` fact (links with state and speed, active count,
whether the listing was cut short); tool errors, elided GPUs and an output cut short inside its last
GPU (`truncated`: GPUs after it unshown, so its GPU count is no count of the node's) as an observation."""

from __future__ import annotations

from ...records import ParsedInput
from ..topology import Topology
from ._shared import observe, ref

SOURCES = ("nvidia_smi_nvlink_s",)
PROVIDES = ("gpu.nvlinks",)
FILLS = ("gpu.inventory",)
NEEDS = ("gpu.index",)  # its "GPU 3:" joins the GPU topo names gpu:3


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    for g in r.gpus:
        gref = ref(item, g.line_no)
        links = [{"link": ln.link, "active": ln.active, "speed_gbps": ln.speed_gbps,
                  "state": ln.state, "line_no": ln.line_no} for ln in g.links]
        speeds = sorted({ln.speed_gbps for ln in g.links if ln.active and ln.speed_gbps is not None})
        nvlink = {"links": links, "active_count": sum(1 for ln in g.links if ln.active),
                  "shown_count": len(links), "speeds_gbps": speeds, "truncated": g.truncated,
                  "all_links_inactive": g.all_links_inactive,
                  "nvlink_unsupported": g.nvlink_unsupported, "message": g.message,
                  "source": gref}
        topo.add_node(f"gpu:{g.index}", "gpu", gref, index=g.index, model=g.model, uuid=g.uuid, nvlink=nvlink)
    truncated = getattr(r, "truncated", False)
    if r.errors or r.elided_gpu_indices or truncated:
        observe(topo, host_id, item, {
            "errors": [{"line_no": e.line_no, "text": e.text} for e in r.errors],
            "elided_gpu_indices": list(r.elided_gpu_indices), "truncated": truncated})
    topo.notes.extend(f"nvidia_smi_nvlink_s: {n}" for n in r.notes)
