"""Property tests: any text gives every parser a result or a ParseError, never another exception."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topodiag import parsers
from topodiag.parsers import ParseError, blank_provenance_header
from tests.fixtures_index import fixture_texts

SOURCES = sorted({parsers.get(n).SOURCE for n in parsers.names()})
REAL = [blank_provenance_header(t) for t in fixture_texts()] or [""]

# Text shaped like tool output: digits, separators, the words the parsers key on.
WORDS = st.sampled_from([
    "GPU0", "GPU1", "NIC0", "mlx5_0", "X", "NV18", "PIX", "SYS", "NODE", "PHB", "PXB", "SOC", "N/A",
    "Link 0:", "GB/s", "<inactive>", "CA 'mlx5_0'", "Port 1:", "State:", "Active", "Rate:", "Link layer:",
    "hca_id:", "port:", "NCCL INFO", "NCCL WARN", "via", "NET/IB/0/GDRDMA", "P2P/IPC", "# Avg bus bandwidth",
    "float", "sum", "<system", "<cpu", "<pci", "<gpu", "<nic", "<net", "/>", ">", "\t", " ", ":", "[0]",
    "0-47,96-143", "1e-07", "-1", "4294967296", "nan", "inf", "\x1b[4m", "\r",
])
TOOLISH = st.lists(st.lists(WORDS, max_size=12).map(" ".join), max_size=30).map("\n".join)


def _mutations(draw_text: str, cut: int, drop: int) -> str:
    lines = draw_text.splitlines()
    if lines:
        del lines[drop % len(lines)]
    text = "\n".join(lines)
    return text[: cut % (len(text) + 1)]


def _assert_total(source: str, text: str) -> None:
    parser = parsers.get(source)
    parser.sniff(text)
    try:
        parser.parse(text)
    except ParseError:
        pass
    if hasattr(parser, "parse_lines"):
        try:
            parser.parse_lines(iter(text.splitlines(keepends=True)))
        except ParseError:
            pass


@pytest.mark.parametrize("source", SOURCES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=400))
def test_any_text(source: str, text: str) -> None:
    _assert_total(source, text)


@pytest.mark.parametrize("source", SOURCES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TOOLISH)
def test_tool_shaped_text(source: str, text: str) -> None:
    _assert_total(source, text)


@pytest.mark.parametrize("source", SOURCES)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(REAL), cut=st.integers(min_value=0), drop=st.integers(min_value=0))
def test_mutated_real_outputs(source: str, base: str, cut: int, drop: int) -> None:
    _assert_total(source, _mutations(base, cut, drop))


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=400) | TOOLISH)
def test_detect_never_raises(text: str) -> None:
    parsers.detect(text)
