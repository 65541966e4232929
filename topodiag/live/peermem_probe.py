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

SCHEMA_VERSION = 1
MAX_BYTES = 1024 * 1024


def _path(root: str, path: str) -> str:
    return path if root in ("", "/") else os.path.join(root, path.lstrip("/"))


def _read(root: str, path: str, missing: list) -> Optional[str]:
    try:
        with open(_path(root, path), encoding="utf-8", errors="replace") as fh:
            return fh.read(MAX_BYTES)
    except OSError:
        missing.append(path)
        return None


def probe(root: str = "/") -> dict:
    missing: list[str] = []
    modules = _read(root, "/proc/modules", missing)
    try:
        peers: Optional[list] = sorted(os.listdir(_path(root, "/sys/kernel/mm/memory_peers")))[:400]
    except OSError:
        missing.append("/sys/kernel/mm/memory_peers")
        peers = None
    version = _read(root, "/proc/driver/nvidia/version", missing)
    release = _read(root, "/proc/sys/kernel/osrelease", missing)
    if release is None and root in ("", "/"):
        release = os.uname().release
    return {"probe": "peermem", "schema_version": SCHEMA_VERSION, "ok": True, "modules": modules,
            "memory_peers": peers, "nvidia_version": version,
            "kernel_release": release.strip() if release else None, "not_visible": missing}


def main(argv: Optional[list[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    print(json.dumps(probe(args[0] if args else "/"), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
