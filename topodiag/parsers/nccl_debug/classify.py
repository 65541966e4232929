"""What an NCCL_DEBUG log's failure lines mean: each WARN line (and the untagged old-form WARN of NCCL
1.x/2.0-2.2, the "Last error:" detail applications print, the "NCCL error"/"NCCL failure" lines with
ncclGetErrorString's text, and the fault INFO lines NCCL's source prints) is classified through the
catalogues read by "nccl_debug" (NCCL's own, aws-ofi-nccl's, nccl-rdma-sharp-plugins': topodiag/
catalogues/data), on the message as NCCL formats it: the text after `host:pid:tid [dev] file.cc:123
(func) NCCL WARN `. The catalogue caches by text, and only these rare lines reach it.

An error line keeps its historical `kind` where it has one (ib_completion, remote_process_exited,
unhandled_system_error, internal_error, unhandled_cuda_error, cuda_failure, connection_closed,
nccl_failure, nccl_error, the watchdog kinds); any other classified line's kind is its class with
underscores ("fabric_nvls", "ib_config"...).
"""

from __future__ import annotations

import re
from typing import Optional

from ... import catalogues

SOURCE = "nccl_debug"
WARN_TAG = "NCCL WARN "
# NCCL 1.x printed `WARN file.cu:123 message`; NCCL 2.0-2.2 (no "NCCL" tag yet) `host:pid:tid [0]
# file.cu:123 WARN message` -- the same place-then-level order as 2.3+'s "file.cc:123 NCCL WARN".
OLD_WARN_RE = re.compile(rb"([^\n]{0,300}?)(?:(?<![A-Za-z_])WARN ([\w./-]{1,120}\.(?:cu|cc|c|h|cpp)):[0-9]{1,6} "
                         rb"|\[[0-9]{1,4}\] ([\w./-]{1,120}\.(?:cu|cc|c|h|cpp)):[0-9]{1,6} WARN )([^\n]*)")
LAST_ERROR = b"Last error"
LAST_ERROR_WINDOW = 4096
# what launchers put before each line of a rank's output: "[rank7]: ", "[1,0]<stderr>:", "[0] "
LAUNCHER_RE = re.compile(r"^(?:\[[^\]\n]{1,24}\](?:<\w{1,8}>)?:?\s*)+")
# "NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error (run with ...), NCCL version 2.x"
# and nccl-tests' "Test NCCL failure common.cu:958 'internal error - please report ...'"
RESULT_AT_RE = re.compile(r"NCCL (?:error|failure)(?: in)?:? ?[^\s,']*:[0-9]+[,:]? ?'?")


def _legacy_kind(s: str) -> Optional[str]:
    if "Got completion from peer" in s:
        return "ib_completion"
    if "remote process exited" in s:
        return "remote_process_exited"
    if "unhandled system error" in s:
        return "unhandled_system_error"
    if "internal error" in s:
        return "internal_error"
    if "unhandled cuda error" in s:
        return "unhandled_cuda_error"
    if "Cuda failure" in s:
        return "cuda_failure"
    if "Connection closed by remote peer" in s:
        return "connection_closed"
    if "NCCL failure" in s:
        return "nccl_failure"
    return None


legacy_kind = _legacy_kind


# Messages of one kind differ in their numbers (ports, addresses, sizes, counts): the memo is keyed by
# the message with each number that does not end an identifier ("mlx5_0", "ncclNetPlugin_v8" keep
# theirs) written 0, and a remembered entry is checked against the real text before it is used.
_NUMBER_RE = re.compile(r"(?<![A-Za-z_0-9])[0-9]+")
_MEMO: dict = {}
_EXACT: dict = {}
_MEMO_MAX = 65536


_RX: dict = {}


def _still(hit: catalogues.Match, message: str) -> bool:
    """Whether a remembered entry's pattern matches this message too."""
    rx = _RX.get(hit.entry.id)
    if rx is None:
        rx = _RX[hit.entry.id] = re.compile(hit.entry.pattern)
    return rx.match(message.strip()[:catalogues.MAX_TEXT]) is not None


def match(message: str) -> Optional[catalogues.Match]:
    """The catalogue entry that explains `message` (the text after the producer's prefix), or None."""
    hit = _EXACT.get(message, False)
    if hit is not False:  # the same text again (every rank prints the same WARN)
        return hit
    hit = _match(message)
    if len(_EXACT) >= _MEMO_MAX:
        _EXACT.clear()
    _EXACT[message] = hit
    return hit


