"""Every fixture parses to its hand-checked .expected.json, and detection names its source."""

from __future__ import annotations

import pytest

from topodiag.parsers import ParseError, blank_provenance_header, detect, detect_all, get, to_jsonable
from tests.fixtures_index import parser_fixtures

FIXTURES = parser_fixtures()


def test_there_are_fixtures() -> None:
    assert len(FIXTURES) >= 10


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda f: f.id)
def test_fixture_parses_to_expected(fx) -> None:
    parser = get(fx.source)
    expected = fx.expected()
    text = blank_provenance_header(fx.text())
    if "parse_error" in expected:
        with pytest.raises(ParseError) as info:
            parser.parse(text)
        want = expected["parse_error"]
        if "line_no" in want:
            assert info.value.line_no == want["line_no"]
        assert want["contains"].lower() in info.value.message.lower()
        return
    assert to_jsonable(parser.parse(text)) == expected


STREAMED = [f for f in FIXTURES if hasattr(get(f.source), "parse_lines") and "parse_error" not in f.expected()]


@pytest.mark.parametrize("fx", STREAMED, ids=lambda f: f.id)
def test_fixture_streaming_matches_whole_text(fx) -> None:
    parser = get(fx.source)
    text = blank_provenance_header(fx.text())
    lines = text.splitlines(keepends=True)
    assert to_jsonable(parser.parse_lines(iter(lines))) == to_jsonable(parser.parse(text))


_SOURCES_BY_CONTENT: dict[bytes, set[str]] = {}
for _fx in FIXTURES:
    _SOURCES_BY_CONTENT.setdefault(_fx.path.read_bytes(), set()).add(get(_fx.source).SOURCE)


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda f: f.id)
def test_detection_names_the_fixture_source(fx) -> None:
    """detect() names the fixture's source; a file that holds two tools' outputs (an nccl-tests run
    with NCCL_DEBUG=INFO) is a fixture in both folders, and detection names one of them while
    detect_all() lists both."""
    text = blank_provenance_header(fx.text())
    owners = _SOURCES_BY_CONTENT[fx.path.read_bytes()]
    assert detect(text) in owners
    assert owners <= {name for name, _ in detect_all(text)}
