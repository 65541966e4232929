"""Whether a text looks like kernel_log's output: its sniff and what only the sniff and the parser share
(detection imports this module, not the parser: topodiag/parsers/__init__.py)."""

from __future__ import annotations

import re

# [ \t] where a line's blanks are meant and no two runs that can match the same blank side by side:
# `^\s*(?:<\d+>)?\s*` is quadratic on a line of blanks. dmesg -x/--decode prefixes each line with
# "facility:level : " ("kern  :err   : "); dmesg --time-format iso stamps it
# "2025-01-25T10:34:54,859532+00:00 " (no host, no "kernel:"). A bracketed stamp holds seconds with a
# fraction ("[   12.345678]"): "[1]" starts lines of ibnetdiscover or ethtool output, not of a kernel log.
_STAMP_RE = re.compile(r"^[ \t]*[a-z]{2,8} {0,3}:[a-z]{2,7} {0,4}: |^[ \t]*[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9][,.][0-9]{1,9}[+-][0-9][0-9]:?[0-9][0-9] |"
                       r"^[ \t]*(?:<[0-9]{1,3}>[ \t]*)?\[[ \t]*[0-9]{1,12}\.[0-9]{1,9}\]|^[ \t]*\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] [0-9]{4}\]"
                       r"|^[A-Z][a-z]{2} [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] \S+ kernel:|^[0-9]{4}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\S* \S+ kernel:")
# A line of a short paste that reads as the kernel's: a driver's prefix at its start ("NVRM:", a
# "<driver> 0000:01:00.0: " device), a journal's "kernel:", an rsyslog "#012" newline; and the elision
# lines people leave in pastes ("...", "[...]", "[    ....    ]"), which count for nothing.
_KERNELISH_RE = re.compile(r"^[ \t]*NVRM[: ]|\bkernel: |^[ \t]*(?:pcieport|nvidia|mlx5_core|nvidia-peermem|nvidia_peermem) "
                           r"|^[ \t]*[\w.-]{1,40} [0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]: (?:AER|DMAR|AMD-Vi|PCIe Bus Error)")


def _elision(line: str) -> bool:
    """An elision line people leave in pastes: "...", "[...]", "[    ....    ]", "\u2026" (blanks and
    dots around them). Decided with str methods: a regex's overlapping dot runs were quadratic on a long
    run of dots that does not end the line (tests/hostile/test_regex_n4ghi.py holds the old pattern)."""
    u = line.lstrip(" \t")
    if u.startswith("["):
        close = u.find("]")
        inner = u[1:close] if close > 0 else None
        return inner is not None and "..." in inner and not inner.strip(" \t.") and not u[close + 1:].strip(" \t.")
    if u.startswith("..."):
        return not u.strip(" \t.")
    return u.startswith("\u2026") and not u[1:].strip(" \t.")


def sniff(text: str) -> float:
    """0.9 for NVRM Xid / SXid / fallen-off-the-bus lines, 0.6 for a kernel log without them: most of
    its lines stamped as dmesg, dmesg -T, syslog or the journal write them, or a short paste of driver
    lines (`dmesg | grep NVRM` without stamps, two `dmesg -T` lines, "..." elisions between)."""
    try:
        if "NVRM: Xid" in text or "SXid (" in text or ("NVRM:" in text and "fallen off the bus" in text):
            return 0.9
        if "Gb/s available PCIe bandwidth, limited by" in text:
            return 0.8
        head = [h for h in text.splitlines()[:200] if h.strip() and not _elision(h)]
        stamped = sum(1 for line in head if _STAMP_RE.match(line))
        if stamped >= max(3, len(head) // 2):
            return 0.6
        kernelish = sum(1 for line in head if _STAMP_RE.match(line) or _KERNELISH_RE.search(line))
        if kernelish >= 2 and kernelish * 3 >= len(head) * 2:
            return 0.6
        if kernelish == 1 and len(head) == 1 and ("NVRM" in head[0] or _STAMP_RE.match(head[0])):
            return 0.5
    except Exception:
        return 0.0
    return 0.0
