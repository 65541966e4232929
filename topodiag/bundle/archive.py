"""Bundle archives: `pack` writes a bundle directory as a tar.gz; `unpack` reads one back into a
temporary folder, copying each member by hand and refusing what could write outside it (absolute
paths, `..`, links, devices, oversized or too many members, truncated or corrupt archives)."""

from __future__ import annotations

import os
import stat

from ..errors import BundleError
from . import ARCHIVE_SUFFIXES
from .manifest import MANIFEST
from .shown import PATH_SHOWN, shown

MAX_MEMBER_BYTES = 512 * 1024 * 1024  # one member (a big NCCL log is the largest thing a bundle holds)
MAX_ARCHIVE_BYTES = 2 * 1024 * 1024 * 1024  # all members together, uncompressed
MAX_MEMBERS = 20000
MAX_DEPTH = 32  # folders inside a bundle (collect writes at most sysfs/class/infiniband/<hca>/ports/<n>/gids/...)
MAX_NAME_BYTES = 255  # one path component, as file systems allow


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
        raise BundleError(f"{shown(out_path, PATH_SHOWN)}: cannot write the bundle here: {exc.strerror or _flat(exc)}") from None
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
        raise BundleError(f"{shown(target, PATH_SHOWN)}: is a symbolic link; refusing to write through it (give a "
                          "path that is not a link, or remove the link)")
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise BundleError(f"{shown(target, PATH_SHOWN)}: exists and is not a directory")
    parent = os.path.dirname(os.path.abspath(target))
    os.makedirs(parent, exist_ok=True)  # `collect -o new/bundle`: its folders are made as before
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
        raise BundleError(f"{shown(out_path, PATH_SHOWN)}: cannot write the bundle here: {exc.strerror or _flat(exc)}") from None
    if stat.S_ISLNK(st.st_mode):
        raise BundleError(f"{shown(out_path, PATH_SHOWN)}: is a symbolic link; refusing to write through it (give a "
                          "path that is not a link, or remove the link)")
    if not stat.S_ISREG(st.st_mode):
        raise BundleError(f"{shown(out_path, PATH_SHOWN)}: exists and is not a regular file; give a new .tar.gz name")


def unpack(archive: str, dest: str) -> str:
    """Extract a bundle archive into `dest` (a fresh temporary folder) and return the bundle's
    root (the folder holding manifest.json). Refuses, with BundleError and before writing anything
    outside `dest`: absolute names, `..`, links, devices and other non-regular members, members over
    MAX_MEMBER_BYTES, archives over MAX_ARCHIVE_BYTES or MAX_MEMBERS; a truncated or corrupt archive
    is a BundleError too. Nothing is extracted by tarfile itself: each member is copied by hand.

    Bounded before tarfile reads anything into memory: the archive must be a regular file (a FIFO
    named like an archive is refused, never waited on); the decompressed stream is cut at
    MAX_STREAM_BYTES; a GNU long-name/long-link or pax header over MAX_HEADER_BYTES, more than
    MAX_HEADER_CHAIN of them in a row, a negative size, a sparse member and any header announcing
    more than MAX_MEMBER_BYTES are refused from the header's size field, before its data is read
    (tarfile would read a header's whole data first: a 1 MB .tar.gz once took 3-4 GB). Every
    name in a refusal is shown printable and cut to 200 characters (bundle/shown.py)."""
    import lzma
    import tarfile
    import zlib

    where = shown(archive, PATH_SHOWN)
    total = count = 0
    name = ""
    stream = _open_stream(archive)
    try:
        tar = tarfile.TarFile(fileobj=stream, mode="r", tarinfo=_capped_tarinfo())
    except _Refused as exc:
        stream.close()
        raise BundleError(f"{where}: {exc}; not a topodiag bundle") from None
    except (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError, RecursionError):
        stream.close()
        raise BundleError(f"{where}: not a readable tar archive ({_what_it_is(archive)}); expected a "
                          "topodiag bundle (.tar.gz written by `topodiag collect`)") from None
    try:
        with tar, stream:
            for info in _members(tar, archive):
                count += 1
                if count > MAX_MEMBERS:
                    raise BundleError(f"{where}: more than {MAX_MEMBERS} members; not a topodiag bundle")
                name = info.name
                parts = _parts(archive, name)
                if not parts:
                    continue
                if info.isdir():
                    os.makedirs(os.path.join(dest, *parts), exist_ok=True)
                    continue
                if info.issym() or info.islnk():
                    raise BundleError(f"{where}: member '{shown(name)}' is a link; bundles hold plain files only")
                if not info.isfile():
                    raise BundleError(f"{where}: member '{shown(name)}' is not a regular file (device, fifo...)")
                if not 0 <= info.size <= MAX_MEMBER_BYTES:
                    raise BundleError(f"{where}: member '{shown(name)}' is {info.size} bytes, over the "
                                      f"{MAX_MEMBER_BYTES}-byte cap")
                total += info.size
                if total > MAX_ARCHIVE_BYTES:
                    raise BundleError(f"{where}: more than {MAX_ARCHIVE_BYTES} bytes once unpacked")
                _copy(tar, info, os.path.join(dest, *parts), archive)
    except _Refused as exc:
        raise BundleError(f"{where}: {exc}; not a topodiag bundle") from None
    except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise BundleError(f"{where}: the archive is truncated or corrupt ({shown(_flat(exc))})") from None
    except RecursionError:
        raise BundleError(f"{where}: headers nested too deeply; not a topodiag bundle") from None
    except (FileExistsError, NotADirectoryError, IsADirectoryError):
        raise BundleError(f"{where}: member '{shown(name)}' collides with another of the same name (twice, "
                          "or a file and a folder)") from None
    except (OSError, ValueError) as exc:  # a name the file system refuses, a disk that is full
        raise BundleError(f"{where}: member '{shown(name)}' cannot be unpacked: "
                          f"{shown(getattr(exc, 'strerror', None) or _flat(exc))}") from None
    return _bundle_root(dest, archive)


