"""Reading node reports for `topodiag fleet`, one at a time (a generator: 20k reports never sit in
memory together; of each only its host, fingerprint, finding codes and worst severity are kept).

What a path may be:
- a JSON report file (`topodiag check --format json > node017.json`), one object, any indentation;
- a JSON-lines file: one report per line, optionally prefixed as fan-out tools print it
  (`node017: {...}` from clush without -b, `  3: {...}` from `srun --label`). Indented reports
  from such a fan-out (every line `node017: ` + a fragment, interleaved across nodes) are put back
  together per prefix: a report ends at a `}` line in column 0, as json.dumps(indent=...) and jq
  write it; a JSON array of reports (`jq -s`) is read too; `clush -b` output, each output under a
  header of dashes, its node set, dashes (an output several nodes printed alike counts for each:
  the node set is expanded by ClusterShell);
- `-`: standard input, read as a JSON-lines file (a pipe from a fan-out);
- a directory: its `*.json`, `*.jsonl`, `*.ndjson` files, bundle archives (`.tar.gz`, `.tgz`,
  `.tar`) and bundle sub-directories, sorted by name (dotfiles and `*.expected.json` skipped);
  a directory holding `manifest.json` is itself a bundle. Only regular files and real folders of
  a directory are read: an entry that is a symbolic link is not followed (it could point at
  /dev/zero or /etc/shadow) and a FIFO, device or socket is not opened; each is a Failure that
  names it and says why. (A path named on the command line is read as named: a FIFO there,
  `fleet <(clush ...)`, is a stream; a device is refused.)
- a bundle (directory with manifest.json, or archive): the check pipeline (gather, evaluate,
  report, as `topodiag check --from` runs it) turns it into its report.

Every input that yields no report is a `Failure` with a one-line reason, never an exception. A
reason never quotes the bytes of a file that is not a report: it names the file and says why.
What is read is bounded: a file larger than MAX_FILE_BYTES is refused by its size before it is
opened, and while reading, a line over MAX_REPORT_CHARS or more than MAX_FILE_BYTES in all stops
the file (a stream has no size to check first).

Each report is labelled by where it came from (`label`: the file, `file:line`, the bundle, the
fan-out node) and, when a fan-out tool named the node (a `--nodes` node, a clush prefix or -b
header), by that name (`origin`); the host the report says (`host`) is kept apart, as data: fleet
keys nodes by their source, so a cloned or forged host name never hides a node (tally.py). Inside
one fan-out node's own output, prefixes and headers name nobody. A clush -b header is counted
before it is expanded: at most 100,000 nodes per input, no @groups (actions/nodenames.py).
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Optional, Union

from ..bundle import ARCHIVE_SUFFIXES

REPORT_SUFFIXES = (".json", ".jsonl", ".ndjson")
SEVERITIES = ("info", "warning", "error", "critical")  # mildest first
MAX_REPORT_CHARS = 64 << 20  # a report being put back together from prefixed lines, at most
MAX_FILE_BYTES = 4 << 30  # one file or stream of reports, at most (20,000 reports of 200 KB)
MAX_FAILURES_PER_FILE = 50  # bad lines of one file listed one by one; the rest are counted in one line
MAX_REASON = 300

# "node017: {" (clush), "  3: {" (srun --label): a name without spaces, quotes or brackets, then ": "
_PREFIX_RE = re.compile(r'\s*([^\s:{}\[\]"]+)(?:: (.*)|:)\Z', re.S)
# clush -b: a line of dashes, the node set ("gpu[001-003] (3)" when gathered), a line of dashes
_DASHES_RE = re.compile(r"-{3,}\Z")
_GATHERED_RE = re.compile(r"(\S+)(?: \((\d+)\))?\Z")
_TASK_RE = re.compile(r"[0-9]+\Z")  # `srun --label`'s prefix: a task number, not a node name


@dataclass(frozen=True)
class NodeReport:
    """What fleet keeps of one node's report."""

    label: str  # where it came from: a file, `file:line`, a bundle, a fan-out node; fleet's key for the node
    host: Optional[str]  # the host the report says it is from (data: a node can claim any name)
    fingerprint: dict
    codes: tuple  # distinct finding codes, sorted
    worst: Optional[str]  # the most severe finding's severity, None without findings
    origin: Optional[str] = None  # the node the fan-out says it ran on: a --nodes node, a clush prefix or -b header

    @property
    def name(self) -> str:
        """The node's name as shown: the fan-out's node name, else (an `srun --label` task number, a
        plain file) the report's host, else where it came from."""
        origin = self.origin
        if origin and not _TASK_RE.match(origin):
            return origin
        return self.host or origin or self.label

    @property
    def claims(self) -> Optional[str]:
        """The host name this report stands for: the one it says, else the fan-out's node name."""
        if self.host:
            return self.host
        origin = self.origin
        return origin if origin and not _TASK_RE.match(origin) else None


