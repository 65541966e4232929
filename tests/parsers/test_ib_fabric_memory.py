"""ibnetdiscover and iblinkinfo read a fabric as a stream of lines (`parse_lines`): what they hold
beyond their result (one node's draft, bounded lists) does not grow with the fabric. Measured with
tracemalloc on generated fabrics of 1x and 8x the nodes, fed by a generator (the text is never held):
the peak less what the result keeps. The result itself (every node and link) grows, as it must."""

from __future__ import annotations

import gc
import tracemalloc
from typing import Iterator

from topodiag.parsers import iblinkinfo, ibnetdiscover


def _ibnetdiscover(leaves: int) -> Iterator[str]:
    """A two-level fabric in ibnetdiscover's format (invented for a test): leaves of 32 hosts, each
    host a one-port CA."""
    yield "# Topology file: generated on Wed Aug  6 16:11:23 2025\n"
    for leaf in range(leaves):
        g = f"{0x2c5eab0300000000 + leaf:016x}"
        yield f"\nvendid=0x2c9\ndevid=0xd2f2\nsysimgguid=0x{g}\nswitchguid=0x{g}({g})\n"
        yield f"Switch\t64 \"S-{g}\"\t\t# \"LEAF-{leaf:04d}\" enhanced port 0 lid {40000 + leaf} lmc 0\n"
        for p in range(1, 33):
            h = f"{0xe09d730300000000 + leaf * 32 + p:016x}"
            yield f"[{p}]\t\"H-{h}\"[1]({h}) \t\t# \"node{leaf * 32 + p:05d} mlx5_0\" lid {leaf * 32 + p} 4xNDR\n"
    for leaf in range(leaves):
        for p in range(1, 33):
            h = f"{0xe09d730300000000 + leaf * 32 + p:016x}"
            yield f"\nvendid=0x2c9\ndevid=0x1021\nsysimgguid=0x{h}\ncaguid=0x{h}\nCa\t1 \"H-{h}\"\t\t# \"node{leaf * 32 + p:05d} mlx5_0\"\n"
            yield (f"[1]({h}) \t\"S-{0x2c5eab0300000000 + leaf:016x}\"[{p}]\t\t# lid {leaf * 32 + p} lmc 0 "
                   f"\"LEAF-{leaf:04d}\" lid {40000 + leaf} 4xNDR\n")


def _iblinkinfo(switches: int) -> Iterator[str]:
    """Switches of 32 ports in iblinkinfo's format (invented for a test, the port line as the
    fixtures print it)."""
    for s in range(switches):
        g = f"{0xb88303ffff000000 + s:016x}"
        yield f"Switch: 0x{g} SW-{s:04d}:\n"
        for p in range(1, 33):
            yield (f"      {s + 1:5d} {p:4d}[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>   {10000 + s * 32 + p:5d}"
                   f"    1[  ] \"node{s * 32 + p:05d} HCA-1\" ( )\n")


def _lines(pieces: Iterator[str]) -> Iterator[str]:
    return (line for piece in pieces for line in piece.splitlines(True))


def _held_beyond_result(parse_lines, lines) -> tuple[int, int]:
    """(traced peak less what the result keeps, what the result keeps), in bytes."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = parse_lines(_lines(lines))
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result is not None
    return peak - kept, kept - base


def _check(parse_lines, gen, n: int) -> None:
    small_over, small_kept = _held_beyond_result(parse_lines, gen(n))
    big_over, big_kept = _held_beyond_result(parse_lines, gen(8 * n))
    assert big_kept > 6 * small_kept  # the result grows with the fabric (sanity of the measure)
    assert big_over <= 1.25 * small_over + (64 << 10), (small_over, big_over)


def test_ibnetdiscover_holds_no_more_for_a_bigger_fabric() -> None:
    report = ibnetdiscover.parse_lines(_lines(_ibnetdiscover(4)))
    assert len(report.nodes) == 4 + 4 * 32 and report.nodes[0].connections[31].rate_gbps == 400.0
    _check(ibnetdiscover.parse_lines, _ibnetdiscover, 6)


def test_iblinkinfo_holds_no_more_for_a_bigger_fabric() -> None:
    report = iblinkinfo.parse_lines(_lines(_iblinkinfo(3)))
    assert len(report.nodes) == 3 and len(report.nodes[2].links) == 32
    _check(iblinkinfo.parse_lines, _iblinkinfo, 12)
