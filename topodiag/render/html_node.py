"""The drawing of the node in the HTML report (one JS-free SVG): GPUs, NICs and their links, every
device and link a finding names marked in the colour of its worst finding's severity, with a legend.

- A finding names a device in any form: a node id (gpu:3, nic:mlx5_0), an alias (GPU3, NIC0,
  mlx5_0), a PCI bus id (pci:0000:97:00, gpu:00000000:97:00.0: matched against the GPUs' and
  NICs' bus ids whatever the domain's width, with or without the function) or a GPU UUID. A name
  no drawn device answers to is drawn as a box of its own in the row "named by findings" (a GPU
  that only the kernel log names by bus id, an NVSwitch, a service, a netdev, the host): marked
  all the same, never dropped.
- NVSwitch systems (six or more GPUs, every pair joined by NVLink) are drawn as the GPUs around a
  switch plane, one line per GPU, not one arc per pair; other NVLink meshes as arcs.
- Every marked element carries `data-subjects` (the names the findings used, "|"-separated) and a
  `sev-<severity>` class, so a test (or a person's browser search) can check what is marked.
"""

from __future__ import annotations

import html
import re
from typing import Any, Iterable

SEV_COLOUR = {"critical": "#6e0b75", "error": "#c0392b", "warning": "#e08e0b", "info": "#2e86c1"}
SEV_FILL = {"critical": "#ead1ec", "error": "#f9d6d5", "warning": "#fdebd0", "info": "#d6eaf8"}
SEV_ORDER = ("info", "warning", "error", "critical")
GPU_FILL, NIC_FILL, OTHER_FILL = "#d5f5d9", "#e8eef7", "#f2f2f2"
BUS = re.compile(r"([0-9a-f]{1,8}):([0-9a-f]{2}):([0-9a-f]{2})(?:\.([0-7]))?", re.I)
BOX_W, BOX_H, GAP = 84, 44, 100


def _e(text: Any) -> str:
    return html.escape("" if text is None else str(text), quote=True)


def bus_keys(text: str) -> list[str]:
    """"0000:97:00", "00000000:97:00.0", "pci:0000:97:00.1" -> ["0000:97:00", "0000:97:00.0"]
    (the device, and the function where one is given); [] for text with no bus id."""
    m = BUS.search(text or "")
    if not m:
        return []
    dev = f"{int(m.group(1), 16):04x}:{m.group(2).lower()}:{m.group(3).lower()}"
    return [dev] + ([f"{dev}.{m.group(4)}"] if m.group(4) is not None else [])


def name_index(topology, drawn: Iterable[str]) -> dict[str, str]:
    """Every name a drawn device answers to (lower case) -> its node id."""
    drawn = list(drawn)
    out: dict[str, str] = {}
    for alias, node in topology.aliases.items():
        if node in drawn:
            out[alias.lower()] = node
    for node in drawn:
        attrs = topology.node(node)
        names = [node, node.split(":", 1)[1], attrs.get("name"), attrs.get("topo_name"), attrs.get("uuid")]
        for name in names:
            if isinstance(name, str) and name:
                out.setdefault(name.lower(), node)
        for key in ("busid", "pci_bus_id", "bdf", "pci"):
            if isinstance(attrs.get(key), str):
                keys = bus_keys(attrs[key])
                for k in keys:
                    out.setdefault(f"bus:{k}", node)
                if keys and len(keys) == 1:  # a bus id without a function: its function 0 too
                    out.setdefault(f"bus:{keys[0]}.0", node)
    return out


def locate(subject: str, index: dict[str, str]) -> str | None:
    """The drawn node a finding's subject names, or None."""
    s = subject.strip().lower()
    for name in (s, s.split(":", 1)[1] if ":" in s else s):
        if name in index:
            return index[name]
    keys = bus_keys(s)
    for k in reversed(keys):  # the function first, then the device
        if f"bus:{k}" in index:
            return index[f"bus:{k}"]
    if keys and f"bus:{keys[0]}.0" in index:
        return index[f"bus:{keys[0]}.0"]
    return None


def _worse(a: str | None, b: str) -> str:
    return b if a is None or SEV_ORDER.index(b) > SEV_ORDER.index(a) else a


