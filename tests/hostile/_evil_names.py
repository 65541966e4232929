"""A sysfs probe JSON (the recorded 8-rail H100 node's) whose RDMA device names carry control
characters, built at test time: CR LF and a fake sample, NUL, a screen-clearing ESC sequence,
U+2028, and a right-to-left override."""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SYSFS_JSON = REPO / "fixtures" / "sysfs_infiniband" / "hgx-h100-cx7-ndr-8rail.json"
EVIL = {1: "mlx5_1\r\nevil 1", 3: "mlx5_3\x00", 5: "mlx5_5\x1b[2J", 6: "mlx5_6\u2028x", 7: "mlx5_7\u202egnp"}


def evil_sysfs(path: Path) -> Path:
    text = "\n".join(line for line in SYSFS_JSON.read_text().split("\n") if not line.startswith("#@"))
    data = json.loads(text)
    for i, name in EVIL.items():
        data["infiniband"][i]["name"] = name
    path.write_text(json.dumps(data, indent=1))
    return path
