"""Where a command's report goes and in which format: shared by every command that writes one.

- The format: `--format` when given, else $TOPODIAG_FORMAT when it names one of the command's
  formats (documented in the man page), else text. Never decided by whether stdout is a terminal:
  `topodiag check | less` and `> ticket.txt` give what a person reads.
- `--output FILE`: the report is written to a temporary file in FILE's directory, flushed, fsynced
  and renamed over FILE, whatever the verdict (a node with findings still publishes its metrics);
  on an error the temporary file is removed and FILE is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from typing import Iterator, Optional, Sequence, TextIO

ENV_FORMAT = "TOPODIAG_FORMAT"

OUTPUT_HELP = ("Write the report to FILE (atomically: a temporary file beside it, fsync, rename), "
               "whatever the verdict; default: standard output.")


def chosen_format(given: Optional[str], choices: Sequence[str], default: str = "text") -> str:
    """`given` (from --format), else $TOPODIAG_FORMAT when it is one of `choices`, else `default`."""
    if given:
        return given
    env = os.environ.get(ENV_FORMAT, "").strip().lower()
    return env if env in choices else default


@contextlib.contextmanager
def report_stream(path: Optional[str]) -> Iterator[TextIO]:
    """Standard output, or a temporary file beside `path` renamed over it when the block ends
    without an exception (a typer.Exit carrying the verdict counts as ending well)."""
    if not path or path == "-":
        yield sys.stdout
        return
    from ..errors import InputError

    target = os.path.abspath(path)
    directory = os.path.dirname(target) or "."
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InputError(_shown(path), f"cannot write the report: {exc.strerror or exc}") from None
    ok = False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            try:
                yield fh
            except BaseException as exc:  # typer.Exit / SystemExit with the verdict: still publish
                if not _is_verdict_exit(exc):
                    raise
                ok = True
                _commit(fh, tmp, target, path)
                raise
            ok = True
            _commit(fh, tmp, target, path)
    finally:
        if not ok or os.path.exists(tmp):
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _is_verdict_exit(exc: BaseException) -> bool:
    import typer

    return isinstance(exc, (SystemExit, typer.Exit))


def _commit(fh, tmp: str, target: str, path: str) -> None:
    """Flush and fsync the temporary file, keep FILE's mode where it existed, rename it over FILE."""
    from ..errors import InputError

    try:
        fh.flush()
        os.fsync(fh.fileno())
        try:
            mode = os.stat(target).st_mode & 0o7777
        except OSError:
            mode = 0o644 & ~_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        with contextlib.suppress(OSError):  # the rename itself survives a crash once its directory is synced
            dfd = os.open(os.path.dirname(target) or ".", os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
    except OSError as exc:
        raise InputError(_shown(path), f"cannot write the report: {exc.strerror or exc}") from None


def _shown(path: str) -> str:
    """The path as an error may print it: control characters escaped, bounded."""
    from ..render.sanitise import line

    return line(path, 300)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def terminal_width(default: int = 80) -> int:
    """The width text is laid out for: the terminal's, else $COLUMNS (40..1000), else `default`."""
    import shutil

    cols = os.environ.get("COLUMNS", "")
    if cols.isascii() and cols.isdigit() and 40 <= int(cols) <= 1000:
        return int(cols)
    if sys.stdout.isatty():
        return max(40, shutil.get_terminal_size((default, 24)).columns)
    return default


def command_line() -> str:
    """The command as typed, shell-quoted, the program as `topodiag` (argv as `main` saw it; called
    through click's test runner or the API: the command and the options given, rebuilt)."""
    import shlex

    from .app import _state

    argv = _state.get("argv")
    if argv is None:
        argv = _rebuilt()
    return " ".join(["topodiag"] + [shlex.quote(str(a)) for a in argv])


def _rebuilt() -> list:
    try:  # typer >= 0.16 carries its own click
        from typer._click.globals import get_current_context  # type: ignore[import-not-found]
    except ImportError:
        try:
            from click import get_current_context  # type: ignore[no-redef]
        except ImportError:
            return []

    ctx = get_current_context(silent=True)
    if ctx is None:
        return []
    out = ctx.command_path.split()[1:]
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        if value in (None, (), []) or value == param.default or getattr(param, "param_type_name", "") != "option":
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            v = getattr(v, "value", v)
            out += [param.opts[0]] if v is True else [param.opts[0], v]
    return out


class Folded:
    """A text stream whose lines longer than `width` are folded (wrapped at spaces, a hanging indent
    two columns deeper than the line's own, "- " bullets aligned), never cut; shorter lines, tables
    among them, pass as they are. For the plain-text reports (plan, compare) written without rich."""

    def __init__(self, stream: TextIO, width: Optional[int] = None) -> None:
        self._stream = stream
        self._width = width or terminal_width()
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._stream.write(fold_line(line, self._width) + "\n")
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._stream.write(fold_line(self._pending, self._width))
            self._pending = ""
        self._stream.flush()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def fold_line(line: str, width: int) -> str:
    """`line` as it is when it fits, else wrapped with a hanging indent (see Folded)."""
    import textwrap

    if len(line) <= width:
        return line
    lead = line[: len(line) - len(line.lstrip())]
    bullet = line.lstrip()[:2] in ("- ", "* ")
    rest = lead + ("  " if bullet else "    ")
    return textwrap.fill(line.strip(), width=width, initial_indent=lead, subsequent_indent=rest,
                         break_long_words=True, break_on_hyphens=False, drop_whitespace=True)
