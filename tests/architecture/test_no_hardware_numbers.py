"""No number about hardware outside topodiag/knowledge/ (issue 27): the checks read bandwidths, link
counts, rates and efficiencies from knowledge, so one fact cannot be right in one rule and wrong in the
next. Three ways a hardware table could creep back into topodiag/checks/ are refused:

1. a module-level name about hardware (GBPS, GBYTE, GBIT, RATE, NVLINK, PCIE, BANDWIDTH, EFFICIENCY, LINKS)
   bound to a number or a container of numbers written in the module;
2. a dict literal of three or more entries whose values are numbers of 10 or more (a bandwidth/rate table);
3. a string in code (not a docstring or a comment) that writes a figure in GB/s or Gb/s ("64 GB/s").
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "topodiag"
CHECKS = sorted((PKG / "checks").glob("*.py"))
HARDWARE_WORDS = {"RATE", "RATES", "NVLINK", "NVLINKS", "PCIE", "BANDWIDTH", "EFFICIENCY", "LINKS", "SPEED"}
HARDWARE_UNITS = re.compile(r"GBPS|GBYTE|GBIT", re.I)


def _hardware_name(name: str) -> bool:
    """A name about hardware: a unit in it (NVLINK_GBPS) or one of its _-separated words (HCA_RATES)."""
    return bool(HARDWARE_UNITS.search(name)) or bool(HARDWARE_WORDS & set(name.upper().strip("_").split("_")))
FIGURE = re.compile(r"\d+(?:\.\d+)?\s*G[Bb]/s")


def _numbers(node: ast.AST) -> list[float]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, (int, float))
            and not isinstance(n.value, bool)]


def _docstrings(tree: ast.Module) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                ids.add(id(first.value))
    return ids


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    bad = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        value = getattr(node, "value", None)
        if value is not None and any(_hardware_name(n) for n in names) and _numbers(value):
            bad.append(f"line {node.lineno}: {names[0]} is a hardware number written here (read it from knowledge)")
    docs = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and len(node.keys) >= 3:
            big = [v for v in node.values if any(x >= 10 for x in _numbers(v))]
            if len(big) >= 3:
                bad.append(f"line {node.lineno}: a table of numbers (move it to topodiag/knowledge/)")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                and FIGURE.search(node.value):
            bad.append(f"line {node.lineno}: a figure in GB/s or Gb/s written in code: {FIGURE.search(node.value)[0]!r}")
    return bad


@pytest.mark.parametrize("path", CHECKS, ids=lambda p: p.name)
def test_no_hardware_table_in_checks(path: Path) -> None:
    bad = _violations(path)
    assert not bad, f"{path.relative_to(PKG)}:\n  " + "\n  ".join(bad)


def test_the_guard_would_have_caught_the_tables_issue_27_moved(tmp_path: Path) -> None:
    """The tables checks/ held before issue 27 (HCA models with their top rates, legacy rate names, the
    busbw efficiency and plateau, the unknown-model NVLink and PCIe defaults), as they were written."""
    tree = "\n".join([
        'HCA_MODELS: dict = {"MT4099": ("ConnectX-3", 56.0), "MT4123": ("ConnectX-6", 200.0), "MT4129": ("ConnectX-7", 400.0)}',
        '_LEGACY_RATE_NAMES = {10.0: "SDR", 20.0: "DDR", 40.0: "QDR/FDR10", 56.0: "FDR"}',
        "PLATEAU_GBPS = 10.0", "NVLINK_RING_EFFICIENCY = 0.77", "UNKNOWN_PER_LINK_GBYTE_S = 25.0", "UNKNOWN_PCIE_GEN = 5"])
    sample = tmp_path / "old_checks.py"
    sample.write_text(tree + "\n")
    assert len(_violations(sample)) == 6, _violations(sample)


def test_the_guard_catches_what_it_refuses(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('"""Doc: 64 GB/s is fine in a docstring."""\n'
                      'NVLINK_GBPS = 25.0\n'
                      'HCA = {"MT4123": 200.0, "MT4129": 400.0, "MT4131": 800.0}\n'
                      'def f():\n    return "PCIe Gen4 x16 is 32 GB/s"\n')
    bad = _violations(sample)
    assert len(bad) == 3, bad
