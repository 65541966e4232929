"""Catalog conformance over the real rules/ directory (docs/architecture.md "Testing").

Every rule file valid; codes and slugs unique; every rule has a registered check or is `builtin`
(engine-emitted) and every check has a rule; `requires` agrees with the check's signature; `why`
and `fix` non-empty; at least one pass and one fail example, and each example holds when run.
"""

from __future__ import annotations

import builtins
from collections import Counter
from pathlib import Path

import pytest

from topodiag import parsers
from topodiag.engine import Catalog, InputProblem, Rule, Severity, check, load_catalog, load_checks, registry, run
from topodiag.engine.catalog import Example, default_rules_dir
from topodiag.engine.runner import FALLBACK_RULES, TOOL_FAMILY
from topodiag.model.combiners import COMBINED, combine
from topodiag.model.merge import capability_sources
from topodiag.model.schema import is_capability

REPO = Path(__file__).resolve().parents[2]
RULES_DIR = REPO / "rules"
# Inputs that are not a parser's source: the model (built from the parsed sources), the profile, and
# the combined views of topodiag/model/combiners.py (made from parsed sources by combine()).
MODEL_INPUTS = {"topology", "profile"}
COMBINED_INPUTS = set(COMBINED)
PROBE = "ZZZ999"  # a throwaway rule the tool-health examples run beside


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(RULES_DIR)


@pytest.fixture(scope="module")
def checks():
    return load_checks()


def all_rules() -> list[Rule]:
    return list(load_catalog(RULES_DIR))


def all_examples():
    for rule in all_rules():
        for kind, examples in (("pass", rule.pass_examples), ("fail", rule.fail_examples)):
            for i, ex in enumerate(examples):
                yield pytest.param(rule, kind, ex, id=f"{rule.code}-{kind}{i}")


def test_the_real_rules_are_the_default_directory():
    assert default_rules_dir() == RULES_DIR


def test_every_rule_file_is_valid(catalog):
    files = sorted(p for p in RULES_DIR.glob("*/*.toml") if p.parent.name != "profiles")
    assert len(catalog) == len(files) > 0


def test_codes_and_slugs_are_unique(catalog):
    assert not [c for c, n in Counter(r.code for r in catalog).items() if n > 1]
    assert not [s for s, n in Counter(r.slug for r in catalog).items() if n > 1]


def test_tool_health_rules_are_present_and_match_the_engine(catalog):
    for fallback in FALLBACK_RULES:
        rule = catalog.get(fallback.code)
        assert (rule.slug, rule.builtin) == (fallback.slug, True)
        assert set(_placeholders(rule.message)) <= set(_placeholders(fallback.message)) | {"file", "line_no", "exception"}


def test_every_rule_has_a_check_or_is_builtin(catalog, checks):
    missing = [r.code for r in catalog if not r.builtin and r.code not in checks]
    assert not missing, f"rules without a registered check (write one, or mark builtin = true): {missing}"
    both = [r.code for r in catalog if r.builtin and r.code in checks]
    assert not both, f"builtin rules are emitted by the engine and must not register a check: {both}"


def test_every_check_has_a_rule(catalog, checks):
    orphans = [f"{code} ({spec.where})" for code, spec in checks.items() if code not in catalog.codes()]
    assert not orphans, f"checks without a rules/<family>/<CODE>-<slug>.toml: {orphans}"


def test_requires_agrees_with_the_check_signature(catalog, checks):
    """A shipped rule requires capabilities (facts), never tools; each capability's inputs are the
    check's parameters or reach it through the model; each input the check cannot do without is the
    one input of a capability the rule requires (so the skip names the fact)."""
    sources = capability_sources()
    known = set(parsers.names()) | MODEL_INPUTS | COMBINED_INPUTS
    problems = []
    for rule in catalog:
        names = [n for group in rule.requires for n in group.split("|")]
        tools = [n for n in names if not is_capability(n)]
        if tools:
            problems.append(f"{rule.code}: requires inputs {tools}; name the capabilities they give "
                            "(topodiag/model/schema.py CAPABILITIES)")
        unknown = [n for n in names if is_capability(n) and n not in sources]
        if unknown:
            problems.append(f"{rule.code}: requires {unknown}, which no input gives")
        spec = checks.get(rule.code)
        if spec is None:
            continue
        through_model = "topology" in spec.inputs
        given = {s for n in names if n in sources for s in sources[n]}
        not_taken = sorted(s for s in given if s not in spec.inputs and not (through_model and s in parsers.names()))
        sole = {sources[n][0] for n in names if len(sources.get(n, ())) == 1}
        undeclared = [n for n in spec.required if n not in MODEL_INPUTS and n not in sole]
        if not_taken:
            problems.append(f"{rule.code}: requires what {not_taken} give, but {spec.where} takes no such parameter")
        if undeclared:
            problems.append(f"{rule.code}: {spec.where} requires {undeclared}; require the capability only "
                            "it gives")
        assert all(s in known for s in given)
    assert not problems, "\n".join(problems)


