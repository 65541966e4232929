"""The HTML report's drawing of the node (render/html_node.py), parsed as XML: every subject of every
finding of every host scenario is marked in its severity's colour, whatever name form it uses;
NVSwitch systems are a switch plane, not arcs; the page says when, what and from what."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import topodiag
from topodiag.render.html_node import SEV_COLOUR, SEV_ORDER, bus_keys

ROOT = Path(__file__).resolve().parents[2]
HOSTS = sorted(p for p in (ROOT / "fixtures" / "hosts").iterdir() if p.is_dir())
SVG = "{http://www.w3.org/2000/svg}"


def _render(path: Path):
    d = topodiag.diagnose([str(path)])
    buf = io.StringIO()
    d.render("html", buf)
    return d, buf.getvalue()


def _drawing(page: str):
    """The node drawing's SVG element (the first SVG after the heading "The node"), parsed."""
    m = re.search(r"<h2>The node</h2>.*?(<svg .*?</svg>)", page, re.S)
    return ET.fromstring(m.group(1)) if m else None


def _marked(svg) -> dict[str, set]:
    """subject -> the severities of the elements that carry it in data-subjects."""
    out: dict[str, set] = {}
    for el in svg.iter():
        if el.get("data-subjects") is None:
            continue
        sev = next(c[4:] for c in el.get("class", "").split() if c.startswith("sev-"))
        for subject in el.get("data-subjects").split("|"):
            out.setdefault(subject, set()).add(sev)
    return out


@pytest.mark.parametrize("host", HOSTS, ids=lambda p: p.name)
def test_every_subject_of_every_finding_is_marked_in_its_worst_severity(host):
    d, page = _render(host)
    if not any(f.subjects for f in d.findings):
        return
    svg = _drawing(page)
    assert svg is not None, "findings name devices but the page has no drawing"
    marked = _marked(svg)
    for f in d.findings:
        for subject in f.subjects:
            assert subject in marked, f"{f.code}: {subject} is not marked"
            worst = max((str(g.severity) for g in d.findings if subject in g.subjects), key=SEV_ORDER.index)
            assert worst in marked[subject] or any(
                SEV_ORDER.index(s) >= SEV_ORDER.index(worst) for s in marked[subject]), (subject, marked[subject])


def test_gpus_named_by_pci_bus_id_are_marked_red_not_left_green():
    """The Xid scenario names four GPUs by bus id only (the kernel log); none is drawn green."""
    d, page = _render(ROOT / "fixtures" / "hosts" / "hgx-h100-nvlink-xids-assembled")
    svg = _drawing(page)
    groups = [g for g in svg.iter(f"{SVG}g") if g.get("data-subjects")]
    named = {s for g in groups for s in g.get("data-subjects").split("|")}
    assert named == {"pci:0000:97:00", "pci:0000:ba:00", "pci:0000:dc:00", "pci:0000:ed:00"}
    for g in groups:
        rect = g.find(f"{SVG}rect")
        assert "sev-error" in g.get("class") and rect.get("stroke") == SEV_COLOUR["error"]


def test_a_bus_id_finds_the_gpu_that_has_it_in_any_domain_width(tmp_path):
    """A GPU that nvidia-smi -q knows as 00000000:18:00.0 is the one a kernel-log Xid names as
    PCI:0000:18:00: the drawn GPU box is marked, no extra box is drawn."""
    from topodiag.render.html_node import locate, name_index

    class Topo:
        aliases = {"GPU0": "gpu:0"}

        def node(self, n):
            return {"gpu:0": {"kind": "gpu", "name": "GPU0", "busid": "00000000:18:00.0",
                              "uuid": "GPU-1234"}, "nic:mlx5_0": {"kind": "nic", "name": "mlx5_0"}}[n]

    index = name_index(Topo(), ["gpu:0", "nic:mlx5_0"])
    for subject in ("pci:0000:18:00", "gpu:0000:18:00.0", "GPU0", "gpu:0", "GPU-1234", "0000:18:00.0"):
        assert locate(subject, index) == "gpu:0", subject
    assert locate("mlx5_0", index) == locate("nic:mlx5_0", index) == "nic:mlx5_0"
    assert locate("pci:0000:19:00", index) is None
    assert bus_keys("PCI:0000:DC:00") == ["0000:dc:00"] and bus_keys("00000000:18:00.1") == ["0000:18:00", "0000:18:00.1"]


def test_one_colour_per_severity_and_a_legend():
    assert len(set(SEV_COLOUR.values())) == 4
    _, page = _render(ROOT / "fixtures" / "hosts" / "asus-esc8000a-e12-rtx6000ada-cx7")
    svg = _drawing(page)
    legend = next(g for g in svg.iter(f"{SVG}g") if g.get("class") == "legend")
    assert [t.text for t in legend.iter(f"{SVG}text")][:4] == ["critical", "error", "warning", "info"]
    marked = {el.get("data-node"): el.get("class") for el in svg.iter(f"{SVG}g") if el.get("data-node")}
    assert "sev-info" in marked["gpu:0"] and "sev-info" in marked["nic:mlx5_0"]  # TOPO002/TOPO003: by design, info
    assert marked["nic:mlx5_1"] is None  # a NIC no finding names stays unmarked
    _, page = _render(ROOT / "fixtures" / "hosts" / "h800-nv8-4nic")
    svg = _drawing(page)
    groups = {el.get("data-node"): el for el in svg.iter(f"{SVG}g") if el.get("data-node")}
    assert "sev-warning" in groups["gpu:0"].get("class") and "sev-warning" in groups["nic:mlx5_0"].get("class")
    assert groups["gpu:0"].find(f"{SVG}rect").get("stroke") == SEV_COLOUR["warning"] != SEV_COLOUR["error"]


def test_nvswitch_nodes_are_a_switch_plane_not_arcs():
    _, page = _render(ROOT / "fixtures" / "hosts" / "hgx-h100-nvswitch-sxid-nic-x8-assembled")
    svg = _drawing(page)
    assert not list(svg.iter(f"{SVG}path"))  # no arc per GPU pair (28 on 8 GPUs)
    plane = next(g for g in svg.iter(f"{SVG}g") if g.get("data-node") == "nvswitch-plane")
    assert "sev-error" in plane.get("class")  # the SXid findings name the switches
    assert set(plane.get("data-subjects").split("|")) == {"nvswitch:0000:00:00.0", "nvswitch:0000:a9:00.0"}


def test_the_page_says_when_what_and_from_what():
    _, page = _render(ROOT / "fixtures" / "hosts" / "roce-macvlan-pods")
    run = re.search(r'<table class="l run">(.*?)</table>', page, re.S).group(1)
    assert re.search(r"generated \(UTC\)</th><td><code>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ<", run)
    assert "collected (UTC)" in run and "nccl</th><td><code>2.13.4<" in run and "cuda</th><td><code>11.3<" in run


def test_the_busbw_chart_labels_do_not_run_together_and_the_legend_is_whole():
    from topodiag.render.chart_svg import svg_chart

    label = "all_reduce_perf NCCL_ALGO=Ring NCCL_PROTO=Simple run 1"
    svg = ET.fromstring(svg_chart([(label, [(2 ** e, e * 3.0) for e in range(3, 34)])], 90.0))
    xs = sorted(float(t.get("x")) for t in svg.iter(f"{SVG}text") if t.get("y") and t.text and t.text[-1] == "B"
                and float(t.get("y")) > 400 and t.get("class") != "legend")
    assert len(xs) >= 4 and min(b - a for a, b in zip(xs, xs[1:])) >= 60
    legend = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "legend"]
    assert legend == [label]
