"""The NCCL INFO/TRACE messages that carry facts, by their start: one table, from which both the
scanner's SCAN_RE (reader.py: which distinct tag texts are fact lines) and the fact accumulator's
dispatch (facts.py STARTS: which reader takes a message) are built, so the two cannot drift.

Each row is (start, tail, reader):
  start   the literal text the message begins with (after the tag and an optional "[Rank N] ");
  tail    a regular expression (over bytes) that must follow the start for the scan to read the line
          ("" for none): it narrows the scan only, never the dispatch;
  reader  the name of the Facts method that reads a message with this start, or None: the scan reads
          the line and Facts.info's fallbacks look at it (a GID index, the CUDA driver version, Init
          COMPLETE, the channel counts) -- a row that only widens what the scan reads.
A start with no reader and no tail covers every longer start under it in the scan (e.g. "NET/"
covers "NET/IB : Using"); the dispatch tries the rows with a reader in this order, the first start
that a message has wins.
"""

from __future__ import annotations

import re

# "comm 0x.." lines are read, except "comm 0x.. rank N nRanks N" not followed by " nNodes"
_COMM_TAIL = rb"0x(?![0-9a-fA-F]+ rank [0-9]+ nRanks [0-9]+(?![0-9]| nNodes))"
_NET_CC_TAIL = rb"[0-9]+ -> [0-9]"

KINDS: tuple[tuple[str, bytes, str | None], ...] = (
    ("Connected NVLS", b"", "nvls"),
    ("NCCL_", b"", "env_line"),
    ("NCCL version", b"", "banner_line"),
    ("NCCL", b"", None),  # the scan reads every "NCCL..." message
    ("NET/IB : Using", b"", "ib_using"), ("NET/IB: Using", b"", "ib_using"),
    ("NET/Socket : Using", b"", "socket_using"), ("NET/Socket: Using", b"", "socket_using"),
    ("NET/IB : No device found", b"", "ib_none"), ("NET/IB: No device found", b"", "ib_none"),
    ("NET/OFI", b"", "ofi"),
    ("NET/Plugin", b"", "net_plugin"),
    ("NET/", b"", None),  # every NET/ message: the per-QP lines of NET/IB (reader.py QP_RE), GID
    ("Using network ", b"", "using_network"),
    ("Using internal Network ", b"", "internal_network"),
    ("Initialized NET plugin ", b"", "plugin_initialized"),
    ("Failed to initialize NET plugin ", b"", "plugin_failed"),
    ("Assigned NET plugin ", b"", "plugin_assigned_line"),
    ("comm ", _COMM_TAIL, "comm"),
    ("cudaDriverVersion", b"", "driver"),
    ("ncclComm", rb"[A-Za-z]{0,40} comm ", "init_rank"),
    ("P2P plugin ", b"", "p2p_plugin"),
    ("Plugin Path : ", b"", "plugin_dir"),
    ("rank ", rb"[0-9]+ nranks [0-9]", "rank_line"),
    ("Bootstrap", b"", "bootstrap_line"),
    ("net.cc:", _NET_CC_TAIL, "refusal"), ("plugin/net.cc:", _NET_CC_TAIL, "refusal"),
    ("CUDA Driver", b"", None),
    ("Trees", b"", None),
    ("", rb"[0-9]+ coll channels", None),
)


def dispatch(kinds=KINDS) -> tuple[tuple[str, str], ...]:
    """(start, reader name) of the rows with a reader, in the table's order."""
    return tuple((start, reader) for start, _, reader in kinds if reader is not None)


def scan_starts(kinds=KINDS) -> bytes:
    """The alternatives of the scan's message start, as one regular expression over bytes: each row's
    start (escaped) and tail, less the rows a tail-less start before or after them covers; grouped by
    first byte (`N(?:ET/|CCL)`), which the regex engine tries faster."""
    rows = [(start.encode(), tail) for start, tail, _ in kinds]
    covering = [s for s, t in rows if not t and s]
    kept = []
    for s, t in rows:
        if any(c != s and s.startswith(c) for c in covering) or (s, t) in kept:
            continue
        kept.append((s, t))
    groups: dict[bytes, list[bytes]] = {}
    for s, t in kept:
        groups.setdefault(s[:1], []).append(re.escape(s[1:]) + t)
    alts = []
    for first, rests in groups.items():
        if not first:  # rows with no literal start
            alts.extend(rests)
        elif len(rests) == 1:
            alts.append(re.escape(first) + rests[0])
        else:
            alts.append(re.escape(first) + b"(?:" + b"|".join(rests) + b")")
    return b"|".join(alts)
