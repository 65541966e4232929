"""The busbw-vs-size charts (`topodiag compare`): plain data in, text or SVG out, nothing fetched."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from topodiag.render.chart_svg import svg_chart
from topodiag.render.chart_text import text_chart

SERIES = [("Ring", [(1 << 20, 12.8), (1 << 30, 384.5), (8 << 30, 392.7)]),
          ("Tree & <NVLS>", [(1 << 20, 27.5), (1 << 30, 450.4), (8 << 30, 468.7)])]
NS = "{http://www.w3.org/2000/svg}"


def test_text_chart_marks_each_run_and_the_expectation() -> None:
    out = text_chart(SERIES, expectation=400.0, width=40, height=10)
    lines = out.splitlines()
    assert len(lines) == 10 + 3
    # the expectation row: dashes, where a point on it shows its marker (Ring's 392.7 rounds onto 400)
    assert any(set(line.split("|", 1)[1]) <= {"-", "A", "B"} and line.count("-") >= 35 for line in lines[:10])
    body = "".join(line.split("|", 1)[1] for line in lines[:10])
    assert body.count("A") == 3 and body.count("B") == 3
    assert "A = Ring" in lines[-1] and "B = Tree & <NVLS>" in lines[-1] and "expected 400 GB/s" in lines[-1]
    assert "1M" in lines[-2] and "8G" in lines[-2]


def test_text_chart_without_points() -> None:
    assert text_chart([("x", [])]) == "(no busbw to chart)\n"


def test_svg_is_well_formed_with_one_line_per_run_and_escaped_labels() -> None:
    svg = svg_chart(SERIES, expectation=400.0, title="all_reduce <busbw>")
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    assert len(root.findall(f"{NS}polyline")) == 2
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert "Tree & <NVLS>" in texts and "all_reduce <busbw>" in texts and "expected 400" in texts
    assert any(t == "1 GiB" for t in texts)  # log2 ticks named in binary units
    assert "http://" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing to fetch


def test_svg_with_one_size_and_no_expectation() -> None:
    root = ET.fromstring(svg_chart([("only", [(1024, 1.5)])]))
    assert len(root.findall(f"{NS}polyline")) == 1
