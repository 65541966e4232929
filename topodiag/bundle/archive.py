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
MAX_DEPTH = 32  # folders inside a bundle (collect writes at most sysfs/class/infiniband/<hca>/ports/<n>/gids/...)
MAX_NAME_BYTES = 255  # one path component, as file systems allow
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
    name = ""
    try:
        tar = tarfile.open(archive, "r:*")
    except FileNotFoundError:
        raise BundleError(f"{archive}: no such file") from None
    except IsADirectoryError:
        raise BundleError(f"{archive}: a folder named like an archive; a bundle folder holds manifest.json") from None
    except (tarfile.TarError, OSError, EOFError, zlib.error):
        raise BundleError(f"{archive}: not a readable tar archive ({_what_it_is(archive)}); expected a "
                          "topodiag bundle (.tar.gz written by `topodiag collect`)") from None
    try:
        with tar:
            for info in _members(tar, archive):
                count += 1
                if count > MAX_MEMBERS:
                    raise BundleError(f"{archive}: more than {MAX_MEMBERS} members; not a topodiag bundle")
                name = info.name
                parts = _parts(archive, name)
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
                _copy(tar, info, os.path.join(dest, *parts), archive)
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise BundleError(f"{archive}: the archive is truncated or corrupt ({_flat(exc)})") from None
    except (FileExistsError, NotADirectoryError, IsADirectoryError):
        raise BundleError(f"{archive}: member {name!r} collides with another of the same name (twice, or a "
                          "file and a folder)") from None
    except (OSError, ValueError) as exc:  # a name the file system refuses, a disk that is full
        raise BundleError(f"{archive}: member {name!r} cannot be unpacked: "
                          f"{getattr(exc, 'strerror', None) or _flat(exc)}") from None
    return _bundle_root(dest, archive)


_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))


def _what_it_is(archive: str) -> str:
    """What the file's first bytes say it is, for the one-line refusal of a file that is no tar."""
    try:
        with open(archive, "rb") as fh:
            head = fh.read(8)
    except OSError as exc:
        return exc.strerror or "unreadable"
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return f"{name}-compressed, but what it holds is not tar or is cut short"
    return "neither gzip, bzip2, xz nor plain tar"


def _flat(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _parts(archive: str, name: str) -> list[str]:
    """A member name's folders and file, refused (BundleError) when it could leave the bundle or is
    not a name a file system takes: absolute, `..`, a NUL byte, a component over MAX_NAME_BYTES,
    deeper than MAX_DEPTH."""
    if "\x00" in name:
        raise BundleError(f"{archive}: member {name!r} has a NUL byte in its name")
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or ".." in parts or os.path.isabs(name) or ":" in parts[0]:
        raise BundleError(f"{archive}: member {name!r} points outside the bundle (absolute or ..)")
    parts = [p for p in parts if p not in ("", ".")]
    if len(parts) > MAX_DEPTH:
        raise BundleError(f"{archive}: member {name[:80]!r}... is {len(parts)} folders deep (at most {MAX_DEPTH})")
    for p in parts:
        if len(p.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
            raise BundleError(f"{archive}: member {name[:80]!r}... has a name over {MAX_NAME_BYTES} bytes")
    return parts


def _copy(tar, info, target: str, archive: str) -> None:
    """One regular member into `target`, never more or fewer bytes than its header says."""
    name = info.name
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
