"""The kernel log, read live without a subprocess: prolog-safe.

    python -m topodiag.live.kernel_log_probe [ROOT] [--since DURATION]

Reads /dev/kmsg non-blocking (O_NONBLOCK: each read gives one record, and EAGAIN once the ring buffer
is drained; EPIPE says records were overwritten while reading, and the read goes on). Where /dev/kmsg
cannot be opened (a container without it, a user who may not read it) it falls back to the ring
buffer through syslog(2), the call `dmesg` itself falls back to (SYSLOG_ACTION_READ_ALL: the text
`dmesg -r` prints, "<6>[   12.345678] ..."). Where neither answers, the probe says "not readable"
(ok false): live collection records the source as not available, and the prolog goes on without it.

What is read is bounded whatever ROOT/dev/kmsg is: a character device other than the kernel's log
(1:11) or /dev/null (1:3) is not read (a /dev/zero put there gave 32 MB of NUL records, 1.4 GB once
escaped into JSON and parsed); at most MAX_BYTES are read; a record holding control characters
(NUL, ESC...: not kernel text) is dropped and counted, and a record is cut at MAX_RECORD_CHARS.

JSON: {probe: "kernel_log", schema_version: 1, ok, error, via ("/dev/kmsg" | "syslog(2)" | null),
now_s (seconds since boot at the read: /proc/uptime, the time base of the records' stamps), since_s
(the --kernel-log-since asked, or null), lost (records overwritten while reading), truncated (the
MAX_BYTES cut), dropped (records with control characters, not kept), records [the records as
read, one string each]}. The kernel_log parser reads it.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys
from typing import Any, Optional

from .rooted import Rooted

SCHEMA_VERSION = 1
MAX_BYTES = 32 * 1024 * 1024  # a ring buffer is 128 KiB-16 MiB (CONFIG_LOG_BUF_SHIFT, log_buf_len)
RECORD_BYTES = 16384  # a read of /dev/kmsg smaller than the record fails (EINVAL): records are < 8 KiB
MAX_RECORD_CHARS = 8192  # a longer record is cut here
KMSG_DEVICES = ((1, 11), (1, 3))  # /dev/kmsg, and the /dev/null some containers put in its place
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

_DURATION_RE = re.compile(r"^([0-9]{1,9}(?:\.[0-9]{1,6})?)\s*(s|sec|secs|m|min|mins|h|hr|hrs|hours?|d|days?)?$")
_UNIT_S = {"s": 1, "sec": 1, "secs": 1, "m": 60, "min": 60, "mins": 60, "h": 3600, "hr": 3600, "hrs": 3600,
           "hour": 3600, "hours": 3600, "d": 86400, "day": 86400, "days": 86400}


def parse_duration(text: Any) -> float:
    """'7200', '90s', '30m', '2h', '1d' -> seconds (> 0); ValueError with a one-line reason otherwise."""
    m = _DURATION_RE.match(str(text).strip().lower()) if text is not None else None
    if not m:
        raise ValueError(f"expected seconds or a duration such as 90s, 30m, 2h, 1d (got {text!r})")
    value = float(m[1]) * _UNIT_S.get(m[2] or "s", 1)
    if value <= 0:
        raise ValueError(f"must be above 0 (got {text!r})")
    return value


def _uptime(r: Rooted) -> Optional[float]:
    try:
        return float((r.read("/proc/uptime") or "").split()[0])
    except (ValueError, IndexError):
        return None


def read_kmsg(path: str) -> tuple[list[str], int, bool, int]:
    """The records of /dev/kmsg (or a file holding records, one a line), without blocking: (records,
    records lost to the ring buffer's wrap, cut at MAX_BYTES, records dropped for control
    characters). OSError when it cannot be opened, or is a device other than the kernel's log."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    records: list[str] = []
    lost, size, dropped = 0, 0, 0
    try:
        st = os.fstat(fd)
        if stat.S_ISCHR(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) not in KMSG_DEVICES:
            raise OSError(errno.ENODEV, f"a character device {os.major(st.st_rdev)}:{os.minor(st.st_rdev)}, "
                                        "not the kernel log (1:11)")
        regular = stat.S_ISREG(st.st_mode)
        rest = ""  # a file's line that runs on into the next read
        while size < MAX_BYTES:
            try:
                chunk = os.read(fd, RECORD_BYTES)
            except BlockingIOError:  # EAGAIN: drained
                break
            except OSError as exc:
                if exc.errno == errno.EPIPE:  # overwritten while we read: the next read goes on
                    lost += 1
                    continue
                raise
            if not chunk:  # a regular file (a recorded kmsg): its end
                break
            size += len(chunk)
            # one record per read from the device; a file gives many lines per read
            lines = (rest + chunk.decode("utf-8", "replace")).split("\n")
            rest = lines.pop()[:RECORD_BYTES] if regular else ""
            dropped += _keep(lines, records)
        dropped += _keep([rest], records)
    finally:
        os.close(fd)
    return records, lost, size >= MAX_BYTES, dropped


