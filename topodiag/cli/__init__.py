"""The `topodiag` command: the typer app (app.py), one module per command, and `main`, the console
script, which turns what escapes a command into a one-line error and an exit code (errors.py)."""

from __future__ import annotations

import sys

from ..errors import TopodiagError
from ..exit_codes import Outcome, exit_code, signalled
from .app import _state, app  # noqa: F401  (`topodiag.cli:app` for tests and typer)

# The commands' modules load when their command runs (app.COMMANDS, app._LazyGroup): `topodiag check`
# imports cli/check.py and what it uses, not the nine other commands' modules.


class _PipeGuard:
    """stdout that a closed pipe does not break (`topodiag check | head`): once the reader is gone,
    the rest of the output goes to /dev/null and the command still exits with its own code (the
    verdict of `check`), where click would exit 1."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def _closed(self) -> None:
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())  # the interpreter's last flush must not fail either
        except (OSError, ValueError):
            pass
        finally:
            os.close(devnull)

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._closed()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._closed()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def main() -> None:
    """Console-script entry point: run the app, turn stray exceptions into exit code 4."""
    sys.stdout = _PipeGuard(sys.stdout)
    _state["argv"] = list(sys.argv[1:])  # the reports' `command`
    try:
        app()
    except KeyboardInterrupt:
        print("topodiag: interrupted", file=sys.stderr)
        import signal

        sys.exit(signalled(signal.SIGINT))
    except BrokenPipeError:
        sys.exit(exit_code(Outcome.OK))
    except TopodiagError as exc:  # a command not wrapped by `guarded`: the same one line and code
        from .errors import one_line, outcome_of_error

        print(f"topodiag: error: {one_line(str(exc))}", file=sys.stderr)
        sys.exit(exit_code(outcome_of_error(exc)))
    except Exception as exc:  # the exception policy: nothing but a one-liner unless --debug
        if _state["debug"] or "--debug" in sys.argv:
            raise
        print(f"topodiag: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
              file=sys.stderr)
        sys.exit(exit_code(Outcome.INTERNAL))
