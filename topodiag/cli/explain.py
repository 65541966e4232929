"""`topodiag explain CODE`: one rule in full: title, severity, why, fix, how to check, params, references."""

from __future__ import annotations

import difflib
import sys

import typer

from ..exit_codes import ExitCode
from .app import app


@app.command("explain")
def explain_command(
    code: str = typer.Argument(..., metavar="CODE", help="A rule code (TOPO001) or slug (gpu-link-asymmetry)."),
) -> None:
    """Explain one rule: what it checks, why it matters, how to fix and check it by hand."""
    from ..engine import load_catalog

    catalog = load_catalog()
    rule = catalog.find(code.strip())
    if rule is None:
        close = difflib.get_close_matches(code.strip().upper(), catalog.codes(), n=3, cutoff=0.5) or \
            difflib.get_close_matches(code.strip().lower(), [r.slug for r in catalog], n=3, cutoff=0.5)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        print(f"topodiag: error: no rule {code!r}; {hint}known codes: {', '.join(catalog.codes())} "
              "(`topodiag rules` lists them)", file=sys.stderr)
        raise typer.Exit(ExitCode.USAGE)
    out = [f"{rule.code} {rule.slug}: {rule.title}",
           f"severity: {rule.severity}" + (" (reported by topodiag itself)" if rule.builtin else "")]
    if rule.tags:
        out.append(f"tags: {', '.join(rule.tags)}")
    if rule.requires:
        out.append(f"needs: {', '.join(rule.requires)}")
    out += ["", "why:", _indent(rule.why), "", "fix:", _indent(rule.fix)]
    if rule.how_to_check:
        out += ["", "how to check:", _indent(rule.how_to_check)]
    if rule.params:
        out += ["", "params (override in --config: [rules.%s.params]):" % rule.code]
        out += [f"  {k} = {v!r}" for k, v in rule.params.items()]
    if rule.references:
        out += ["", "references:"] + [f"  {r}" for r in rule.references]
    sys.stdout.write("\n".join(out) + "\n")


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" if line.strip() else "" for line in text.strip().splitlines())