def _match(message: str) -> Optional[catalogues.Match]:
    key = _NUMBER_RE.sub("0", message[:512])
    hit = _MEMO.get(key, False)
    if hit is None or (hit is not False and _still(hit, message)):
        return hit
    try:
        hit = catalogues.classify_for(SOURCE, message)
    except (OSError, ValueError):  # a broken install: nothing is recognised, nothing crashes
        return None
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    _MEMO[key] = hit
    return hit


_READ: dict = {}
_NO_ENTRY = (None, None, None, False)


def reading(message: str) -> tuple:
    """(match, kind, (class, entry id, severity, consequence)) of a failure message, remembered by its
    text (every rank prints the same WARN: one dict lookup for each line after the first); a message
    is read on its first MAX_TEXT characters, as the catalogue matches it."""
    message = message[:catalogues.MAX_TEXT]
    got = _READ.get(message)
    if got is None:
        hit = match(message)
        e = hit.entry if hit is not None else None
        got = (hit, kind_of(message, hit), (e.cls, e.id, e.severity, e.consequence) if e is not None else _NO_ENTRY)
        if len(_READ) >= _MEMO_MAX:
            _READ.clear()
        _READ[message] = got
    return got


def warn_message(line: str) -> str:
    """The message of a WARN line: the text after its first "NCCL WARN " (or the whole line)."""
    at = line.find(WARN_TAG)
    return line[at + len(WARN_TAG):].strip() if at >= 0 else line.strip()


def kind_of(line: str, hit: Optional[catalogues.Match]) -> Optional[str]:
    """The error kind: the historical one for its wording, else the entry's class."""
    kind = _legacy_kind(line)
    if kind is None and hit is not None:
        kind = hit.entry.cls.replace("-", "_")
    return kind


def fields(hit: Optional[catalogues.Match]) -> dict:
    """The catalogue fields an error line carries (class, entry, severity, consequence)."""
    if hit is None:
        return {"cls": None, "entry": None, "severity": None, "consequence": False}
    e = hit.entry
    return {"cls": e.cls, "entry": e.id, "severity": e.severity, "consequence": e.consequence}


def result_message(line: str) -> Optional[str]:
    """The ncclGetErrorString text of an "NCCL error in: f:l, <text>" / "NCCL failure f:l '<text>'"
    line, or None."""
    m = RESULT_AT_RE.search(line)
    return line[m.end():].strip() if m else None


def old_warns(chunk: bytes) -> list[tuple[int, str, str]]:
    """[(offset, line prefix, message)] of the old-form WARN lines of a chunk (no "NCCL WARN" tag): the
    line of each "WARN " not after "NCCL " is matched on its own, once (a chunk-wide multi-line regex
    would try every line start; the next search starts after that line, so a line of repeats costs
    its length once)."""
    out = []
    pos = chunk.find(b"WARN ")
    while pos >= 0:
        le = chunk.find(b"\n", pos)
        le = len(chunk) if le < 0 else le
        if chunk[max(0, pos - 5):pos] != b"NCCL ":
            ls = chunk.rfind(b"\n", 0, pos) + 1
            line = chunk[ls:le]
            m = OLD_WARN_RE.match(line) if b"NCCL WARN" not in line else None
            if m is not None:
                out.append((ls, m.group(1).decode("utf-8", "replace"), m.group(4).decode("utf-8", "replace").strip()))
            pos = chunk.find(b"WARN ", le)
        else:
            pos = chunk.find(b"WARN ", pos + 5)
    return out


def last_error_after(chunk: bytes, start: int) -> Optional[tuple[int, int, str]]:
    """The "Last error:" within LAST_ERROR_WINDOW bytes after `start` (the end of an "NCCL error in:"
    line): (its offset, the offset of its detail, the detail) -- the rest of its line, or the next line
    when the line ends there (PyTorch prints "Last error:\n<detail>"), without a launcher's prefix."""
    pos = chunk.find(LAST_ERROR, start, start + LAST_ERROR_WINDOW)
    if pos < 0:
        return None
    colon = chunk.find(b":", pos, pos + 16)
    le = chunk.find(b"\n", pos)
    le = len(chunk) if le < 0 else le
    at = (colon + 1) if colon >= 0 else pos + len(LAST_ERROR)
    rest = chunk[at:le].strip()
    if not rest and le < len(chunk):
        nxt = chunk.find(b"\n", le + 1)
        at, rest = le + 1, chunk[le + 1:len(chunk) if nxt < 0 else nxt].strip()
    if not rest:
        return None
    return pos, at, LAUNCHER_RE.sub("", rest.decode("utf-8", "replace"), count=1)
