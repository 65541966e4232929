"""Python logic for the rules, one module per family (topo, nvlink, ib, nccl, perf)."""


def design_hints(topology, profile=None):
    """Every hint the node's model carries about its design (GPU model and count, NV#/PCIe pairs, NICs,
    PCIe generation: checks/_design.py), as the platform inference takes them; the pipeline's public
    way to them."""
    from ._design import hints_of

    return hints_of(topology, profile)
