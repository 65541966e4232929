"""`nvidia-smi topo -p2p <mode>`: one "p2p" edge per GPU pair, `status_<mode>` =
{"gpu:0>gpu:1": "OK", "gpu:1>gpu:0": "OK"} (mode r, w, n, a, p, rw as on the prompt line;
"unknown" when the text does not show it)."""

from __future__ import annotations

from ...records import ParsedInput
from ..topology import Topology
from ._shared import gpu_id, ref
from ...parsers.base import is_digits

SOURCES = ("nvidia_smi_topo_p2p",)
PROVIDES = ("gpu.index", "gpu.p2p_status")  # the same GPU names as topo -m (GPU3: gpu:3)
FILLS = ()
NEEDS = ()


def merge(topo: Topology, item: ParsedInput, host_id: str) -> None:
    r = item.result
    key = f"status_{r.mode or 'unknown'}"
    ids = {}
    for name in r.gpus:
        tail = name[3:]
        ids[name] = gpu_id(name)
        topo.add_node(ids[name], "gpu", ref(item, None), index=int(tail) if is_digits(tail) else None)
    pairs: dict[tuple[str, str], dict] = {}
    lines: dict[tuple[str, str], int] = {}
    for c in r.cells:
        a, b = ids.get(c.src), ids.get(c.dst)
        if a is None or b is None:
            continue
        pair = tuple(sorted((a, b)))
        pairs.setdefault(pair, {})[f"{a}>{b}"] = c.status
        lines.setdefault(pair, c.line_no)
    for (a, b), cells in pairs.items():
        topo.add_edge(a, b, "p2p", ref(item, lines[(a, b)]), **{key: dict(sorted(cells.items()))})
    topo.notes.extend(f"nvidia_smi_topo_p2p: {n}" for n in r.notes)
