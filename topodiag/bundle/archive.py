"""Bundle archives: `pack` writes a bundle directory as a tar.gz; `unpack` reads one back into a
temporary folder, copying each member by hand and refusing what could write outside it (absolute
paths, `..`, links, devices, oversized or too many members, truncated or corrupt archives)."""

from __future__ import annotations

import os
import stat

from ..errors import BundleError
from .manifest import MANIFEST
from .shown import shown

MAX_MEMBER_BYTES = 512 * 1024 * 1024  # one member (a big NCCL log is the largest thing a bundle holds)
MAX_ARCHIVE_BYTES = 2 * 1024 * 1024 * 1024  # all members together, uncompressed
MAX_MEMBERS = 20000
MAX_DEPTH = 32  # folders inside a bundle (collect writes at most sysfs/class/infiniband/<hca>/ports/<n>/gids/...)
MAX_NAME_BYTES = 255  # one path component, as file systems allow
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")


def pack(root: str, out_path: str) -> None:
    """Write a bundle directory as a tar.gz whose members sit under one top folder (the archive's
    name without suffix); plain files and folders only, owner and mode normalised.

    The archive is written in a private folder made beside `out_path` (mkdtemp: mode 0700, a name
    nobody can guess or plant a link at), opened there with O_CREAT|O_EXCL|O_NOFOLLOW, then renamed
    onto `out_path` (os.replace: it replaces a directory entry and never writes through a link). A
    destination that is a symbolic link (or a folder, a device, a FIFO...) is refused with
    BundleError before anything is written: the archive lands at the path given, never elsewhere.
    The private folder is removed on every path out, error or not."""
    import shutil
    import tarfile
    import tempfile

    top = os.path.basename(out_path)
    for suffix in ARCHIVE_SUFFIXES:
        if top.endswith(suffix):
            top = top[: -len(suffix)]
            break
    _refuse_destination(out_path)

    def clean(info: "tarfile.TarInfo") -> "tarfile.TarInfo":
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mode = 0o755 if info.isdir() else 0o644
        return info

    parent = os.path.dirname(os.path.abspath(out_path))
    try:
        private = tempfile.mkdtemp(prefix=".topodiag-pack-", dir=parent)
    except OSError as exc:
        raise BundleError(f"{shown(out_path)}: cannot write the bundle here: {exc.strerror or _flat(exc)}") from None
    try:
        tmp = os.path.join(private, "bundle.tar.gz")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(tmp, flags, 0o644)
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames.sort()
                for name in sorted(filenames):
                    full = os.path.join(dirpath, name)
                    if not stat.S_ISREG(os.lstat(full).st_mode):
                        continue
                    rel = os.path.relpath(full, root)
                    tar.add(full, arcname=f"{top}/{rel}", recursive=False, filter=clean)
        _refuse_destination(out_path)  # planted while the archive was written: still refused
        os.replace(tmp, out_path)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def place_dir(root: str, target: str) -> None:
    """Put a bundle directory at `target` (new, or an empty folder) without writing through a link:
    the copy is made in a private folder beside `target` (mkdtemp, 0700), then renamed onto it
    (a rename never follows a link at the destination, and replaces only an empty folder). A
    `target` that is a symbolic link or not a folder is refused (BundleError); the private folder
    is removed on every path out."""
    import shutil
    import tempfile

    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise BundleError(f"{shown(target)}: is a symbolic link; refusing to write through it (give a "
                          "path that is not a link, or remove the link)")
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise BundleError(f"{shown(target)}: exists and is not a directory")
    parent = os.path.dirname(os.path.abspath(target))
    private = tempfile.mkdtemp(prefix=".topodiag-collect-", dir=parent)
    try:
        staged = os.path.join(private, "bundle")
        shutil.copytree(root, staged, symlinks=False)
        mask = os.umask(0)
        os.umask(mask)
        for dirpath, dirnames, _ in os.walk(staged):
            for name in dirnames:
                os.chmod(os.path.join(dirpath, name), 0o777 & ~mask)
        os.chmod(staged, 0o777 & ~mask)
        os.rename(staged, target)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _refuse_destination(out_path: str) -> None:
    """BundleError when `out_path` exists and is anything but a regular file (a symbolic link
    above all: writing through it would write outside the path given)."""
    try:
        st = os.lstat(out_path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise BundleError(f"{shown(out_path)}: cannot write the bundle here: {exc.strerror or _flat(exc)}") from None
    if stat.S_ISLNK(st.st_mode):
        raise BundleError(f"{shown(out_path)}: is a symbolic link; refusing to write through it (give a "
                          "path that is not a link, or remove the link)")
    if not stat.S_ISREG(st.st_mode):
        raise BundleError(f"{shown(out_path)}: exists and is not a regular file; give a new .tar.gz name")


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
