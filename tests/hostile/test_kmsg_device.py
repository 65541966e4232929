"""`prolog --sysfs-root R` with R/dev/kmsg a /dev/zero-like device (topodiag/live/kernel_log_probe.py):
the probe read 32 MB of NUL "records", escaped each NUL as \\u0000 in its JSON, and the parser read
that back: 1.43 GB. A device other than the kernel log is not read now, and a record with control
characters is dropped and counted."""

from __future__ import annotations

import os

import pytest

from topodiag.live import kernel_log_probe as probe


def test_a_char_device_that_is_not_kmsg_is_not_read(tmp_path):
    dev = tmp_path / "dev"
    dev.mkdir()
    try:
        os.mknod(dev / "kmsg", 0o600 | 0o020000, os.makedev(1, 5))  # S_IFCHR, /dev/zero's numbers
    except (PermissionError, OSError):
        pytest.skip("mknod needs CAP_MKNOD")
    out = probe.probe(str(tmp_path), syslog=False)
    assert out["ok"] is False and out["records"] == []
    assert "not the kernel log (1:11)" in out["error"]


def test_dev_zero_itself_is_refused():
    with pytest.raises(OSError, match="not the kernel log"):
        probe.read_kmsg("/dev/zero")


def test_records_with_control_characters_are_dropped_and_long_ones_cut(tmp_path):
    (tmp_path / "dev").mkdir()
    good = "6,339,5140900,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus."
    (tmp_path / "dev" / "kmsg").write_bytes(
        (good + "\n" + "\x00" * 20000 + "\n" + "6,1,1,-;evil\x1b[2J\n" + "6,2,2,-;" + "a" * 20000 + "\n").encode())
    out = probe.probe(str(tmp_path), syslog=False)
    assert out["records"][0] == good and out["dropped"] == 2
    assert len(out["records"]) == 2 and len(out["records"][1]) == probe.MAX_RECORD_CHARS
