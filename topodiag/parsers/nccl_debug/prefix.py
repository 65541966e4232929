"""The line prefix NCCL prints (`host:pid:tid [dev]`), found in linear time.

facts.PREFIX_RE searched from every start is quadratic on a long run of host characters (its
`[^...]+` runs to the run's end from each start, then fails): find_prefix finds the same first match
from the fixed tail `:pid:tid [dev]`, then walks back over the host once."""

from __future__ import annotations

import re
from typing import Optional

_PREFIX_TAIL_RE = re.compile(r":[0-9]+:[0-9]+\s+\[([0-9]+)\]")
_NOT_HOST = frozenset(":[]`'\"")


def find_prefix(pre: str) -> Optional[tuple[str, str]]:
    """(host, device digits) of the first `host:pid:tid [dev]` in `pre`, as PREFIX_RE.search finds
    them, or None."""
    return first_prefix(pre, _PREFIX_TAIL_RE, lambda ch: ch in _NOT_HOST or ch.isspace())


def first_prefix(pre, tail_re, ends_host):
    """The first (host, device digits) in `pre` (str or bytes): the first match of `tail_re` (`:pid:tid
    [dev]`, the device its group 1) with a non-empty host before it, the host being the run of
    characters before the tail for which `ends_host` is false (walked back once: linear)."""
    pos = 0
    while True:
        m = tail_re.search(pre, pos)
        if m is None:
            return None
        end = start = m.start()
        while start > 0 and not ends_host(pre[start - 1]):
            start -= 1
        if start < end:
            return pre[start:end], m.group(1)
        pos = end + 1
