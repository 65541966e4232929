"""Writing a bundle never writes outside the path given (issue 16): `collect -o X.tar.gz` once
opened `X.tar.gz.partial` following a link planted there (as root it overwrote the link's target);
the archive is now written in a private folder beside the destination and renamed onto it, and a
destination that is a link is refused in one line (exit 3)."""

from __future__ import annotations

import os
import tarfile

import pytest
from typer.testing import CliRunner

from topodiag.bundle import BundleError, pack
from topodiag.bundle.archive import place_dir
from topodiag.cli import app
from topodiag.exit_codes import ExitCode
from tests.host_fixture import HOSTS

BUNDLE = HOSTS / "partial-collection-invented"


def _leftovers(folder) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith(".topodiag-") or n.endswith(".partial"))


def test_a_link_planted_at_the_temporary_name_is_not_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "node.tar.gz"
    os.symlink(victim, str(out) + ".partial")  # the name the archive was once written under
    pack(str(BUNDLE), str(out))
    assert victim.read_text() == "precious\n"
    assert os.path.islink(str(out) + ".partial")  # left alone, not replaced either
    with tarfile.open(out) as tar:
        assert "node/manifest.json" in tar.getnames()
    assert _leftovers(tmp_path) == [os.path.basename(str(out) + ".partial")]


def test_a_destination_that_is_a_link_is_refused_and_its_target_kept(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "node.tar.gz"
    os.symlink(victim, out)
    with pytest.raises(BundleError, match="symbolic link"):
        pack(str(BUNDLE), str(out))
    assert victim.read_text() == "precious\n" and os.path.islink(out)
    assert _leftovers(tmp_path) == []


def test_a_dangling_link_at_the_destination_is_refused_too(tmp_path):
    out = tmp_path / "node.tar.gz"
    os.symlink(tmp_path / "would-be-created", out)
    with pytest.raises(BundleError, match="symbolic link"):
        pack(str(BUNDLE), str(out))
    assert not (tmp_path / "would-be-created").exists()


def test_an_existing_regular_file_is_replaced_whole(tmp_path):
    out = tmp_path / "node.tar.gz"
    out.write_text("old")
    pack(str(BUNDLE), str(out))
    with tarfile.open(out) as tar:
        assert "node/manifest.json" in tar.getnames()
    assert _leftovers(tmp_path) == []


def test_an_error_while_writing_leaves_nothing_behind(tmp_path, monkeypatch):
    out = tmp_path / "node.tar.gz"

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tarfile.TarFile, "add", broken)
    with pytest.raises(OSError):
        pack(str(BUNDLE), str(out))
    assert not out.exists() and _leftovers(tmp_path) == []


def test_the_private_folder_is_not_readable_by_others(tmp_path, monkeypatch):
    seen = []
    real = os.replace

    def spy(src, dst):
        seen.append(os.stat(os.path.dirname(src)).st_mode & 0o777)
        return real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    pack(str(BUNDLE), str(tmp_path / "node.tar.gz"))
    assert seen == [0o700]


def test_a_bundle_directory_target_that_is_a_link_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "out"
    os.symlink(elsewhere, link)
    with pytest.raises(BundleError, match="symbolic link"):
        place_dir(str(BUNDLE), str(link))
    assert os.listdir(elsewhere) == [] and _leftovers(tmp_path) == []


def test_a_bundle_directory_lands_at_its_path(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    place_dir(str(BUNDLE), str(target))
    assert (target / "manifest.json").is_file() and not os.path.islink(target)
    assert _leftovers(tmp_path) == []
    place_dir(str(BUNDLE), str(tmp_path / "new"))
    assert (tmp_path / "new" / "manifest.json").is_file()
    place_dir(str(BUNDLE), str(tmp_path / "a" / "b"))  # its folders are made, as copytree made them
    assert (tmp_path / "a" / "b" / "manifest.json").is_file() and _leftovers(tmp_path / "a") == []


def test_collect_refuses_an_output_that_is_a_link_before_collecting(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "node.tar.gz"
    os.symlink(victim, out)
    res = CliRunner().invoke(app, ["collect", "-o", str(out), "--deadline", "1", "--sysfs-root", str(tmp_path)])
    assert res.exit_code == ExitCode.INCOMPLETE, res.output
    assert "symbolic link" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert "collected" not in res.stderr  # refused before anything ran
    assert victim.read_text() == "precious\n"


# -- text from archives and manifests is never shown raw ---------------------------------------

def _bundle_with(tmp_path, host: str, member_name: str | None = None):
    import io
    import json

    src = BUNDLE
    manifest = json.loads((src / "manifest.json").read_text())
    manifest["host"] = host
    manifest["notes"] = [host]
    for e in manifest["sources"]:
        e["reason"] = (e.get("reason") or "") + host
    path = tmp_path / "hostile.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for p in sorted(src.rglob("*")):
            if p.is_file() and p.name != "manifest.json":
                tar.add(p, arcname=f"b/{p.relative_to(src)}")
        data = json.dumps(manifest).encode()
        info = tarfile.TarInfo("b/manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        if member_name is not None:
            info = tarfile.TarInfo(member_name)
            info.type = tarfile.CHRTYPE
            tar.addfile(info)
    return path


ESC_HOST = "node\x1b]0;owned\x07\x1b[2J\x9b31m" + "x" * 5000


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_manifest_host_with_escape_codes_is_never_printed_raw(tmp_path, fmt):
    path = _bundle_with(tmp_path, ESC_HOST)
    res = CliRunner().invoke(app, ["check", "--from", str(path), "--format", fmt])
    assert res.exit_code != ExitCode.INTERNAL, res.output
    for stream in (res.stdout, res.stderr):
        assert "\x1b" not in stream and "\x07" not in stream and "\x9b" not in stream


def test_a_member_name_with_escape_codes_is_refused_in_one_bounded_line(tmp_path):
    path = _bundle_with(tmp_path, "h", member_name="b/\x1b[2J" + "y" * 3000)
    res = CliRunner().invoke(app, ["check", "--from", str(path)])
    assert res.exit_code == ExitCode.INCOMPLETE
    line = res.stderr.strip()
    assert "\n" not in line and "\x1b" not in line and "\\x1b[2J" in line and len(line) < 1000