MAX_HEADER_BYTES = 64 * 1024  # one GNU long name / long link or pax header (a path is at most 4096)
MAX_HEADER_CHAIN = 8  # extended headers in a row before one member
MAX_STREAM_BYTES = MAX_ARCHIVE_BYTES + 64 * 1024 * 1024  # decompressed: the members, headers, padding


class _Refused(Exception):
    """An archive refused from what its headers announce (the message: what, bounded)."""


def _open_stream(archive: str) -> "_Capped":
    """The archive's decompressed bytes (gzip, bzip2, xz or plain tar, by the first bytes), cut at
    MAX_STREAM_BYTES; BundleError for what is not a regular file (opened O_NONBLOCK, so that a FIFO
    never blocks) or cannot be opened."""
    import bz2
    import gzip
    import lzma

    where = shown(archive, PATH_SHOWN)
    try:
        st = os.stat(archive)
    except FileNotFoundError:
        raise BundleError(f"{where}: no such file") from None
    except OSError as exc:
        raise BundleError(f"{where}: cannot read: {exc.strerror or _flat(exc)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise BundleError(f"{where}: a folder named like an archive; a bundle folder holds manifest.json")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        if not stat.S_ISREG(st.st_mode):
            raise IsADirectoryError  # any other kind: refused below without opening it
        fd = os.open(archive, flags)
    except IsADirectoryError:
        fd = None
    except OSError as exc:
        raise BundleError(f"{where}: cannot read: {exc.strerror or _flat(exc)}") from None
    if fd is None or not stat.S_ISREG(os.fstat(fd).st_mode):
        if fd is not None:
            os.close(fd)
        raise BundleError(f"{where}: not a regular file (a FIFO, a device, a socket); a bundle is a "
                          ".tar.gz file or a folder")
    raw = os.fdopen(fd, "rb")
    try:
        head = raw.read(6)
        raw.seek(0)
        if head.startswith(b"\x1f\x8b"):
            inner = gzip.GzipFile(fileobj=raw, mode="rb")
        elif head.startswith(b"BZh"):
            inner = bz2.BZ2File(raw, "rb")
        elif head.startswith(b"\xfd7zXZ\x00"):
            inner = lzma.LZMAFile(raw, "rb")
        else:
            inner = raw
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raw.close()
        raise BundleError(f"{where}: cannot read: {shown(_flat(exc))}") from None
    return _Capped(inner, raw, MAX_STREAM_BYTES)


class _Capped:
    """A read-only file over a decompressed stream that refuses (_Refused) to go past `cap` bytes,
    whether by reading or by seeking (tarfile skips a member's data by seeking)."""

    def __init__(self, inner, raw, cap: int):
        self._inner, self._raw, self._cap = inner, raw, cap

    def read(self, n: int = -1) -> bytes:
        pos = self._inner.tell()
        room = self._cap - pos
        if n is None or n < 0 or n > room:
            data = self._inner.read(max(room, 0) + 1)
            if len(data) > room:
                raise _Refused(f"more than {self._cap} bytes once decompressed")
            return data
        return self._inner.read(n)

    def seek(self, pos: int, whence: int = 0) -> int:
        target = pos if whence == 0 else self._inner.tell() + pos if whence == 1 else None
        if target is None or target > self._cap:
            raise _Refused(f"more than {self._cap} bytes once decompressed")
        return self._inner.seek(target)

    def tell(self) -> int:
        return self._inner.tell()

    def close(self) -> None:
        try:
            if self._inner is not self._raw:
                self._inner.close()
        finally:
            self._raw.close()

    def __enter__(self) -> "_Capped":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_TARINFO = None


def _capped_tarinfo():
    """tarfile.TarInfo, refusing (_Refused) from a header's size field, before tarfile reads the
    data that follows it: extended headers (GNU long name / long link, pax, pax global) over
    MAX_HEADER_BYTES or more than MAX_HEADER_CHAIN in a row, pax global headers over
    MAX_HEADER_BYTES in all, negative sizes, sizes over MAX_MEMBER_BYTES, GNU sparse members (old
    and pax forms: their maps are read whole, and a bundle holds no sparse file). Built on first
    use (tarfile is imported only by what reads archives)."""
    global _TARINFO
    if _TARINFO is not None:
        return _TARINFO
    import tarfile

    extended = {tarfile.GNUTYPE_LONGNAME: "GNU long name", tarfile.GNUTYPE_LONGLINK: "GNU long link",
                tarfile.XHDTYPE: "pax", tarfile.XGLTYPE: "pax global", tarfile.SOLARIS_XHDTYPE: "pax"}

    class CappedTarInfo(tarfile.TarInfo):
        def _proc_member(self, tarfile):  # noqa: D401 - tarfile's hook, before any data is read
            kind = extended.get(self.type)
            if self.size < 0:
                raise _Refused(f"a header with a negative size ({self.size})")
            if kind is not None:
                if self.size > MAX_HEADER_BYTES:
                    raise _Refused(f"a {kind} header of {self.size} bytes, over the {MAX_HEADER_BYTES}-byte cap")
                chain = getattr(tarfile, "_topodiag_chain", 0) + 1
                tarfile._topodiag_chain = chain
                if chain > MAX_HEADER_CHAIN:
                    raise _Refused(f"more than {MAX_HEADER_CHAIN} extended headers in a row")
                if self.type == XGLTYPE:
                    seen = getattr(tarfile, "_topodiag_global", 0) + self.size
                    tarfile._topodiag_global = seen
                    if seen > MAX_HEADER_BYTES:
                        raise _Refused(f"pax global headers over {MAX_HEADER_BYTES} bytes in all")
            elif self.type == GNUTYPE_SPARSE:
                raise _Refused(f"member '{shown(self.name)}' is a sparse file; bundles hold plain files only")
            elif self.size > MAX_MEMBER_BYTES:
                raise _Refused(f"member '{shown(self.name)}' announces {self.size} bytes, over the "
                               f"{MAX_MEMBER_BYTES}-byte cap")
            return super()._proc_member(tarfile)

        def _sparse(self, *args):
            raise _Refused("a pax sparse member; bundles hold plain files only")

        _proc_gnusparse_00 = _proc_gnusparse_01 = _proc_gnusparse_10 = _sparse

    XGLTYPE, GNUTYPE_SPARSE = tarfile.XGLTYPE, tarfile.GNUTYPE_SPARSE
    _TARINFO = CappedTarInfo
    return _TARINFO


_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))


