"""Every shipped catalogue: loads, uses only the class vocabulary, and classifies a line rendered from
each of its own format strings (100% of entries; the readers' tests render them with the producer's
real prefix). And the matcher itself, on a small catalogue written here."""

from __future__ import annotations

import json
import re

import pytest

from topodiag import catalogues
from topodiag.catalogues import fmt

PRODUCERS = catalogues.producers()


def test_class_vocabulary_is_complete():
    for name, c in catalogues.classes().items():
        assert set(c) >= {"title", "severity", "meaning", "fix"}, name
        assert c["severity"] in catalogues.SEVERITIES, name


@pytest.mark.parametrize("producer", PRODUCERS)
def test_catalogue_loads_with_provenance(producer):
    cat = catalogues.load(producer)
    assert cat.entries, producer
    ids = [e.id for e in cat.entries]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for e in cat.entries:
        assert e.cls in catalogues.classes()
        assert e.where, f"{e.id}: no provenance (where)"
        for w in e.where:
            assert {"repo", "tag", "file"} <= set(w), e.id


@pytest.mark.parametrize("producer", PRODUCERS)
def test_every_format_string_is_classified(producer):
    cat = catalogues.load(producer)
    missed = []
    for e in cat.entries:
        if e.format is None:
            continue
        line = fmt.example(e.format)
        hit = cat.classify(line)
        if hit is None or (hit.entry.id != e.id and hit.entry.specificity < e.specificity):
            missed.append((e.id, line, hit.entry.id if hit else None))
    assert not missed, f"{len(missed)} of {len(cat.entries)} not classified as themselves: {missed[:5]}"


def _clear_caches():
    """Forget loaded catalogues (and the per-reader lists made of them), so no other test sees these."""
    catalogues.load.cache_clear()
    catalogues.for_reader.cache_clear()


def _tiny(tmp_path, monkeypatch, entries):
    data = tmp_path / "data"
    data.mkdir()
    (data / "tiny.json").write_text(json.dumps({"producer": "tiny", "entries": entries}))
    monkeypatch.setattr(catalogues, "DATA", data)
    _clear_caches()
    return catalogues.load("tiny")


def test_most_specific_entry_wins(tmp_path, monkeypatch):
    w = [{"repo": "x/y", "tag": "v1", "file": "a.c", "line": 1}]
    cat = _tiny(tmp_path, monkeypatch, [
        {"id": "generic", "format": "%s:%d %s", "class": "internal-bug", "where": w},
        {"id": "ib", "format": "NET/IB : %s failed %d", "class": "ib-verbs-failure", "where": w},
        {"id": "ib-poll", "format": "NET/IB : ibv_poll_cq failed %d", "class": "ib-verbs-failure",
         "severity": "critical", "where": w},
    ])
    try:
        assert cat.classify("NET/IB : ibv_poll_cq failed 12").entry.id == "ib-poll"
        assert cat.classify("NET/IB : ibv_reg_mr failed 12").entry.id == "ib"
        assert cat.classify("NET/IB\t:  ibv_reg_mr failed 12").entry.id == "ib"  # blanks as pasted
        assert cat.classify("proxy.cc:12 oops").entry.id == "generic"
        assert cat.classify("nothing like it") is None
        assert cat.classify("NET/IB : ibv_poll_cq failed 12").entry.severity == "critical"
        assert cat.classify("NET/IB : x failed 3").entry.meaning.startswith("An ibv_* call")  # the class's
    finally:
        _clear_caches()


def test_unknown_class_is_refused(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="not in classes.toml"):
        _tiny(tmp_path, monkeypatch, [{"id": "a", "format": "x %d", "class": "no-such-class", "where": []}])
    _clear_caches()


@pytest.mark.parametrize("fmt_text, line, ok", [
    ("Call to %s failed : %s", "Call to ibv_open_device failed : No such device", True),
    ("%s:%d -> %d", "transport/net_ib.cc:123 -> 2", True),
    ("bad size %zu (max %lu)", "bad size 18446744073709551615 (max 12)", True),
    ("addr %p", "addr (nil)", True),
    ("value 0x%lx", "value 0x7f3a", True),
    ("100%% done %d", "100% done 3", True),
    ("rank %d", "rank x", False),
])
def test_format_to_regex(fmt_text, line, ok):
    assert bool(re.match(fmt.to_regex(fmt_text), line)) is ok
    assert re.match(fmt.to_regex(fmt_text), fmt.example(fmt_text))


def test_adjacent_text_conversions_stay_linear():
    rx = re.compile(fmt.to_regex("%s%s%s%s%s x"))
    assert rx.pattern.count(".*?") == 1


@pytest.mark.parametrize("text, failing", [
    ("NCCL WARN Call to connect returned Connection refused", True),
    ("transport.cc:88 NCCL WARN ... -> 2", True),
    ("init.cc:1 -> 0", False),
    ("Last error:", True),
    ("NCCL INFO Channel 00/02 : 0 1", False),
    ("ncclSystemError: System call (e.g. socket, malloc) or external library call failed", True),
])
def test_looks_like_failure(text, failing):
    assert catalogues.looks_like_failure(text) is failing


@pytest.mark.parametrize("producer", PRODUCERS)
def test_readers_read_from_the_head_are_the_catalogues_own(producer):
    """for_reader picks catalogues by the "readers" in each file's head, without building entries:
    that head must say what the full load says (and be found there, not by the fallback load)."""
    with open(catalogues.DATA / f"{producer}.json", encoding="utf-8") as fh:
        head = catalogues._READERS_RE.match(fh.read(4096))
    assert head is not None, f"{producer}.json: producer, title, readers are not the file's first keys"
    assert catalogues.readers_of(producer) == catalogues.load(producer).readers != ()


def test_for_reader_loads_only_the_catalogues_of_its_reader():
    import subprocess
    import sys
    from pathlib import Path

    code = ("from topodiag import catalogues as c\nseen = []\nload = c.load\n"
            "c.load = lambda p: (seen.append(p), load(p))[1]\n"
            "names = sorted(x.producer for x in c.for_reader('kernel_log'))\nprint(names == sorted(seen), *names)")
    root = Path(__file__).resolve().parents[2]
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)})
    assert res.stdout.split() == ["True", "aer", "iommu", "mlx5", "nvrm", "peermem"], res.stderr
