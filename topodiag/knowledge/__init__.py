"""Hardware knowledge: the one home of every number about the hardware, as data with its source.

One data file per domain beside this package (each fact with a `source`):

    pcie.toml    PCIe generations and their x16 ceilings, GT/s -> generation
    nvlink.toml  NVLink generations, the GA102 bridge, multi-node NVLink domains (NVL72)
    gpus.toml    GPU models: NVLink population per product and form factor (SXM, bridged PCIe, Grace
                 superchips, consumer boards), PCIe generation, GPUDirect RDMA
    ib.toml      InfiniBand rates (per lane, 4x), legacy rate names, measured per-NIC anchors
    hca.toml     HCA models by CA type, board SKUs by PSID / part number with their native rates
    busbw.toml   nccl-tests busbw references per transport (NVLink ring, PCIe P2P, host-staged)
    xid.toml     Xid and NVSwitch SXid codes
    clouds.toml  cloud instance layouts (AWS p4d/p5, Azure ND/NC, GCP A3) as published

and one module per domain that reads it (pcie, nvlink, gpus, ib, paths, busbw, xid, platform). The GPU
and HCA tables are read on first use, so importing the package stays cheap for the prolog. This
package re-exports every name the former single module `knowledge.py` had, so `from topodiag import
knowledge; knowledge.gpu_facts(...)` keeps working. It imports only the standard library (a leaf).

Units are in the names: `_gbyte_s` is GB/s (bytes), `_gbit_s` is Gb/s (bits). The two names the
tools themselves use keep their tool's unit: `printed_gbps` / `nvlink_speed_gbps` are GB/s as
`nvidia-smi nvlink -s` prints them, `rate_gbps` is Gb/s as `ibstat` prints it. Functions return None
where the tables have no number; they raise ValueError for text that is not what they read.
"""

from __future__ import annotations

from ._data import data_files
from .busbw import BUSBW_FACTORS, HOST_STAGED_EFFICIENCY, NVLINK_RING_EFFICIENCY, PCIE_P2P_EFFICIENCY, \
    PLATEAU_NO_MODEL_GBYTE_S, TRANSPORTS, busbw_factor, busbw_from_algbw, busbw_source, normalize_collective, \
    pcie_busbw_gbyte_s
from .gpus import GRACE_RE, GpuFacts, gpu_facts, gpu_models, gpu_table, is_grace, multinode_nvlink_gpus, normalize_gpu_name, \
    slowest_sxm_nvlink, switched_nvlink
from .ib import IB_LEGACY_RATE_NAMES, IB_MEASURED_GBYTE_S, IB_RATE_REL_TOL, IB_RATES, HcaSku, \
    IbRate, gbit_to_gbyte, hca_lower_skus, hca_model, hca_models, hca_sku, hca_skus, hca_top_gbit_s, ib_rate_label, \
    ib_rate_name
from .nvlink import GA102_BRIDGE_LINKS, GA102_BRIDGE_ONE_WAY_GBYTE_S, GA102_BRIDGE_SPEED_GBPS, \
    MULTINODE_NVLINK_GPUS, NVLINK_GENS, NVLINK_SPEED_REL_TOL, NvlinkGen, nvlink_gen, nvlink_nominal_speed_gbps, \
    nvlink_speed_ok, unknown_per_link_gbyte_s
from .paths import PATH_ALIASES, PATH_CLASSES, PCIE_PATH_CLASSES, is_nvlink, is_path_class, normalize_path_class, \
    nvlink_count, path_nominal_gbyte_s, path_rank, path_sort_key
from .pcie import PCIE_GTS_TO_GEN, PCIE_X16_GBYTE_S, fastest_pcie_gen, pcie_bidir_gbyte_s, pcie_gen_from_link_speed, \
    pcie_one_way_gbyte_s



def __getattr__(name: str):
    """The tables built on first use (GPU_MODELS, HCA_MODELS, HCA_SKUS): the import stays cheap."""
    lazy = {"GPU_MODELS": gpu_models, "HCA_MODELS": hca_models, "HCA_SKUS": hca_skus}
    if name in lazy:
        return lazy[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BUSBW_FACTORS", "GA102_BRIDGE_LINKS", "GA102_BRIDGE_ONE_WAY_GBYTE_S", "GA102_BRIDGE_SPEED_GBPS", "GPU_MODELS",
    "GRACE_RE", "GpuFacts", "HCA_MODELS", "HCA_SKUS", "HOST_STAGED_EFFICIENCY", "HcaSku", "IB_LEGACY_RATE_NAMES",
    "IB_MEASURED_GBYTE_S", "IB_RATES", "IB_RATE_REL_TOL", "IbRate", "MULTINODE_NVLINK_GPUS", "NVLINK_GENS",
    "NVLINK_RING_EFFICIENCY", "NVLINK_SPEED_REL_TOL", "NvlinkGen", "PATH_ALIASES", "PATH_CLASSES",
    "PCIE_GTS_TO_GEN", "PCIE_P2P_EFFICIENCY", "PCIE_PATH_CLASSES", "PCIE_X16_GBYTE_S", "PLATEAU_NO_MODEL_GBYTE_S",
    "TRANSPORTS", "busbw_factor", "busbw_from_algbw", "busbw_source", "data_files", "fastest_pcie_gen",
    "gbit_to_gbyte", "gpu_facts", "hca_lower_skus", "hca_model", "hca_sku", "hca_top_gbit_s", "ib_rate_label",
    "ib_rate_name", "is_grace", "is_nvlink", "is_path_class", "multinode_nvlink_gpus", "normalize_collective",
    "normalize_gpu_name", "normalize_path_class", "nvlink_count", "nvlink_gen", "nvlink_nominal_speed_gbps",
    "nvlink_speed_ok", "path_nominal_gbyte_s", "path_rank", "path_sort_key", "pcie_bidir_gbyte_s",
    "pcie_busbw_gbyte_s", "pcie_gen_from_link_speed", "pcie_one_way_gbyte_s", "slowest_sxm_nvlink",
    "switched_nvlink", "unknown_per_link_gbyte_s", "gpu_models", "gpu_table", "hca_models", "hca_skus",
]
