"""The article's worked numbers (docs/domain.md "Why parallelism follows the interconnect"),
computed by the same functions `topodiag plan` uses, with the article's own assumptions:

- TP: "80 layers x 4 AllReduces = 320, each moving 1 GB": NVLink 4.0 at 900 GB/s (per GPU, both
  directions), IB NDR at 50 GB/s; time = bytes moved / bandwidth. The article prints "about 1.1 ms,
  about 0.35 s" (1/900 s = 1.11 ms; 320/900 = 0.3556 s, which the article truncates to 0.35) and
  "about 20 ms, about 6.4 s", "18x".
- DP: FP16 gradients = 2 bytes x parameters (7B: 14 GB, 70B: 140 GB). "8-GPU ring AllReduce, about
  28 GB / 280 GB per GPU": the article uses the large-n bound 2 x S of 2(n-1)/n x S (for n = 8 the
  exact factor 1.75 gives 24.5 / 245 GB); times on NVLink 4.0 "about 31 ms / 311 ms" = 28 GB / 900 and
  280 GB / 900; "70B across nodes on IB (50 GB/s): about 5.6 s" = 280 GB / 50.
- The bubble (P-1)/(P-1+M).
"""

from __future__ import annotations

import pytest

from topodiag import knowledge
from topodiag.plan import traffic
from topodiag.plan.models import PRESETS, model_spec

GB = 1e9
NVLINK4 = knowledge.NVLINK_GENS[4].per_gpu_bidir_gbyte_s  # 900: the article's figure, from the table
NDR = knowledge.IB_RATES["NDR"].link_4x_gbyte_s  # 50


def test_the_bandwidths_are_the_articles() -> None:
    assert NVLINK4 == 900.0 and NDR == 50.0
    assert NVLINK4 / NDR == 18.0  # "差距 18 倍"


def test_320_allreduces_of_1_gb_on_nvlink4_and_ndr() -> None:
    assert traffic.tp_allreduces(80) == 320
    one_nvlink = traffic.transfer_s(1 * GB, NVLINK4)
    one_ndr = traffic.transfer_s(1 * GB, NDR)
    assert one_nvlink == pytest.approx(1 / 900)  # 1.11 ms: "约 1.1 ms"
    assert round(one_nvlink * 1e3, 1) == 1.1
    assert one_ndr == pytest.approx(0.020)  # "约 20 ms"
    nvlink = traffic.tp_step_s(80, 1 * GB, NVLINK4)
    ndr = traffic.tp_step_s(80, 1 * GB, NDR)
    assert nvlink == pytest.approx(320 / 900)  # 0.3556 s; the article's "约 0.35 s" truncates it
    assert 0.35 <= nvlink < 0.36
    assert ndr == pytest.approx(6.4)  # "约 6.4 s", exactly
    assert ndr / nvlink == pytest.approx(18.0)


def test_the_article_preset_is_the_worked_example() -> None:
    spec = model_spec()  # the default
    assert spec is PRESETS["article"]
    assert (spec.layers, spec.tp_bytes_moved) == (80, 1 * GB)


@pytest.mark.parametrize("params, grads_gb, per_gpu_gb, nvlink_ms", [
    (7e9, 14, 28, 31),       # 7B: 14 GB of FP16 gradients, ~28 GB per GPU, ~31 ms on NVLink 4.0
    (70e9, 140, 280, 311),   # 70B: 140 GB, ~280 GB, ~311 ms
])
def test_dp_ring_allreduce_traffic_and_time(params, grads_gb, per_gpu_gb, nvlink_ms) -> None:
    grads = model_spec("7b" if params == 7e9 else "70b", dtype="fp16").gradient_bytes
    assert grads == grads_gb * GB
    moved = traffic.ring_allreduce_bytes(grads, None)  # the article's bound: 2 x S
    assert moved == per_gpu_gb * GB
    assert round(traffic.transfer_s(moved, NVLINK4) * 1e3) == nvlink_ms
    # the exact ring factor for 8 GPUs is 2(n-1)/n = 1.75: 24.5 GB (7B) / 245 GB (70B) per GPU
    assert traffic.ring_allreduce_factor(8) == 1.75
    assert traffic.ring_allreduce_bytes(grads, 8) == pytest.approx(1.75 * grads_gb * GB)


def test_70b_dp_across_nodes_on_ndr_is_5_6_s() -> None:
    moved = traffic.ring_allreduce_bytes(140 * GB, None)
    assert traffic.transfer_s(moved, NDR) == pytest.approx(5.6)


@pytest.mark.parametrize("p, m, bubble", [(1, 8, 0.0), (2, 1, 0.5), (4, 4, 3 / 7), (8, 32, 7 / 39), (4, 12, 0.2)])
def test_bubble(p, m, bubble) -> None:
    assert traffic.bubble_fraction(p, m) == pytest.approx(bubble)


def test_ring_factor_is_2n_minus_1_over_n() -> None:
    assert [traffic.ring_allreduce_factor(n) for n in (1, 2, 4, 8)] == [0.0, 1.0, 1.5, 1.75]
    with pytest.raises(ValueError):
        traffic.ring_allreduce_factor(0)


def test_the_hardware_counts_one_direction_and_the_gap_is_9x() -> None:
    """Where the article errs (docs/domain.md "Where the article rounds or errs"): it divides NVLink by
    both directions (900 GB/s) and the NIC by one (50 GB/s). Counted as the hardware moves data and as
    nccl-tests' busbw measures it, one direction on both: 450 GB/s and 50 GB/s, 9x; the 320 AllReduces
    of 1 GB take 320/450 = 0.711 s on NVLink, not 0.356 s. PCIe 5.0 x16 against NVLink 4.0: 64 vs
    450 GB/s, 7x; PCIe 5.0 against NVLink 5.0 (B200: 18 x 50 = 900 GB/s): 14x, not 'one to two orders
    of magnitude'."""
    nvlink4 = knowledge.NVLINK_GENS[4].per_gpu_one_way_gbyte_s
    nvlink5 = knowledge.NVLINK_GENS[5].per_gpu_one_way_gbyte_s
    pcie5 = knowledge.pcie_one_way_gbyte_s(5)
    assert (nvlink4, nvlink5, pcie5, NDR) == (450.0, 900.0, 64.0, 50.0)
    assert nvlink4 / NDR == 9.0
    assert traffic.tp_step_s(80, 1 * GB, nvlink4) == pytest.approx(320 / 450)
    assert round(traffic.tp_step_s(80, 1 * GB, nvlink4), 3) == 0.711
    assert 7 <= nvlink4 / pcie5 < 7.1 and 14 <= nvlink5 / pcie5 < 14.1
