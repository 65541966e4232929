"""The kernel_log block pass's line keys (_kernel_log_block.py): the key of each line of a block, its
text with the leading time stamp taken off (a dmesg "[ 12.345678]", a syslog "Mon DD HH:MM:SS" before
"<host> kernel:", a /dev/kmsg record's "prio,seq,usec,flags;"), the distinct keys with their counts
and each line's tag (`digest`: the state-free half of a block, run in a worker for a big file,
_kernel_log_par.py). Two lines of one key differ only in the digits of their stamp. Where the install
compiled it, the keys of an ASCII text come from one pass in C (topodiag/scan/_cscan.c
`kernel_keys`); `digest_py`, the regex, is its twin. A helper module, no parser.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Optional

from ..scan.lines import kernel_keys as _compiled_keys
from ._possessive import possessive

# A line's key: (the syslog month's first letter, "<host> kernel: ", "[" of a dmesg stamp, ";" of a
# /dev/kmsg record's "<prio>,<seq>,<usec>,<flags>;" (usec of at most 17 digits: its dmesg form stays a
# dmesg stamp), the rest). Every line gives one match (all parts optional): the block's lines in order.
# (Possessive runs, "*+" / "{m,n}+": what follows each cannot start inside it, so giving back a character
# could never match; they only save the engine the tries; greedy before Python 3.11: _possessive.py.)
_KEY_RE = re.compile(possessive(
    r"(?m)^(?:([A-Z])[a-z]{2} [ 0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] (\S{1,64}+ kernel: ?))?"
    r"(?:(\[)[ \t]*+[0-9]{1,12}+\.[0-9]{1,9}+\]|[0-9]{1,3}+,[0-9]{1,20}+,[0-9]{1,17}+,[^;\n]{0,40}+(;))?(.*+)$"))

# The key of a line that starts with a dmesg stamp, as _KEY_RE finds it: (the rest), one group
_DMESG_KEY_RE = re.compile(possessive(r"(?m)^\[[ \t]*+[0-9]{1,12}+\.[0-9]{1,9}+\](.*+)$"))

# A line that does not start with "[" (in the first _DMESG_PROBE characters of a block: the block is
# then no node's dmesg, whose lines all do, and its two counts are not needed)
_NOT_DMESG = re.compile(r"\n[^\[]")
_DMESG_PROBE = 8192


def digest(text: str, ends: bool = False) -> Optional[tuple]:
    """The state-free half of `_fast` for a block's lines joined by "\n" (run in a worker): (the count
    of keys, which the caller holds to its count of lines (`feed`, `_fast`: a block whose keys do not
    line up with its lines is read line by line), [(key, its tag, its count, the index of a line of
    it: its first)] of each distinct key, an array of the tag of each line: the index of the key's
    first line). A key is _KEY_RE's five groups. Where the install compiled it, an ASCII text's keys
    come from one pass in C (topodiag/scan/_cscan.c `kernel_keys`: 2 ms a 4 MiB block against the
    regex's 25, whose match of five groups a line is most of the cost); `digest_py`, its twin, gives
    the same values (tests/parsers/test_kernel_keys.py holds them equal) for any other text. `ends`:
    from the C pass, also each line's end and the longest line's length (`Lines`), as two more items."""
    if _compiled_keys is not None:
        got = _compiled_keys(text, ends)
        if got is not None:
            from array import array

            tags = array("I")
            tags.frombytes(got[2])
            if not ends:
                return got[0], got[1], tags
            at = array("I")
            at.frombytes(got[3])
            return got[0], got[1], tags, at, got[4]
    return digest_py(text)


class Lines:
    """A block's lines as a list of them reads (len, an item, a slice, iteration), each cut from the
    block's text by the ends `digest(text, ends=True)` found (`ends[i]`: the place of line i's "\\n"):
    a line is made when it is read, so the merge of a big file (_kernel_log_par.py) does not cut
    every line of a block it reads a few hundred of in order."""

    __slots__ = ("text", "ends")

    def __init__(self, text: str, ends) -> None:
        self.text, self.ends = text, ends

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, i):
        ends = self.ends
        if i.__class__ is slice:  # a run of lines: cut once from the text (the look-backs' last 5,001)
            lo, hi, step = i.indices(len(ends))
            if step != 1:
                return [self[k] for k in range(lo, hi, step)]
            return self.text[ends[lo - 1] + 1 if lo else 0:ends[hi - 1]].split("\n") if lo < hi else []
        if i < 0:
            i += len(ends)
        return self.text[ends[i - 1] + 1 if i else 0:ends[i]]

    def __iter__(self):
        return iter(self[:])


def digest_py(text: str) -> tuple:
    """`digest` by _KEY_RE. A block whose every line has a dmesg stamp (a node's dmesg) finds them by
    _DMESG_KEY_RE: one string a line, not a tuple of five (its key is ("", "", "[", "", the rest), as
    _KEY_RE gives it)."""
    from array import array

    dmesg = False
    if text[:1] == "[" and not _NOT_DMESG.search(text, 0, _DMESG_PROBE):
        n = text.count("\n") + 1
        if text.count("\n[") == n - 1:
            keys = _DMESG_KEY_RE.findall(text)
            dmesg = len(keys) == n
    if not dmesg:
        keys = _KEY_RE.findall(text)  # one match a line (every part optional): the caller holds
        n = len(keys)  # n to its count of lines (feed, _fast)
    ids: dict = {}  # each distinct key hashed once: its tag is the index of its first line
    tags = array("I", map(ids.setdefault, keys, range(n)))
    counts = Counter(tags)
    if dmesg:
        return n, [(("", "", "[", "", key), i, counts[i], i) for key, i in ids.items()], tags
    return n, [(key, i, counts[i], i) for key, i in ids.items()], tags
