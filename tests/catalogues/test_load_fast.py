"""The catalogue loader's quick paths give what their definitions give, on every shipped entry:
`_entry` (no frozen __init__) the same Entry as `Entry(...)` of its fields, and `fmt.leading_literal`
the first fixed piece of `fmt.pieces` (what the index keys entries by)."""

import dataclasses
import json

import pytest

from topodiag import catalogues as C
from topodiag.catalogues import fmt


def _raw_entries():
    for producer in C.producers():
        with open(C.DATA / f"{producer}.json", encoding="utf-8") as fh:
            for raw in json.load(fh)["entries"]:
                yield producer, raw


def test_entry_is_the_dataclass_of_its_fields():
    vocab = C.classes()
    n = 0
    for producer, raw in _raw_entries():
        e = C._entry(raw, vocab, producer)
        fields = {f.name: getattr(e, f.name) for f in dataclasses.fields(C.Entry)}
        made = C.Entry(**fields)
        assert e == made and repr(e) == repr(made)
        assert vars(e) == vars(made)
        with pytest.raises(dataclasses.FrozenInstanceError):
            e.id = "x"
        n += 1
    assert n > 7000  # every shipped catalogue read


def test_entry_fields_come_from_the_raw_entry_then_its_class():
    vocab = C.classes()
    cls = next(iter(vocab))
    e = C._entry({"id": "t.one", "class": cls, "format": "x %d"}, vocab, "t")
    assert (e.id, e.cls, e.severity, e.meaning, e.fix) == ("t.one", cls, vocab[cls]["severity"],
                                                             vocab[cls]["meaning"], vocab[cls]["fix"])
    assert e.raw_pattern is None and e.pattern == fmt.to_regex("x %d") and e.where == () and e.versions == {}
    bare = C._entry({"id": "t.two", "class": cls, "severity": "critical"}, vocab, "t")
    assert bare.raw_pattern == fmt.to_regex("") and bare.severity == "critical"
    with pytest.raises(ValueError):
        C._entry({"id": "t.bad", "class": cls, "severity": "loud"}, vocab, "t")


@pytest.mark.parametrize("text", ["", "plain", "%d first", "100%% sure %d", "a%%b", "%%", "50%% %s %d",
                                  "NET/IB : %s", "tail %", "w%5d", "%-5s x"])
def test_leading_literal_is_the_first_fixed_piece(text):
    parts = fmt.pieces(text)
    assert fmt.leading_literal(text) == (parts[0][1] if parts and parts[0][0] == "lit" else "")


def test_leading_literal_of_every_shipped_format():
    for _, raw in _raw_entries():
        f = raw.get("format")
        if f:
            parts = fmt.pieces(f)
            assert fmt.leading_literal(f) == (parts[0][1] if parts and parts[0][0] == "lit" else ""), f