def test_why_and_fix_are_written(catalog):
    assert not [r.code for r in catalog if not r.why.strip() or not r.fix.strip()]


def test_every_rule_has_a_pass_and_a_fail_example(catalog):
    lacking = [r.code for r in catalog if not r.pass_examples or not r.fail_examples]
    assert not lacking, f"rules without both a pass and a fail example: {lacking}"


def test_checklist_examples_name_real_inputs(catalog):
    """Only tool-health (SYS) rules may use problems/raises; every other example names inputs that exist."""
    problems = []
    for rule in catalog:
        for ex in rule.pass_examples + rule.fail_examples:
            if rule.family != TOOL_FAMILY and not (ex.inputs or ex.inline):
                problems.append(f"{rule.code}: example {ex.description!r} names no input")
            if rule.family != TOOL_FAMILY and (ex.problems or ex.raises):
                problems.append(f"{rule.code}: example {ex.description!r}: problems/raises are for SYS rules")
            for name, rel in ex.inputs.items():
                if not (REPO / rel).is_file():
                    problems.append(f"{rule.code}: example input {name} = {rel!r}: no such file")
            for k in list(ex.params):
                if k not in rule.params:
                    problems.append(f"{rule.code}: example param {k!r} is not one of the rule's params")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("rule, kind, example", list(all_examples()))
def test_examples_hold(catalog, checks, rule, kind, example):
    outcome = run_example(catalog, rule, example)
    found = [f for f in outcome.findings if f.code == rule.code]
    if not rule.builtin:
        assert rule.code in outcome.ran, f"{rule.code} did not run: {outcome.skipped}"
    assert not [c for c in outcome.crashes if c.code == rule.code], outcome.crashes
    if kind == "fail":
        assert found, f"{rule.code} fail example {example.description!r} gave no {rule.code} finding"
        subjects = {s for f in found for s in f.subjects}
        assert set(example.subjects) <= subjects, (example.subjects, subjects)
    else:
        assert not found, f"{rule.code} pass example {example.description!r} gave {[f.message for f in found]}"


# --- the example harness -----------------------------------------------------------------------

def run_example(catalog: Catalog, rule: Rule, example: Example):
    """Parse the example's inputs as the CLI would (ParseError -> an unparseable input) and run the rule."""
    inputs: dict[str, object] = {}
    problems = [InputProblem(**dict(p)) for p in example.problems]
    texts = [(name, (REPO / rel).read_text(encoding="utf-8", errors="replace"), rel) for name, rel in example.inputs.items()]
    texts += [(name, text, f"<inline {name}>") for name, text in example.inline.items()]
    for name, text, file in texts:
        if name in MODEL_INPUTS | COMBINED_INPUTS:
            raise NotImplementedError(f"{rule.code}: example input {name} must be built, not given")
        try:
            inputs[name] = parsers.get(name).parse(parsers.blank_provenance_header(text))
        except parsers.ParseError as exc:
            problems.append(InputProblem(name, "unparseable", exc.message, file, exc.line_no or None))
    spec = registry.get(rule.code)
    topology = build_topology(inputs, texts)
    if spec is not None and "topology" in spec.inputs:
        inputs["topology"] = topology
    if spec is not None and "profile" in spec.inputs:  # chosen once, as the pipeline does
        from topodiag.pipeline import choose_profile

        inputs["profile"] = choose_profile(example.profile, topology, [inputs["nccl_tests"]] if "nccl_tests" in inputs else [])[0]
    inputs.update(combine(inputs))  # as `check` does: the "A or B" views (topodiag/model/combiners.py)
    with registry.scoped():
        probe = Rule(code=PROBE, slug="example-probe", title="probe", severity=Severity.INFO, message="probe",
                     why="w", fix="f")
        if rule.family == TOOL_FAMILY:
            error = getattr(builtins, example.raises) if example.raises else None

            @check(PROBE)
            def probe_check():
                if error is not None:
                    raise error("raised by the example")

        full = Catalog(list(catalog) + [probe], root=catalog.root)
        select = PROBE if rule.family == TOOL_FAMILY else rule.code  # SYS rules are always on
        return run(full, inputs, select=select, problems=problems, config={rule.code: {"params": dict(example.params)}})


def build_topology(inputs: dict, texts):
    """The model from the parsed inputs, for rules whose check takes `topology` (topodiag.model.build)."""
    from topodiag.model import build
    from topodiag.records import ParsedInput

    files = {name: file for name, _, file in texts}
    return build([ParsedInput(name, files.get(name), value) for name, value in inputs.items()])


def _placeholders(template: str) -> list[str]:
    import string

    return [name for _, name, _, _ in string.Formatter().parse(template) if name]