class Marks:
    """What the findings name, placed: node -> (worst severity, subjects); the names no drawn
    device answers to -> (worst severity, subjects); links: (a, b) -> (worst severity, subjects)."""

    def __init__(self, topology, findings, drawn: list[str], switched: bool) -> None:
        self.nodes: dict[str, list] = {}
        self.extra: dict[str, list] = {}
        self.links: dict[tuple, list] = {}
        index = name_index(topology, drawn)
        for f in findings:
            sev = str(f.severity)
            placed = []
            for subject in f.subjects:
                node = locate(subject, index)
                if node is None and switched and subject.lower().startswith("nvswitch"):
                    node = "nvswitch-plane"
                if node is None:
                    self._add(self.extra, self._extra_key(subject), sev, subject)
                else:
                    self._add(self.nodes, node, sev, subject)
                    placed.append(node)
            placed = list(dict.fromkeys(placed))
            if len(placed) == 2:  # a finding about a pair: the link between them is marked too
                self._add(self.links, tuple(placed), sev, *f.subjects)

    @staticmethod
    def _extra_key(subject: str) -> str:
        keys = bus_keys(subject)
        return f"bus:{keys[0]}" if keys and subject.lower().startswith(("pci:", "gpu:")) else subject

    @staticmethod
    def _add(table: dict, key, sev: str, *subjects: str) -> None:
        entry = table.setdefault(key, [None, []])
        entry[0] = _worse(entry[0], sev)
        entry[1].extend(s for s in subjects if s not in entry[1])


def _attrs(entry) -> str:
    if not entry:
        return ""
    return f' class="marked sev-{entry[0]}" data-subjects="{_e("|".join(entry[1]))}"'


def switched(topology, gpus: list) -> bool:
    """An NVSwitch system: six or more GPUs and NVLink between every pair (no direct mesh joins 6+)."""
    from ..model import nv_count

    if len(gpus) < 6:
        return False
    return all(nv_count(topology.pair_class(a, b) or "") for i, a in enumerate(gpus) for b in gpus[i + 1:])


def _box(node_label: str, x: float, y: float, fill: str, entry, node_id: str, sub: str = "") -> str:
    sev = entry[0] if entry else None
    stroke = SEV_COLOUR[sev] if sev else "#555"
    fill = SEV_FILL[sev] if sev else fill
    title = node_id + (f" - {sev}: {', '.join(entry[1])}" if entry else "")
    out = (f'<g data-node="{_e(node_id)}"{_attrs(entry)}><title>{_e(title)}</title>'
           f'<rect x="{x - BOX_W / 2:.0f}" y="{y - BOX_H / 2:.0f}" width="{BOX_W}" height="{BOX_H}" rx="6" '
           f'fill="{fill}" stroke="{stroke}" stroke-width="{3 if sev else 1}"/>'
           + _label_text(node_label, x, y))
    if sub:
        out += f'<text x="{x:.0f}" y="{y + BOX_H / 2 + 13:.0f}" font-size="10" fill="#666" text-anchor="middle">{_e(sub)}</text>'
    return out + "</g>"


