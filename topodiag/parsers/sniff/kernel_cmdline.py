"""Whether a text looks like kernel_cmdline's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

def sniff(text: str) -> float:
    """0.8 for a text whose first lines hold BOOT_IMAGE= / root= / an IOMMU option."""
    try:
        lines = [ln.strip() for ln in text[:8192].splitlines() if ln.strip()][:4]
        if any(ln.startswith("[") or "kernel:" in ln or "ommand line:" in ln for ln in lines):
            return 0.0  # a kernel log that prints the command line: kernel_log's
        if any("BOOT_IMAGE=" in ln or (" root=" in f" {ln}" and " ro" in f" {ln} ") for ln in lines):
            return 0.8
        if len(lines) <= 2 and any(re.search(r"(?:^|\s)(?:intel_|amd_)?iommu=\S", ln) for ln in lines):
            return 0.6
    except Exception:
        return 0.0
    return 0.0
