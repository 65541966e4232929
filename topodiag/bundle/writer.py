"""Writing a bundle directory: each record's text as a member, then manifest.json (last, so a
directory with a manifest is complete). Records are anything with the fields of
`topodiag.live.collection.Record` (source, status, member, text, argv, rc, duration_s, timed_out,
reason, extra_files)."""

from __future__ import annotations

import json
import os
import time
from typing import Any, Iterable

from .archive import MAX_MEMBER_BYTES
from .manifest import SCHEMA_VERSION, sha256_of

COPY_CHUNK = 1 << 20  # characters copied at a time from a file the user gave (an NCCL log of GBs)


def _open_regular_text(src: str):
    """A file the user named, for reading text (undecodable bytes replaced, line ends kept), opened
    without blocking and refused unless it is a regular file (a FIFO put there meanwhile)."""
    import io
    import stat

    fd = os.open(src, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(f"{src}: not a regular file")
    return io.TextIOWrapper(os.fdopen(fd, "rb"), encoding="utf-8", errors="replace", newline="")


def copy_text(src: str, dst: str, cap: int = MAX_MEMBER_BYTES) -> str:
    """Copy the text file `src` into the member `dst` a chunk at a time (memory stays flat whatever
    its size), as UTF-8 and at most `cap` bytes: a longer file is cut after its last whole line
    under the cap, so that the bundle reader, which refuses a member over MAX_MEMBER_BYTES, reads
    it. Returns why it was cut ("" when whole)."""
    written = 0
    with _open_regular_text(src) as fh, open(dst, "w", encoding="utf-8", newline="") as out:
        while True:
            chunk = fh.read(COPY_CHUNK)
            if not chunk:
                return ""
            data = chunk.encode("utf-8")
            if written + len(data) > cap:
                head = data[: cap - written]
                head = head[: head.rfind(b"\n") + 1]  # whole lines only (a cut UTF-8 sequence never)
                out.write(head.decode("utf-8"))
                return (f"cut after {written + len(head)} bytes: a bundle member holds at most {cap} "
                        f"bytes (the rest of the file is not in the bundle)")
            out.write(chunk)
            written += len(data)


def write_bundle_dir(root: str, records: list, host: str, facts: dict[str, Any],
                     notes: Iterable[str] = (), redacted: bool = False) -> dict:
    """Write the records as a bundle directory (manifest.json last); returns the manifest."""
    from .. import __version__

    os.makedirs(root, exist_ok=True)
    entries = []
    written: set[str] = set()
    cut: dict[str, str] = {}  # member -> why it holds only the head of the file it copies
    for rec in records:
        sha = None
        reason = rec.reason
        source_path = getattr(rec, "source_path", None)
        if rec.member and (rec.text is not None or source_path):
            path = os.path.join(root, *rec.member.split("/"))
            if rec.member not in written:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                if rec.text is not None:
                    with open(path, "w", encoding="utf-8") as fh:
                        fh.write(rec.text)
                else:
                    cut[rec.member] = copy_text(source_path, path)
                written.add(rec.member)
            if cut.get(rec.member):
                reason = f"{reason}; {cut[rec.member]}" if reason else cut[rec.member]
            sha = sha256_of(path)
        for rel, text in rec.extra_files:
            path = os.path.join(root, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        entries.append({"source": rec.source, "status": rec.status, "member": rec.member if sha else None,
                        "argv": list(rec.argv), "rc": rec.rc, "duration_s": rec.duration_s,
                        "timed_out": rec.timed_out, "sha256": sha, "reason": reason})
    manifest = {"schema_version": SCHEMA_VERSION, "tool": {"name": "topodiag", "version": __version__},
                "host": host, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "redacted": redacted, "facts": facts, "notes": list(notes), "sources": entries}
    with open(os.path.join(root, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=1)
        fh.write("\n")
    return manifest
