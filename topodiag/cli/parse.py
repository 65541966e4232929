"""`topodiag parse FILE`: read one tool output and print what topodiag understood of it."""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import Optional

import typer

from ..exit_codes import Outcome, exit_code
from . import complete
from .app import app
from .output import OUTPUT_HELP, chosen_format, report_stream


class OutputFormat(str, Enum):
    json = "json"
    text = "text"


def _source_names() -> list[str]:
    from ..parsers import names

    return names()


def _list_sources(value: bool) -> None:
    """`parse --list`: every source, its tool, how live collection gets it, and what it is."""
    if not value:
        return
    from ..parsers import infos

    import textwrap

    from .output import terminal_width

    width = terminal_width()

    def fill(text: str, first: str = "", rest: str = "    ") -> str:
        return textwrap.fill(text, width=width, initial_indent=first, subsequent_indent=rest,
                             break_long_words=True, break_on_hyphens=False) + "\n"

    for i in infos():  # one block a source, folded to the width (80 columns off a terminal)
        live = " ".join(i.argv) if i.argv else (f"probe {i.probe}" if i.probe else "-")
        sys.stdout.write(fill(f"{i.source}: {i.tool or '-'} (prolog-safe: {'yes' if i.prolog_safe else 'no'})"))
        sys.stdout.write(fill(f"live: {live}", "    ", "      "))
        sys.stdout.write(fill(i.description, "    ", "    "))
    raise typer.Exit(exit_code(Outcome.OK))


def _check_source(value: Optional[str]) -> Optional[str]:
    if value is not None and value not in _source_names():
        raise typer.BadParameter(f"unknown source {value!r}; one of: {', '.join(_source_names())}")
    return value


def _fail(where: str, message: str, outcome: Outcome = Outcome.INPUT_ERROR) -> None:
    print(f"topodiag: error: {where}: {message}", file=sys.stderr)
    raise typer.Exit(exit_code(outcome))


@app.command("parse")
def parse_command(
    file: str = typer.Argument(..., metavar="FILE", help="A tool's saved output, or - for stdin."),
    source: Optional[str] = typer.Option(
        None, "--source", "-s", callback=_check_source, autocompletion=complete.sources,
        help=f"Which tool produced FILE (default: detected from its content): {', '.join(_source_names())}.",
    ),
    output_format: Optional[OutputFormat] = typer.Option(
        None, "--format", "-f", help="text (the default; $TOPODIAG_FORMAT changes it) or json."
    ),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help=OUTPUT_HELP),
    list_sources: bool = typer.Option(
        False, "--list", callback=_list_sources, is_eager=True,
        help="Print every source (its tool, live command or probe, prolog-safe, description) and exit.",
    ),
) -> None:
    """Parse one tool output (--list names the sources and their tools); print it as JSON or text.

    Exit 0 when it parsed, 3 when FILE cannot be read or is not that tool's output.
    """
    from ..parsers import ParseError, blank_provenance_header, detect, get, names, to_jsonable
    from ..errors import InputError
    from ..load.files import open_text, parse_opened

    try:
        opened = open_text(file)
    except InputError as exc:
        _fail(exc.where, exc.message)
    try:
        head = blank_provenance_header(opened.head)
        if not head.strip():
            _fail(opened.name, "no output in file (only blank lines or a provenance header)")
        chosen = source or detect(head)
        if chosen is None:
            _fail(opened.name, "not the output of any tool topodiag reads; pass --source "
                  f"({', '.join(names())}) if you know which tool wrote it")
        parser = get(chosen)
        try:
            result = parse_opened(parser, opened)
        except ParseError as exc:
            where = f"{opened.name}:{exc.line_no}" if exc.line_no else opened.name
            hint = "" if source else f" (detected as {chosen}; pass --source to choose another)"
            _fail(where, f"{exc.message}{hint}")
        except RecursionError:
            _fail(opened.name, f"input nested too deeply to parse as {chosen}")
    finally:
        opened.close()

    data = to_jsonable(result)
    fmt = chosen_format(output_format.value if output_format else None, [f.value for f in OutputFormat])
    from ..errors import InputError as _InputError

    try:
        with report_stream(output) as stream:
            if fmt == "json":
                stream.write(json.dumps(data, indent=2) + "\n")
            else:
                from ..render.parsed_text import render

                stream.write(render(data))
    except _InputError as exc:
        _fail(exc.where, exc.message)
