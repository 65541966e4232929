"""`topodiag rules [--tag T] [--family F]`: list the checklist (code, severity, slug, title)."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from ..exit_codes import ExitCode
from .app import app


@app.command("rules")
def rules_command(
    tag: Optional[str] = typer.Option(None, "--tag", "-t", help="Only rules with this tag (e.g. prolog)."),
    family: Optional[str] = typer.Option(None, "--family", help="Only this family (TOPO, NVL, IB, NCCL, PERF, SYS)."),
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
            raise typer.Exit(ExitCode.USAGE)
        rules = [r for r in rules if r.family == fam]
    if tag:
        rules = [r for r in rules if tag.strip().lower() in r.tags]
    if not rules:
        print("topodiag: no rule matches", file=sys.stderr)
        return
    width = max(len(r.slug) for r in rules)
    for r in rules:
        tags = f"  [{', '.join(r.tags)}]" if r.tags else ""
        sys.stdout.write(f"{r.code:<8} {str(r.severity):<8} {r.slug:<{width}}  {r.title}{tags}\n")
