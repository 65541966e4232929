"""Where errors become exit codes: the one mapping from topodiag's typed errors
(topodiag/errors.py) to an Outcome, whose code `topodiag.exit_codes.exit_code` gives, and the
one-line message.

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
from ..exit_codes import ExitCode, Outcome, exit_code

# Most specific first: the first class an error is an instance of decides.
OUTCOME_FOR: tuple[tuple[type, Outcome], ...] = (
    (UsageError, Outcome.USAGE),
    (InputError, Outcome.INPUT_ERROR),
    (CatalogError, Outcome.INTERNAL),
)


def outcome_of_error(exc: TopodiagError) -> Outcome:
    """The Outcome one of topodiag's errors stands for (INTERNAL for one the table does not name)."""
    return next((outcome for cls, outcome in OUTCOME_FOR if isinstance(exc, cls)), Outcome.INTERNAL)


def one_line(text: str) -> str:
    """Error text on one line (a CatalogError lists one problem a line: joined with '; ')."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def fail(message: str, outcome: "Outcome | ExitCode") -> NoReturn:
    """Print `topodiag: error: MESSAGE` on stderr and exit with the code of `outcome`."""
    print(f"topodiag: error: {one_line(message)}", file=sys.stderr)
    raise typer.Exit(exit_code(outcome))


def guarded(command: Callable) -> Callable:
    """A command whose TopodiagErrors become one line and their exit code."""

    @functools.wraps(command)
    def run(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except TopodiagError as exc:
            fail(str(exc), outcome_of_error(exc))

    return run
