"""`topodiag explain CODE`: one rule in full: title, severity, why, fix, how to check, params, references."""

from __future__ import annotations

import difflib
import sys

import typer

from ..exit_codes import Outcome, exit_code
from . import complete
from .app import app


@app.command("explain")
def explain_command(
    code: str = typer.Argument(..., metavar="CODE", autocompletion=complete.rules,
                               help="A rule code (TOPO001) or slug (gpu-link-asymmetry)."),
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
        raise typer.Exit(exit_code(Outcome.USAGE))
    import textwrap

    def fill(text: str) -> str:  # every line re-flowed to the terminal, a hanging indent for the rest
        return textwrap.fill(text, width=_width(), subsequent_indent="  ", break_long_words=False,
                             break_on_hyphens=False)

    out = [fill(f"{rule.code} {rule.slug}: {rule.title}"),
           f"severity: {rule.severity}" + (" (reported by topodiag itself)" if rule.builtin else "")]
    if rule.tags:
        out.append(fill(f"tags: {', '.join(rule.tags)}"))
    if rule.requires:
        from ..engine.runner import describe_requires

        out.append(fill(f"needs: {'; '.join(describe_requires(g) for g in rule.requires)}"))
    by_variant = "".join(f"; {v}: {a}" for v, a in rule.actions.items())
    out.append(fill(f"action: {rule.action}{by_variant}"))
    out += ["", "why:", _indent(rule.why), "", "fix:", _indent(rule.fix)]
    if rule.how_to_check:
        out += ["", "how to check:", _indent(rule.how_to_check)]
    if rule.params:
        out += ["", "params (override in --config: [rules.%s.params]):" % rule.code]
        out += [f"  {k} = {v!r}" for k, v in rule.params.items()]
    if rule.references:
        out += ["", "references:"] + [textwrap.fill(r, width=_width(), initial_indent="  ", subsequent_indent="    ",
                                                    break_long_words=False, break_on_hyphens=False)
                                      for r in rule.references]
    sys.stdout.write("\n".join(out) + "\n")


def _width() -> int:
    """The terminal's width (or $COLUMNS), at least 40; 80 when neither says (a pager, a ticket)."""
    from .output import terminal_width

    return terminal_width()


def _indent(text: str) -> str:
    """The rule's prose re-flowed to the terminal with a two-space indent: paragraphs (blank-line
    separated) kept, words never broken (the TOML text is wrapped at ~100 columns for the file)."""
    import textwrap

    paragraphs = [" ".join(p.split()) for p in text.strip().split("\n\n") if p.strip()]
    return "\n\n".join(textwrap.fill(p, width=_width(), initial_indent="  ", subsequent_indent="  ",
                                      break_long_words=False, break_on_hyphens=False) for p in paragraphs)
