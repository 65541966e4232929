"""A bundle whose manifest lists one member many times (topodiag/bundle/manifest.py): each entry
used to be parsed again, so a 30 KB archive with a 2 MB NCCL log listed 1,000 times took minutes.
A (source, member) is now read once and the manifest's entries are capped."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from topodiag.bundle.manifest import MAX_ENTRIES
from topodiag.errors import BundleError
from topodiag.load.gather import gather

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "fixtures" / "nccl_debug" / "nccl-928-h100-ib-completion-error4-vendor81-01.log"


def _bundle(path: Path, entries: int, member: bytes) -> Path:
    entry = {"source": "nccl_debug", "status": "ok", "member": "logs/a.log",
             "sha256": hashlib.sha256(member).hexdigest()}
    man = {"schema_version": 1, "tool": {"name": "topodiag", "version": "x"}, "host": "h",
           "sources": [entry] * entries}
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (("b/manifest.json", json.dumps(man).encode()), ("b/logs/a.log", member)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_a_member_listed_many_times_is_parsed_once(tmp_path):
    got = gather([str(_bundle(tmp_path / "amp.tar.gz", 300, LOG.read_bytes()))])
    assert [p.source for p in got.parsed] == ["nccl_debug"]
    ignored = [s for s in got.statuses if s.status == "ignored"]
    assert len(ignored) == 1 and "listed 300 times under nccl_debug" in ignored[0].reason


def test_entries_are_capped(tmp_path):
    with pytest.raises(BundleError, match=f"more than a manifest holds \\({MAX_ENTRIES}\\)"):
        gather([str(_bundle(tmp_path / "many.tar.gz", MAX_ENTRIES + 1, LOG.read_bytes()))])
