"""`topodiag parse FILE`: read one tool output and print what topodiag understood of it."""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import Optional

import typer

from ..exit_codes import ExitCode
from .app import app


class OutputFormat(str, Enum):
    json = "json"
    text = "text"


def _source_names() -> list[str]:
    from ..parsers import names

    return names()


def _check_source(value: Optional[str]) -> Optional[str]:
    if value is not None and value not in _source_names():
        raise typer.BadParameter(f"unknown source {value!r}; one of: {', '.join(_source_names())}")
    return value


def _fail(where: str, message: str, code: ExitCode = ExitCode.INCOMPLETE) -> None:
    print(f"topodiag: error: {where}: {message}", file=sys.stderr)
    raise typer.Exit(code)


@app.command("parse")
def parse_command(
    file: str = typer.Argument(..., metavar="FILE", help="A tool's saved output, or - for stdin."),
    source: Optional[str] = typer.Option(
        None, "--source", "-s", callback=_check_source,
        help="Which tool produced FILE (default: detected from its content): nvidia_smi_topo_m, nvidia_smi_topo_p2p, nvidia_smi_nvlink_s, nvidia_smi_nvlink_e, nvidia_smi_nvlink_c, nvidia_smi_nvlink_info, nvml, ibstat, ibv_devinfo, ibstatus, show_gids, sysfs_infiniband, iblinkinfo, ibnetdiscover, nccl_debug, nccl_tests, nccl_topo_xml.",
    ),
    output_format: Optional[OutputFormat] = typer.Option(
        None, "--format", "-f", help="json (default when stdout is not a terminal) or text."
    ),
) -> None:
    """Parse one tool output (nvidia-smi topo -m / -p2p / nvlink -s / -e / -c / -info, ibstat,
    ibv_devinfo, ibstatus, show_gids, iblinkinfo, ibnetdiscover, NCCL_DEBUG=INFO log, nccl-tests
    output, NCCL topology XML); print it as JSON or text.

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
    fmt = output_format or (OutputFormat.text if sys.stdout.isatty() else OutputFormat.json)
    if fmt is OutputFormat.json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        from ..render.parsed_text import render

        sys.stdout.write(render(data))
