"""topodiag: diagnose the interconnect of GPU nodes (NVLink, PCIe, InfiniBand/RoCE, NCCL)."""

__version__ = "0.1.0"
