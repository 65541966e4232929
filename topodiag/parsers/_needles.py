"""Which parsers can possibly claim a text, decided without importing them (issue 29).

Detection asks every source's `sniff` (each in its light module, sniff/<source>.py); importing and
asking all of them costs more than the rest of `check --from FILE`'s start-up. NEEDLES lists, for each
parser, substrings of which at least one must appear (case-insensitively) in the text its sniff sees
for the sniff to be able to score at or above the detection threshold: each was read off the sniff's
own literals (a regex's fixed words, the strings it tests with `in`). A source whose needles are all
absent is not asked (its sniff module is not imported).

A parser listed with None is always asked: its sniff has no fixed word to look for.
  busbw_pairs   host-pair lines of two names and a figure
  kernel_log    lines stamped as dmesg / syslog / the journal write them (digits and punctuation)
A parser absent from the table is always asked too (tests/parsers/test_registry.py refuses one).

nvidia-smi's failure (a text that is only "NVIDIA-SMI has failed ...", "Failed to initialize
NVML: ..."): nvidia_smi_q, nvidia_smi_topo_m and nvidia_smi_nvlink_s score it through
`_tool_failures.sniff_failure`, which needs a line that the nvidia-smi catalogue explains among
the first 40. Every entry of that catalogue is found by its fixed start; NVSMI_FAILURE_NEEDLES
holds a whole word of each start (the test derives the starts from the catalogue and checks).

Needles are matched against the lower-cased text: `needle in text` implies `needle.lower() in
text.lower()`, so lower-casing only widens the pass, never narrows it.
"""

from __future__ import annotations

from typing import Optional

NEEDLES: dict[str, Optional[tuple[str, ...]]] = {
    "busbw_pairs": None,
    "ethtool_stats": ("nic statistics", "ethtool"),
    # the one word of `systemctl is-active`: "inactive" holds "active", "deactivating" "activating"
    "fabricmanager": ("nv_warn_nothing_to_do", "fabricmanager", "active", "activating", "failed", "reloading",
                      "unknown"),
    "gpu_scope": ('"gpu_scope"',),
    "ib_counters": ("counters", "/ecn/roce_"),
    "iblinkinfo": ("==(", "iblinkinfo: iberror: "),
    # node and connection lines quote a name; ports report: a rate; kv and node list: 0x guids
    "ibnetdiscover": ("topology file", '"', "guid=0x", "ports", "sdr", "ddr", "qdr", "fdr", "edr", "hdr", "ndr",
                      "xdr", "???", "ibnetdiscover: iberror: "),
    "ibstat": (" type:", "ibpanic: ", "physical state: "),
    "ibstatus": ("infiniband device '", "fatal error:"),
    "ibv_devinfo": ("hca", "gid[", "state:", "ib devices"),
    "kernel_cmdline": ("boot_image=", "root=", "iommu="),
    "kernel_log": None,
    "lspci_tree": ("]-",),
    "lspci_vvv": ("acsctl:", "lnksta:", "lnkcap:", "acscap:"),
    "mlnx_qos": ("priority trust state", "pfc configuration"),
    "nccl_debug": ("nccl", " via "),
    "nccl_diag": ("nccl diag ",),
    "nccl_env": ("nccl_",),
    # banner, header, summary and device lines hold '#'; bare rows a data type
    "nccl_tests": ("#", "float", "half", "double", "int", "char", "fp8"),
    "nccl_topo_xml": ("<system", "<graphs"),
    "nvbandwidth": ("nvbandwidth version:", "bandwidth (gb/s)", "memcpy "),
    "nvidia_smi_nvlink_c": ("supported: ",),
    "nvidia_smi_nvlink_e": ("errors", "events: ", "discards: ", "packets: ", "bytes: ", "ber: ", "blocks: ",
                            "lane ", "total: "),
    "nvidia_smi_nvlink_gt": (" tx: ", " rx: "),
    "nvidia_smi_nvlink_info": ("nvle: ", "nvlink encryption: ", "firmware version:", "mse", "netir"),
    "nvidia_smi_nvlink_s": ("gb/s", "<inactive>", "nvlink", "supported", "errors: ", "remote device ", " tx: ",
                            " rx: ", "nvle: ", "firmware version:"),
    "nvidia_smi_q": ("nvsmi log", "attached gpus", "fabric", "gpu link info"),
    # the matrices strip ANSI colours before sniffing: a text holding ESC is always theirs to see
    "nvidia_smi_topo_m": ("cpu affinity", "gpu0", "nv#", "\x1b"),
    "nvidia_smi_topo_p2p": ("= status ok", "= chipset not supported", "gpu0", "\x1b"),
    "nvml": ('"nvml"',),
    "p2p_bandwidth_latency": ("p2p", "access"),
    # module names, /proc/modules' "Live|Loading|Unloading 0x", lsmod's "Module  Size  Used by"
    "peermem": ("memory_peers", "peermem", "nv_peer_mem", "nvrm version: nvidia unix", "module", "live",
                "loading"),
    "rdma_link": ("lid", "state", "netdev", "subnet_prefix"),
    # bare GID rows are hex groups split by ':'
    "show_gids": ("ipv4", "n_gids_found=", ":"),
    "sysfs_infiniband": ('"sysfs"', '"pyverbs"', '"infiniband"'),
    "sysfs_iommu": ("dmar", "ivhd", "iommu", "smmu"),
}

# The parsers whose sniff also scores a text that is only nvidia-smi's failure.
NVSMI_FAILURE = frozenset({"nvidia_smi_q", "nvidia_smi_topo_m", "nvidia_smi_nvlink_s"})
NVSMI_FAILURE_NEEDLES = ("nvml", "latest", "nvidia-smi", "devices", "unable")
FAILURE_LINES = 40  # what sniff_failure reads: the first lines of at most FAILURE_CHARS
FAILURE_CHARS = 20000


def _any(needles: tuple[str, ...], low: str) -> bool:
    return any(n in low for n in needles)


def candidates(head: str, sources: tuple[str, ...]) -> list[str]:
    """The sources (in the given order) whose sniff may claim `head`: the others surely score below
    the detection threshold."""
    low = head.lower()
    failure: Optional[bool] = None
    out = []
    for source in sources:
        needles = NEEDLES.get(source)
        if needles is None or _any(needles, low):
            out.append(source)
            continue
        if source in NVSMI_FAILURE:
            if failure is None:
                first = "\n".join(head[:FAILURE_CHARS].splitlines()[:FAILURE_LINES]).lower()
                failure = _any(NVSMI_FAILURE_NEEDLES, first)
            if failure:
                out.append(source)
    return out
