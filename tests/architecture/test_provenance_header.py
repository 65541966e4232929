"""The `#@` provenance header of a fixture is read in one place: parsers/base.py (HEADER_PREFIX,
blank_provenance_header), and in bytes by the loader's one-pass reader. The loader and detection blank
it before a parser's sniff or parse sees the text, so no other module's code names it. Docstrings and
comments may speak of it; string and bytes literals in code may not.

KNOWN lists the modules that still skip the header themselves: it may only shrink."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "topodiag"
MARK = "#@"

OWNERS = {"parsers/base.py", "scan/onepass.py"}
KNOWN: set[str] = set()


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def naming_modules() -> set[str]:
    """The modules whose code (not docstrings, not comments) holds a literal with `#@` in it."""
    found = set()
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and id(node) not in docs:
                value = node.value
                if (isinstance(value, str) and MARK in value) or (isinstance(value, bytes) and MARK.encode() in value):
                    found.add(path.relative_to(PKG).as_posix())
                    break
    return found


def test_only_base_and_the_one_pass_reader_name_the_header() -> None:
    extra = naming_modules() - OWNERS - KNOWN
    assert not extra, f"these modules skip the `#@` header themselves (parsers.base does it for them): {sorted(extra)}"


def test_the_known_list_only_shrinks() -> None:
    stale = KNOWN - naming_modules()
    assert not stale, f"no longer name the header: remove from KNOWN {sorted(stale)}"


def test_the_owners_still_read_it() -> None:
    assert OWNERS <= naming_modules()
