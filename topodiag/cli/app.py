"""The typer application every command registers on, and the global options (--debug, --version)."""

from __future__ import annotations

import importlib

import typer
from typer.core import TyperGroup

from ..exit_codes import Outcome, exit_code

# Each command's module, in the order `topodiag -h` lists them. A module registers its command on
# `app` when imported; the group imports it only when its command is asked for (or listed), so a run of
# one command pays for one module, not ten.
COMMANDS = ("parse", "check", "rules", "explain", "show", "collect", "prolog", "fleet", "plan", "compare")


class _LazyGroup(TyperGroup):
    """The click group typer builds for `app`, loading a command's module on first use."""

    def _load(self, names) -> None:
        from typer.main import get_command_from_info

        for name in names:
            if name not in self.commands:
                importlib.import_module(f"{__package__}.{name}")
        for info in app.registered_commands:
            if info.name not in self.commands:
                self.commands[info.name] = get_command_from_info(
                    info, pretty_exceptions_short=app.pretty_exceptions_short, rich_markup_mode=app.rich_markup_mode)

    def get_command(self, ctx, cmd_name: str):
        if cmd_name in COMMANDS:
            self._load((cmd_name,))
        return self.commands.get(cmd_name)

    def list_commands(self, ctx) -> list:
        self._load(COMMANDS)
        return [n for n in COMMANDS if n in self.commands] + [n for n in self.commands if n not in COMMANDS]


def load_all_commands() -> None:
    """Import every command's module (each registers its command on `app`)."""
    for name in COMMANDS:
        importlib.import_module(f"{__package__}.{name}")


app = typer.Typer(
    cls=_LazyGroup,
    name="topodiag",
    help="Diagnose the interconnect of GPU nodes: NVLink, PCIe, InfiniBand/RoCE and NCCL.",
    no_args_is_help=True,
    add_completion=True,  # --show-completion SHELL / --install-completion SHELL
    pretty_exceptions_enable=False,
    # plain help text: wraps to the terminal, and keeps what rich markup would eat ("[[hosts]]")
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _usage_error_line(self, file=None) -> None:
    """A usage error as one line on stderr, with where to look ("topodiag: error: No such option:
    --bogus (try 'topodiag check -h')"); its exit code stays click's 2 (ExitCode.USAGE)."""
    import sys

    ctx = getattr(self, "ctx", None)
    hint = f" (try '{ctx.command_path} -h')" if ctx is not None else ""
    message = " ".join(self.format_message().split())
    print(f"topodiag: error: {message}{hint}", file=file or sys.stderr)


def _one_line_usage_errors() -> None:
    try:  # typer >= 0.16 carries its own click
        from typer._click import exceptions as click_exceptions  # type: ignore[import-not-found]
    except ImportError:  # older typer: click itself
        from click import exceptions as click_exceptions  # type: ignore[no-redef]
    click_exceptions.UsageError.show = _usage_error_line  # type: ignore[method-assign]


_one_line_usage_errors()

_state = {"debug": False}


def _version(value: bool) -> None:
    if value:
        from .. import __version__
        from ..scan import lines

        typer.echo(f"topodiag {__version__}")
        typer.echo(f"line scanner: {lines.which()}")  # the NCCL log readers'
        raise typer.Exit(exit_code(Outcome.OK))


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for internal errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Diagnose the interconnect of GPU nodes: NVLink, PCIe, InfiniBand/RoCE and NCCL."""
    _state["debug"] = debug
