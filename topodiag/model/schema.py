"""The model's vocabulary, written down: node kinds, edge kinds, their facts, and the capabilities.

A `Topology` keeps free-form attribute dicts (networkx's layout); this module is the list of what
may be in them. Each node kind and edge kind has its facts, each a `Fact` (name, one-line meaning,
the merge modules that write it: `topodiag/model/merge/<module>.py`, or `paths` for a fact the
model derives after the merge). Nested facts have their own lists: a NIC's `ports` (PORT_FACTS),
a GPU's `nvlink` (NVLINK_FACTS, its `links` NVLINK_LINK_FACTS), the host's `observations`
(OBSERVATION_FACTS, per source; the records some of them hold, OBSERVATION_ITEM_FACTS).
Every node and edge also carries `kind`, `sources` and `provenance` (COMMON).

**Capabilities** are what a rule requires (`requires = ["nic.port_state"]` in its TOML) instead of
tool names: a name `<subject>.<fact>` for something the inputs can tell, with its meaning
(CAPABILITIES). Who gives it is declared in one place per input: a merge module's `PROVIDES`
(the facts it is the first word on: they also order the merge) and `FILLS` (what it adds where
others were silent), for every source it merges; and INPUT_FACTS below for what a source gives
that rules read from its parsed result rather than from the graph (sources no merge module
merges, the combined views, and the parts of a merged source the graph does not keep).
`topodiag.model.merge.capability_sources()` puts the two together: capability -> sources.

tests/model/test_schema.py builds the model from every fixture and refuses a fact written that is
not declared here; it also scans the checks for the node and edge facts they read.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class Fact:
    """One fact of a node or edge: its key, what it means, and who writes it."""

    name: str
    meaning: str
    by: tuple[str, ...]  # merge module names ("build": merge.build itself, "paths": derived after the merge)


@dataclass(frozen=True)
class Kind:
    """A node or edge kind: what it stands for, its id form, and its facts by name."""

    name: str
    meaning: str
    id_form: str
    facts: Mapping[str, Fact]


def _facts(*rows: tuple[str, str, str]) -> Mapping[str, Fact]:
    """("name", "meaning", "module module ...") rows as {name: Fact}."""
    return MappingProxyType({name: Fact(name, meaning, tuple(by.split())) for name, meaning, by in rows})


COMMON = ("kind", "sources", "provenance")  # on every node and edge (Topology keeps them)

_PCIE = (
    ("busid", "PCI bus id as the source printed it (00000000:18:00.0 or 0000:18:00.0)",
     "nvml nvidia_smi_q nccl_xml sysfs gpu_scope"),
    ("pci_class", "PCI class code (NCCL's topology XML)", "nccl_xml"),
    ("vendor_id", "PCI vendor id (the XML), or the HCA's vendor id (the IB tools, sysfs)", "nccl_xml ib sysfs"),
    ("device_id", "PCI device id (NCCL's topology XML)", "nccl_xml"),
    ("pcie_link_speed", "current PCIe link as a generation (\"Gen4\") or NCCL's \"16.0 GT/s PCIe\"", "nccl_xml nvml"),
    ("pcie_link_gts", "current PCIe link speed in GT/s", "nccl_xml sysfs"),
    ("pcie_link_width", "current PCIe link width in lanes", "nccl_xml nvml nvidia_smi_q sysfs"),
    ("pcie_max_link_gts", "the device's maximum PCIe speed (GT/s, or \"Gen5\" from NVML and -q)",
     "nvml nvidia_smi_q sysfs"),
    ("pcie_max_link_width", "the device's maximum PCIe width in lanes", "nvml nvidia_smi_q sysfs"),
    ("pci_path", "the bus ids from the root port down to the device (sysfs)", "sysfs"),
    ("pci_driver", "the kernel driver bound to the PCI function", "sysfs"),
    ("numa_node", "the NUMA node the device hangs off", "topo_m nccl_xml nvml sysfs"),
)

NODE_KINDS: Mapping[str, Kind] = MappingProxyType({k.name: k for k in (
    Kind("host", "the node itself: what the inputs said about it as a whole", "host:<name>", _facts(
        ("name", "the host name (given, or the one host an NCCL log names)", "build"),
        ("observations", "per input a summary the rules and fingerprint read (OBSERVATION_FACTS)",
         "ib nvlink_s nvml nccl_xml rdma_link sysfs gpu_scope observations busbw_pairs bench_env"),
    )),
    Kind("gpu", "a GPU", "gpu:<index> (gpu:<busid> when only the bus id is known)", _facts(
        *_PCIE,
        ("index", "nvidia-smi's GPU index", "topo_m topo_p2p nvlink_s nvml nvidia_smi_q nccl_xml"),
        ("name", "the name topo prints (GPU3)", "topo_m"),
        ("model", "the product name (NVIDIA H100 80GB HBM3)", "nvlink_s nvml nvidia_smi_q gpu_scope"),
        ("uuid", "the GPU UUID", "nvlink_s nvml nvidia_smi_q gpu_scope"),
        ("cpu_affinity", "the CPUs near the GPU (topo -m's CPU Affinity, NVML)", "topo_m nvml"),
        ("numa_affinity", "topo -m's NUMA Affinity column as printed", "topo_m"),
        ("gpu_numa_id", "the GPU's own NUMA id (Grace: GPU memory as a NUMA node)", "topo_m"),
        ("nvlink", "the GPU's NVLinks (NVLINK_FACTS)", "nvlink_s nvml"),
        ("topo_nvlink_count", "the NVLinks topo -m's classes imply for this GPU", "paths"),
        ("lost", "NVML reports the GPU lost (fallen off the bus)", "nvml"),
        ("cuda_dev", "CUDA device index in NCCL's topology", "nccl_xml"),
        ("nccl_rank", "NCCL rank on this GPU (the XML)", "nccl_xml"),
        ("sm", "compute capability (NCCL's sm, 90 for Hopper)", "nccl_xml"),
        ("gdr", "NCCL's GPUDirect RDMA flag for the GPU (the XML)", "nccl_xml"),
        ("device_minor", "the driver's /dev/nvidiaN minor", "gpu_scope"),
        ("job_visible", "False when this job step or container cannot see the GPU", "gpu_scope"),
    )),
    Kind("nic", "an RDMA NIC (HCA) or a network device NCCL names", "nic:<device> (nic:mlx5_0)", _facts(
        *_PCIE,
        ("name", "the RDMA device name (mlx5_0)", "topo_m nccl_xml ib rdma_link sysfs"),
        ("topo_name", "the name topo -m prints (NIC0)", "topo_m"),
        ("cpu_affinity", "topo -m's CPU Affinity of the NIC", "topo_m"),
        ("numa_affinity", "topo -m's NUMA Affinity of the NIC", "topo_m"),
        ("ca_type", "the CA type (MT4129)", "ib sysfs"),
        ("node_type", "CA, switch or router", "ib sysfs"),
        ("firmware", "firmware version", "ib sysfs"),
        ("hardware_version", "hardware revision, in hex", "ib sysfs"),
        ("node_guid", "node GUID", "ib sysfs"),
        ("system_guid", "system image GUID", "ib sysfs"),
        ("transport", "the verbs transport (InfiniBand, iWARP)", "ib sysfs"),
        ("vendor_part_id", "the HCA's vendor part id", "ib sysfs"),
        ("board_id", "the board id or PSID (MT_0000000838)", "ib sysfs"),
        ("num_ports", "how many ports the CA has", "ib sysfs"),
        ("ports", "the CA's ports by number (PORT_FACTS)", "ib rdma_link sysfs"),
        ("netdevs", "the network devices of its ports, in port order", "rdma_link sysfs"),
        ("software_rdma", "True for a software RDMA device (Soft RoCE, Soft iWARP)", "ib rdma_link sysfs"),
        ("software_rdma_kind", "\"Soft RoCE (rxe)\" or \"Soft iWARP (siw)\"", "ib rdma_link sysfs"),
        ("nccl_dev", "NCCL's net device index (the XML)", "nccl_xml"),
        ("net_port", "the port NCCL uses (the XML)", "nccl_xml"),
        ("net_guid", "the GUID NCCL reads (the XML)", "nccl_xml"),
        ("speed_mbps", "the speed NCCL reads, in Mb/s (the XML)", "nccl_xml"),
        ("gdr", "NCCL's GPUDirect RDMA flag for the NIC (the XML)", "nccl_xml"),
    )),
    Kind("numa", "a NUMA node", "numa:<id>", _facts(
        ("name", "numa:<id>", "topo_m nccl_xml nvml"),
        ("numa_node", "its id", "topo_m nccl_xml nvml"),
        ("cpu_affinity", "its CPU list (the first one printed)", "topo_m nccl_xml"),
        ("cpu_affinities", "every CPU list printed for it (GPUs of one node may print different ones)",
         "topo_m nccl_xml"),
    )),
    Kind("cpu", "a CPU socket (root complex) in NCCL's topology", "cpu:<numa id>", _facts(
        ("name", "cpu:<numa id>", "nccl_xml"),
        ("numa_node", "its NUMA node (None when NCCL could not tell)", "nccl_xml"),
        ("numa_known", "False for NCCL's numaid -1 (a VM hiding it)", "nccl_xml"),
        ("affinity_mask", "NCCL's CPU affinity mask", "nccl_xml"),
        ("cpu_affinity", "its CPU list", "nccl_xml"),
        ("arch", "CPU architecture (x86_64, arm64)", "nccl_xml"),
        ("vendor", "CPU vendor (GenuineIntel, AuthenticAMD)", "nccl_xml"),
        ("family", "CPU family number", "nccl_xml"),
        ("model", "CPU model number", "nccl_xml"),
    )),
    Kind("pcisw", "a PCIe switch or bridge in NCCL's topology", "pcisw:<busid>", _facts(
        *(row for row in _PCIE if row[0] in ("busid", "pci_class", "vendor_id", "device_id", "pcie_link_speed",
                                             "pcie_link_gts", "pcie_link_width", "numa_node")),
        ("name", "its bus id", "nccl_xml"),
    )),
    Kind("nvswitch", "an NVSwitch a GPU's NVLinks go to (NCCL's topology)", "nvswitch:<busid>", _facts(
        ("name", "its bus id", "nccl_xml"),
        ("pci_class", "the class NCCL gives the NVLink target", "nccl_xml"),
    )),
)})

EDGE_KINDS: Mapping[str, Kind] = MappingProxyType({k.name: k for k in (
    Kind("path", "the path class between two devices (topo -m's matrix, or derived)", "gpu:0~gpu:1", _facts(
        ("class", "NV#, PIX, PXB, PHB, NODE or SYS", "topo_m topo_p2p nvml nccl_xml sysfs"),
        ("class_raw", "the class as printed when it was renamed (SOC for SYS)", "topo_m"),
        ("link_count", "bonded NVLinks for an NV# class", "topo_m nvml nccl_xml sysfs"),
        ("derived", "True when worked out from a PCI tree or NVML, not printed", "nvml nccl_xml sysfs"),
        ("nvml_topology", "NVML's common-ancestor level for the pair", "nvml"),
    )),
    Kind("nvlink", "NVLinks between a GPU and a peer GPU or NVSwitch (NCCL's topology)", "gpu:0~nvswitch:<busid>",
         _facts(("link_count", "how many links", "nccl_xml"),
                ("tclass", "the target's PCI class", "nccl_xml"))),
    Kind("pci", "a PCIe link, child to parent (NCCL's topology)", "gpu:0~pcisw:<busid>", _facts(
        ("pcie_link_speed", "the link as NCCL prints it (16.0 GT/s PCIe)", "nccl_xml"),
        ("pcie_link_gts", "the link speed in GT/s", "nccl_xml"),
        ("pcie_link_width", "the link width in lanes", "nccl_xml"),
    )),
    Kind("numa", "a device's NUMA node (or a CPU's)", "gpu:0~numa:0", _facts()),
    Kind("p2p", "P2P status per direction ({\"gpu:0>gpu:1\": \"OK\"}), one key per mode", "gpu:0~gpu:1", _facts(
        *((f"status_{m}", f"topo -p2p {m} (or NVML's {what}) per direction", "topo_p2p nvml")
          for m, what in (("r", "read"), ("w", "write"), ("n", "NVLink"), ("a", "atomics"))),
        ("status_p", "topo -p2p p (prop) per direction", "topo_p2p"),
        ("status_rw", "topo -p2p rw per direction", "topo_p2p"),
        ("status_unknown", "a -p2p matrix whose mode the text does not show", "topo_p2p"),
    )),
)})

PORT_FACTS = _facts(  # nic.ports[<n>]: the IB tools' names; rdma link and sysfs fill the same ones
    ("state", "Active, Down, Init, Armed (normalised)", "ib rdma_link sysfs"),
    ("state_raw", "the state as printed (4: ACTIVE)", "ib rdma_link sysfs"),
    ("physical_state", "LinkUp, Polling, Disabled ... (normalised)", "ib rdma_link sysfs"),
    ("physical_state_raw", "the physical state as printed", "ib rdma_link sysfs"),
    ("link_layer", "InfiniBand or Ethernet (RoCE)", "ib rdma_link sysfs"),
    ("rate_gbps", "the port's rate in Gb/s", "ib sysfs"),
    ("rate_raw", "the rate as printed", "ib sysfs"),
    ("active_speed_gbps", "per-lane speed in Gb/s", "ib sysfs"),
    ("active_width", "lanes in use (4X)", "ib sysfs"),
    ("active_mtu", "the active MTU in bytes", "ib sysfs"),
    ("max_mtu", "the largest MTU the port supports", "ib sysfs"),
    ("base_lid", "the port's LID", "ib rdma_link sysfs"),
    ("sm_lid", "the subnet manager's LID", "ib rdma_link sysfs"),
    ("lmc", "LID mask count", "ib rdma_link sysfs"),
    ("port_guid", "port GUID", "ib sysfs"),
    ("capability_mask", "the port capability mask", "ib sysfs"),
    ("default_gid", "GID 0", "ib sysfs"),
    ("gids", "the GID table ibv_devinfo -v or sysfs lists", "ib sysfs"),
    ("netdev", "the port's network device (rdma link)", "rdma_link"),
    ("netdev_index", "that network device's ifindex", "rdma_link"),
    ("subnet_prefix", "the subnet prefix", "rdma_link"),
    ("line_no", "the line it was printed at", "ib rdma_link sysfs"),
    ("printed_by", "the source that printed the port", "ib rdma_link sysfs"),
    ("sources", "every source that spoke of the port", "ib rdma_link sysfs"),
)

NVLINK_FACTS = _facts(  # gpu.nvlink: the shape `nvlink -s` gives; NVML's links take it too
    ("links", "per link: link, active, speed_gbps, state, line_no", "nvlink_s nvml"),
    ("active_count", "links up", "nvlink_s nvml"),
    ("shown_count", "links listed", "nvlink_s nvml"),
    ("speeds_gbps", "the distinct speeds of the active links", "nvlink_s nvml"),
    ("truncated", "the listing of this GPU was cut short", "nvlink_s nvml"),
    ("all_links_inactive", "every listed link is inactive", "nvlink_s nvml"),
    ("nvlink_unsupported", "the GPU has no NVLink (a PCIe board)", "nvlink_s nvml"),
    ("message", "what the tool printed instead of links", "nvlink_s nvml"),
    ("source", "where the GPU's block was read", "nvlink_s nvml"),
)

NVLINK_LINK_FACTS = _facts(  # gpu.nvlink.links[i]
    ("link", "the link number", "nvlink_s nvml"),
    ("active", "the link is up", "nvlink_s nvml"),
    ("speed_gbps", "its speed in GB/s as the tool prints it", "nvlink_s nvml"),
    ("state", "active, inactive, or the state printed", "nvlink_s nvml"),
    ("line_no", "the line it was printed at (None from NVML)", "nvlink_s nvml"),
)

_OBS = ("source", "file")  # on every observation
OBSERVATION_FACTS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "ibstat": _OBS + ("errors", "cas_listed"),
    "ibv_devinfo": _OBS + ("errors", "cas_listed"),
    "ibstatus": _OBS + ("errors", "cas_listed"),
    "sysfs_infiniband": _OBS + ("errors", "cas_listed", "pci_scanned", "gpus_on_bus"),
    "rdma_link": _OBS + ("errors",),
    "nvidia_smi_nvlink_s": _OBS + ("errors", "elided_gpu_indices", "truncated"),
    "nvml": _OBS + ("ok", "error", "error_name", "driver_version", "cuda_driver_version", "lost", "unsupported"),
    "nccl_topo_xml": _OBS + ("graphs",),
    "gpu_scope": _OBS + ("ok", "env", "restricted_by", "visible", "hidden", "driver_gpus"),
    "nccl_debug": _OBS + ("nccl_version", "cuda_version", "hosts", "nranks", "network", "networks", "net_plugin",
                          "net_devices", "gdr", "gdr_lines", "transports", "env", "socket_fallback_reasons",
                          "init_complete", "warnings_total", "errors_total", "errors"),
    "nccl_tests": _OBS + ("collective", "nccl_version", "nranks", "avg_busbw_gbps", "peak_busbw_gbps",
                          "out_of_bounds", "out_of_bounds_ok", "runs", "failures", "failures_total", "rows",
                          "largest"),
    "busbw_pairs": _OBS + ("pairs", "nodes", "best_busbw_gbps", "worst_busbw_gbps"),
    "nccl_env": _OBS + ("env", "form"),
    "nccl_diag": _OBS + ("reports", "failures", "summaries"),
    "p2p_bandwidth_latency": _OBS + ("devices", "matrices"),
    "nvbandwidth": _OBS + ("version", "testcases"),
})


# -- capabilities --------------------------------------------------------------------------------

CAPABILITIES: Mapping[str, str] = MappingProxyType({
    # GPUs
    "gpu.index": "GPUs named by nvidia-smi's index (gpu:3), the names the other inputs join",
    "gpu.inventory": "which GPUs the node has (a listing of every GPU)",
    "gpu.busid": "each GPU's PCI bus id (and its aliases)",
    "gpu.numa": "each GPU's NUMA node and CPU affinity",
    "gpu.nvlinks": "each GPU's NVLinks: state, speed, active count",
    "gpu.nvlink_errors": "NVLink error counters per link",
    "gpu.pair_class": "the path class of each GPU pair (NV#, PIX ... SYS)",
    "gpu.nic_path": "how close each GPU is to each NIC (a path class or the PCI tree)",
    "gpu.p2p_status": "whether each GPU pair can do P2P (per mode and direction)",
    "gpu.pcie_link": "each GPU's current PCIe link (generation, width)",
    "gpu.pcie_max": "each GPU's maximum PCIe link (generation, width)",
    "gpu.fabric_state": "each GPU's NVLink fabric (NVL72 / NVSwitch) registration state",
    "gpu.job_visible": "which GPUs this job step or container can see",
    "gpu.pair_bandwidth": "measured GPU-to-GPU copy bandwidth per pair",
    "gpu.p2p_bandwidth_on_off": "measured GPU pair bandwidth with P2P enabled and disabled",
    "gpu.host_bandwidth": "measured host-to-GPU and GPU-to-host copy bandwidth",
    "gpu.bandwidth_testcases": "which nvbandwidth testcases ran, were waived or failed",
    "nvidia_smi.failures": "what nvidia-smi printed when it failed (driver not loaded, GPU lost ...)",
    # NICs and the fabric
    "nic.inventory": "the RDMA NICs by device name (mlx5_0), the names the IB tools join",
    "nic.numa": "each NIC's NUMA node",
    "nic.port_state": "each HCA port's state, physical state, rate and link layer",
    "nic.link_layer": "whether each RDMA port is InfiniBand or Ethernet (RoCE)",
    "nic.active_mtu": "each RDMA port's active MTU (or the netdev's)",
    "nic.netdevs": "each RDMA port's network device",
    "nic.gid_table": "each RoCE port's GID table (index, type, address)",
    "nic.port_counters": "each HCA port's error and traffic counters",
    "nic.pfc": "the RoCE lossless configuration (PFC, trust, pause counters)",
    "nic.ethtool_counters": "each RoCE netdev's ethtool counters (discards, pause)",
    "nic.topo_rows": "the NIC rows and columns of `nvidia-smi topo -m`",
    "ib.tool_errors": "what the IB tools printed when they failed",
    "fabric.links": "the IB fabric's links (iblinkinfo or ibnetdiscover)",
    # PCIe and the host
    "pci.tree": "the PCI tree: switches and bridges, child to parent",
    "pci.paths": "each GPU's and HCA's PCI path, link speed and width from sysfs",
    "pci.functions": "every PCI function a sysfs scan found (with its RDMA devices)",
    "pci.acs": "each bridge's ACS control bits",
    "pci.link_status": "each PCIe device's link against its capability (or the kernel's 'limited by')",
    "host.iommu": "the IOMMU mode (kernel command line, kernel log, /sys/class/iommu)",
    "kernel.messages": "the kernel log: Xid, SXid, NVRM, AER, mlx5 messages",
    "gdr.peermem": "whether GPUDirect RDMA's peer-memory module is loaded",
    "fabricmanager.state": "the NVIDIA Fabric Manager service's state and log",
    # NCCL and runs
    "nccl.transport": "the transports NCCL chose (P2P, SHM, NET/IB, NET/Socket) and why",
    "nccl.net_devices": "the network devices NCCL used, per GPU",
    "nccl.net_plugin": "which net plugin NCCL loaded (or failed to)",
    "nccl.ranks": "the ranks and hosts that joined an NCCL communicator",
    "nccl.errors": "NCCL's WARN and error lines, with their classes",
    "nccl.gdr": "whether NCCL used GPUDirect RDMA",
    "nccl.env": "the NCCL_* environment of a job",
    "nccl.diag_report": "NCCL's own diagnostics report (NCCL_RUN_DIAGNOSTICS)",
    "nccl.busbw": "nccl-tests results: busbw and #wrong per size",
    "nccl.pair_busbw": "nccl-tests busbw per node pair",
    "host.nccl_runs": "the NCCL runs read (observations on the host)",
    "host.run_environment": "a job's environment and copy benchmarks (observations on the host)",
})

_NVIDIA_SMI = ("nvidia_smi_q", "nvidia_smi_topo_m", "nvidia_smi_topo_p2p", "nvidia_smi_nvlink_s", "nvidia_smi_nvlink_e",
               "nvidia_smi_nvlink_c", "nvidia_smi_nvlink_gt", "nvidia_smi_nvlink_info")

# What a source gives that rules read from its parsed result (or, for a merged source, what only some
# of its module's sources give); the merge modules' PROVIDES / FILLS hold the rest. Combined views
# (topodiag.model.combiners.COMBINED) are inputs too.
INPUT_FACTS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    **{s: ("nvidia_smi.failures",) for s in _NVIDIA_SMI},
    "nvidia_smi_q": ("nvidia_smi.failures", "gpu.fabric_state"),
    "nvml": ("gpu.fabric_state",),
    "nvidia_smi_nvlink_e": ("nvidia_smi.failures", "gpu.nvlink_errors", "gpu.inventory"),
    "nccl_debug": ("nccl.transport", "nccl.net_devices", "nccl.net_plugin", "nccl.ranks", "nccl.errors", "nccl.gdr",
                   "nccl.env", "nic.link_layer", "nic.active_mtu"),
    "nccl_env": ("nccl.env",),
    "nccl_diag": ("nccl.diag_report",),
    "nccl_tests": ("nccl.busbw",),
    "busbw_pairs": ("nccl.pair_busbw",),
    "p2p_bandwidth_latency": ("gpu.pair_bandwidth", "gpu.p2p_bandwidth_on_off"),
    "nvbandwidth": ("gpu.pair_bandwidth", "gpu.host_bandwidth", "gpu.bandwidth_testcases"),
    "ibv_devinfo": ("nic.active_mtu",),
    "ib_counters": ("nic.port_counters", "nic.active_mtu", "nic.pfc"),
    "mlnx_qos": ("nic.pfc",),
    "ethtool_stats": ("nic.ethtool_counters",),
    "iblinkinfo": ("ib.tool_errors",),
    "ibnetdiscover": ("ib.tool_errors",),
    "roce_gids": ("nic.gid_table",),
    "ib_links": ("fabric.links",),
    "kernel_log": ("kernel.messages", "pci.link_status", "host.iommu"),
    "lspci_vvv": ("pci.acs", "pci.link_status"),
    "kernel_cmdline": ("host.iommu",),
    "sysfs_iommu": ("host.iommu",),
    "fabricmanager": ("fabricmanager.state",),
    "peermem": ("gdr.peermem",),
})

# The records inside an observation (a list of them, or one: nccl_tests' `largest` is one of its `rows`),
# by the observation key that holds them; the keys are those of every source's records under that key.
_ROW = ("size_bytes", "oop_busbw_gbps", "ip_busbw_gbps", "oop_wrong", "ip_wrong", "run", "line_no")
OBSERVATION_ITEM_FACTS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    # an input's error lines: the IB tools' and sysfs's failures, nvlink -s's, NCCL's WARN lines
    "errors": ("line_no", "text", "class", "entry", "severity", "kind", "consequence"),
    "gdr_lines": ("line_no", "text"),  # NCCL's GPUDirect RDMA lines
    "net_devices": ("index", "name", "kind", "address", "port", "link_layer", "sharp"),  # NCCL's NET devices
    "rows": _ROW,  # nccl-tests' result rows
    "largest": _ROW,  # the row of the largest size
    "graphs": ("id", "pattern", "crossnic", "nchannels", "speedintra", "speedinter", "typeintra", "typeinter",
               "samechannels", "channels"),  # NCCL's topology XML graphs
    "summaries": ("passed", "tested"),  # NCCL's diagnostics summary lines
})


def is_capability(name: str) -> bool:
    """A capability is written <subject>.<fact>; an input name (a source) has no dot."""
    return "." in name


def vocabulary() -> frozenset[str]:
    """Every fact name the model may hold, at any depth (the checks scan compares with it)."""
    names = set(COMMON) | set(PORT_FACTS) | set(NVLINK_FACTS) | set(NVLINK_LINK_FACTS)
    for kind in (*NODE_KINDS.values(), *EDGE_KINDS.values()):
        names |= set(kind.facts)
    for keys in (*OBSERVATION_FACTS.values(), *OBSERVATION_ITEM_FACTS.values()):
        names |= set(keys)
    return frozenset(names)
