"""Bundle archives: a packed bundle reads like its directory; hostile or broken archives are refused
with one line (exit 3) and nothing is written outside the temporary folder."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topodiag.cli import app
from topodiag.exit_codes import ExitCode
from topodiag.bundle import archive as bundle
from topodiag.bundle import BundleError, pack, unpack
from tests.host_fixture import HOSTS


def check(path) -> tuple[int, dict | None, str]:
    res = CliRunner().invoke(app, ["check", "--from", str(path), "--format", "json"])
    out = res.stdout
    return res.exit_code, (json.loads(out) if out.strip().startswith("{") else None), res.stderr


@pytest.mark.parametrize("name", ["b300-rails-disabled", "hdr-roce-mixed-gather-collapse", "partial-collection-invented"])
def test_a_packed_bundle_gives_the_findings_of_its_directory(tmp_path, name):
    archive = tmp_path / f"{name}.tar.gz"
    pack(str(HOSTS / name), str(archive))
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        assert all(n.startswith(f"{name}/") for n in names) and f"{name}/manifest.json" in names
        assert all(m.isfile() and m.uid == 0 and m.uname == "" for m in tar.getmembers())
    code_dir, from_dir, _ = check(HOSTS / name)
    code_tar, from_tar, _ = check(archive)
    assert code_tar == code_dir
    strip = lambda r: [(f["code"], f["severity"], f["message"]) for f in r["findings"]]  # noqa: E731
    assert strip(from_tar) == strip(from_dir)
    assert all(i["path"].startswith(str(archive)) for i in from_tar["inputs"])


def _tar(tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], name="evil.tar.gz") -> Path:
    path = tmp_path / name
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name: str, target: str, kind=tarfile.SYMTYPE) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def _special(name: str, kind) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    return info, None


MANIFEST = json.dumps({"schema_version": 1, "sources": []}).encode()


@pytest.mark.parametrize("members, why", [
    ([_file("../evil.txt")], "points outside the bundle"),
    ([_file("b/../../evil.txt")], "points outside the bundle"),
    ([_file("/tmp/evil.txt")], "points outside the bundle"),
    ([_file("b/manifest.json", MANIFEST), _link("b/commands/x.txt", "/etc/passwd")], "is a link"),
    ([_file("b/manifest.json", MANIFEST), _link("b/commands/x.txt", "b/manifest.json", tarfile.LNKTYPE)], "is a link"),
    ([_special("b/dev", tarfile.CHRTYPE)], "not a regular file"),
    ([_special("b/fifo", tarfile.FIFOTYPE)], "not a regular file"),
    ([_file("b/manifest.json", MANIFEST), _file("b/manifest.json", MANIFEST)], "collides with another of the same name"),
    ([_file("b/readme.txt")], "no manifest.json"),
])
def test_hostile_members_are_refused(tmp_path, members, why):
    archive = _tar(tmp_path, members)
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(BundleError) as info:
        unpack(str(archive), str(dest))
    assert why in str(info.value) and str(info.value).startswith(str(archive))
    assert not (tmp_path / "evil.txt").exists() and not Path("/tmp/evil.txt").exists()
    code, report, err = check(archive)
    assert code == ExitCode.INCOMPLETE and report is None and why in err


def test_size_and_count_caps(tmp_path, monkeypatch):
    monkeypatch.setattr(bundle, "MAX_MEMBER_BYTES", 100)
    archive = _tar(tmp_path, [_file("b/manifest.json", MANIFEST), _file("b/big.log", b"y" * 101)])
    with pytest.raises(BundleError, match="over the 100-byte cap"):
        unpack(str(archive), str(tmp_path / "d1"))
    monkeypatch.setattr(bundle, "MAX_MEMBER_BYTES", 1000)
    monkeypatch.setattr(bundle, "MAX_ARCHIVE_BYTES", 150)
    archive = _tar(tmp_path, [_file(f"b/m{i}.txt", b"z" * 60) for i in range(3)], "many.tar.gz")
    with pytest.raises(BundleError, match="more than 150 bytes once unpacked"):
        unpack(str(archive), str(tmp_path / "d2"))
    monkeypatch.setattr(bundle, "MAX_MEMBERS", 2)
    with pytest.raises(BundleError, match="more than 2 members"):
        unpack(str(archive), str(tmp_path / "d3"))


def test_truncated_and_corrupt_archives(tmp_path):
    good = tmp_path / "good.tar.gz"
    pack(str(HOSTS / "b300-rails-disabled"), str(good))
    data = good.read_bytes()
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(BundleError, match="truncated or corrupt|cut short"):
        unpack(str(cut), str(tmp_path / "d1"))
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 40)
    with pytest.raises(BundleError):
        unpack(str(junk), str(tmp_path / "d2"))
    code, _, err = check(cut)
    assert code == ExitCode.INCOMPLETE and err.count("\n") == 1


def test_a_member_changed_inside_an_archive_is_reported(tmp_path):
    src = tmp_path / "src"
    import shutil

    shutil.copytree(HOSTS / "b300-rails-disabled", src)
    member = src / "commands" / "ibstat.txt"
    member.write_text(member.read_text().replace("State: Down", "State: Active", 1))
    archive = tmp_path / "tampered.tar.gz"
    pack(str(src), str(archive))
    code, report, _ = check(archive)
    assert code == ExitCode.INCOMPLETE
    assert [f["code"] for f in report["findings"]] == ["SYS002"]
    assert "sha256 differs" in report["findings"][0]["message"]
