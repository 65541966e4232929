"""`nvidia-bug-report.log(.gz)` as an input of `check --from`: one file, many tools' outputs.

NVIDIA's nvidia-bug-report.sh writes a log of sections, each opened by a line of underscores and a
blank line, then a title: a file it copied ("*** /proc/cmdline", followed by an "*** ls: ..." line
of the file's metadata), or the command it ran ("/usr/bin/nvidia-smi --query", "/sbin/lspci -d
"10de:*" -v -xxx", "dmesg:"):

    ____________________________________________

    *** /proc/cmdline
    *** ls: -r--r--r-- 1 root root 0 2022-10-27 20:48:36.3 -0300 /proc/cmdline
    BOOT_IMAGE=/vmlinuz-6.0.1 root=UUID=... intel_iommu=on

    ____________________________________________

    dmesg:

    [    0.000000] Linux version 6.0.1-arch2-1 ...

A section is read when its title names something a source of topodiag reads: the command a
parser's INFO runs (`argv`: "nvidia-smi topo -m", "ibstat", "lspci -vvv"...), the kernel log
("dmesg:", the "Scanning kernel log files for NVIDIA kernel messages" excerpt, a journalctl -k or
/var/log/messages copy), or a file of TITLED_FILES. Each section is parsed by that source's parser
with the line numbers of the whole file (the parser sees blank lines before it), and enters the
report as "<file> [<title>]"; the other sections (X logs, dmidecode, base64 dumps...) are skipped.
A gzip-compressed report is decompressed in memory, up to MAX_BYTES. The report's "uname:" line
names the host, so a report of another host beside it is caught as other inputs are.
"""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass
from typing import Optional

from ..errors import InputError

MARKS = ("Start of NVIDIA bug report log file", "nvidia-bug-report.sh Version")
SEPARATOR_RE = re.compile(r"^_{20,}\s*$")
UNAME_RE = re.compile(r"^uname:\s+\S+\s+(\S+)", re.M)
MAX_BYTES = 1 << 30  # a decompressed report larger than this is refused

# The kernel log, whatever the section's title says of where it came from.
KERNEL_TITLES = re.compile(r"^(?:dmesg:?|Scanning kernel log files for NVIDIA kernel messages:?|"
                           r"(?:/\S+/)?journalctl\b.*(?:\s-k\b|--dmesg)|"
                           r"\*\*\* /var/log/(?:messages|kern\.log|dmesg|kernel\.log|syslog))")
# Copied files ("*** PATH") that a source reads, by path: the source is used only if this
# topodiag has it (a parser module of that name).
TITLED_FILES = {
    "/proc/cmdline": "kernel_cmdline",
    "/proc/modules": "peermem",
}

# Long options the report's commands use, as the short ones of the parsers' commands.
ALIASES = {"--query": "-q", "--matrix": "-m", "--status": "-s", "--errorcounters": "-e",
           "--capabilities": "-c"}


@dataclass(frozen=True)
class Section:
    title: str
    source: str
    start_line: int  # the file's line number of the section's first content line
    text: str  # the content, preceded by blank lines so that line numbers are the file's


def looks_like(head: str) -> bool:
    """True for the text of an nvidia-bug-report log (its prologue is in the first lines)."""
    return any(mark in head[:4096] for mark in MARKS)


def read_gzip(path: str) -> Optional[str]:
    """The text of a gzip-compressed bug report at `path`, or None when the file is not gzip or not
    a bug report. Raises InputError for a report that is cut short, corrupt or too large."""
    from .files import open_binary  # a regular file only: a FIFO or a device never blocks here

    try:
        with open_binary(path) as raw:
            if raw.read(2) != b"\x1f\x8b":
                return None
    except (OSError, InputError):
        return None
    try:
        with open_binary(path) as raw, gzip.open(raw, "rb") as fh:
            head = fh.read(8192)
            if not looks_like(head.decode("utf-8", "replace")):
                return None
            data = head + fh.read(MAX_BYTES + 1 - len(head))
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(path, f"a gzip-compressed nvidia-bug-report that cannot be read whole ({exc})") from None
    except InputError:
        return None  # no longer a regular file: open_text says what it is
    if len(data) > MAX_BYTES:
        raise InputError(path, f"nvidia-bug-report larger than {MAX_BYTES >> 20} MiB once decompressed")
    return data.decode("utf-8", "replace")


def host_of(text: str) -> Optional[str]:
    """The host name of the report's "uname: Linux HOST ..." line."""
    m = UNAME_RE.search(text[:16384])
    return m.group(1) if m else None


def _command_sources() -> list[tuple[str, str]]:
    """(command words, source) for every parser that runs a command, longest command first so that
    "nvidia-smi topo -m" wins over "nvidia-smi"."""
    from ..parsers import SOURCES, info

    pairs = []
    for source in SOURCES:
        argv = info(source).argv
        if argv:
            pairs.append((" ".join(argv), source))
    return sorted(pairs, key=lambda p: -len(p[0]))


def source_of(title: str, commands: list[tuple[str, str]]) -> Optional[str]:
    """The source a section's title names, or None."""
    from ..parsers import SOURCES

    if KERNEL_TITLES.match(title):
        return "kernel_log" if "kernel_log" in SOURCES else None
    if title.startswith("*** "):
        path = title[4:].split(" ", 1)[0]
        source = TITLED_FILES.get(path)
        return source if source in SOURCES else None
    words = " ".join(w.rsplit("/", 1)[-1] if i == 0 else ALIASES.get(w, w) for i, w in enumerate(title.split()))
    for command, source in commands:
        if words == command or words.startswith(command + " "):
            return source
    return None


def sections(text: str) -> list[Section]:
    """The sections of a bug report that a source reads, in order."""
    commands = _command_sources()
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if SEPARATOR_RE.match(line)]
    out = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        i = start + 1
        while i < end and not lines[i].strip():
            i += 1
        if i >= end:
            continue
        title = lines[i].strip()
        source = source_of(title, commands)
        if source is None:
            continue
        first = i + 1
        if first < end and lines[first].startswith("*** ls:"):
            first += 1
        body = "\n".join(lines[first:end])
        if not body.strip():
            continue
        out.append(Section(title[:120], source, first + 1, "\n" * first + body))
    return out
