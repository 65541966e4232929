"""Every parser's sniff() and parse() stay linear on adversarial input (issue 16, regex hangs).

The bounds here are wall-clock seconds per call, measured with time.perf_counter. They are not a
speed test: they are generous (a linear pass over these inputs takes a few hundredths of a second
even on a loaded 2-core machine) and exist to catch super-linear behaviour, a regex whose
backtracking grows with the square or cube of a line or of the text. Such a regex takes minutes or
hours on these inputs (a line of 5 KB of blanks after "GPU 0:" took 151 s; a file of blank lines
330 s in detection), so any bound of a few seconds separates the two with a wide margin.
"""

from __future__ import annotations

import io
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topodiag import parsers
from topodiag.parsers import ParseError, blank_provenance_header
from tests.fixtures_index import parser_fixtures

SOURCES = parsers.names()
BOUND_S = 2.0  # per call; linear code takes < 0.3 s on these sizes (see the module docstring)
KB = 1024


def _lines_of(source: str) -> list[str]:
    """The distinct non-blank lines of a source's fixtures, in order (header blanked)."""
    seen: dict[str, None] = {}
    for fx in parser_fixtures():
        if fx.source == source:
            for line in blank_provenance_header(fx.text()).splitlines():
                if line.strip():
                    seen.setdefault(line)
    return list(seen) or ["x"]


FIXTURE_LINES = {source: _lines_of(source) for source in SOURCES}


def _timed(label: str, fn, *args) -> None:
    start = time.perf_counter()
    try:
        fn(*args)
    except ParseError:
        pass
    took = time.perf_counter() - start
    assert took < BOUND_S, f"{label}: {took:.2f} s (super-linear: a regex or loop that backtracks or rescans)"


def _every_call(source: str, text: str) -> None:
    parser = parsers.get(source)
    _timed(f"{source}.sniff", parser.sniff, text[: parsers.SNIFF_CHARS])
    _timed(f"{source}.parse", parser.parse, text)
    if hasattr(parser, "parse_lines"):
        _timed(f"{source}.parse_lines", lambda t: parser.parse_lines(iter(t.splitlines(keepends=True))), text)
    if hasattr(parser, "parse_binary"):  # the byte-chunk engine the loader uses for big logs
        _timed(f"{source}.parse_binary", lambda t: parser.parse_binary(io.BytesIO(t.encode("utf-8", "replace"))), text)


