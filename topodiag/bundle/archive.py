"""Bundle archives: `pack` writes a bundle directory as a tar.gz; `unpack` reads one back into a
temporary folder, copying each member by hand and refusing what could write outside it (absolute
paths, `..`, links, devices, oversized or too many members, truncated or corrupt archives)."""

from __future__ import annotations

import os
import stat

from ..errors import BundleError
from .manifest import MANIFEST

MAX_MEMBER_BYTES = 512 * 1024 * 1024  # one member (a big NCCL log is the largest thing a bundle holds)
MAX_ARCHIVE_BYTES = 2 * 1024 * 1024 * 1024  # all members together, uncompressed
MAX_MEMBERS = 20000
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")


def pack(root: str, out_path: str) -> None:
    """Write a bundle directory as a tar.gz whose members sit under one top folder (the archive's
    name without suffix); plain files and folders only, owner and mode normalised."""
    import tarfile

    top = os.path.basename(out_path)
    for suffix in ARCHIVE_SUFFIXES:
        if top.endswith(suffix):
            top = top[: -len(suffix)]
            break

    def clean(info: "tarfile.TarInfo") -> "tarfile.TarInfo":
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mode = 0o755 if info.isdir() else 0o644
        return info

    tmp = out_path + ".partial"
    with tarfile.open(tmp, "w:gz") as tar:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                if not stat.S_ISREG(os.lstat(full).st_mode):
                    continue
                rel = os.path.relpath(full, root)
                tar.add(full, arcname=f"{top}/{rel}", recursive=False, filter=clean)
    os.replace(tmp, out_path)


def unpack(archive: str, dest: str) -> str:
    """Extract a bundle archive into `dest` (a fresh temporary folder) and return the bundle's
    root (the folder holding manifest.json). Refuses, with BundleError and before writing anything
    outside `dest`: absolute names, `..`, links, devices and other non-regular members, members over
    MAX_MEMBER_BYTES, archives over MAX_ARCHIVE_BYTES or MAX_MEMBERS; a truncated or corrupt archive
    is a BundleError too. Nothing is extracted by tarfile itself: each member is copied by hand."""
    import tarfile
    import zlib

    total = count = 0
    try:
        tar = tarfile.open(archive, "r:*")
    except FileNotFoundError:
        raise BundleError(f"{archive}: no such file") from None
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise BundleError(f"{archive}: not a readable tar archive ({exc}); expected a topodiag bundle "
                          "(.tar.gz written by `topodiag collect`)") from None
    try:
        with tar:
            for info in _members(tar, archive):
                count += 1
                if count > MAX_MEMBERS:
                    raise BundleError(f"{archive}: more than {MAX_MEMBERS} members; not a topodiag bundle")
                name = info.name
                parts = name.replace("\\", "/").split("/")
                if name.startswith(("/", "\\")) or ".." in parts or os.path.isabs(name) or ":" in parts[0]:
                    raise BundleError(f"{archive}: member {name!r} points outside the bundle (absolute or ..)")
                parts = [p for p in parts if p not in ("", ".")]
                if not parts:
                    continue
                if info.isdir():
                    os.makedirs(os.path.join(dest, *parts), exist_ok=True)
                    continue
                if info.issym() or info.islnk():
                    raise BundleError(f"{archive}: member {name!r} is a link; bundles hold plain files only")
                if not info.isfile():
                    raise BundleError(f"{archive}: member {name!r} is not a regular file (device, fifo...)")
                if info.size > MAX_MEMBER_BYTES:
                    raise BundleError(f"{archive}: member {name!r} is {info.size} bytes, over the "
                                      f"{MAX_MEMBER_BYTES}-byte cap")
                total += info.size
                if total > MAX_ARCHIVE_BYTES:
                    raise BundleError(f"{archive}: more than {MAX_ARCHIVE_BYTES} bytes once unpacked")
                target = os.path.join(dest, *parts)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                src = tar.extractfile(info)
                if src is None:
                    raise BundleError(f"{archive}: member {name!r} cannot be read")
                written = 0
                with src, open(target, "xb") as out:
                    for block in iter(lambda: src.read(1 << 20), b""):
                        written += len(block)
                        if written > info.size:
                            raise BundleError(f"{archive}: member {name!r} is longer than its header says")
                        out.write(block)
                if written != info.size:
                    raise BundleError(f"{archive}: member {name!r} is cut short (truncated archive)")
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise BundleError(f"{archive}: the archive is truncated or corrupt ({exc})") from None
    except FileExistsError as exc:
        raise BundleError(f"{archive}: member {exc.filename!r} appears twice") from None
    return _bundle_root(dest, archive)


def _members(tar, archive: str):
    """The archive's members one by one (so a corrupt tail is found where it is)."""
    while True:
        info = tar.next()
        if info is None:
            return
        yield info


def _bundle_root(dest: str, archive: str) -> str:
    if os.path.isfile(os.path.join(dest, MANIFEST)):
        return dest
    entries = [e for e in os.listdir(dest) if not e.startswith(".")]
    if len(entries) == 1 and os.path.isfile(os.path.join(dest, entries[0], MANIFEST)):
        return os.path.join(dest, entries[0])
    raise BundleError(f"{archive}: no manifest.json at the top of the archive; expected a topodiag bundle")
