"""Each source's sniff lives in its own light module, topodiag/parsers/sniff/<source>.py, which
detection imports instead of the parser (issue 29); the parser re-exports that very function, so every
text scores the same either way."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

import topodiag.parsers as parsers
from topodiag.parsers import _needles, sniff as sniff_pkg
from topodiag.parsers.sniff import _common

ROOT = Path(__file__).resolve().parents[2]


def test_one_sniff_module_per_source_named_as_sources_names_it():
    mods = {m.name for m in pkgutil.iter_modules(sniff_pkg.__path__) if not m.name.startswith("_")}
    assert mods == set(parsers.SOURCES)
    assert "sniff" in parsers.HELPERS and "sniff" not in parsers.SOURCES


@pytest.mark.parametrize("source", parsers.names())
def test_the_parser_sniff_is_the_sniff_module_function(source):
    """The same object: whatever text detection hands the sniff module, the parser's `sniff` scores alike."""
    light = importlib.import_module(f"topodiag.parsers.sniff.{source}").sniff
    assert parsers.get(source).sniff is light
    assert parsers.sniffer(source) is light


def test_sniffer_refuses_what_is_not_a_source():
    for name in ("no_such_tool", "base", "_common", "ib_records"):
        with pytest.raises(KeyError):
            parsers.sniffer(name)


def _heads() -> list[tuple[str, str]]:
    """Every fixture as detection reads it (its head, the provenance header blanked), and its first lines."""
    out = []
    for p in sorted((ROOT / "fixtures").rglob("*")):
        if not p.is_file():
            continue
        head = parsers.blank_provenance_header(p.read_bytes()[:parsers.SNIFF_CHARS].decode("utf-8", "replace"))
        out.append((str(p.relative_to(ROOT)), head))
        out.append((f"{p.relative_to(ROOT)} (first lines)", "\n".join(head.splitlines()[:3]) + "\n"))
    return out


def test_the_failure_sniff_refuses_cheaply_only_what_the_catalogue_would_refuse():
    """sniff_failure skips the catalogue when no line can be a catalogue match (no failure needle) or a
    line is neither blank, a prompt, the failure marker's nor a possible match: over every fixture and
    nvidia-smi failure lines, the same answer as scanning every line with the catalogue."""
    texts = _heads() + [
        ("failed", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that"
                   " the latest NVIDIA driver is installed and running.\n"),
        ("nvml", "Failed to initialize NVML: Driver/library version mismatch\n"),
        ("nvml prompt", "$ nvidia-smi -q\nFailed to initialize NVML: Unknown Error\n"),
        ("nvml and a table line", "Failed to initialize NVML: Unknown Error\nGPU 0: NVIDIA H100 (UUID: GPU-1)\n"),
        ("marker only", "Error: something\n"),
    ]
    claimed = 0
    for name, text in texts:
        for source in sorted(_needles.NVSMI_FAILURE):
            want = _common.scored_failure(text[:8192].splitlines()[:_common.FAILURE_LINES], source)
            assert _common.sniff_failure(text[:8192], source) == want, (name, source)
            claimed += want is not None
    assert claimed >= 9  # not vacuous: the failure texts and fixtures were claimed
