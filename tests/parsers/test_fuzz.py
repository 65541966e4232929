"""Property tests: any text gives every parser a result or a ParseError, never another exception."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topodiag import parsers
from topodiag.parsers import ParseError, blank_provenance_header
from tests.fixtures_index import fixture_texts, parser_fixtures

# The fuzz of every parser (about 50 s of a plain run on a loaded 2-core machine) runs under
# `pytest -m slow` (.ci/run); the fixture pairs, hostile and adversarial tests keep each parser's
# refusals in the plain run.
pytestmark = pytest.mark.slow

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


# Issue 16: str.isdigit() accepts '²' (int() then raises) and '\u0661' (Arabic-Indic one, which int()
# reads as 1); Python 3's \d matches every script's decimal digits. A parser reads ASCII digits only:
# such text is a ParseError or read as text, never another exception.
UNICODE_DIGITS = ["\u00b2", "\u00b9", "\u0661", "\u0663", "\uff10", "\u07c2", "\U0001d7d9", "\u2460", "\u0966"]


def _digits_replaced(text: str, digit: str, every: int) -> str:
    out, seen = [], 0
    for ch in text:
        if "0" <= ch <= "9":
            seen += 1
            if seen % every == 0:
                ch = digit
        out.append(ch)
    return "".join(out)


@pytest.mark.parametrize("source", SOURCES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(REAL), digit=st.sampled_from(UNICODE_DIGITS), every=st.integers(min_value=1, max_value=7))
def test_unicode_digits_in_real_outputs(source: str, base: str, digit: str, every: int) -> None:
    _assert_total(source, _digits_replaced(base, digit, every))


@pytest.mark.parametrize("digit", ["\u00b2", "\u0661"])
def test_unicode_digits_that_crashed_int(digit: str) -> None:
    """Lines that ended in ValueError from int() (exit 4) before issue 16."""
    from topodiag.parsers import nccl_debug, nvidia_smi_q

    log = ("gpu40:9455:9487 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n"
           f"gpu40:9455:9487 [0] NCCL INFO CollNet 00/0 : {digit} [receive] via COLLNET/SHARP/0/GDRDMA\n")
    nccl_debug.parse(log)
    fixture = next(f for f in parser_fixtures() if f.path.name == "nvidia-smi-a-h100-hbm3-fabric-completed-gen5x16-01.txt")
    text = blank_provenance_header(fixture.text())
    line = next(ln for ln in text.splitlines() if ln.startswith("Attached GPUs"))
    report = nvidia_smi_q.parse(text.replace(line, line.rstrip("0123456789") + digit))
    assert report is not None


def test_is_digits_is_ascii_only() -> None:
    from topodiag.parsers.base import is_digits

    assert is_digits("0123456789")
    assert not any(is_digits(t) for t in ["", "\u00b2", "1\u00b2", "\u0661", "\uff11", "1.0", "-1", " 1"])
