"""No bundle, however malformed, reaches an internal error: every archive or manifest topodiag
cannot use is refused in one line (a TopodiagError: exit 3, or 2), everything else is a report.

The named cases are the ones seen end in exit 4 before (a member name longer than a file system
takes, a manifest nesting JSON arrays 100,000 deep, folders nested hundreds deep, a file and a
folder of one name, a NUL byte in a name, a text file named .tar.gz); the fuzz cases build archives
and bundle folders from random structure: names, depths, member types, duplicates, sizes that lie,
nesting, encodings, and manifests of every wrong shape. Seeded: a failure names its seed."""

from __future__ import annotations

import io
import json
import random
import tarfile
from pathlib import Path

import pytest

import topodiag
from topodiag.errors import TopodiagError

TOPO = (Path(__file__).resolve().parents[2] / "fixtures" / "nvidia_smi_topo_m"
        / "topo-h100-hgx-nv18-8nic-pix-gpunumaid-01.txt").read_bytes()


def manifest(*sources, **top) -> bytes:
    data = {"schema_version": 1, "tool": {"name": "topodiag", "version": "0"}, "host": "h", "sources": list(sources)}
    data.update(top)
    return json.dumps(data).encode()


OK_ENTRY = {"source": "nvidia_smi_topo_m", "status": "ok", "member": "commands/topo.txt"}


