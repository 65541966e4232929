"""The article's arithmetic, one pure function per formula (docs/domain.md "Why parallelism follows
the interconnect"). Bytes are decimal (1 GB = 1e9 B), bandwidths GB/s, times seconds.

How a time is counted: the bytes ONE GPU moves divided by the bandwidth of the layer it moves them
on, per GPU. That is exactly what nccl-tests' busbw measures (busbw = the bytes a GPU moves / time),
so a measured busbw drops straight into these formulas. Nominal figures are one direction per GPU on
every layer, as busbw counts them (NVLink on H100: 18 links x 25 GB/s = 450 GB/s; a NIC at its line
rate, 50 GB/s for NDR). The article counts NVLink over both directions (900 GB/s) and a NIC one way,
which doubles the NVLink-to-network gap (its 18x is 9x): docs/domain.md "Where the article rounds or errs".

    ring AllReduce, n GPUs, S bytes:     2(n-1)/n x S moved per GPU (2 x S as n grows)
    TP, per step:                        layers x 4 AllReduces (attention and MLP, forward and backward)
    DP, per step:                        one AllReduce of the gradients (ZeRO: reduce-scatter + all-gather,
                                         (n-1)/n x S each, the same total in two halves)
    PP, per micro-batch:                 the activation forward and its gradient back, point to point
    pipeline bubble:                     (P-1) / (P-1+M)
    EP, per MoE layer:                   4 all-to-alls (dispatch, combine; forward, backward) of the
                                         routed tokens, (n-1)/n of them leaving the GPU
"""

from __future__ import annotations

ALLREDUCES_PER_LAYER = 4  # attention and MLP, each once forward and once backward
ALLTOALLS_PER_LAYER = 4


def ring_allreduce_factor(n: int | None) -> float:
    """2(n-1)/n: the share of the data each GPU sends (and receives) in a ring AllReduce of n GPUs;
    n=None is the large-n bound, 2 (the article's "14 GB -> about 28 GB")."""
    if n is None:
        return 2.0
    if n < 1:
        raise ValueError(f"a group has at least one GPU, got {n}")
    return 2 * (n - 1) / n


def ring_allreduce_bytes(size_bytes: float, n: int | None) -> float:
    """Bytes one GPU moves in a ring AllReduce of `size_bytes` over n GPUs."""
    return ring_allreduce_factor(n) * size_bytes


def transfer_s(bytes_moved: float, gbyte_s: float) -> float:
    """Seconds to move `bytes_moved` at `gbyte_s` GB/s (decimal)."""
    if gbyte_s <= 0:
        raise ValueError(f"bandwidth must be positive, got {gbyte_s}")
    return bytes_moved / (gbyte_s * 1e9)


def tp_allreduces(layers: int, micro_batches: int = 1) -> int:
    """AllReduces a tensor-parallel rank runs per step: 4 per layer per micro-batch (80 layers: 320)."""
    return ALLREDUCES_PER_LAYER * layers * micro_batches


def tp_step_s(layers: int, bytes_moved_each: float, gbyte_s: float, micro_batches: int = 1) -> float:
    """TP AllReduce time per step: 80 layers x 4 x 1 GB at 450 GB/s (H100 NVLink, one way) = 0.711 s, at
    50 GB/s (NDR) = 6.4 s (the article divides by 900 GB/s: 0.356 s)."""
    return tp_allreduces(layers, micro_batches) * transfer_s(bytes_moved_each, gbyte_s)


def bubble_fraction(stages: int, micro_batches: int) -> float:
    """(P-1)/(P-1+M): the share of a pipeline step the stages sit idle (P=1: none)."""
    if stages < 1 or micro_batches < 1:
        raise ValueError(f"stages and micro-batches are at least 1, got {stages}, {micro_batches}")
    return (stages - 1) / (stages - 1 + micro_batches)


def alltoall_bytes(size_bytes: float, n: int) -> float:
    """Bytes that leave one GPU in an all-to-all of `size_bytes` over n GPUs: (n-1)/n of them."""
    return (n - 1) / n * size_bytes if n > 1 else 0.0
