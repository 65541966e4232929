"""Whether a text looks like nvidia_smi_q's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

from ._common import sniff_failure

SOURCE = "nvidia_smi_q"

# [ \t], never \s, in a re.M pattern: `^\s*` runs over the newlines after every line start (quadratic).
_SNIFF_FABRIC = re.compile(r"^[ \t]*Fabric[ \t]*\r?$", re.M)
_SNIFF_FABRIC_KEY = re.compile(r"^[ \t]*(?:State|CliqueId|ClusterUUID)[ \t]+:", re.M)


def sniff(text: str) -> float:
    try:
        head = text[:20000]
        if sniff_failure(head, SOURCE):
            return 0.5  # only nvidia-smi's failure: the same for every subcommand; -q is the usual paste
        if "NVSMI LOG" in head or ("Attached GPUs" in head and "Product Name" in head):
            return 0.95
        if _SNIFF_FABRIC.search(head) and _SNIFF_FABRIC_KEY.search(head):
            return 0.9
        if "GPU Link Info" in head and "Link Width" in head:
            return 0.8
    except Exception:
        return 0.0
    return 0.0
