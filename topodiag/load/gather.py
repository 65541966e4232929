"""Gathering `--from PATH...`: files and directories of saved outputs -> parsed inputs and problems.

A file is parsed by every source `parsers.detect_all` names (an nccl-tests run with NCCL_DEBUG=INFO
is both an nccl_tests output and an NCCL log); when at least one parses, the others' errors are
noise of detection and are only noted. A directory stands for each regular file in it (sorted;
`*.expected.json`, `*.conclusion.json` and dotfiles skipped), unless it holds a manifest.json: then it is a bundle
(sources/bundle.py) and each member is read as the source its manifest entry names; a bundle
archive (.tar.gz, .tgz, .tar) is unpacked safely into a temporary folder first and read the same
way. A file nobody recognises, or that cannot be read, becomes an engine InputProblem (SYS001/SYS002
finding), never a crash. A probe's JSON whose `ok` is false (NVML not initialised, no RDMA device
list), read as a loose file or under an "ok" manifest entry, is a failed source (SYS001, the probe's
error as the reason), as a bundle's "failed" entry is; it is still parsed for the rules.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Optional

from ..records import Each, InputProblem
from ..records import InputStatus, ParsedInput
from ..bundle.shown import PATH_SHOWN, shown  # the archive and manifest readers load when a path asks for them
from ..errors import BundleError
from ..errors import InputError
from .files import OpenedText, open_bytes, open_str, open_text, parse_opened, parse_opened_all

UNKNOWN_SOURCE = "unknown"
# Files beside fixtures that say what to expect of them, never inputs (tests/fixtures_index.py).
SIDECARS = (".expected.json", ".conclusion.json")


@dataclass
class Gathered:
    parsed: list[ParsedInput] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    statuses: list[InputStatus] = field(default_factory=list)
    host: Optional[str] = None  # what a bundle's manifest says (first bundle wins)
    hosts: list = field(default_factory=list)  # (host, input) for every input that names its host
    records: list = field(default_factory=list)  # live collection's records, when collected live
    collected_at: Optional[str] = None  # UTC ISO 8601: a bundle's manifest `created`, or when collected live
    host_facts: dict = field(default_factory=dict)  # kernel, ofed: a bundle manifest's facts (first bundle wins)

    def host_names(self) -> dict[str, list[str]]:
        """Each host the inputs name (short name, lower case) -> the inputs that name it."""
        out: dict[str, list[str]] = {}
        for host, label in self.hosts:
            out.setdefault(host.split(".")[0].lower(), []).append(label)
        return out

    def engine_inputs(self) -> dict:
        """source name -> Each (value, file) of every file of that source: a rule that reads a
        source itself runs once per file; the model merges them all."""
        out: dict[str, list] = {}
        for item in self.parsed:
            out.setdefault(item.source, []).append((item.result, item.path))
        return {source: Each.of(pairs) for source, pairs in out.items()}


def is_archive(path: str) -> bool:
    from ..bundle import ARCHIVE_SUFFIXES

    return path.lower().endswith(ARCHIVE_SUFFIXES)


def _is_bundle_dir(path: str) -> bool:
    from ..bundle.manifest import is_bundle_dir

    return is_bundle_dir(path)


def expand(paths: Iterable[str]) -> Iterator[str]:
    """The files the paths stand for, in order (directories: their regular files, sorted; links
    and special files in a directory are passed over, see `listing`)."""
    for path in paths:
        for full, skipped in listing(path):
            if skipped is None:
                yield full


def listing(path: str) -> Iterator[tuple[str, Optional[str]]]:
    """(file, None) for each file a path stands for, or (entry, why it is passed over). A path named
    by the user is read as named (a link to a file is followed: the user chose it). A directory's
    entries are read only when they are regular files, by lstat: a symbolic link is not followed (it
    could point anywhere, /etc/shadow included, and would be read as whoever runs topodiag), and a
    FIFO, device or socket is not opened (it could block forever); both are passed over with the
    reason. Folders inside, dotfiles and fixture sidecars are passed over silently."""
    from .files import special_kind

    try:
        st = os.stat(path)
    except OSError:
        yield path, None  # open_text says what is wrong with it
        return
    if not stat.S_ISDIR(st.st_mode):
        yield path, None
        return
    for name in sorted(os.listdir(path)):
        if name.startswith(".") or name.endswith(SIDECARS):
            continue
        full = os.path.join(path, name)
        try:
            mode = os.lstat(full).st_mode
        except OSError:
            yield full, None
            continue
        if stat.S_ISLNK(mode):
            yield full, ("a symbolic link in a folder, not followed (name the file itself to read it)")
        elif stat.S_ISREG(mode):
            yield full, None
        elif not stat.S_ISDIR(mode):
            yield full, f"{special_kind(mode)}, not a regular file: not opened"


def gather(paths: Iterable[str], source: Optional[str] = None) -> Gathered:
    """Parse every file and bundle the paths stand for. Raises only BundleError (a bundle whose
    archive, manifest or members cannot be trusted at all). An entry of a directory passed over (a
    link, a FIFO: see `listing`) is an "ignored" input with its reason, and one line on stderr.
    `source` (a parser's name, `check --source`) reads every loose file as that tool's output instead
    of detecting it (a short paste detection cannot place); bundle members keep their manifest's."""
    out = Gathered()
    for path in paths:  # (the bundle modules are loaded for a bundle only: a loose file needs neither)
        if is_archive(path) and not os.path.isdir(path):
            import tempfile

            from ..bundle.archive import unpack

            with tempfile.TemporaryDirectory(prefix="topodiag-bundle-") as tmp:
                _gather_bundle(unpack(path, tmp), out, label_root=path)
            continue
        if os.path.isdir(path) and _is_bundle_dir(path):
            _gather_bundle(path, out)
            continue
        for file, skipped in listing(path):
            if skipped is None:
                _gather_file(file, out, source)
            else:
                _passed_over(out, file, skipped)
    return out


def _passed_over(out: Gathered, path: str, reason: str) -> None:
    import sys

    label = shown(path, PATH_SHOWN)
    out.statuses.append(InputStatus(label, None, "ignored", reason))
    print(f"topodiag: note: {shown(path)}: {reason}", file=sys.stderr)


def gather_bundle(root: str, label_root: str) -> Gathered:
    """One bundle directory, its inputs named under `label_root` ("live" for a live collection);
    raises BundleError as gather does."""
    out = Gathered()
    _gather_bundle(root, out, label_root)
    return out


def gather_records(records: Iterable, host: Optional[str], label_root: str = "live") -> Gathered:
    """Live collection's records (topodiag.live.collection.Record), read in memory exactly as the
    bundle they would make is read: the same statuses, problems and parsers, no disk."""
    import copy

    out = Gathered(host=host)
    shown_records = []
    for rec in records:  # a reason as the bundle's manifest gives it back: escaped and bounded (shown)
        if getattr(rec, "reason", "") and shown(rec.reason, 2000) != rec.reason:
            rec = copy.copy(rec)
            rec.reason = shown(rec.reason, 2000)
        shown_records.append(rec)

    def open_member(rec) -> OpenedText:
        if getattr(rec, "source_path", None):  # a file the user gave: read from disk as it streams
            return open_text(rec.source_path)
        if not (rec.text or "").strip():
            raise _NothingPrinted()
        return open_bytes(os.path.join(label_root, rec.member), (rec.text or "").encode("utf-8"))

    _gather_entries(out, shown_records, label_root, open_member)
    return out


class _MemberChanged(Exception):
    """A bundle member whose sha256 is not the manifest's."""


class _NothingPrinted(Exception):
    """A member (or a live record's text) that is empty or only white space: the tool printed nothing."""


BLANK_PROBE_BYTES = 64 * 1024  # a member this short or shorter is looked at whole for "printed nothing"


def _blank_file(path: str) -> bool:
    """Whether a bundle member holds nothing but white space (read only when it is short)."""
    from ..bundle.manifest import open_regular

    with open_regular(path) as fh:
        head = fh.read(BLANK_PROBE_BYTES + 1)
    return len(head) <= BLANK_PROBE_BYTES and not head.strip()


def nothing_printed(e) -> str:
    """The reason shown for an "ok" entry whose output is empty: the tool answered with nothing
    (lspci in a container); a normal outcome, as a tool that is not installed, never a finding."""
    what = " ".join(e.argv) if e.argv else e.source
    return f"{what} exited {e.rc if e.rc is not None else 0} and printed nothing"


def _gather_bundle(root: str, out: Gathered, label_root: Optional[str] = None) -> None:
    """Every source entry of a bundle directory: parsed with the parser it names, or recorded as
    failed / not available on the host. Inputs are named under `label_root` (the archive a
    temporary folder came from) when given."""
    from ..bundle.manifest import member_path, read_manifest, sha256_of

    try:
        manifest = read_manifest(root)
    except BundleError as exc:  # name the archive the user gave, not the temporary folder
        raise BundleError(str(exc).replace(root, label_root)) if label_root else exc from None
    out.host = out.host or manifest.host
    out.collected_at = out.collected_at or manifest.created
    out.host_facts = out.host_facts or dict(manifest.facts)
    for source, member, times in manifest.duplicates:  # read once (bundle/manifest.py)
        out.statuses.append(InputStatus(shown(os.path.join(label_root or root, member), PATH_SHOWN), source,
                                        "ignored", f"listed {times} times under {source} in the manifest: read once"))
    if manifest.host:
        out.hosts.append((manifest.host, label_root or root))

    def open_member(e) -> OpenedText:
        path = member_path(manifest, e.member)  # BundleError: the bundle is not to be trusted
        try:
            changed = e.sha256 is not None and sha256_of(path) != e.sha256
        except OSError as exc:  # not a regular file any more (a FIFO put there), unreadable
            raise InputError(shown(path, PATH_SHOWN), f"cannot read: {exc.strerror or exc}") from None
        if changed:
            raise _MemberChanged()
        try:
            blank = _blank_file(path)
        except OSError as exc:
            raise InputError(shown(path, PATH_SHOWN), f"cannot read: {exc.strerror or exc}") from None
        if blank:
            raise _NothingPrinted()
        return open_text(path)

    _gather_entries(out, manifest.sources, label_root or root, open_member)


def _gather_entries(out: Gathered, entries: Iterable, where: str, open_member: Callable) -> None:
    """The manifest entries (or live records: the same fields) of one collection, in order."""
    from ..parsers import SOURCES

    for e in entries:
        label = shown(os.path.join(where, e.member) if e.member else f"{where}: {e.source}", PATH_SHOWN)
        if not _entry_readable(out, e, label):
            continue
        opened = _open_entry(out, e, label, open_member, SOURCES)
        if opened is None:
            continue
        if e.source not in SOURCES:
            opened.close()
            _not_read(out, e.source, label)
            continue
        try:  # a not-available probe's record is read for the rules but listed once, as absent
            error = _parse_as(e.source, opened, label, out, listed=e.status != "not_available")
        finally:
            opened.close()
        if isinstance(error, Incomplete):  # stopped at the deadline
            if e.status != "not_available":
                _incomplete(out, e.source, label, error, failed_already=e.status != "ok")
            continue
        if error is None and e.status == "ok":  # a failed or absent entry already says how it went
            _probe_failed(out, out.parsed[-1])
        if error is not None and e.status != "not_available":  # a failed tool's partial output:
            _unparseable(out, e.source, label, *error, report=e.status == "ok")  # already reported


def _entry_readable(out: Gathered, e, label: str) -> bool:
    """What an entry's status says (absent, failed, cut at the output cap), recorded; False when it
    has no member to read."""
    if e.status == "not_available":
        out.statuses.append(InputStatus(label, e.source, "absent", e.reason or "not available on the host"))
        if not e.member:
            return False  # a probe's record of why is still read: rules may use it
    if e.status in ("failed", "timed_out"):
        reason = e.reason or ("timed out" if e.timed_out else f"exit status {e.rc}")
        if e.timed_out and e.duration_s is not None and "timed out" not in reason:
            reason += f" (timed out after {e.duration_s:g} s)"
        out.problems.append(InputProblem(e.source, "failed", reason, label))
        out.statuses.append(InputStatus(label, e.source, "failed", reason))
    if e.member and e.status == "failed" and CUT_MARK in (e.reason or ""):
        # N8: a tool killed at the output cap (live/commands.py) flooded its output: what it kept is
        # in the bundle for a person, and not parsed (64 MB of a flood took a minute per source)
        out.statuses.append(InputStatus(label, e.source, "ignored", "its partial output: not read (cut at the "
                                        "output cap, it is not the answer the tool was asked for)"))
        return False
    if not e.member:
        if e.status == "ok":  # an empty answer as an older collect recorded it (no member, rc given)
            out.statuses.append(InputStatus(label, e.source, "absent", nothing_printed(e)))
        return False
    return True


def _open_entry(out: Gathered, e, label: str, open_member: Callable, sources):
    """The entry's member opened, or None when it cannot be read (recorded: nothing printed, changed
    since collection, unreadable); BundleError for a bundle not to be trusted at all."""
    try:
        return open_member(e)
    except BundleError:
        raise
    except _NothingPrinted:
        if e.status == "ok":  # an answer with nothing in it; a failed tool's is reported already
            out.statuses.append(InputStatus(label, e.source, "absent", nothing_printed(e)))
    except _MemberChanged:
        _unparseable(out, e.source, label, "sha256 differs from the manifest's: the member changed "
                     "after collection", None)
    except InputError as exc:
        if e.source in sources and e.status == "ok":  # an empty output of a failed tool is already reported
            out.problems.append(InputProblem(e.source, "failed", exc.message, label))
            out.statuses.append(InputStatus(label, e.source, "failed", exc.message))
        elif e.source not in sources:
            _not_read(out, e.source, label)
    return None


def probe_failure(source: str, result) -> Optional[str]:
    """Why a probe's JSON says it could not collect its source (its `ok` false): the probe's error
    text; None for any other parsed input."""
    if getattr(result, "ok", True) is not False:
        return None
    from ..parsers import info

    if info(source).probe is None:
        return None
    return str(getattr(result, "error", None) or "the probe reports ok false and gives no error")


def _probe_failed(out: Gathered, item: ParsedInput) -> None:
    """A probe's JSON that says ok false, read as a loose file or under an "ok" manifest entry: its
    source could not be collected (SYS001, the probe's error as the reason), as a bundle's "failed"
    entry says. It stays parsed (a rule may read why, beside other sources), but its row is failed."""
    reason = probe_failure(item.source, item.result)
    if reason is None:
        return
    out.problems.append(InputProblem(item.source, "failed", reason, item.path))
    for i, st in enumerate(out.statuses):
        if st.path == item.path and st.source == item.source and st.status == "parsed":
            out.statuses[i] = InputStatus(st.path, st.source, "failed", reason)


def _not_read(out: Gathered, source: str, label: str) -> None:
    reason = f"the manifest names source {shown(source)!r}, which this topodiag does not read"
    out.statuses.append(InputStatus(label, source, "ignored", reason))


# what live/commands.py's reason for a tool killed at MAX_OUTPUT_BYTES ends with (tests/hostile holds both)
CUT_MARK = "killed and cut there"


class Incomplete(str):
    """What _parse_as gives back for an input whose parse the run's deadline stopped: its reason."""


def _incomplete(out: Gathered, source: str, label: str, reason: str, failed_already: bool) -> None:
    """An input not read to its end (the deadline): failed (SYS001), or, for a tool that failed
    already (cut at the output cap, timed out), an ignored row that says its output was not read."""
    if failed_already:
        out.statuses.append(InputStatus(label, source, "ignored", f"its partial output: {reason}"))
        return
    out.problems.append(InputProblem(source, "failed", reason, label))
    out.statuses.append(InputStatus(label, source, "failed", reason))


def _parse_as(source: str, opened, label: str, out: Gathered,
              listed: bool = True) -> "Optional[tuple[str, Optional[int]] | Incomplete]":
    """Parse an opened input as `source` and record it (in the report's inputs too, when `listed`);
    None on success, else (message, line_no) for the caller to report or pass over, or Incomplete
    when the run's deadline stopped the parse."""
    from ..parsers import ParseError, get
    from ..parsers.base import DeadlinePassed, check_deadline, lines_cut

    try:
        check_deadline()
        lines_cut(reset=True)
        result = parse_opened(get(source), opened)
    except DeadlinePassed as exc:  # the input is incomplete, not wrong: the caller says so
        return Incomplete(exc.message)
    except (ParseError, RecursionError) as exc:
        result = exc
    return _record(source, result, label, out, listed)


def _record(source: str, result, label: str, out: Gathered,
            listed: bool = True) -> Optional[tuple[str, Optional[int]]]:
    """Record what parsing `label` as `source` gave (a result, or the ParseError / RecursionError it
    raised); None on success, else (message, line_no)."""
    from ..parsers import ParseError

    if isinstance(result, ParseError):
        return result.message, result.line_no or None
    if isinstance(result, RecursionError):
        return "input nested too deeply", None
    from ..parsers.base import MAX_LINE_CHARS, lines_cut

    out.parsed.append(ParsedInput(source, label, result))
    cut = lines_cut(reset=True)
    if listed:
        out.statuses.append(InputStatus(label, source, "parsed", f"{cut} line(s) longer than {MAX_LINE_CHARS // 1024} KiB: "
                                        "read to there, the rest of each skipped" if cut else ""))
    return None


def _unparseable(out: Gathered, source: str, label: str, message: str, line_no: Optional[int],
                 report: bool = True) -> None:
    """Record a parse failure: a problem (SYS002) when `report`, else only an ignored-input row."""
    if report:
        out.problems.append(InputProblem(source, "unparseable", message, label, line_no))
    where = f"line {line_no}: {message}" if line_no else message
    out.statuses.append(InputStatus(label, source, "unparseable" if report else "ignored", where))


def _sources_of(head: str, source: Optional[str]) -> tuple[list[str], str]:
    """The sources a file is read as (the one given, else those detected), or none and why."""
    if not head.strip():
        return [], "no output in file (only blank lines or a provenance header)"
    if source:
        return [source], ""
    own = _own_output(head)  # topodiag's own JSON first: its text names the tools (skip reasons, fixes)
    if own:
        return [], own
    from ..parsers import detect_all

    sources = [name for name, _ in detect_all(head)]
    return sources, "" if sources else "not the output of any tool topodiag reads"


def _own_output(head: str) -> Optional[str]:
    """Why a file that is topodiag's own JSON (a report, a topology) is not an input of `check`."""
    text = head.lstrip()
    if not text.startswith(("{", "[")) or '"schema_version"' not in text:
        return None
    if '"topodiag"' in text and '"findings"' in text:
        return ("a topodiag report (check --format json), not a tool's output: compare reports of "
                "several nodes with `topodiag fleet REPORT...`; `check` reads the tools' outputs or a bundle")
    if '"nodes"' in text and '"edges"' in text:
        return ("a topodiag topology (show --format json), not a tool's output: `check` reads the "
                "tools' outputs or a bundle (`topodiag collect`)")
    return None


def _gather_bug_report(name: str, report, out: Gathered) -> None:
    """The sections of an nvidia-bug-report (a bug_report.Report, read as a stream) that a source
    reads, each as its own input with the file's line numbers (topodiag/load/bug_report.py); the
    report's uname line names the host. Raises InputError for a report refused as it is read; then
    nothing of it is kept."""
    from contextlib import closing

    from . import bug_report
    from ..parsers import ParseError, get

    host = bug_report.host_of(report.head)
    staged = Gathered()
    with closing(bug_report.read_sections(report, name)) as found:  # workers shut down on a refusal
        for sec in found:
            label = f"{name} [{sec.title}]"
            if sec.parsed is not None:  # the kernel log, read as it streamed by
                result = sec.parsed
            elif sec.text is None:
                _unparseable(staged, sec.source, label, sec.problem, sec.start_line)
                continue
            else:
                try:
                    result = parse_opened(get(sec.source), open_str(label, sec.text))  # the text itself, no copy
                except (ParseError, RecursionError) as exc:
                    result = exc
                except InputError as exc:  # a section of NUL bytes
                    result = ParseError(exc.message)
            error = _record(sec.source, bug_report.shift_lines(result, sec.offset), label, staged)
            if error is not None:
                _unparseable(staged, sec.source, label, *error)
                continue
            if sec.note:  # what the loader bounded of the result (bug_report.KEEP_WHOLE)
                last = staged.statuses[-1]
                staged.statuses[-1] = InputStatus(last.path, last.source, last.status,
                                                  "; ".join(filter(None, (last.reason, sec.note))))
            if host:
                staged.hosts.append((host, label))
    if host and out.host is None:
        out.host = host
    if not staged.statuses:
        reason = "an nvidia-bug-report with no section topodiag reads (kernel log, nvidia-smi, IB tools)"
        out.problems.append(InputProblem(UNKNOWN_SOURCE, "unparseable", reason, name))
        out.statuses.append(InputStatus(name, None, "unparseable", reason))
        return
    out.parsed += staged.parsed
    out.problems += staged.problems
    out.statuses += staged.statuses
    out.hosts += staged.hosts


def _gather_file(path: str, out: Gathered, source: Optional[str] = None) -> None:
    from ..parsers import blank_provenance_header, get
    from . import bug_report

    try:
        report = bug_report.read_gzip(path) if path != "-" else None
        if report is not None:
            try:
                _gather_bug_report(shown(path, PATH_SHOWN), report, out)
            finally:
                report.close()
            return
        opened = open_text(path)
        if bug_report.looks_like(blank_provenance_header(opened.head)):
            try:
                _gather_bug_report(opened.name, bug_report.from_opened(opened), out)
            finally:
                opened.close()
            return
    except InputError as exc:  # the name and message as shown: printable, bounded
        where, message = shown(exc.where, PATH_SHOWN), shown(exc.message, PATH_SHOWN)
        out.problems.append(InputProblem(UNKNOWN_SOURCE, "failed", message, where))
        out.statuses.append(InputStatus(where, None, "failed", message))
        return
    try:
        head = blank_provenance_header(opened.head)
        sources, reason = _sources_of(head, source)
        if not sources:
            out.problems.append(InputProblem(UNKNOWN_SOURCE, "unparseable", reason, opened.name))
            out.statuses.append(InputStatus(opened.name, None, "unparseable", reason))
            return
        before = len(out.parsed)
        results = parse_opened_all([get(source) for source in sources], opened)  # one pass for them all
        errors = {source: _record(source, result, opened.name, out) for source, result in zip(sources, results)}
        for item in out.parsed[before:]:
            _probe_failed(out, item)
        for item in out.parsed[-len(sources):]:
            named = getattr(item.result, "hostname", None) if item.path == opened.name else None
            if isinstance(named, str) and named:  # a probe's JSON says which host it read
                out.hosts.append((named, opened.name))
        failed = [(source, err) for source, err in errors.items() if err is not None]
        if len(failed) == len(sources):
            # No detected source reads the file: the best-scored one's error says why (the others'
            # would repeat it).
            source, (message, line_no) = failed[0]
            _unparseable(out, source, opened.name, message, line_no)
        else:  # another source read the file: these detections were near misses
            for source, (message, line_no) in failed:
                _unparseable(out, source, opened.name, message, line_no, report=False)
    finally:
        opened.close()
