"""The shells (fleet/, plan/, compare/, actions/), the pipeline and the commands use other packages
through their public names only: no `from ..checks.perf import _x`, no `perf._x(...)`, no private
module (`checks._design`) of another package. What they need has a public name there."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "topodiag"
USERS = ("fleet", "plan", "compare", "actions", "pipeline", "cli")


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    package = list(rel.parts[:-1]) if rel.parts[-1] != "__init__" else list(rel.parts[:-1])
    if not node.level:
        return node.module or ""
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _private_uses(path: Path) -> list[str]:
    me = path.relative_to(PKG).parts[0]
    tree = ast.parse(path.read_text(), str(path))
    imported: set[str] = set()  # local names bound to another package's modules or names
    bad = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        parts = _absolute(path, node).split(".")
        if parts[0] != "topodiag" or len(parts) < 2 or parts[1] == me:
            continue
        if any(p.startswith("_") and not p.startswith("__") for p in parts[1:]):
            bad.append(f"line {node.lineno}: a private module: {'.'.join(parts[1:])}")
        for alias in node.names:
            if alias.name.startswith("_") and not alias.name.startswith("__"):
                bad.append(f"line {node.lineno}: {alias.name} from {'.'.join(parts[1:])}")
            imported.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            bad.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return bad


def _modules() -> list[Path]:
    return sorted(p for top in USERS for p in (PKG / top).rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_no_private_name_of_another_package(path: Path) -> None:
    bad = _private_uses(path)
    assert not bad, f"{path.relative_to(PKG)} reaches into private names:\n  " + "\n  ".join(bad)


def test_the_test_sees_a_private_name(tmp_path) -> None:
    fake = PKG / "plan" / "_probe_for_the_test.py"
    try:
        fake.write_text("from ..checks import perf\nfrom ..checks._design import hints_of\n"
                        "def f():\n    return perf._busbw({})\n")
        assert _private_uses(fake) == ["line 2: a private module: checks._design", "line 4: perf._busbw"]
    finally:
        fake.unlink()
