"""The README's and the man page's source and rule tables are generated (`python -m topodiag.docs`),
never kept by hand: they are fresh, and the generator touches only what lies between its markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from topodiag import docs
from topodiag.parsers import names

ROOT = Path(__file__).resolve().parents[2]


def test_the_generated_parts_are_fresh():
    assert docs.stale(ROOT) == [], "run: python -m topodiag.docs"


def test_check_mode_says_stale_and_writes_nothing(tmp_path, capsys):
    for rel in docs.SECTIONS:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text((ROOT / rel).read_text())
    readme = tmp_path / "README.md"
    edited = readme.read_text().replace("| `nvml` |", "| `nvml_by_hand` |", 1)
    readme.write_text(edited)
    assert docs.main(["--root", str(tmp_path), "--check"]) == 1
    assert readme.read_text() == edited and "README.md: generated parts are stale" in capsys.readouterr().out
    assert docs.main(["--root", str(tmp_path)]) == 0
    assert readme.read_text() == (ROOT / "README.md").read_text()
    assert docs.main(["--root", str(tmp_path), "--check"]) == 0


def test_every_parser_and_rule_is_in_both_documents():
    readme, man = (ROOT / "README.md").read_text(), (ROOT / "man" / "topodiag.1").read_text()
    for source in names():
        assert f"| `{source}` |" in readme and f".B {source}\n" in man
    from topodiag.engine.catalog import load_catalog

    for rule in load_catalog(examples=False):
        assert f"| `{rule.code}` | {rule.severity} | `{rule.slug}` |" in readme and f".B {rule.code}\n" in man


def test_rewrite_replaces_only_between_markers():
    text = "intro\n<!-- generated: rules -->\nold\nlines\n<!-- end generated: rules -->\noutro\n"
    assert docs.rewrite(text, {"rules": "new"}, docs.README_MARKERS) == (
        "intro\n<!-- generated: rules -->\nnew\n<!-- end generated: rules -->\noutro\n")
    with pytest.raises(docs.DocsError, match="expected one '<!-- generated: sources -->'"):
        docs.rewrite(text, {"sources": "x"}, docs.README_MARKERS, "README.md")
    twice = text + text
    with pytest.raises(docs.DocsError, match="found 2"):
        docs.rewrite(twice, {"rules": "x"}, docs.README_MARKERS)


def test_a_parser_without_words_is_named(monkeypatch, tmp_path):
    words = tmp_path / "sources.toml"
    text = docs.SOURCES_TOML.read_text()
    words.write_text(text.replace("[nvml]", "[nvml_gone]", 1))
    monkeypatch.setattr(docs, "SOURCES_TOML", words)
    with pytest.raises(docs.DocsError, match=r"no words for nvml \(add a \[SOURCE\] table.*words for nvml_gone"):
        docs.readme_sources()
