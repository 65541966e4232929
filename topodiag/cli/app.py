"""The typer application every command registers on, and the global options (--debug, --version)."""

from __future__ import annotations

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
