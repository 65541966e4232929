"""Whether a text looks like nccl-tests output (parser detection: topodiag/parsers/__init__.py imports this
module, not the parser)."""

from __future__ import annotations

import re

# The sniffers' patterns stay on one line: [ \t], never \s (in re.M, `^\s*` runs over the newlines after
# every line start: quadratic on a file of blank lines), digits are [0-9], runs are bounded.
_SNIFF_STRONG = re.compile(
    r"^[^\n#]{0,24}#[ \t]*(?:(?:nccl|rccl)-tests version |Collective test starting:|nThread [0-9]+ nGpus [0-9]+"
    r"|size[ \t]+count[ \t]+type[ \t]|out-of-place[ \t]+in-place)", re.M)
_SNIFF_SUMMARY = re.compile(r"^[^\n#]{0,24}#[ \t]*(?:Out of bounds values|Avg bus bandwidth)[ \t]*:", re.M)
_SNIFF_DEVICE = re.compile(r"^[^\n#]{0,24}#[ \t]*Rank[ \t]+[0-9]{1,9}[ \t]+(?:Group[ \t]+[0-9]{1,9}[ \t]+)?Pid[ \t]+[0-9]{1,12}"
                           r"[ \t]+on[ \t]+[^ \t\n]{1,512}[ \t]+device[ \t]", re.M)
_SNIFF_ROW = re.compile(
    r"^[ \t]*(?:[0-9]{1,9}:[ \t]+)?(?:\[[0-9]{1,9}\][ \t]*)?[0-9]{1,20}[ \t]+[0-9]{1,20}[ \t]+"
    r"(?:float|half|bfloat16|double|u?int(?:8|32|64)|char|int|fp8[A-Za-z0-9_]{0,16})"
    r"[ \t]+[^ \t\n]{1,64}[ \t]+-?[0-9]", re.M)



def sniff(text: str) -> float:
    """0.95 banner or results header, 0.9 summary lines (0.75 beside NCCL INFO/WARN lines: the tail of an
    NCCL_DEBUG log, which this parser refuses without a banner, header or rows), 0.7 bare rows, 0.5 a
    device list alone."""
    try:
        if _SNIFF_STRONG.search(text):
            return 0.95
        rows = _SNIFF_ROW.findall(text, 0, 65536)
        if _SNIFF_SUMMARY.search(text):
            return 0.75 if len(rows) < 2 and ("NCCL INFO" in text or "NCCL WARN" in text) else 0.9
        if len(rows) >= 2:
            return 0.7
        if _SNIFF_DEVICE.search(text):  # a device list alone: often the head of an NCCL_DEBUG log excerpt
            return 0.5
    except Exception:  # pragma: no cover - regex search on str does not raise
        return 0.0
    return 0.0
