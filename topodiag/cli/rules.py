"""`topodiag rules [--tag T] [--family F]`: list the checklist (code, severity, slug, title)."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from ..exit_codes import Outcome, exit_code
from . import complete
from .app import app


@app.command("rules")
def rules_command(
    tag: Optional[str] = typer.Option(None, "--tag", "-t", autocompletion=complete.tags, help="Only rules with this tag (e.g. prolog)."),
    family: Optional[str] = typer.Option(None, "--family", autocompletion=complete.families, help="Only this family (TOPO, NVL, IB, NCCL, PERF, SYS)."),
) -> None:
    """List the rules of the checklist: code, default severity, slug, title, tags."""
    from ..engine import load_catalog

    catalog = load_catalog(examples=False)
    rules = list(catalog)
    if family:
        fam = family.strip().upper()
        if fam not in catalog.families():
            print(f"topodiag: error: --family: unknown family {family!r}; one of: {', '.join(catalog.families())}",
                  file=sys.stderr)
            raise typer.Exit(exit_code(Outcome.USAGE))
        rules = [r for r in rules if r.family == fam]
    if tag:
        rules = [r for r in rules if tag.strip().lower() in r.tags]
    if not rules:
        print("topodiag: no rule matches", file=sys.stderr)
        return
    import textwrap

    from .output import terminal_width

    width = terminal_width()
    for r in rules:  # the code first on its line; the slug, title and tags wrapped under it
        tags = f" [{', '.join(r.tags)}]" if r.tags else ""
        sys.stdout.write(textwrap.fill(f"{r.code:<8} {str(r.severity):<8} {r.slug}: {r.title}{tags}", width=width,
                                       subsequent_indent=" " * 18, break_long_words=True,
                                       break_on_hyphens=False) + "\n")
