"""Every corpus file of a kind topodiag parses has a verbatim fixture copy with an expected file,
and every fixture carries a `#@` provenance header (invented ones say so)."""

from __future__ import annotations

import hashlib

import pytest

from tests.fixtures_index import CORPUS, FIXTURES, parser_fixtures

# corpus folder -> file-name prefixes topodiag's parsers read (the rest: later issues)
PARSED_KINDS = {
    "topo": ("topo-",),
    "nvlink": ("nvlink-",),
    "ib": ("ibstat-", "ibstatus-", "ibv_devinfo-", "iblinkinfo-", "ibnetdiscover-"),
    "nccl": ("nccl-",),
    "nccltests": ("nccltests-",),
    "other": ("nccl-",),  # the NCCL topology / graph XML files
}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _corpus_files():
    if not CORPUS.is_dir():
        return []
    out = []
    for folder, prefixes in PARSED_KINDS.items():
        for path in sorted((CORPUS / folder).iterdir()):
            if path.name.startswith(prefixes):
                out.append(path)
    return out


CORPUS_DIGESTS = {_digest(p.read_bytes()) for p in CORPUS.glob("*/*")} if CORPUS.is_dir() else set()
FIXTURE_DIGESTS = {_digest(f.path.read_bytes()): f for f in parser_fixtures()}


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus not beside the checkout")
@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_file_has_a_verbatim_fixture(path) -> None:
    assert _digest(path.read_bytes()) in FIXTURE_DIGESTS, f"no fixture copy (with expected file) of {path}"


@pytest.mark.parametrize("fx", parser_fixtures(), ids=lambda f: f.id)
def test_fixture_has_provenance_header(fx) -> None:
    lines = fx.text().splitlines()
    assert lines and lines[0].startswith("#@ "), "fixture must start with a #@ provenance header"
    header = []
    for line in lines:
        header.append(line)
        if line.strip() == "#@ ---":
            break
    else:
        pytest.fail("header not closed by '#@ ---'")
    assert any(h.startswith("#@ expected:") for h in header), "header lacks an '#@ expected:' line"
    assert any(h.startswith(("#@ source:", "#@ url:")) for h in header), "header lacks '#@ source:'"
    if CORPUS_DIGESTS and _digest(fx.path.read_bytes()) not in CORPUS_DIGESTS:
        # not a corpus copy: it must say where it came from (a URL, a recording) or that it is invented
        said = " ".join(header).lower()
        assert "#@ url:" in said or "invented" in said or "recorded" in said, (
            "a fixture that is not a corpus copy must give its url, or say it was recorded or invented")


def test_fixture_dirs_are_known_sources() -> None:
    from topodiag.parsers import names

    for d in FIXTURES.iterdir():
        # scenarios, recorded sysfs trees, and nvidia-bug-reports (a container of sources, not one)
        if d.is_dir() and d.name not in ("hosts", "sysfs", "nvidia_bug_report"):
            assert d.name in names(), f"fixtures/{d.name} is not a parser source"
