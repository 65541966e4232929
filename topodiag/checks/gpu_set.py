"""SYS005: NVIDIA GPUs the PCI bus shows that no input of the driver answered for (no NVML, no
nvidia-smi output): not checked, so no verdict on them (exit 3), never a pass."""

from __future__ import annotations

from ..engine import check, hit
from ..model.gpu_set import inventory
from .topo import NVML_DRIVER_FAULTS


@check("SYS005")
def gpus_not_checked(topology):
    """GPUs on the PCI bus, visible to this process, that no NVML or nvidia-smi input lists, on a node
    where none lists any; NVML that answered, or failed as a broken driver does, is TOPO006's to judge
    (NVML not importable, or without its library, checked nothing)."""
    nvml = next(iter(topology.observations("nvml")), None)
    if nvml is not None and (nvml.get("ok") or nvml.get("error_name") in NVML_DRIVER_FAULTS):
        return  # NVML answered, or failed on a host with GPUs: TOPO006 judges what it says
    inv = inventory(topology)
    if not inv["unchecked"] or inv["checked"] or inv["unmatched"]:
        return
    gpus = inv["unchecked"]
    busids = [topology.node(g).get("busid") or g for g in gpus]
    yield hit(gpus, evidence=[{"source": "sysfs_infiniband"}], expectation="every GPU on the PCI bus is checked",
              count=len(gpus), busids=", ".join(busids[:4]) + (f" +{len(busids) - 4} more" if len(busids) > 4 else ""))
