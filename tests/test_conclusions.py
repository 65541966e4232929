"""Each fixture's `#@ expected:` conclusion, as findings: `check` on that one file must agree.

Beside a parser fixture `fixtures/<source>/<name>.<ext>`, a hand-written `<name>.conclusion.json`
states what `topodiag check --from <file> [--profile P]` must conclude, read from the fixture's
`#@ expected:` line by a person (never copied from the program's output):

    {"profile": "dgx-h100",            # optional: the --profile the case is judged under
     "select": ["GPU001", "GPU003"],   # optional: the rules run (--select), for rules that run only when asked
     "findings": {"IB001": "warning"}, # each code must be found at exactly this severity
     "absent": ["NCCL001"],            # codes that must not be found (at any severity)
     "max_severity": "info",           # optional: nothing above this (healthy inputs: "info")
     "subjects": {"IB001": ["nic:mlx5_1/1"]},  # optional: these subjects among the code's findings
     "input_error": "not the output of any tool",  # instead: `check` must refuse the file in one
                                       # line (exit 3, no report), the message containing this text
     "why": "one line: which words of the #@ expected: line this encodes",
     "xfail": "why topodiag does not reach it yet"}  # optional, strict: a known gap, named

A case marked "xfail" must fail (strict): when the gap is fixed the mark has to go.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures_index import FIXTURES

ORDER = ["info", "warning", "error", "critical"]


def _cases() -> list[tuple[Path, Path]]:
    out = []
    for spec in sorted(FIXTURES.glob("*/*.conclusion.json")):
        stem = spec.name[: -len(".conclusion.json")]
        inputs = [p for p in spec.parent.glob(stem + ".*")
                  if not p.name.endswith((".expected.json", ".conclusion.json"))]
        assert len(inputs) == 1, f"{spec}: expected exactly one input beside it, found {inputs}"
        out.append((inputs[0], spec))
    return out


CASES = _cases()


def test_conclusion_specs_exist() -> None:
    assert CASES, "no fixtures/*/*.conclusion.json found"


@pytest.mark.parametrize("path,spec", CASES, ids=lambda v: f"{v.parent.name}/{v.name}" if isinstance(v, Path) else "")
def test_fixture_reaches_its_conclusion(path: Path, spec: Path, request: pytest.FixtureRequest) -> None:
    import topodiag

    from topodiag.errors import InputError

    want = json.loads(spec.read_text())
    assert want.get("why"), f"{spec}: say which words of the #@ expected: line this encodes"
    if want.get("xfail"):
        request.applymarker(pytest.mark.xfail(reason=want["xfail"], strict=True))
    if "input_error" in want:
        with pytest.raises(InputError) as caught:
            topodiag.diagnose([str(path)], profile=want.get("profile"))
        assert want["input_error"] in str(caught.value)
        return
    d = topodiag.diagnose([str(path)], profile=want.get("profile"), select=want.get("select"))
    got: dict[str, list] = {}
    for f in d.findings:
        got.setdefault(f.code, []).append(f)
    seen = {c: sorted({str(f.severity) for f in fs}) for c, fs in got.items()}
    for code, sev in want.get("findings", {}).items():
        assert code in got, f"{code} not found; found {seen}"
        assert sev in seen[code], f"{code} at {seen[code]}, expected {sev}"
    for code in want.get("absent", []):
        assert code not in got, f"{code} must not be found: {[f.message for f in got[code]]}"
    if "max_severity" in want:
        limit = ORDER.index(want["max_severity"])
        over = {c: s for c, s in seen.items() if any(ORDER.index(x) > limit for x in s)}
        assert not over, f"findings above {want['max_severity']}: {over}"
    for code, subjects in want.get("subjects", {}).items():
        have = {s for f in got.get(code, []) for s in f.subjects}
        assert set(subjects) <= have, f"{code} subjects {sorted(have)}, expected {subjects}"