def archive(path: Path, members, fmt=tarfile.PAX_FORMAT) -> Path:
    """members: (name, kind, data) with kind file | dir | sym | hard | fifo | chr | lie (a header
    size larger than the data: the archive ends early)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif kind in ("sym", "hard"):
                info.type = tarfile.SYMTYPE if kind == "sym" else tarfile.LNKTYPE
                info.linkname = data.decode() if data else "/etc/passwd"
                tar.addfile(info)
            elif kind in ("fifo", "chr"):
                info.type = tarfile.FIFOTYPE if kind == "fifo" else tarfile.CHRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    lies = [m for m in members if m[1] == "lie"]
    if lies:
        raw = raw[: len(raw) // 2]  # cut inside: sizes in headers no longer match what follows
    import gzip

    path.write_bytes(gzip.compress(raw))
    return path


def diagnose_or_refuse(path: Path):
    """A Diagnosis, or a one-line TopodiagError; anything else fails the test."""
    try:
        return topodiag.diagnose([str(path)])
    except TopodiagError as exc:
        assert "\n" not in str(exc), repr(str(exc))
        return exc


NAMED = {
    "name-too-long": [("b/manifest.json", "file", manifest()), ("b/" + "x" * 300, "file", b"hi")],
    "deep-json": [("b/manifest.json", "file", b"[" * 100_000 + b"]" * 100_000)],
    "deep-folders": [("b/manifest.json", "file", manifest()), ("b/" + "d/" * 400 + "f", "file", b"x")],
    "file-then-folder": [("b/manifest.json", "file", manifest()), ("b/x", "file", b"1"), ("b/x/y", "file", b"2")],
    "folder-then-file": [("b/manifest.json", "file", manifest()), ("b/x", "dir", b""), ("b/x", "file", b"2")],
    "nul-in-name": [("b/manifest.json", "file", manifest()), ("b/a\x00b", "file", b"2")],
    "manifest-is-a-folder": [("b/manifest.json", "dir", b"")],
    "member-is-a-folder": [("b/manifest.json", "file", manifest(OK_ENTRY)), ("b/commands/topo.txt", "dir", b"")],
    "member-names-nul": [("b/manifest.json", "file", manifest({**OK_ENTRY, "member": "commands/a\x00b"}))],
    "member-name-too-long": [("b/manifest.json", "file", manifest({**OK_ENTRY, "member": "c/" + "y" * 400}))],
}


@pytest.mark.parametrize("case", sorted(NAMED))
def test_named_hostile_archives_are_refused_in_one_line(tmp_path, case):
    got = diagnose_or_refuse(archive(tmp_path / f"{case}.tar.gz", NAMED[case]))
    if case not in ("member-is-a-folder", "member-names-nul", "member-name-too-long"):
        assert isinstance(got, TopodiagError), f"{case}: expected a refusal, got a report"


def test_a_text_file_named_like_an_archive_is_one_line(tmp_path):
    path = tmp_path / "notes.tar.gz"
    path.write_text("just some text\n")
    got = diagnose_or_refuse(path)
    assert isinstance(got, TopodiagError) and "not a readable tar archive" in str(got)


# -- fuzz ---------------------------------------------------------------------------------------------

NAME_PARTS = ["commands", "probes", "b", ".", "..", "", "x" * 260, "a\x00b", "ü", "\udcff", "a\\b", "C:",
              "with space", "new\nline", "manifest.json", "topo.txt"]
KINDS = ["file", "file", "file", "dir", "sym", "hard", "fifo", "chr", "lie"]


def random_manifest(rnd: random.Random) -> bytes:
    choice = rnd.randrange(9)
    if choice == 0:
        return b"[" * rnd.randrange(1, 200_000)
    if choice == 1:
        return rnd.randbytes(rnd.randrange(0, 64))
    if choice == 2:
        return json.dumps(rnd.choice([[], 1, "x", None, {"schema_version": "1"}])).encode()
    entry = dict(OK_ENTRY)
    for key in rnd.sample(["source", "status", "member", "argv", "rc", "duration_s", "sha256", "reason"], 3):
        entry[key] = rnd.choice([None, 1, -1, 10**30, 1.5, True, "", "..", "/etc/passwd", [], {}, ["a", 1],
                                 "commands/topo.txt", "nccl_debug", "timed_out", "deadbeef", "x" * 500])
    sources = rnd.choice([[entry], [OK_ENTRY, entry], entry, "sources", [OK_ENTRY] * 3])
    return manifest(*sources) if isinstance(sources, list) else json.dumps(
        {"schema_version": 1, "sources": sources, "host": rnd.choice(["h", 5, None, "x" * 1000]),
         "notes": rnd.choice([[], "n", [1]])}).encode()


def random_members(rnd: random.Random) -> list:
    members = [("b/manifest.json", "file", random_manifest(rnd))]
    if rnd.random() < 0.7:
        members.append(("b/commands/topo.txt", "file", TOPO))
    for _ in range(rnd.randrange(0, 6)):
        depth = rnd.choice([1, 2, 3, 40])
        name = "b/" + "/".join(rnd.choice(NAME_PARTS) for _ in range(depth))
        data = rnd.choice([b"", b"x", TOPO[:200], rnd.randbytes(50)])
        members.append((name, rnd.choice(KINDS), data))
    if rnd.random() < 0.2:
        members.append(members[-1])  # a duplicate
    rnd.shuffle(members)
    return members


@pytest.mark.parametrize("seed", range(150))
def test_fuzzed_archives_never_reach_an_internal_error(tmp_path, seed):
    rnd = random.Random(seed)
    fmt = rnd.choice([tarfile.PAX_FORMAT, tarfile.GNU_FORMAT])
    try:
        path = archive(tmp_path / "fuzz.tar.gz", random_members(rnd), fmt=fmt)
    except (ValueError, UnicodeError):
        pytest.skip("tarfile itself cannot write this structure")
    diagnose_or_refuse(path)


@pytest.mark.parametrize("seed", range(60))
def test_fuzzed_bundle_folders_never_reach_an_internal_error(tmp_path, seed):
    rnd = random.Random(1000 + seed)
    root = tmp_path / "bundle"
    (root / "commands").mkdir(parents=True)
    (root / "commands" / "topo.txt").write_bytes(TOPO)
    (root / "manifest.json").write_bytes(random_manifest(rnd))
    diagnose_or_refuse(root)
