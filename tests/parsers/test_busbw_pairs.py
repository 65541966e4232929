"""The hand-made per-pair busbw table: forms people write, what is not one."""

from __future__ import annotations

import pytest

from topodiag.parsers import ParseError, busbw_pairs, detect


@pytest.mark.parametrize("line,want", [
    ("se02gn644,se02gn699     49.36", ("se02gn644", "se02gn699", 49.36, None)),
    ("node-a <-> node-b: 45.1 GB/s", ("node-a", "node-b", 45.1, None)),
    ("| gpu-node01 | gpu-node07 | 180.2 |", ("gpu-node01", "gpu-node07", 180.2, None)),
    ("h1 h2 88 # crossing TOR", ("h1", "h2", 88.0, "crossing TOR")),
])
def test_forms(line, want):
    r = busbw_pairs.parse(line + "\n" + "x1,x2 10\n")
    p = r.pairs[0]
    assert (p.a, p.b, p.busbw_gbps, p.note) == want


def test_headers_and_prose_are_skipped_and_counted():
    r = busbw_pairs.parse("pair busbw\n| node | node | GB/s |\n|---|---|---|\na1,a2 50\nb1,b2 90\nwhich is slow?\n")
    assert [(p.a, p.b) for p in r.pairs] == [("a1", "a2"), ("b1", "b2")] and r.skipped == 4


def test_one_pair_or_none_is_not_a_table():
    with pytest.raises(ParseError) as e:
        busbw_pairs.parse("a1,a2 50\nhello\n")
    assert e.value.line_no == 2


def test_other_tools_outputs_are_not_claimed():
    topo = "\tGPU0\tGPU1\nGPU0\t X \tNV12\nGPU1\tNV12\t X \n"
    rows = "  1073741824     268435456     float     sum      -1   4800.0  223.69  391.46      0\n" * 3
    ibstat = "CA 'mlx5_0'\n\tCA type: MT4123\n\tNumber of ports: 1\n\tFirmware version: 20.31.1014\n"
    for text in (topo, rows, ibstat):
        assert detect(text) != "busbw_pairs"