def _label_text(label: str, x: float, y: float) -> str:
    """The label whole: one line, or two (split at the first space or colon) in a smaller font."""
    if len(label) <= 13:
        return f'<text x="{x:.0f}" y="{y + 4:.0f}" font-size="12" text-anchor="middle">{_e(label)}</text>'
    cut = min((i for i in (label.find(" "), label.find(":")) if i > 0), default=len(label) // 2)
    first, second = label[: cut + 1].strip(), label[cut + 1:].strip()
    return (f'<text x="{x:.0f}" y="{y - 3:.0f}" font-size="10" text-anchor="middle">{_e(first)}</text>'
            f'<text x="{x:.0f}" y="{y + 10:.0f}" font-size="10" text-anchor="middle">{_e(second)}</text>')


def _extra_label(key: str) -> str:
    if key.startswith("bus:"):
        return "GPU/dev " + key[4:]
    return key


def _legend(y: float, switch: bool) -> str:
    parts = ['<g class="legend" font-size="11">']
    x = 10
    for sev in reversed(SEV_ORDER):
        parts.append(f'<rect x="{x}" y="{y - 10}" width="14" height="14" fill="{SEV_FILL[sev]}" '
                     f'stroke="{SEV_COLOUR[sev]}" stroke-width="3"/><text x="{x + 20}" y="{y + 1}">{sev}</text>')
        x += 30 + 7 * len(sev)
    parts.append(f'<rect x="{x}" y="{y - 10}" width="14" height="14" fill="{GPU_FILL}" stroke="#555"/>'
                 f'<text x="{x + 20}" y="{y + 1}">no finding</text>')
    nv = "green: NVLink to the switch plane" if switch else "green arcs: NVLink"
    parts.append(f'<text x="10" y="{y + 19}">{nv}; blue: GPU and NIC under one PCIe switch; dashed: a pair a '
                 'finding names</text></g>')  # its own line: the drawing is 760 pixels wide at least
    return "".join(parts)


def _switch_plane(topology, gpus: list, pos: dict, marks: Marks, y_plane: int) -> list[str]:
    """The NVSwitch plane above the GPUs, one line from each GPU to it (width by its link count)."""
    from ..model import nv_count

    cls = topology.pair_class(gpus[0], gpus[1])
    entry = marks.nodes.get("nvswitch-plane")
    x0, x1 = pos[gpus[0]][0] - BOX_W / 2, pos[gpus[-1]][0] + BOX_W / 2
    stroke = SEV_COLOUR[entry[0]] if entry else "#27ae60"
    fill = SEV_FILL[entry[0]] if entry else "#eafaf0"
    parts = [f'<g data-node="nvswitch-plane"{_attrs(entry)}><title>NVSwitch plane</title>'
             f'<rect x="{x0:.0f}" y="{y_plane - 16}" width="{x1 - x0:.0f}" height="32" rx="6" '
             f'fill="{fill}" stroke="{stroke}" stroke-width="{3 if entry else 1}"/>'
             f'<text x="{(x0 + x1) / 2:.0f}" y="{y_plane + 4}" font-size="12" text-anchor="middle">'
             f'NVSwitch plane: every GPU pair {_e(cls)}</text></g>']
    for g in gpus:
        links = max((nv_count(topology.pair_class(g, o) or "") or 0 for o in gpus if o != g), default=0)
        x, y = pos[g]
        parts.append(f'<line x1="{x:.0f}" y1="{y_plane + 16}" x2="{x:.0f}" y2="{y - BOX_H / 2:.0f}" stroke="#27ae60" '
                     f'stroke-width="{min(6, 1 + links / 4):.1f}"><title>{_e(g)} NVLink x{links}</title></line>')
    return parts


def _arcs(topology, gpus: list, pos: dict) -> list[str]:
    """An NVLink mesh without a switch: one arc per GPU pair joined by NVLink (width by link count)."""
    from ..model import nv_count

    parts = []
    for i, a in enumerate(gpus):
        for b in gpus[i + 1:]:
            links = nv_count(topology.pair_class(a, b) or "")
            if not links:
                continue
            (x1, y1), (x2, y2) = pos[a], pos[b]
            top, lift = y1 - BOX_H / 2, 24 + 14 * abs(gpus.index(b) - i)
            parts.append(f'<path d="M{x1:.0f},{top:.0f} Q{(x1 + x2) / 2:.0f},{top - lift:.0f} {x2:.0f},{top:.0f}" '
                         f'fill="none" stroke="#27ae60" stroke-width="{min(4, 0.5 + links / 6):.1f}" opacity=".6">'
                         f'<title>{_e(a)}-{_e(b)} {_e(topology.pair_class(a, b))}</title></path>')
    return parts


def _pcie_and_marked_links(topology, gpus: list, nics: list, pos: dict, marks: Marks) -> list[str]:
    """GPU-NIC pairs under one PCIe switch (blue), then the pairs a finding names (dashed, its colour)."""
    parts = []
    for g in gpus:
        for c in nics:
            cls = topology.pair_class(g, c)
            if cls in ("PIX", "PXB"):
                (x1, y1), (x2, y2) = pos[g], pos[c]
                parts.append(f'<line x1="{x1:.0f}" y1="{y1 + BOX_H / 2:.0f}" x2="{x2:.0f}" y2="{y2 - BOX_H / 2:.0f}" '
                             f'stroke="#2e86c1" stroke-width="2"><title>{_e(g)}-{_e(c)} {_e(cls)}</title></line>')
    for (a, b), entry in marks.links.items():
        if a in pos and b in pos:
            (x1, y1), (x2, y2) = pos[a], pos[b]
            parts.append(f'<line data-link="{_e(a)} {_e(b)}"{_attrs(entry)} x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" '
                         f'y2="{y2:.0f}" stroke="{SEV_COLOUR[entry[0]]}" stroke-width="3" stroke-dasharray="7,4" '
                         f'opacity=".8"><title>{_e(a)}-{_e(b)}: {_e(entry[0])}</title></line>')
    return parts


def _unplaced(marks: Marks, extras: list, hosts: list, per_row: int, y_extra: int) -> list[str]:
    """The names no drawn device answers to: a box each, and the host-wide ones on a line."""
    parts = []
    if extras:
        parts.append(f'<text x="10" y="{y_extra - 34}" font-size="12" fill="#444">Named by findings, not placed in '
                     'the drawing (no input maps the name to a GPU or NIC above):</text>')
    for i, key in enumerate(extras):
        x, y = 20 + GAP / 2 + GAP * (i % per_row), y_extra + 80 * (i // per_row)
        parts.append(_box(_extra_label(key), x, y, OTHER_FILL, marks.extra[key], key))
    if hosts:
        y = y_extra + 80 * ((len(extras) + per_row - 1) // per_row) - (10 if extras else 40)
        text = ", ".join(f"{h} ({marks.extra[h][0]})" for h in hosts)
        entry = [max((marks.extra[h][0] for h in hosts), key=SEV_ORDER.index),
                 [s for h in hosts for s in marks.extra[h][1]]]
        parts.append(f'<g data-node="host"{_attrs(entry)}><text x="10" y="{y:.0f}" font-size="12" '
                     f'fill="{SEV_COLOUR[entry[0]]}">Also named: {_e(text)}</text></g>')
    return parts


def graph_svg(topology, findings) -> str:
    """The section: heading, note and the SVG; "" when the model has no GPU or NIC and no finding
    names a device."""
    gpus, nics = topology.gpus(), topology.nics()
    switch = switched(topology, gpus)
    marks = Marks(topology, findings, gpus + nics, switch)
    hosts = [k for k in marks.extra if k.startswith(("host:", "source:"))]
    extras = [k for k in marks.extra if k not in hosts]
    if not gpus and not nics and not extras and not hosts:
        return ""
    per_row = max(len(gpus), len(nics), 6)
    w = max(760, GAP * per_row + 40)
    y_plane, y_gpu = 40, (130 if switch else 110)
    y_nic = y_gpu + 190
    y_extra = (y_nic + 110) if nics else (y_gpu + 110)
    height = y_extra + 80 * ((len(extras) + per_row - 1) // per_row) + (30 if hosts else 0) + 48
    pos = {g: (20 + GAP / 2 + GAP * i, y_gpu) for i, g in enumerate(gpus)}
    pos.update({c: (20 + GAP / 2 + GAP * i, y_nic) for i, c in enumerate(nics)})
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" viewBox="0 0 {w} {height}" '
             'role="img" aria-label="the node: GPUs, NICs, their links, and what the findings name" '
             'font-family="sans-serif">']
    parts += _switch_plane(topology, gpus, pos, marks, y_plane) if switch else _arcs(topology, gpus, pos)
    parts += _pcie_and_marked_links(topology, gpus, nics, pos, marks)
    for node, (x, y) in pos.items():
        numa = topology.numa_of(node)
        parts.append(_box(_node_label(topology, node), x, y, GPU_FILL if node in gpus else NIC_FILL,
                          marks.nodes.get(node), node, f"NUMA {numa}" if numa is not None else ""))
    parts += _unplaced(marks, extras, hosts, per_row, y_extra)
    parts.append(_legend(height - 30, switch))
    parts.append("</svg>")
    note = ("GPUs around the NVSwitch plane, NICs below" if switch else "GPUs above, NICs below")
    return (f'<h2>The node</h2><p class="dim">{note}; each device and link a finding names is drawn in the colour '
            'of its worst finding (legend below the drawing)</p>' + "".join(parts))


def _node_label(topology, node_id: str) -> str:
    from .text import _label

    return _label(topology, node_id)