def _what_it_is(archive: str) -> str:
    """What the file's first bytes say it is, for the one-line refusal of a file that is no tar."""
    try:
        fd = os.open(archive, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            head = fh.read(8) if stat.S_ISREG(os.fstat(fh.fileno()).st_mode) else b""
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
        raise BundleError(f"{shown(archive, PATH_SHOWN)}: member '{shown(name)}' has a NUL byte in its name")
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or ".." in parts or os.path.isabs(name) or ":" in parts[0]:
        raise BundleError(f"{shown(archive, PATH_SHOWN)}: member '{shown(name)}' points outside the bundle (absolute or ..)")
    parts = [p for p in parts if p not in ("", ".")]
    if len(parts) > MAX_DEPTH:
        raise BundleError(f"{shown(archive, PATH_SHOWN)}: member '{shown(name, 80)}' is {len(parts)} folders deep (at most {MAX_DEPTH})")
    for p in parts:
        if len(p.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
            raise BundleError(f"{shown(archive, PATH_SHOWN)}: member '{shown(name, 80)}' has a name over {MAX_NAME_BYTES} bytes")
    return parts


def _copy(tar, info, target: str, archive: str) -> None:
    """One regular member into `target`, never more or fewer bytes than its header says."""
    name = info.name
    os.makedirs(os.path.dirname(target), exist_ok=True)
    src = tar.extractfile(info)
    if src is None:
        raise BundleError(f"{shown(archive, PATH_SHOWN)}: member '{shown(name)}' cannot be read")
    written = 0
    with src, open(target, "xb") as out:
        for block in iter(lambda: src.read(1 << 20), b""):
            written += len(block)
            if written > info.size:
                raise BundleError(f"{shown(archive, PATH_SHOWN)}: member '{shown(name)}' is longer than its header says")
            out.write(block)
    if written != info.size:
        raise BundleError(f"{shown(archive, PATH_SHOWN)}: member '{shown(name)}' is cut short (truncated archive)")


def _members(tar, archive: str):
    """The archive's members one by one (so a corrupt tail is found where it is); tarfile's own
    list of the members read so far is emptied as we go (nothing needs it: memory stays flat)."""
    while True:
        tar._topodiag_chain = 0
        info = tar.next()
        del tar.members[:]
        if info is None:
            return
        yield info


def _bundle_root(dest: str, archive: str) -> str:
    if os.path.isfile(os.path.join(dest, MANIFEST)):
        return dest
    entries = [e for e in os.listdir(dest) if not e.startswith(".")]
    if len(entries) == 1 and os.path.isfile(os.path.join(dest, entries[0], MANIFEST)):
        return os.path.join(dest, entries[0])
    raise BundleError(f"{shown(archive, PATH_SHOWN)}: no manifest.json at the top of the archive; expected a topodiag bundle")