def _fill(unit: str, size: int) -> str:
    return (unit * (size // max(1, len(unit)) + 1))[:size]


# Inputs that hit the regexes of issue 16 and their kin, 128 KB each (half of what detection reads;
# a quadratic regex takes minutes on them).
GENERIC = {
    "blank lines": _fill(" \n", 128 * KB),
    "empty lines": "\n" * (128 * KB),
    "CRLF blank lines": _fill(" \r\n", 128 * KB),
    "tab lines": _fill("\t\n", 128 * KB),
    "one line of blanks": " " * (128 * KB),
    "one line of tabs then x": "\t" * (128 * KB) + "x",
    "blanks then x lines": _fill(" " * 500 + "x\n", 128 * KB),
    "deep XML nesting": _fill("<a>", 128 * KB),
    "unclosed system tags": "<system>\n" + _fill("<pci ", 128 * KB),
    "unclosed root tags": _fill("<system ", 128 * KB),
    "open angle brackets": "<" * (128 * KB),
    "GPU header and blanks": "GPU 0: " + " " * (32 * KB) + "x\n",
    "GPU header UUID fragments": "GPU 0: " + _fill(" (UUID: ", 32 * KB) + " " * (32 * KB) + "x",
    "hashes and blanks": _fill("# ", 128 * KB),
    "colons and blanks": _fill(": ", 128 * KB),
    "digits and blanks": _fill("1 ", 128 * KB),
    "backticks": _fill("` \n", 128 * KB),
}


@pytest.mark.parametrize("name", sorted(GENERIC))
@pytest.mark.parametrize("source", SOURCES)
def test_generic_adversarial_inputs(source: str, name: str) -> None:
    _every_call(source, GENERIC[name])


def test_detection_of_a_file_of_blank_lines() -> None:
    """Issue 16: detection on a file of space-only lines took 330 s (`^\\s*` in re.M sniffers)."""
    for text in (_fill(" \n", 1024 * KB), "\n" * (1024 * KB), _fill("    \r\n", 1024 * KB)):
        _timed("detect_all", parsers.detect_all, text)


@pytest.mark.parametrize("source", [s for s in SOURCES if s.startswith("nvidia_smi_nvlink")])
def test_nvlink_gpu_header_followed_by_blanks(source: str) -> None:
    """Issue 16: 'GPU 0: ' and 5.6 KB of blanks took 151 s (the GPU header regex backtracked cubically)."""
    parser = parsers.get(source)
    for text in ("GPU 0: " + " " * 5600 + "x\n", "GPU 0:" + " " * 5600 + "(UUID: " + " " * 5600 + "x\n",
                 "GPU 0: A" + " (UUID: x" * 2000 + "\n", "GPU 0: " + " " * (512 * KB) + "(UUID\n"):
        _timed(f"{source}.parse", parser.parse, text)


def test_nvlink_gpu_header_readings_kept() -> None:
    from topodiag.parsers.nvidia_smi_gpu_blocks import match_header

    h = match_header("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-12345678-1234-1234-1234-123456789abc)")
    assert (h.index, h.name, h.uuid_raw, h.rest, h.closed) == (
        0, "NVIDIA H100 80GB HBM3", "GPU-12345678-1234-1234-1234-123456789abc", "", True)
    h = match_header("GPU 3: A100 (UUID:  GPU-x )  Unable to retrieve NVLink information as all links are inActive")
    assert (h.name, h.uuid_raw, h.rest) == ("A100", "GPU-x", "Unable to retrieve NVLink information as all links are inActive")
    h = match_header("GPU 1: Tesla V100 (UUID: GPU-abc")
    assert (h.index, h.name, h.uuid_raw, h.closed) == (1, "Tesla V100", None, False)
    h = match_header("GPU 2: Tesla V100 (rev a) (UUID GPU-abc")  # the first '(UUID' after the last ')'
    assert (h.name, h.closed) == ("Tesla V100 (rev a)", False)
    h = match_header("GPU 7: NVIDIA A100-SXM4-80GB")
    assert (h.index, h.name, h.bare) == (7, "NVIDIA A100-SXM4-80GB", True)
    assert match_header("GPU 0:   ") is None
    assert match_header("GPU \u0661: A100 (UUID: GPU-x)") is None  # Arabic-Indic digit: not an index


def test_xml_sniffer_on_unclosed_tags() -> None:
    """Issue 16: the nccl_topo_xml sniffer took 47 s on 260 KB (`[^>]*` from every tag to the end)."""
    text = '<system version="1">\n' + _fill("<pci ", 260 * KB)
    _timed("nccl_topo_xml.sniff", parsers.get("nccl_topo_xml").sniff, text)
    _timed("detect_all", parsers.detect_all, text)
    assert parsers.get("nccl_topo_xml").sniff('<system version="1">\n  <cpu numaid="0" affinity="ff">\n') == 0.95


def _mutate(kind: str, line: str, size: int, rng: random.Random) -> str:
    """100 KB or more built from one line of a fixture of the parser itself."""
    if kind == "line repeated":
        return _fill(line + "\n", size)
    if kind == "line repeated on one line":
        return _fill(line + " ", size)
    if kind == "half line repeated":
        return _fill(line[: max(1, len(line) // 2)], size)
    if kind == "blanks blown up":
        return line.replace(" ", " " * (size // max(1, line.count(" ") + 1))) if " " in line else line + " " * size
    if kind == "blank tail then x":
        return line + " " * size + "x"
    if kind == "tab tail then x":
        return line + "\t" * size + "x"
    if kind == "every blank doubled, repeated":
        return _fill(line.replace(" ", "  " * 8) + "\n", size)
    if kind == "last character cut, repeated":
        return _fill(line[:-1] + "\n", size)
    if kind == "fixture repeated with a cut":
        cut = rng.randrange(len(line) + 1)
        return _fill(line[:cut] + "\n" + line[cut:] + " " * 200 + "\n", size)
    raise AssertionError(kind)


MUTATIONS = ["line repeated", "line repeated on one line", "half line repeated", "blanks blown up",
             "blank tail then x", "tab tail then x", "every blank doubled, repeated", "last character cut, repeated",
             "fixture repeated with a cut"]


@pytest.mark.parametrize("source", SOURCES)
@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pick=st.integers(min_value=0), kind=st.sampled_from(MUTATIONS), seed=st.integers(0, 2**16),
       size=st.sampled_from([100 * KB, 160 * KB]))
def test_fixture_lines_mutated(source: str, pick: int, kind: str, seed: int, size: int) -> None:
    lines = FIXTURE_LINES[source]
    _every_call(source, _mutate(kind, lines[pick % len(lines)], size, random.Random(seed)))


@pytest.mark.parametrize("source", SOURCES)
def test_every_fixture_line_blown_up(source: str) -> None:
    """Deterministic sweep: every distinct fixture line, followed by blanks and a stray character
    (the shape that made the header regexes backtrack), at 32 KB per line."""
    parser = parsers.get(source)
    for line in FIXTURE_LINES[source][:60]:
        text = line + " " * (32 * KB) + "x\n" + line
        _timed(f"{source}.sniff on {line[:40]!r}", parser.sniff, text)
        _timed(f"{source}.parse on {line[:40]!r}", parser.parse, text)


@pytest.mark.parametrize("source", SOURCES)
def test_every_fixture_line_repeated_on_one_line(source: str) -> None:
    """Deterministic sweep: every distinct fixture line repeated on one line of 64 KB (a tag that a
    search retries at each repeat, with a run to the end of the line, is quadratic)."""
    parser = parsers.get(source)
    for line in FIXTURE_LINES[source][:60]:
        text = _fill(line.strip() + " ", 64 * KB) + "\n"
        _timed(f"{source}.sniff on {line[:40]!r} repeated", parser.sniff, text)
        _timed(f"{source}.parse on {line[:40]!r} repeated", parser.parse, text)


def test_nccl_plugin_warn_tag_repeated_on_one_line() -> None:
    """A line of 'NCCL WARN NET/OFI x ' repeated 2000 times (70 KB) took 15.9 s (PLUGIN_WARN_RE
    searched again from every repeat with a lazy run to the end of the line)."""
    text = "host:1:2 [0] " + "NCCL WARN NET/OFI x " * 8000 + "\n"
    _timed("nccl_debug.parse", parsers.get("nccl_debug").parse, text)
    report = parsers.get("nccl_debug").parse("h:1:2 [0] NCCL WARN NET/OFI aws-ofi-nccl initialization failed\n")
    assert "aws-ofi-nccl" in report.net_plugins_failed


def _fixtures_of(source: str) -> str:
    return "\n".join(blank_provenance_header(fx.text()) for fx in parser_fixtures() if fx.source == source) + "\n"


@pytest.mark.parametrize("source", SOURCES)
def test_own_fixtures_repeated_to_one_megabyte(source: str) -> None:
    """1 MB of the parser's own fixtures, repeated as they are and with every blank run widened
    eightfold (a real parse takes < 0.5 s here: the bound catches super-linear work, not speed)."""
    text = _fixtures_of(source)
    _every_call(source, _fill(text, 1024 * KB))
    _every_call(source, _fill(text.replace(" ", " " * 8), 1024 * KB))


@pytest.mark.parametrize("source, unit", [
    ("kernel_log", "NVRM: loading NVIDIA UNIX "),     # 6000 repeats took 7.9 s
    ("kernel_log", "NVRM: GPU at PCI:0000:01:00: "),  # 0.9 s, growing with the square
    ("p2p_bandwidth_latency", "Device: 1, x"),       # 8.7 s
    ("mlnx_qos", "mlnx_qos x "),                     # 5.2 s
    ("ib_counters", "perfquery x "),
])
def test_a_command_or_head_word_repeated_without_its_tail(source: str, unit: str) -> None:
    """`head.*?tail` in one regex scans to the line's end from every repeat of head: such lines are
    now read with parsers/base.search_after (two linear searches). Found in the review of this
    session's change, after the same class in ib_counters."""
    text = unit * 6000 + "\n"
    _timed(f"{source}.parse on {unit!r} repeated", parsers.get(source).parse, text)
