"""Gathering `--from PATH...`: files and directories of saved outputs -> parsed inputs and problems.

A file is parsed by every source `parsers.detect_all` names (an nccl-tests run with NCCL_DEBUG=INFO
is both an nccl_tests output and an NCCL log); when at least one parses, the others' errors are
noise of detection and are only noted. A directory stands for each regular file in it (sorted;
`*.expected.json` and dotfiles skipped). A file nobody recognises, or that cannot be read, becomes
an engine InputProblem (SYS001/SYS002 finding), never a crash. Bundles (.tar.gz) arrive with
`topodiag collect` (issue 4): for now they raise BundleNotSupported.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Optional

from ..engine.runner import InputProblem
from ..model.builder import ParsedInput
from .user_file import InputError, open_text, parse_opened

UNKNOWN_SOURCE = "unknown"


class BundleNotSupported(Exception):
    """A bundle path given before bundle reading exists (exit 3 in the CLI)."""

    def __init__(self, path: str):
        super().__init__(f"{path}: bundles arrive with `topodiag collect` (issue 4); "
                         "for now extract it and pass the directory or its files to --from")
        self.path = path


@dataclass(frozen=True)
class InputStatus:
    """One row of the report's `inputs`: which file, read as which source, and how it went."""

    path: str
    source: Optional[str]
    status: str  # parsed | unparseable | failed | ignored
    reason: str = ""

    def to_dict(self) -> dict:
        return {"path": self.path, "source": self.source, "status": self.status, "reason": self.reason}


@dataclass
class Gathered:
    parsed: list[ParsedInput] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)
    statuses: list[InputStatus] = field(default_factory=list)

    def engine_inputs(self) -> dict:
        """source name -> parse result (the first file of each source; all of them go to the model)."""
        out: dict = {}
        for item in self.parsed:
            out.setdefault(item.source, item.result)
        return out


def is_bundle(path: str) -> bool:
    low = path.lower()
    return low.endswith((".tar.gz", ".tgz", ".tar"))


def expand(paths: Iterable[str]) -> Iterator[str]:
    """The files the paths stand for, in order (directories: their regular files, sorted)."""
    for path in paths:
        if is_bundle(path):
            raise BundleNotSupported(path)
        try:
            st = os.stat(path)
        except OSError:
            yield path  # open_text says what is wrong with it
            continue
        if not stat.S_ISDIR(st.st_mode):
            yield path
            continue
        for name in sorted(os.listdir(path)):
            if name.startswith(".") or name.endswith(".expected.json"):
                continue
            full = os.path.join(path, name)
            try:
                if stat.S_ISREG(os.stat(full).st_mode):
                    yield full
            except OSError:
                yield full


def gather(paths: Iterable[str]) -> Gathered:
    """Parse every file the paths stand for; raises only BundleNotSupported."""
    out = Gathered()
    for path in expand(paths):
        _gather_file(path, out)
    return out


def _gather_file(path: str, out: Gathered) -> None:
    from ..parsers import ParseError, blank_provenance_header, detect_all, get

    try:
        opened = open_text(path)
    except InputError as exc:
        out.problems.append(InputProblem(UNKNOWN_SOURCE, "failed", exc.message, exc.where))
        out.statuses.append(InputStatus(exc.where, None, "failed", exc.message))
        return
    try:
        head = blank_provenance_header(opened.head)
        sources = [name for name, _ in detect_all(head)] if head.strip() else []
        if not sources:
            reason = ("no output in file (only blank lines or a provenance header)" if not head.strip()
                      else "not the output of any tool topodiag reads")
            out.problems.append(InputProblem(UNKNOWN_SOURCE, "unparseable", reason, opened.name))
            out.statuses.append(InputStatus(opened.name, None, "unparseable", reason))
            return
        errors: list[tuple[str, str, Optional[int]]] = []
        ok = False
        for source in sources:
            parser = get(source)
            try:
                result = parse_opened(parser, opened)
            except ParseError as exc:
                errors.append((source, exc.message, exc.line_no or None))
                continue
            except RecursionError:
                errors.append((source, "input nested too deeply", None))
                continue
            ok = True
            first = next((p.path for p in out.parsed if p.source == source), None)
            note = (f"{source} was also read from {first}: rules that read {source} itself use that one; "
                    "the model merges both") if first else ""
            out.parsed.append(ParsedInput(source, opened.name, result))
            out.statuses.append(InputStatus(opened.name, source, "parsed", note))
        for source, message, line_no in errors:
            where = f"line {line_no}: {message}" if line_no else message
            if ok:  # another source read the file: this detection was a near miss
                out.statuses.append(InputStatus(opened.name, source, "ignored", where))
            else:
                out.problems.append(InputProblem(source, "unparseable", message, opened.name, line_no))
                out.statuses.append(InputStatus(opened.name, source, "unparseable", where))
                break  # the best-scored source's error says it; the rest would repeat it
    finally:
        opened.close()
