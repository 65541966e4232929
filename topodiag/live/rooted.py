"""Reading a node's files under a root without leaving it: "/" on the node, a recorded tree in tests
and offline analysis (the live probes' ROOT argument, `Options.sysfs_root`).

A path whose real location (symlinks resolved) leaves the root is not followed; only regular files
are read (opened non-blocking, so a FIFO or device put in a file's place never blocks), up to a
limit; names are listed sorted naturally ("mlx5_2" before "mlx5_10"), hidden ones left out, capped.
Nothing here raises: what cannot be read is None (a file) or [] (a folder).
"""

from __future__ import annotations

import os
import re
import stat
from typing import Optional

MAX_ENTRIES = 512


def natural(name: str) -> list:
    """A sort key that orders the digit runs of a name by value."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", name) if p]


class Rooted:
    def __init__(self, root: str):
        self.root = os.path.realpath(os.fspath(root))

    def inside(self, rel: str) -> Optional[str]:
        """The real path of `rel` under the root, or None when it leaves the root."""
        path = os.path.realpath(os.path.join(self.root, rel.lstrip("/")))
        if self.root != "/" and path != self.root and not path.startswith(self.root + "/"):
            return None
        return path

    def read(self, rel: str, limit: int = 4096, strip: bool = True) -> Optional[str]:
        """The text of a regular file (UTF-8, bad bytes replaced), up to `limit` bytes; stripped, and
        None when empty, unless `strip` is False. None when it is not there or not a regular file."""
        path = self.inside(rel)
        if path is None:
            return None
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (OSError, ValueError):
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            parts, size = [], 0
            while size < limit:  # a procfs file may come a page per read
                data = os.read(fd, limit - size)
                if not data:
                    break
                parts.append(data)
                size += len(data)
        except (OSError, ValueError):
            return None
        finally:
            os.close(fd)
        text = b"".join(parts).decode("utf-8", errors="replace")
        if not strip:
            return text
        return text.strip() or None

    def entries(self, rel: str) -> Optional[list[str]]:
        """The folder's names, or None when it is not there (or leaves the root)."""
        path = self.inside(rel)
        if path is None:
            return None
        try:
            names = [n for n in os.listdir(path) if not n.startswith(".")]
        except (OSError, ValueError):
            return None
        return sorted(names, key=natural)[:MAX_ENTRIES]

    def listdir(self, rel: str) -> list[str]:
        """The folder's names ([] when it is not there)."""
        return self.entries(rel) or []
