"""Whether a text looks like show_gids's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._ladder import ladder

_SNIFF_HEADER = re.compile(r"^[ \t#`]*DEV[ \t]+PORT[ \t]+INDEX[ \t]+GID[ \t]+IPv4[ \t]+VER", re.M)
_SNIFF_FOUND = re.compile(r"^n_gids_found=[0-9]+", re.M)
_SNIFF_ROW = re.compile(r"^\S+[ \t]+[0-9]+[ \t]+[0-9]+[ \t]+[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}[ \t]", re.M)


def sniff(text: str) -> float:
    """0.95 for the table header, 0.8 for n_gids_found=, 0.6 for bare GID rows."""
    return ladder(text, ((0.95, _SNIFF_HEADER), (0.8, _SNIFF_FOUND), (0.6, _SNIFF_ROW)))