def _keep(lines: list[str], records: list[str]) -> int:
    """Add the record lines (not continuation lines) to `records`, each cut at MAX_RECORD_CHARS;
    how many were dropped for control characters."""
    dropped = 0
    for ln in lines:
        if not ln or ln.startswith(" "):
            continue
        if _CONTROL_RE.search(ln):
            dropped += 1
            continue
        records.append(ln[:MAX_RECORD_CHARS])
    return dropped


def read_syslog() -> list[str]:
    """The ring buffer through syslog(2) (klogctl: SIZE_BUFFER 10, READ_ALL 3), as `dmesg -r` prints
    it. OSError when the kernel refuses (dmesg_restrict without CAP_SYSLOG) or there is no libc."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c") or "libc.so.6"
    libc = ctypes.CDLL(name, use_errno=True)
    size = libc.klogctl(10, None, 0)
    if size < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    buf = ctypes.create_string_buffer(max(int(size), 1))
    got = libc.klogctl(3, buf, int(size))
    if got < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return [ln for ln in buf.raw[:got].decode("utf-8", "replace").split("\n") if ln]


def probe(root: str = "/", since_s: Optional[float] = None, syslog: bool = True) -> dict:
    r = Rooted(root)
    out: dict = {"probe": "kernel_log", "schema_version": SCHEMA_VERSION, "ok": True, "error": None, "via": None,
                 "now_s": _uptime(r), "since_s": since_s, "lost": 0, "truncated": False, "dropped": 0}
    kmsg = r.inside("/dev/kmsg")
    try:
        if kmsg is None:
            raise OSError(errno.EXDEV, f"{root}/dev/kmsg leads out of {root}")
        records, out["lost"], out["truncated"], out["dropped"] = read_kmsg(kmsg)
        out["via"] = "/dev/kmsg"
    except OSError as exc:
        first = f"{kmsg or '/dev/kmsg'}: {exc.strerror or exc}"
        if not syslog or root not in ("", "/"):  # another root's ring buffer is not this kernel's
            out.update(ok=False, error=f"not readable: {first}")
            out["records"] = []
            return out
        try:
            records = read_syslog()
            out["via"] = "syslog(2)"
        except (OSError, AttributeError) as exc2:
            out.update(ok=False, error=f"not readable: {first}; syslog(2): {getattr(exc2, 'strerror', None) or exc2}")
            out["records"] = []
            return out
    out["records"] = records  # last: json.dumps(indent=1) then puts each record on a line of its own
    return out


def main(argv: Optional[list[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    since = None
    if "--since" in args:
        i = args.index("--since")
        since = parse_duration(args[i + 1]) if i + 1 < len(args) else None
        del args[i:i + 2]
    print(json.dumps(probe(args[0] if args else "/", since), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
