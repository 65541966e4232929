"""Connection lines of an NCCL_DEBUG log ("Channel 00/0 : 8[20000] -> 0[81000] [receive] via
NET/IB/1/GDRDMA"): the transport key of the path after " via ", and the ranks before it."""

from __future__ import annotations

from typing import Optional

from ..base import is_digits


def normalise_transport(path: str) -> str:
    """'NET/IB/0/GDRDMA' -> 'NET/IB/GDRDMA', 'P2P/IPC/read' -> 'P2P/IPC', 'SHM/direct/direct' -> 'SHM'."""
    parts = path.strip().split("/")
    top = parts[0]
    if top == "NET" and len(parts) > 1:
        key = "NET/" + parts[1]
        return key + "/GDRDMA" if "GDRDMA" in parts[2:] else key
    if top == "P2P" and len(parts) > 1:
        return "P2P/" + parts[1]
    if top == "SHM":
        return "SHM"
    if top.upper() == "COLLNET":
        return "CollNet"
    if top == "NVLS":
        return "NVLS"
    return top[:40]


def _end_point(tok: str) -> tuple[Optional[int], Optional[str]]:
    """'8[20000]' -> (8, '20000'); '35' -> (35, None)."""
    b = tok.find("[")
    if b < 0:
        return (int(tok), None) if is_digits(tok) else (None, None)
    num = tok[:b]
    inner = tok[b + 1 : -1] if tok.endswith("]") else tok[b + 1 :]
    return (int(num) if is_digits(num) else None), (inner or None)


def _ends(collnet: bool, toks: list[str]) -> list[tuple]:
    """The ranks of a connection line's text before " via ": [(rank, bracket, is the local rank)].
    "a[x] -> b[y]" (the local rank is b on a "[receive]" line), or the first rank of a CollNet line."""
    ends: list[tuple] = []
    if collnet:
        r = _end_point(toks[0])[0] if toks else None
        if r is not None:
            ends.append((r, None, True))
    elif len(toks) >= 3 and toks[1] == "->":
        a, ab = _end_point(toks[0])
        b, bb = _end_point(toks[2])
        local_is_b = len(toks) > 3 and toks[3] == "[receive]"
        if a is not None:
            ends.append((a, ab, not local_is_b))
        if b is not None:
            ends.append((b, bb, local_is_b))
    return ends


def _bracket(br: Optional[str]) -> tuple[Optional[int], Optional[str]]:
    """A rank's bracket: two digits or fewer is a cudaDev (NCCL >= 2.19), longer a busId."""
    if br is None:
        return None, None
    if len(br) <= 2 and is_digits(br):
        return int(br), None
    return None, br
