"""The node's GPUs as one set keyed by PCI bus id: after every input is merged (`settle`), and what
of it was checked (`inventory`).

NVML, `nvidia-smi -q`, NCCL's XML, the sysfs probe and the driver's list (gpu_scope) name GPUs by bus
id, and the merge joins them on it; `nvidia-smi nvlink -s` and the driver's list share UUIDs. What
is left are GPUs only an index names (`topo -m`: "GPU3", `nvlink -s` without the driver's list)
beside GPUs only a bus id names (the PCI tree): these are the same GPUs, never more. nvidia-smi and
NVML number a node's GPUs in PCI bus id order (those this process can see), so when the two lists
have the same length they are joined in that order, and the topology says so in a note; when they
differ (a GPU the PCI bus shows that the driver does not list), nothing is joined and the count
is the PCI bus's (`inventory`), never the sum.
"""

from __future__ import annotations

from typing import Any

from .topology import Topology

# Inputs that check a GPU: the driver answered for it (its state, links, errors).
CHECKING_SOURCES = ("nvml", "nvidia_smi_q", "nvidia_smi_nvlink_s", "nvidia_smi_nvlink_e", "nvidia_smi_topo_m",
                    "nvidia_smi_topo_p2p")  # not NCCL's XML: a run lists the GPUs it used, and checks none


def _sources(topo: Topology, gpu: str) -> set[str]:
    return {s.get("source") for s in topo.node(gpu).get("sources") or [] if isinstance(s, dict)}


def pci_scanned(topo: Topology) -> bool:
    return any(o.get("pci_scanned") for o in topo.observations("sysfs_infiniband"))


def on_bus(topo: Topology) -> list[str]:
    """The GPUs the sysfs PCI tree shows."""
    return [g for g in topo.gpus() if "sysfs_infiniband" in _sources(topo, g)]


def _index_only(topo: Topology) -> list[str]:
    return sorted((g for g in topo.gpus() if topo.node(g).get("busid") is None
                   and isinstance(topo.node(g).get("index"), int)), key=lambda g: topo.node(g)["index"])


def _bus_only(topo: Topology) -> list[str]:
    """GPUs on the PCI bus that no index names, visible to this process, bound to the driver (or
    the driver unknown): those the nvidia-smi numbering covers, in bus id order."""
    out = []
    for g in on_bus(topo):
        attrs = topo.node(g)
        if attrs.get("index") is None and attrs.get("job_visible") is not False and \
                attrs.get("pci_driver") in (None, "nvidia"):
            out.append(g)
    return sorted(out, key=lambda g: str(topo.node(g).get("busid")))


def settle(topo: Topology) -> None:
    """Join the GPUs only an index names with those only the PCI bus names, when the counts agree."""
    by_index, by_bus = _index_only(topo), _bus_only(topo)
    if not by_index or not by_bus:
        return
    if len(by_index) != len(by_bus):
        topo.notes.append(f"gpus: {len(by_index)} GPU(s) named only by index ({', '.join(by_index[:4])}) and "
                          f"{len(by_bus)} on the PCI bus the driver numbers: not matched (the counts differ); "
                          "the GPUs are counted once, as the PCI bus shows them")
        return
    for index_id, bus_id in zip(by_index, by_bus):
        topo.join(index_id, bus_id)
    topo.notes.append(f"gpus: {len(by_index)} GPU(s) named only by index matched to the PCI bus's in bus id "
                      "order (the order nvidia-smi and NVML number them)")


def inventory(topo: Topology) -> dict[str, Any]:
    """The node's GPUs as one set: `count` (distinct GPUs), `on_bus` (the PCI tree's, when it was read),
    `hidden` (not visible to this job step or container), `checked` / `unchecked` (GPUs on the bus
    visible to this process that an input of the driver answered for, or none did)."""
    gpus = topo.gpus()
    scanned = pci_scanned(topo)
    bus = on_bus(topo) if scanned else []
    unmatched = [g for g in _index_only(topo)] if scanned else []
    hidden = [g for g in bus if topo.node(g).get("job_visible") is False]
    visible = [g for g in bus if g not in hidden]
    checked = [g for g in visible if _sources(topo, g) & set(CHECKING_SOURCES)]
    unchecked = [g for g in visible if g not in checked]
    if unmatched:  # listed by index, not matched: as many of the unchecked as they are were checked
        unchecked = unchecked[len(unmatched):]
    return {"count": len(gpus) - len(unmatched), "pci_scanned": scanned, "on_bus": bus, "hidden": hidden,
            "checked": checked, "unchecked": unchecked, "unmatched": unmatched}
