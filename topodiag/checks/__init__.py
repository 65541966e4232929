"""Python logic for the rules, one module per family (topo, nvlink, ib, nccl, perf)."""
