"""GPUDirect RDMA's kernel side, read from files only (prolog-safe, no subprocess).

    python -m topodiag.live.peermem_probe [ROOT]

/proc/modules (is nvidia_peermem or nv_peer_mem loaded?), /sys/kernel/mm/memory_peers (the peer-memory
clients registered with the RDMA core: nv_mem), /proc/driver/nvidia/version ("Open Kernel Module" for
the open GPU kernel modules, which the DMA-BUF path needs) and the kernel release (/proc/sys/kernel/
osrelease; DMA-BUF needs 5.12 or newer). Each file that is not there is null in the JSON, never an
error: a container without /proc/modules gives `modules: null` ("not visible"), and the peermem
parser then says nothing of the module rather than calling it missing.

JSON: {probe: "peermem", schema_version: 1, ok: true, modules (the text of /proc/modules, or null),
memory_peers ([entries], or null when the directory is not there), nvidia_version (the version file's
text, or null), kernel_release, not_visible ([the paths that were not there])}.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Optional

from .rooted import Rooted

SCHEMA_VERSION = 1
MAX_BYTES = 1024 * 1024
MAX_PEERS = 400


def _read(r: Rooted, path: str, missing: list) -> Optional[str]:
    text = r.read(path, MAX_BYTES, strip=False)
    if text is None:
        missing.append(path)
    return text


def probe(root: str = "/") -> dict:
    r = Rooted(root)
    missing: list[str] = []
    modules = _read(r, "/proc/modules", missing)
    peers = r.entries("/sys/kernel/mm/memory_peers")
    if peers is None:
        missing.append("/sys/kernel/mm/memory_peers")
    version = _read(r, "/proc/driver/nvidia/version", missing)
    release = _read(r, "/proc/sys/kernel/osrelease", missing)
    if release is None and root in ("", "/"):
        release = os.uname().release
    return {"probe": "peermem", "schema_version": SCHEMA_VERSION, "ok": True, "modules": modules,
            "memory_peers": peers[:MAX_PEERS] if peers is not None else None, "nvidia_version": version,
            "kernel_release": release.strip() if release else None, "not_visible": missing}


def main(argv: Optional[list[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    print(json.dumps(probe(args[0] if args else "/"), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
