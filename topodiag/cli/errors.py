"""Where errors become exit codes: the one mapping from topodiag's typed errors
(topodiag/errors.py) to the exit-code table (topodiag/exit_codes.py), and the one-line message.

The library raises; only the commands exit. `guarded` wraps a command so a TopodiagError prints
`topodiag: error: <one line>` on stderr and exits with its code; anything else is left to `main`,
which reports it as an internal error (exit 4, traceback with --debug).
"""

from __future__ import annotations

import functools
import sys
from typing import Callable, NoReturn

import typer

from ..errors import CatalogError, InputError, TopodiagError, UsageError
from ..exit_codes import ExitCode

# Most specific first: the first class an error is an instance of decides.
EXIT_FOR: tuple[tuple[type, ExitCode], ...] = (
    (UsageError, ExitCode.USAGE),
    (InputError, ExitCode.INCOMPLETE),
    (CatalogError, ExitCode.INTERNAL),
)


def exit_code_of(exc: TopodiagError) -> ExitCode:
    """The exit code of one of topodiag's errors (INTERNAL for one the table does not name)."""
    return next((code for cls, code in EXIT_FOR if isinstance(exc, cls)), ExitCode.INTERNAL)


def one_line(text: str) -> str:
    """Error text on one line (a CatalogError lists one problem a line: joined with '; ')."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def fail(message: str, code: ExitCode) -> NoReturn:
    """Print `topodiag: error: MESSAGE` on stderr and exit with `code`."""
    print(f"topodiag: error: {one_line(message)}", file=sys.stderr)
    raise typer.Exit(int(code))


def guarded(command: Callable) -> Callable:
    """A command whose TopodiagErrors become one line and their exit code."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except TopodiagError as exc:
            fail(str(exc), exit_code_of(exc))

    return run
