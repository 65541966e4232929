"""The bundle: what `topodiag collect` writes and `check --from` reads, as a directory.

    <bundle>/manifest.json
    <bundle>/commands/<source>.txt     a command's raw output (or a file the user handed over)
    <bundle>/probes/<name>.json        NVML / sysfs probe records

manifest.json (schema_version 1):

    {"schema_version": 1,
     "tool": {"name": "topodiag", "version": "0.1.0"},
     "host": "node017", "created": "2026-12-02T17:00:00Z", "redacted": false,
     "notes": ["free text, e.g. where a fixture's members came from"],
     "sources": [
       {"source": "nvidia_smi_topo_m", "status": "ok", "member": "commands/nvidia_smi_topo_m.txt",
        "argv": ["nvidia-smi", "topo", "-m"], "rc": 0, "duration_s": 0.21, "timed_out": false,
        "sha256": "<hex of the member>", "reason": ""},
       {"source": "ibstat", "status": "not_available", "member": null, "argv": ["ibstat"],
        "rc": null, "duration_s": 0.0, "timed_out": false, "reason": "ibstat is not installed"}]}

`status`: ok (the member holds the output; an empty member, or one of white space only, says the
tool exited 0 and printed nothing: read as "absent" with that reason, never a problem), failed (the tool ran and failed: rc, reason),
timed_out, not_available (no such tool or device on the host: a normal outcome, not a problem).
A member is read with the parser its entry names (no detection: a bundle says what each file is),
after its sha256 is checked; a member listed twice under one source is read once, and a manifest of
more than MAX_ENTRIES entries is refused. Members are plain files inside the bundle: an entry naming an absolute
path, `..`, a link or anything but a regular file is refused. `pack` writes the directory as a tar.gz and `unpack`
reads one back into a temporary folder, refusing what could write outside it.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass, field
from typing import Any, Optional

from ..errors import BundleError
from .shown import shown

MANIFEST = "manifest.json"
SCHEMA_VERSION = 1
STATUSES = ("ok", "failed", "timed_out", "not_available")
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
# Source entries a manifest may hold: collect writes one per source (about 40) and a few for the
# user's files; a manifest listing more is not one topodiag wrote.
MAX_ENTRIES = 512


@dataclass(frozen=True)
class SourceEntry:
    """One `sources` entry of a manifest."""

    source: str
    status: str
    member: Optional[str] = None
    argv: tuple[str, ...] = ()
    rc: Optional[int] = None
    duration_s: Optional[float] = None
    timed_out: bool = False
    sha256: Optional[str] = None
    reason: str = ""


@dataclass(frozen=True)
class Manifest:
    root: str
    host: Optional[str]
    tool_version: Optional[str]
    created: Optional[str]
    redacted: bool
    sources: tuple[SourceEntry, ...]
    notes: tuple[str, ...] = field(default=())
    # (source, member, times listed) for each member listed more than once under one source:
    # the entries after the first are dropped (a member is read once per source)
    duplicates: tuple[tuple[str, str, int], ...] = field(default=())
    # the collecting host's kernel and OFED version (`facts` as collect wrote them), shown-safe strings
    facts: tuple[tuple[str, str], ...] = field(default=())


def is_bundle_dir(path: str) -> bool:
    """A directory with a manifest.json is a bundle (any other directory is a folder of outputs)."""
    return os.path.isfile(os.path.join(path, MANIFEST))


def read_manifest(root: str) -> Manifest:
    """Load and check `<root>/manifest.json`; BundleError naming the file and the key otherwise."""
    where = os.path.join(root, MANIFEST)
    try:
        st = os.lstat(where)
        if not stat.S_ISREG(st.st_mode):
            raise BundleError(f"{where}: not a regular file")
        if st.st_size > MAX_MANIFEST_BYTES:
            raise BundleError(f"{where}: {st.st_size} bytes, more than a manifest can be ({MAX_MANIFEST_BYTES})")
        with open_regular(where) as fh:
            data = json.loads(fh.read(MAX_MANIFEST_BYTES + 1).decode("utf-8"))
    except OSError as exc:
        raise BundleError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except RecursionError:
        raise BundleError(f"{where}: JSON nested too deeply to be a manifest") from None
    except (UnicodeDecodeError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        raise BundleError(f"{where}{f':{line}' if line else ''}: not valid JSON: "
                          f"{getattr(exc, 'msg', exc)}") from None
    if not isinstance(data, dict):
        raise BundleError(f"{where}: expected a JSON object with schema_version and sources")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise BundleError(f"{where}: schema_version {shown(repr(data.get('schema_version')))}; this topodiag reads "
                          f"version {SCHEMA_VERSION}")
    raw = data.get("sources")
    if not isinstance(raw, list):
        raise BundleError(f"{where}: sources: expected a list of source entries")
    if len(raw) > MAX_ENTRIES:
        raise BundleError(f"{where}: sources: {len(raw)} entries, more than a manifest holds ({MAX_ENTRIES})")
    entries, duplicates = _unique(tuple(_entry(where, i, e) for i, e in enumerate(raw)))
    host = data.get("host")
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    notes = data.get("notes") or []
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise BundleError(f"{where}: notes: expected a list of strings")
    # Text that is shown to the user is made printable and bounded here (bundle/shown.py): a
    # hostile manifest cannot send escape sequences to a terminal through a report.
    return Manifest(root=root, host=shown(host, 253) if isinstance(host, str) and host else None,
                    tool_version=shown(tool["version"]) if isinstance(tool.get("version"), str) else None,
                    created=shown(data["created"]) if isinstance(data.get("created"), str) else None,
                    redacted=data.get("redacted") is True, sources=entries,
                    notes=tuple(shown(n, 2000) for n in notes), duplicates=duplicates, facts=_facts(data.get("facts")))


def _facts(raw: Any) -> tuple[tuple[str, str], ...]:
    """The manifest's kernel and OFED version, where they are non-empty strings (else left out)."""
    if not isinstance(raw, dict):
        return ()
    return tuple((k, shown(raw[k], 120)) for k in ("kernel", "ofed") if isinstance(raw.get(k), str) and raw[k].strip())