@dataclass(frozen=True)
class Failure:
    """An input that gave no report, and why (one line)."""

    label: str
    reason: str
    count: int = 1  # inputs it stands for ("120 more lines that are not reports")
    node: bool = False  # a fan-out node that gave no report (the label is its name), not a file

    def to_dict(self) -> dict:
        out = {"input": self.label, "reason": self.reason}
        if self.node:
            out["node"] = True
        if self.count != 1:
            out["count"] = self.count
        return out


Item = Union[NodeReport, Failure]


def one_line(text: Any, limit: int = MAX_REASON) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def accept(obj: Any, label: str, origin: Optional[str] = None) -> Item:
    """A parsed JSON value -> NodeReport when it is a topodiag check report of this schema_version.
    `origin`: the node name the fan-out gave this output (kept apart from the host the report claims)."""
    from ..render.json_report import READS, SCHEMA_VERSION

    if not isinstance(obj, dict):
        kind = ("true/false" if isinstance(obj, bool) else "a number" if isinstance(obj, (int, float))
                else "an array" if isinstance(obj, list) else "a string" if isinstance(obj, str) else "null")
        return Failure(label, f"not a topodiag report (JSON {kind}, expected an object)")
    if "schema_version" not in obj or "fingerprint" not in obj:
        if "source" in obj:
            return Failure(label, f"a `topodiag parse` output (source {one_line(obj['source'], 40)}), "
                                  "not a check report; run `topodiag check --format json`")
        return Failure(label, "not a topodiag report (no schema_version and fingerprint); "
                              "expected `topodiag check --format json` output")
    if obj["schema_version"] not in READS or isinstance(obj["schema_version"], bool):
        return Failure(label, f"report schema_version {one_line(obj['schema_version'], 20)}; this topodiag "
                              f"reads {SCHEMA_VERSION} (and {', '.join(str(v) for v in READS if v != SCHEMA_VERSION)}: "
                              "compare reports of one topodiag version)")
    fp = obj["fingerprint"]
    if not isinstance(fp, dict):
        return Failure(label, "malformed report: fingerprint is not an object")
    findings = obj.get("findings") or []
    if not isinstance(findings, list):
        return Failure(label, "malformed report: findings is not a list")
    codes = set()
    worst = -1
    for f in findings:
        if isinstance(f, dict):
            code = f.get("code")
            if isinstance(code, str):
                codes.add(code)
            sev = f.get("severity")
            if sev in SEVERITIES:
                worst = max(worst, SEVERITIES.index(sev))
    host = obj.get("host")
    if not isinstance(host, str) or not host.strip():
        host = None
    return NodeReport(label, host, fp, tuple(sorted(codes)), SEVERITIES[worst] if worst >= 0 else None, origin)


