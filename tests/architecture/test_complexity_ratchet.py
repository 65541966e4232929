"""A ratchet on size and complexity (issue 32): no function in topodiag/ above cyclomatic complexity
25 (radon's measure) and no module above 700 lines, except today's, listed as data beside this file
(`complexity_over_25.json`, `modules_over_700.json`). A listed one may not grow; when it shrinks its
number must come down with it, and when it is under the limit its entry goes: the lists only shrink.

`python tests/architecture/test_complexity_ratchet.py` prints what the lists would be now, to copy
the lowered numbers from (never to add an entry: split the function or the module instead)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PACKAGE = ROOT / "topodiag"
CC_LIMIT = 25
LINES_LIMIT = 700
CC_FILE = HERE / "complexity_over_25.json"
LINES_FILE = HERE / "modules_over_700.json"


def _blocks(block):
    yield block
    for inner in list(getattr(block, "methods", ())) + list(getattr(block, "closures", ())):
        yield from _blocks(inner)


def measured_complexity() -> dict[str, int]:
    """"topodiag/path.py::Class.function" -> its cyclomatic complexity, for every function and method
    (closures included; a name defined twice in one file counts at its most complex)."""
    from radon.complexity import cc_visit

    out: dict[str, int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for top in cc_visit(path.read_text(encoding="utf-8")):
            for block in _blocks(top):
                if type(block).__name__ == "Function":
                    key = f"{rel}::{block.fullname}"
                    out[key] = max(out.get(key, 0), block.complexity)
    return out


def measured_lines() -> dict[str, int]:
    return {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
            for path in sorted(PACKAGE.rglob("*.py"))}


def _ratchet(measured: dict[str, int], allowed: dict[str, int], limit: int, what: str, data: Path) -> list[str]:
    problems = []
    for key, value in sorted(measured.items()):
        cap = allowed.get(key, limit)
        if value > cap:
            problems.append(f"{key}: {what} {value}, above {cap}" + ("" if key in allowed else
                            f" (split it: nothing new goes above {limit})"))
        elif key in allowed and value < cap:
            problems.append(f"{key}: {what} {value}, under its entry {cap} in {data.name}: "
                            + (f"lower the entry to {value}" if value > limit else "remove the entry"))
    for key in sorted(set(allowed) - set(measured)):
        problems.append(f"{key}: gone; remove its entry from {data.name}")
    return problems


def test_no_function_grows_in_complexity_and_none_new_above_25():
    pytest.importorskip("radon.complexity")
    allowed = json.loads(CC_FILE.read_text(encoding="utf-8"))
    problems = _ratchet(measured_complexity(), allowed, CC_LIMIT, "cyclomatic complexity", CC_FILE)
    assert not problems, "\n".join(problems)


def test_no_module_grows_past_700_lines_and_none_new():
    allowed = json.loads(LINES_FILE.read_text(encoding="utf-8"))
    problems = _ratchet(measured_lines(), allowed, LINES_LIMIT, "lines", LINES_FILE)
    assert not problems, "\n".join(problems)


def test_the_measure_sees_the_package():
    """The ratchet measures what it should: methods, nested names and known large functions."""
    pytest.importorskip("radon.complexity")
    measured = measured_complexity()
    assert measured["topodiag/engine/site_config.py::load"] > 1
    assert any(k.startswith("topodiag/parsers/nccl_tests/assemble.py::Parser.") for k in measured)
    assert all(k.startswith("topodiag/") and "::" in k for k in measured)
    assert len(measured) > 500


def test_the_ratchet_refuses_growth_and_asks_for_the_lower_number():
    allowed = {"a.py::f": 30, "a.py::gone": 40}
    problems = _ratchet({"a.py::f": 31, "a.py::g": 26, "a.py::h": 25}, allowed, 25, "cc", CC_FILE)
    assert problems == ["a.py::f: cc 31, above 30",
                        "a.py::g: cc 26, above 25 (split it: nothing new goes above 25)",
                        "a.py::gone: gone; remove its entry from complexity_over_25.json"]
    assert _ratchet({"a.py::f": 28}, {"a.py::f": 30}, 25, "cc", CC_FILE) == [
        "a.py::f: cc 28, under its entry 30 in complexity_over_25.json: lower the entry to 28"]
    assert _ratchet({"a.py::f": 20}, {"a.py::f": 30}, 25, "cc", CC_FILE)[0].endswith("remove the entry")


if __name__ == "__main__":
    cc = {k: v for k, v in measured_complexity().items() if v > CC_LIMIT}
    lines = {k: v for k, v in measured_lines().items() if v > LINES_LIMIT}
    json.dump({"complexity_over_25.json": cc, "modules_over_700.json": lines}, sys.stdout, indent=1)
    print()
