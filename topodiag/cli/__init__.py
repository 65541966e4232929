"""The `topodiag` command. The only place where exceptions become exit codes."""

from __future__ import annotations

import sys

import typer

from ..exit_codes import ExitCode

app = typer.Typer(
    name="topodiag",
    help="Diagnose the interconnect of GPU nodes: NVLink, PCIe, InfiniBand/RoCE and NCCL.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"topodiag {__version__}")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for internal errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Diagnose the interconnect of GPU nodes: NVLink, PCIe, InfiniBand/RoCE and NCCL."""
    _state["debug"] = debug


from . import parse as _parse  # noqa: E402,F401  (registers the command)
from . import check as _check  # noqa: E402,F401
from . import rules as _rules  # noqa: E402,F401
from . import explain as _explain  # noqa: E402,F401
from . import show as _show  # noqa: E402,F401


def main() -> None:
    """Console-script entry point: run the app, turn stray exceptions into exit code 4."""
    try:
        app()
    except KeyboardInterrupt:
        print("topodiag: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(ExitCode.OK)
    except Exception as exc:  # the exception policy: nothing but a one-liner unless --debug
        if _state["debug"] or "--debug" in sys.argv:
            raise
        print(f"topodiag: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
              file=sys.stderr)
        sys.exit(ExitCode.INTERNAL)
