"""Writing a bundle directory: each record's text as a member, then manifest.json (last, so a
directory with a manifest is complete). Records are anything with the fields of
`topodiag.live.collection.Record` (source, status, member, text, argv, rc, duration_s, timed_out,
reason, extra_files)."""

from __future__ import annotations

import json
import os
import time
from typing import Any, Iterable

from .manifest import SCHEMA_VERSION, sha256_of


def write_bundle_dir(root: str, records: list, host: str, facts: dict[str, Any],
                     notes: Iterable[str] = (), redacted: bool = False) -> dict:
    """Write the records as a bundle directory (manifest.json last); returns the manifest."""
    from .. import __version__

    os.makedirs(root, exist_ok=True)
    entries = []
    written: set[str] = set()
    for rec in records:
        sha = None
        if rec.member and rec.text is not None:
            path = os.path.join(root, *rec.member.split("/"))
            if rec.member not in written:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(rec.text)
                written.add(rec.member)
            sha = sha256_of(path)
        for rel, text in rec.extra_files:
            path = os.path.join(root, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        entries.append({"source": rec.source, "status": rec.status, "member": rec.member if sha else None,
                        "argv": list(rec.argv), "rc": rec.rc, "duration_s": rec.duration_s,
                        "timed_out": rec.timed_out, "sha256": sha, "reason": rec.reason})
    manifest = {"schema_version": SCHEMA_VERSION, "tool": {"name": "topodiag", "version": __version__},
                "host": host, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "redacted": redacted, "facts": facts, "notes": list(notes), "sources": entries}
    with open(os.path.join(root, "manifest.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=1)
        fh.write("\n")
    return manifest