def read_reports(paths: Iterable[str], check_options: Optional[Mapping[str, Any]] = None) -> Iterator[Item]:
    """Every report the paths stand for, in order, as NodeReport or Failure. `check_options` are
    passed to the check pipeline for bundles (profile, config, select, ignore: as `check` takes)."""
    for path in paths:
        yield from _read_path(path, check_options or {})


def read_texts(pairs: Iterable[tuple]) -> Iterator[Item]:
    """Reports held as text, e.g. what a fan-out brought back: (node, stdout) pairs; the node names
    a report that says no host."""
    for label, text in pairs:
        text = str(text)
        yield from _read_stream(str(label), iter(text.splitlines(keepends=True)), origin=str(label),
                                size=len(text))


def _read_path(path: str, check_options: Mapping[str, Any]) -> Iterator[Item]:
    if path == "-":  # `clush -w ... topodiag check --format json | topodiag fleet -`
        import io
        import sys

        stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", errors="replace")
        try:
            yield from _read_stream("<stdin>", _capped_lines(stdin))
        except _TooMuch as exc:
            yield Failure("<stdin>", str(exc))
        return
    try:
        st = os.stat(path)
    except FileNotFoundError:
        yield Failure(path, "no such file or directory")
        return
    except OSError as exc:
        yield Failure(path, one_line(exc.strerror or exc))
        return
    if stat.S_ISDIR(st.st_mode):
        if os.path.isfile(os.path.join(path, "manifest.json")):
            yield _bundle(path, check_options)
        else:
            yield from _read_dir(path, check_options)
        return
    if path.lower().endswith(ARCHIVE_SUFFIXES):
        yield _bundle(path, check_options)
        return
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):  # a device never ends
        yield Failure(path, f"{_kind(st.st_mode)}, not a regular file: not opened")
        return
    yield from _read_file(path, stat.S_ISREG(st.st_mode), in_dir=False)


# What `dir_entries` says each listed path is
REPORT_FILE, REGULAR_REPORT_FILE, BUNDLE, LINK, SPECIAL = 0, 1, 2, 3, 4


def _kind(mode: int) -> str:
    from ..load.files import special_kind

    return special_kind(mode) or "not a regular file"


def dir_entries(path: str) -> Union[tuple[list[str], bytearray], Failure]:
    """What a directory (not itself a bundle) holds for fleet, sorted by name: its `*.json`,
    `*.jsonl`, `*.ndjson` files and its bundles (dotfiles and `*.expected.json` skipped), as their
    paths and, per path, what it is: REPORT_FILE, REGULAR_REPORT_FILE (a regular file, from the
    listing's file type: no stat) or BUNDLE. A Failure when the directory cannot be listed."""
    try:
        with os.scandir(path) as it:
            found = sorted(it, key=_name)
    except OSError as exc:
        return Failure(path, f"cannot list the directory: {one_line(exc.strerror or exc)}")
    prefix = os.path.join(path, "")
    paths: list[str] = []
    kinds = bytearray()
    for e in found:
        name = e.name
        low = name.lower()
        if name.startswith(".") or low.endswith(".expected.json"):
            continue
        kind = _entry_kind(e, low, prefix + name)
        if kind is not None:
            paths.append(prefix + name)
            kinds.append(kind)
    return paths, kinds


def _entry_kind(e: os.DirEntry, low: str, path: str) -> Optional[int]:
    """What a directory entry is for fleet (None: not an input), from the listing's file type
    (lstat when the listing does not say): a link is never followed."""
    try:
        link = e.is_symlink()
        regular = e.is_file(follow_symlinks=False)
        folder = e.is_dir(follow_symlinks=False)
    except OSError:
        link = regular = folder = False
    named = low.endswith(REPORT_SUFFIXES) or low.endswith(ARCHIVE_SUFFIXES)
    if link:
        return LINK if named or os.path.isfile(os.path.join(path, "manifest.json")) else None
    if folder:
        return BUNDLE if os.path.isfile(os.path.join(path, "manifest.json")) else None
    if not named:
        return None
    if not regular:
        return SPECIAL
    return REGULAR_REPORT_FILE if low.endswith(REPORT_SUFFIXES) else BUNDLE


