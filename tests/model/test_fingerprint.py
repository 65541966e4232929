"""The fingerprint `fleet` compares: facts of the model, flat, absent when no input gave them."""

from __future__ import annotations

from pathlib import Path

from topodiag.model.fingerprint import fingerprint
from topodiag.load.gather import gather
from topodiag.model import build

HOSTS = Path(__file__).resolve().parents[2] / "fixtures" / "hosts"


def fp(name: str) -> dict:
    g = gather([str(HOSTS / name)])
    return fingerprint(build(g.parsed, host=g.host))


def test_hgx_h100_fingerprint():
    """topo -m: 8 GPUs, 28 NV18 pairs, GPUi-NICi PIX, NUMA 0 for GPU0-3; ibstat (H20 fragment):
    mlx5_0 MT4129, firmware 28.43.2026, Active at 400 on InfiniBand."""
    f = fp("hgx-h100-healthy-assembled")
    assert f["gpu.count"] == 8 and f["gpu.model"] == "NVIDIA H100 80GB HBM3" and f["gpu_pairs.NV18"] == 28
    assert f["gpu:0.nearest_nic"] == "mlx5_0 PIX" and f["gpu:7.nearest_nic"] == "mlx5_7 PIX"
    assert f["gpu:3.numa"] == 0 and f["gpu:4.numa"] == 1
    assert f["nic:mlx5_0.port1.state"] == "Active" and f["nic:mlx5_0.port1.rate_gbps"] == 400.0
    assert f["nic:mlx5_0.port1.link_layer"] == "InfiniBand" and f["nic:mlx5_0.model"] == "MT4129"
    assert f["nic:mlx5_0.firmware"] == "28.43.2026"
    assert "gpu:0.nvlinks_active" not in f  # nvlink -s is elided for GPU 0: no count
    assert all(v is not None for v in f.values())


def test_b300_fingerprint_keeps_down_ports():
    f = fp("b300-rails-disabled")
    assert f["nic:mlx5_0.port1.state"] == "Down" and f["nic:mlx5_0.port1.physical_state"] == "Disabled"
    assert f["nic:mlx5_2.port1.rate_gbps"] == 100.0
    assert "gpu.count" not in f
