"""The parser layer: one module per tool output, and detection of the source from content.

Every module named in SOURCES is a parser (see base.py for the contract). `get(name)` imports
and returns one, `detect(text)` names the most likely source (importing every parser to ask it).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .base import ParseError, blank_provenance_header, to_jsonable

__all__ = ["ParseError", "blank_provenance_header", "to_jsonable", "get", "names", "detect", "detect_all"]

# Below this a sniff score is noise: detection gives up and asks for --source.
DETECT_THRESHOLD = 0.3
# How much of the text sniffers see (they must decide from a prefix, so detection is cheap on GB logs).
SNIFF_CHARS = 256 * 1024

# Every source a parser module reads; the module is named after its source. A static list, so that
# reading an input whose source is known (a bundle member, a live command, `--source`) imports that
# one parser and not all of them: each costs 5-15 ms to import (regexes, dataclasses), and `check`
# runs inside a Slurm prolog's budget. tests/parsers/test_registry.py holds it to the package.
SOURCES = (
    "iblinkinfo",
    "ibnetdiscover",
    "ibstat",
    "ibstatus",
    "ibv_devinfo",
    "nccl_debug",
    "nccl_tests",
    "nccl_topo_xml",
    "nvidia_smi_nvlink_c",
    "nvidia_smi_nvlink_e",
    "nvidia_smi_nvlink_info",
    "nvidia_smi_nvlink_s",
    "nvidia_smi_topo_m",
    "nvidia_smi_topo_p2p",
    "nvml",
    "rdma_link",
    "show_gids",
    "sysfs_infiniband",
)


def names() -> list[str]:
    """Source names a user may pass to --source, sorted."""
    return sorted(SOURCES)


def get(source: str) -> ModuleType:
    """The parser module for a source name (imported on first use); KeyError if there is none."""
    if source not in SOURCES:
        raise KeyError(source)
    return importlib.import_module(f"{__name__}.{source}")


def detect_all(text: str) -> list[tuple[str, float]]:
    """Every source whose sniffer scores the text at or above the threshold, best first."""
    head = text[:SNIFF_CHARS]
    scores: list[tuple[str, float]] = []
    for source in SOURCES:
        mod = get(source)
        try:
            score = float(mod.sniff(head))
        except Exception:  # a sniffer bug must not break detection of the others
            score = 0.0
        if score >= DETECT_THRESHOLD:
            scores.append((source, score))
    scores.sort(key=lambda s: -s[1])
    return scores


def detect(text: str) -> str | None:
    """The most likely source of the text, or None when no parser recognises it."""
    found = detect_all(text)
    return found[0][0] if found else None