def _name(entry: os.DirEntry) -> str:
    return entry.name


def read_entries(paths: list[str], kinds: Union[bytes, bytearray],
                 check_options: Optional[Mapping[str, Any]] = None) -> Iterator[Item]:
    """Every report of the paths `dir_entries` listed (with their kinds), in their order."""
    for path, kind in zip(paths, kinds):
        if kind == BUNDLE:
            yield _bundle(path, check_options or {})
        elif kind == LINK:
            yield Failure(path, "a symbolic link in the directory, not followed (name the file itself to read it)")
        elif kind == SPECIAL:
            try:
                what = _kind(os.lstat(path).st_mode)
            except OSError as exc:
                what = one_line(exc.strerror or exc)
            yield Failure(path, f"{what}, not a regular file: not opened")
        else:
            yield from _read_file(path, kind == REGULAR_REPORT_FILE)


def _read_dir(path: str, check_options: Mapping[str, Any]) -> Iterator[Item]:
    entries = dir_entries(path)
    if isinstance(entries, Failure):
        yield entries
        return
    yield from read_entries(*entries, check_options)


def _read_file(path: str, regular: bool = False, in_dir: bool = True) -> Iterator[Item]:
    """The reports of one file. A directory's entry (`in_dir`) is opened without following a link
    and without blocking, and read only if it is a regular file; a path named on the command line
    may be a FIFO (a stream). Either way a regular file over MAX_FILE_BYTES is refused by its
    size, and what is read is capped (_capped_lines)."""
    if regular:
        report = _one_report_file(path, in_dir)
        if report is not None:
            yield report
            return
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
    if in_dir:
        flags |= getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        link = exc.errno == getattr(__import__("errno"), "ELOOP", -1)
        yield Failure(path, "a symbolic link in the directory, not followed" if link and in_dir
                      else one_line(exc.strerror or exc))
        return
    st = os.fstat(fd)
    why = None
    if in_dir and not stat.S_ISREG(st.st_mode):
        why = f"{_kind(st.st_mode)}, not a regular file: not opened"
    elif stat.S_ISREG(st.st_mode) and st.st_size > MAX_FILE_BYTES:
        why = f"{st.st_size} bytes, more than fleet reads from one file ({MAX_FILE_BYTES >> 30} GiB)"
    if why:
        os.close(fd)
        yield Failure(path, why)
        return
    with open(fd, "r", encoding="utf-8-sig", errors="replace", newline=None) as handle:
        size = st.st_size if stat.S_ISREG(st.st_mode) else None
        try:
            yield from _read_stream(path, _capped_lines(handle), size=size)
        except _TooMuch as exc:
            yield Failure(path, str(exc))
        except OSError as exc:
            yield Failure(path, f"cannot read: {one_line(exc.strerror or exc)}")


class _TooMuch(Exception):
    """A file whose line or whole is over what fleet reads."""


def _capped_lines(handle, line_cap: int = MAX_REPORT_CHARS, total_cap: int = MAX_FILE_BYTES) -> Iterator[str]:
    """The lines of a text handle, none longer than `line_cap` characters and `total_cap` in all:
    _TooMuch past either (a device or an endless stream never fills memory)."""
    total = 0
    no = 0
    while True:
        line = handle.readline(line_cap + 1)
        if not line:
            return
        no += 1
        total += len(line)
        if len(line) > line_cap:
            raise _TooMuch(f"line {no} is longer than {line_cap >> 20} MiB: not a report; the rest is not read")
        if total > total_cap:
            raise _TooMuch(f"more than {total_cap >> 30} GiB: the rest is not read")
        yield line


