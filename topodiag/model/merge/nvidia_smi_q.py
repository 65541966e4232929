"""`nvidia-smi -q`: GPUs by bus id with their UUID, name and PCIe link width (current and max, for
TOPO005) and the maximum generation. The current generation is left out: an idle GPU drops its link to
Gen1 to save power, and `-q` prints that as the current generation, which TOPO005 would read as a slow
link. Pastes without "GPU <bus id>" lines (a grepped Fabric block) name no GPU and add nothing here;
FAB001 reads the parse result itself."""

from __future__ import annotations

from ...records import ParsedInput
from ..topology import Topology
from ._shared import ref

SOURCES = ("nvidia_smi_q",)
PROVIDES = ("gpu.pcie_max",)  # max PCIe width and generation per GPU
FILLS = ("gpu.busid", "gpu.pcie_link")
NEEDS = ("gpu.busid", "gpu.pcie_link")  # joins GPUs by bus id; NVML's facts come first, this fills what it lacks


def _short(bus: str) -> str:
    """'00000000:18:00.0' -> '0000:18:00.0' (the form sysfs and lspci print)."""
    dom, rest = bus.lower().split(":", 1)
    return f"{dom[-4:]}:{rest}"


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    for g in item.result.gpus:
        if not g.bus_id or g.line_no is None:
            continue
        r = ref(item, g.line_no)
        node_id = topo.resolve(g.bus_id)
        if node_id == g.bus_id:
            node_id = topo.resolve(_short(g.bus_id))
        if node_id in (g.bus_id, _short(g.bus_id)):
            node_id = f"gpu:{g.index}"
        topo.add_node(node_id, "gpu", r, index=g.index, model=g.model, uuid=g.uuid, busid=g.bus_id,
                      pcie_link_width=g.pcie.current_width, pcie_max_link_width=g.pcie.max_width,
                      pcie_max_link_gts=f"Gen{g.pcie.max_gen}" if g.pcie.max_gen else None)
        topo.add_alias(g.bus_id, node_id, r)
        topo.add_alias(_short(g.bus_id), node_id, r)
