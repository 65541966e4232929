"""Every function and method in topodiag/checks/ stays at cyclomatic complexity 15 or below (radon's
measure): a check reads as small named decisions (what is expected, what is observed, which message),
not one long branchy function."""

from __future__ import annotations

from pathlib import Path

import pytest

cc_visit = pytest.importorskip("radon.complexity").cc_visit

CHECKS = Path(__file__).resolve().parents[2] / "topodiag" / "checks"
LIMIT = 15


def _blocks(path: Path):
    """Every function and method radon sees in the file (methods and closures included)."""
    for block in cc_visit(path.read_text(encoding="utf-8")):
        yield block
        for inner in list(getattr(block, "methods", ())) + list(getattr(block, "closures", ())):
            yield inner


def test_the_checks_package_is_measured():
    names = {b.name for p in CHECKS.glob("*.py") for b in _blocks(p)}
    assert {"ib001", "nccl001", "perf002", "roce_gid_index"} <= names


def test_no_check_function_is_above_the_limit():
    over = sorted(
        (f"{path.relative_to(CHECKS.parents[1])}:{block.lineno} {block.fullname} has complexity {block.complexity}"
         for path in sorted(CHECKS.glob("*.py")) for block in _blocks(path) if block.complexity > LIMIT),
    )
    assert not over, f"functions above cyclomatic complexity {LIMIT} (split them into named helpers):\n" + "\n".join(over)