_FIRST_READ = 1 << 16
_INDENTED_HEAD_RE = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*\{[ \t]*[\r\n]")


def _one_report_file(path: str, in_dir: bool = True) -> Optional[NodeReport]:
    """The common file read fast: one indented report (`check --format json > NODE.json`) in a
    regular file, read with one os.read (two past 64 KiB) and parsed whole. None for anything else
    (a file that cannot be opened or read, JSON lines, fan-out output, an array, bad UTF-8, bad
    JSON, not a report): `_read_stream` then reads it as it always did and says what it is. What
    comes back is what `_read_stream` gives for such a file (`_whole`, one report, labelled by the
    file)."""
    nofollow = getattr(os, "O_NOFOLLOW", 0) if in_dir else 0  # a link put there since it was listed
    try:  # O_NONBLOCK: a FIFO put in the file's place since it was listed must not block the open
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0) | nofollow)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        size = st.st_size
        if size > MAX_REPORT_CHARS or not stat.S_ISREG(st.st_mode):
            return None
        data = os.read(fd, min(size + 1, _FIRST_READ))  # a whole report of the usual size
        if not _INDENTED_HEAD_RE.match(data):  # not `{` alone on its line: JSON lines, fan-out output...
            return None
        if len(data) <= size:
            data += os.read(fd, size + 1 - len(data))
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) != size:  # changed while being read
        return None
    try:
        obj = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    item = accept(obj, path)
    return item if isinstance(item, NodeReport) else None


def _read_stream(name: str, lines: Iterator[str], origin: Optional[str] = None,
                 size: Optional[int] = None) -> Iterator[Item]:
    """Reports from lines: one per line, a multi-line report, prefixed lines of a fan-out, or an array.
    An indented report (a `{` line first) of at most MAX_REPORT_CHARS is parsed whole, in C: the
    line-by-line engine is only for fan-out output and for finding where a broken file breaks."""
    first = ""
    first_no = 0
    for first_no, first in enumerate(lines, 1):
        if first.strip():
            break
    else:
        yield Failure(name, "empty file, expected topodiag check reports (JSON)")
        return
    head = first.lstrip("\ufeff").lstrip()
    if "\x00" in head:
        yield Failure(name, "binary data, expected topodiag check reports (JSON)")
        return
    if head.startswith("["):  # a JSON array of reports (jq -s)
        text = head + "".join(lines)
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            yield Failure(name, f"not JSON: {one_line(exc)}")
            return
        if not isinstance(data, list):
            yield accept(data, name, origin)
            return
        for i, obj in enumerate(data):
            yield accept(obj, f"{name}[{i}]", origin)
        return
    if head.rstrip() == "{" and size is not None and size <= MAX_REPORT_CHARS:
        text = first + "".join(lines)
        whole = _whole(name, text, first_no, origin)
        if whole is not None:
            yield from whole
            return
        lines = iter(text.splitlines(keepends=True)[1:])
    m = _PREFIX_RE.match(head)
    if (not head.startswith("{") and not (m and (m.group(2) or "").lstrip().startswith("{"))
            and not _DASHES_RE.match(head.rstrip())):
        yield Failure(name, f"not JSON (line {first_no} is not a report, an array or fan-out output); "
                            "expected topodiag check reports, one per file or per line")
        return
    yield from _one_is_the_file(name, _Lines(name, origin).read(first_no, first, lines))


def _whole(name: str, text: str, first_no: int, origin: Optional[str]) -> Optional[list[Item]]:
    """One indented report (or several, concatenated: `cat *.json`), or None when the text is not
    that (then the line engine says where it breaks)."""
    decoder = json.JSONDecoder()
    out: list[Item] = []
    pos, seen, line_no, n = 0, 0, first_no, len(text)
    try:
        while True:
            while pos < n and text[pos] in " \t\r\n":
                pos += 1
            if pos >= n:
                break
            line_no += text.count("\n", seen, pos)
            seen = pos
            obj, pos = decoder.raw_decode(text, pos)
            out.append(accept(obj, f"{name}:{line_no}", origin))
    except (ValueError, RecursionError):
        return None
    if len(out) == 1 and isinstance(out[0], NodeReport):
        from dataclasses import replace

        out[0] = replace(out[0], label=name)
    return out