def _unique(entries: tuple[SourceEntry, ...]):
    """The entries with each (source, member) kept once (the first), and what was dropped."""
    seen: dict[tuple[str, str], int] = {}
    kept = []
    for e in entries:
        key = (e.source, e.member or "")
        if e.member and key in seen:
            seen[key] += 1
            continue
        seen[key] = 1
        kept.append(e)
    dropped = tuple((source, member, n) for (source, member), n in seen.items() if n > 1)
    return tuple(kept), dropped


def _entry(where: str, i: int, e: Any) -> SourceEntry:
    key = f"{where}: sources[{i}]"
    if not isinstance(e, dict):
        raise BundleError(f"{key}: expected an object with source and status")
    source, status = e.get("source"), e.get("status")
    if not isinstance(source, str) or not source:
        raise BundleError(f"{key}.source: expected a source name")
    if status not in STATUSES:
        raise BundleError(f"{key}.status: {shown(repr(status))} is not one of {', '.join(STATUSES)}")
    member = e.get("member")
    if member is not None and not isinstance(member, str):
        raise BundleError(f"{key}.member: expected a relative path or null")
    rc = e.get("rc")
    if status == "ok" and not member and not (isinstance(rc, int) and not isinstance(rc, bool)):
        # an "ok" entry without a member and with the tool's exit code is an empty answer, as
        # an earlier collect wrote it (now the member is there, empty); without an rc it says nothing
        raise BundleError(f"{key}.member: status ok needs the member that holds the output")
    argv = e.get("argv") or []
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        raise BundleError(f"{key}.argv: expected a list of strings")
    duration = e.get("duration_s")
    sha = e.get("sha256")
    return SourceEntry(
        source=shown(source), status=status, member=member, argv=tuple(argv),
        rc=rc if isinstance(rc, int) and not isinstance(rc, bool) else None,
        duration_s=float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None,
        timed_out=e.get("timed_out") is True or status == "timed_out",
        sha256=sha.lower() if isinstance(sha, str) and sha else None,
        reason=shown(e["reason"], 2000) if isinstance(e.get("reason"), str) else "",
    )


def member_path(manifest: Manifest, member: str) -> str:
    """The file a member names, refusing what would leave the bundle or is not a regular file
    (BundleError, one line)."""
    parts = member.replace("\\", "/").split("/")
    if member.startswith(("/", "\\")) or os.path.isabs(member) or ".." in parts or "" in parts:
        raise BundleError(f"{shown(member)}: a member must be a relative path inside the bundle")
    if "\x00" in member:
        raise BundleError(f"{shown(repr(member))}: a member name with a NUL byte")
    path = os.path.join(manifest.root, *parts)
    probe = manifest.root
    for part in parts:  # no link anywhere on the way (a link could point outside)
        probe = os.path.join(probe, part)
        try:
            st = os.lstat(probe)
        except OSError:
            raise BundleError(f"{shown(member)}: listed in the manifest but not in the bundle") from None
        if stat.S_ISLNK(st.st_mode):
            raise BundleError(f"{shown(member)}: a link; bundles hold plain files only")
    if not stat.S_ISREG(os.lstat(path).st_mode):
        raise BundleError(f"{shown(member)}: not a regular file")
    return path


def open_regular(path: str):
    """`path` opened for reading bytes without blocking on a FIFO or a device: opened O_NONBLOCK
    (and O_NOFOLLOW: a bundle's files are never links), then refused by fstat unless it is a
    regular file (OSError, as open raises)."""
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))
    fd = os.open(path, flags)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file")
    return os.fdopen(fd, "rb")


def sha256_of(path: str) -> str:
    import hashlib  # only bundles pay for it

    h = hashlib.sha256()
    with open_regular(path) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