def _one_is_the_file(name: str, items: Iterator[Item]) -> Iterator[Item]:
    """Items labelled `file:line`; a file that holds one report only is labelled by the file."""
    from dataclasses import replace

    held = next(items, None)
    if held is None:
        return
    second = next(items, None)
    if second is None:
        yield replace(held, label=name) if isinstance(held, NodeReport) else held
        return
    yield held
    yield second
    yield from items


class _Lines:
    """Reports of a line stream, put back together per fan-out prefix."""

    def __init__(self, name: str, origin: Optional[str]) -> None:
        self.name = name
        self.origin = origin
        self.pending: dict[Optional[str], list] = {}  # prefix -> [first line no, size, parts]
        self.bad = 0
        self.header: Optional[list] = None  # clush -b header being read: [dash lines seen, node set]
        self.nodes: Optional[list[str]] = None  # the node(s) of the clush -b block being read
        self.expanded = 0  # nodes the clush -b headers of this input named so far (at most MAX_NODES)

    def _header(self, no: int, stripped: str) -> Optional[Iterator[Item]]:
        """Follow a clush -b header; None when the line is not part of one."""
        h = self.header
        if h is None:
            if not _DASHES_RE.match(stripped) or None in self.pending:
                return None
            self.header = [1, None]
            return iter(())
        if h[1] is None:
            h[1] = stripped
            return iter(())
        self.header = None
        if not _DASHES_RE.match(stripped):
            self.nodes = None  # what follows belongs to no known node
            return self.fail(no, "a clush -b header without its closing dashes")
        return self._block(no, h[1])

    def _block(self, no: int, text: str) -> Iterator[Item]:
        m = _GATHERED_RE.match(text)
        if not m:
            self.nodes = None
            return self.fail(no, "not a node set in a clush -b header")
        nodeset, count = m.group(1), m.group(2)
        if count is None and "[" not in nodeset:
            self.nodes = [nodeset]
            return iter(())
        from ..actions.nodenames import MAX_NODES, NodeSetError, count, expand

        try:
            if self.expanded + count(nodeset, "clush -b header") > MAX_NODES:
                raise NodeSetError(f"clush -b headers: more than {MAX_NODES} nodes in one input")
            self.nodes = expand(nodeset, "clush -b header", groups=False)
        except ImportError:
            self.nodes = None
            return self.fail(no, f"output gathered for {one_line(nodeset, 60)}: expanding it needs ClusterShell "
                                 "(pip install 'topodiag[fleet]'), or run clush without -b")
        except NodeSetError as exc:
            self.nodes = None
            return self.fail(no, one_line(exc))
        except Exception as exc:  # noqa: BLE001 -- ClusterShell's NodeSetParseError (and kin): one line
            self.nodes = None
            return self.fail(no, "not a node set in a clush -b header")
        self.expanded += len(self.nodes)
        return iter(())

    def fail(self, line_no: int, reason: str) -> Iterator[Item]:
        self.bad += 1
        if self.bad <= MAX_FAILURES_PER_FILE:
            yield Failure(f"{self.name}:{line_no}", reason)

    def done(self, prefix: Optional[str], line_no: int, text: str) -> Iterator[Item]:
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError) as exc:
            yield from self.fail(line_no, f"not JSON: {one_line(exc, 120)}")
            return
        yield from self._accept(obj, prefix, line_no)

    def _accept(self, obj: Any, prefix: Optional[str], line_no: int) -> Iterator[Item]:
        label = f"{self.name}:{line_no}"
        if self.origin is not None:  # a fan-out node's own output: its prefixes and headers name nobody
            yield accept(obj, label, self.origin)
            return
        nodes = self.nodes if prefix is None else None
        if not nodes:
            yield accept(obj, label, prefix)
        elif len(nodes) == 1:
            yield accept(obj, label, nodes[0])
        else:  # clush -b gathered one output of several nodes: the report stands for each of them
            from dataclasses import replace

            item = accept(obj, label)
            for node in nodes:
                yield replace(item, origin=node, label=f"{label} ({node})") if isinstance(item, NodeReport) else item

    def read(self, first_no: int, first: str, lines: Iterator[str]) -> Iterator[Item]:
        pending = self.pending
        no = first_no
        line: Optional[str] = first
        while line is not None:
            body = line.rstrip("\r\n")
            prefix: Optional[str] = None
            m = _PREFIX_RE.match(body)  # never a JSON line: a name before ": " has no quote or bracket
            if m:
                prefix, body = m.group(1), m.group(2) or ""
            stripped = body.strip()
            if prefix is None:
                header = self._header(no, stripped)
                if header is not None:
                    yield from header
                    line = next(lines, None)
                    no += 1
                    continue
            buf = pending.get(prefix)
            if buf is not None and body.startswith("{"):  # a new report in column 0: the last was cut off
                del pending[prefix]
                who = f" of {prefix}" if prefix else ""
                yield from self.fail(buf[0], f"the report{who} is cut off: a new one starts at line {no}")
                buf = None
            if buf is not None:
                buf[2].append(body)
                buf[1] += len(body)
                if body.startswith("}"):  # the top-level object closes in column 0
                    del pending[prefix]
                    yield from self.done(prefix, buf[0], "\n".join(buf[2]))
                elif buf[1] > MAX_REPORT_CHARS:
                    del pending[prefix]
                    yield from self.fail(buf[0], f"a report over {MAX_REPORT_CHARS >> 20} MiB, not read")
            elif stripped.startswith("{"):
                if stripped.endswith("}"):  # one report on one line (or a bad line)
                    yield from self.done(prefix, no, stripped)
                else:
                    pending[prefix] = [no, len(body), [body]]
            elif stripped:
                yield from self.fail(no, "not a JSON report line")
            line = next(lines, None)
            no += 1
        for prefix, (start, _, parts) in list(pending.items()):
            text = "\n".join(parts)
            try:  # a report whose closing brace is not in column 0
                obj = json.loads(text)
            except (ValueError, RecursionError):
                who = f" of {prefix}" if prefix else ""
                yield from self.fail(start, f"the report{who} is not complete at the end of the input")
                continue
            yield from self._accept(obj, prefix, start)
        if self.bad > MAX_FAILURES_PER_FILE:
            more = self.bad - MAX_FAILURES_PER_FILE
            yield Failure(self.name, f"{more} more lines that are not reports", more)


def _bundle(path: str, check_options: Mapping[str, Any]) -> Item:
    """A bundle's report, by the pipeline of `topodiag check --from BUNDLE --format json`."""
    try:
        report = bundle_report(path, check_options)
    except Exception as exc:  # noqa: BLE001 -- a bundle that cannot be judged is a failure, never a crash
        msg = one_line(exc)
        if msg.startswith(f"{path}: "):
            msg = msg[len(path) + 2:]
        from ..errors import InputError, UsageError

        if isinstance(exc, InputError):
            return Failure(path, msg)
        if isinstance(exc, UsageError):
            return Failure(path, f"the check pipeline refused it: {msg}")
        return Failure(path, one_line(f"could not be checked: {type(exc).__name__}: {msg}"))
    return accept(report, path)


def bundle_report(path: str, check_options: Optional[Mapping[str, Any]] = None) -> dict:
    """The JSON report `topodiag check --from PATH --format json` would print (raises on a bad bundle)."""
    from ..pipeline import diagnose

    return diagnose([path], **dict(check_options or {})).to_json()
