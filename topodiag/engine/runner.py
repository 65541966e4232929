"""Run the selected rules over the inputs: skips with reasons, crash isolation, the exit code.

- A rule whose required capability or input is absent (or None) is skipped, with the reason (and
  the source's failure when one was recorded). A `requires` entry names capabilities (facts:
  "nic.port_state", topodiag/model/schema.py), each met by any input that gives it (the merge
  modules' PROVIDES and FILLS, schema.INPUT_FACTS: topodiag.model.merge.capability_sources); the
  reason names the fact and the inputs that would give it. An entry may instead name inputs
  ("ibstat|ibv_devinfo": any one of them), and a check's parameters without a default are required
  inputs too. A combined input (`roce_gids`, `ib_links`: topodiag/model/combiners.py, which the
  caller runs before `run`) is explained by the sources it is made from.
- An input given as `Each` (several files of one source: two nccl-tests runs, a log per node) runs
  each check that takes it once per file; evidence of that source that names no file gets the
  file's name.
- A check that raises becomes a SYS003 check-crashed finding naming the rule and the exception;
  the run goes on with the next rule. So does a Hit naming a message variant or note its rule's
  TOML does not define (catalog.UnknownMessage).
- Source failures handed in as InputProblems become SYS001 (failed) / SYS002 (unparseable).
- `--select` / `--ignore` take codes, family prefixes (`TOPO`, `NVL00`) or slugs; `--ignore` wins.
  Tool-health rules (family SYS) are always on unless ignored: narrowing the checklist must not
  hide that the tool itself failed.
- Exit code (docs/architecture.md "Exit codes"): findings at or above `fail_on` win (1); else a SYS003 finding
  means an internal error (4); else a SYS001/SYS002 finding means incomplete (3); else 0. SYS
  findings never count toward `fail_on`: a broken diagnostic must not drain a node.
"""

from __future__ import annotations

import itertools
import time
import traceback
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Optional

from ..errors import ConfigError, SelectionError
from ..exit_codes import ExitCode
from ..records import Each  # re-exported: `from topodiag.engine.runner import Each` keeps working
from . import registry
from .catalog import Catalog, Rule
from .aggregate import collapse
from .findings import Evidence, Finding, Hit, Severity, names as severity_names
from ..records import PROBLEM_KINDS, Each, InputProblem  # noqa: F401  (re-exported: engine.runner.Each)

TOOL_FAMILY = "SYS"
SOURCE_FAILED, SOURCE_UNPARSEABLE, CHECK_CRASHED = "SYS001", "SYS002", "SYS003"
UNRECOGNISED = "SYS004"  # failure-looking text no catalogue entry explains: a warning, never incomplete
GPUS_NOT_CHECKED = "SYS005"  # GPUs on the PCI bus that no input checked (checks/gpu_set.py): incomplete too
INCOMPLETE_CODES = (SOURCE_FAILED, SOURCE_UNPARSEABLE, GPUS_NOT_CHECKED)
PROBLEM_RULE = {"failed": SOURCE_FAILED, "unparseable": SOURCE_UNPARSEABLE}
assert set(PROBLEM_RULE) == set(PROBLEM_KINDS)
CONFIG_KEYS = ("enabled", "severity", "params")

# Used when the catalog lacks a tool-health rule, so crash isolation never depends on data files.
FALLBACK_RULES = (
    Rule(code=SOURCE_FAILED, slug="source-failed", title="An input source could not be collected",
         severity=Severity.ERROR, message="{source} could not be collected: {reason}",
         why="Without this input the rules that need it cannot run: no verdict on them.",
         fix="Run the command by hand and fix what stops it.", builtin=True),
    Rule(code=SOURCE_UNPARSEABLE, slug="source-unparseable", title="An input is not that tool's output",
         severity=Severity.ERROR, message="{where}: not readable as {source} output: {reason}",
         why="Without this input the rules that need it cannot run: no verdict on them.",
         fix="Give the tool's complete, unedited output.", builtin=True),
    Rule(code=CHECK_CRASHED, slug="check-crashed", title="A check crashed",
         severity=Severity.ERROR, message="check {rule} ({slug}) crashed: {error}",
         why="A bug in topodiag: this rule gave no verdict; the other rules ran.",
         fix="Rerun with --debug and report the traceback.", builtin=True),
)


def _present(inputs: Mapping[str, Any], name: str) -> bool:
    value = inputs.get(name)
    return value is not None and not (isinstance(value, Each) and not value.items)


@dataclass(frozen=True)
class Skipped:
    code: str
    slug: str
    reason: str
    needs: tuple[str, ...] = ()  # the capabilities absent (a `requires` entry each: "nic.port_state")

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "slug": self.slug, "reason": self.reason}


@dataclass(frozen=True)
class Crash:
    """A check that raised: for `--debug`, the formatted traceback."""

    code: str
    error: str
    traceback: str


@dataclass(frozen=True)
class RuleSettings:
    """A rule as configured for this run: enabled, severity (None: the rule's own), params merged."""

    enabled: bool
    severity: Optional[Severity]
    params: Mapping[str, Any]


@dataclass(frozen=True)
class Outcome:
    findings: tuple[Finding, ...]
    skipped: tuple[Skipped, ...]
    ran: tuple[str, ...]
    crashes: tuple[Crash, ...]
    fail_on: Optional[Severity]
    exit_code: ExitCode

    def counts(self) -> dict[str, int]:
        """Findings per severity name, every severity present (0 when none)."""
        out = {name: 0 for name in severity_names()}
        for f in self.findings:
            out[str(f.severity)] += 1
        return out

    def summary(self) -> dict[str, Any]:
        return {
            "findings": self.counts(),
            "rules_run": len(self.ran),
            "rules_skipped": len(self.skipped),
            "fail_on": None if self.fail_on is None else str(self.fail_on),
            "exit_code": int(self.exit_code),
        }


def split_codes(value: "str | Iterable[str] | None") -> tuple[str, ...]:
    """`"TOPO, NVL001"` or `["TOPO", "NVL001,IB"]` -> `("TOPO", "NVL001", "IB")`."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else list(value)
    return tuple(part.strip() for item in items for part in item.split(",") if part.strip())


def parse_fail_on(value: "str | Severity | None") -> Optional[Severity]:
    """A --fail-on value: a severity name, or `never`/`none` (findings never fail the run)."""
    if value is None or isinstance(value, Severity):
        return value
    if value.strip().lower() in ("never", "none"):
        return None
    return Severity.parse(value)


def _matches(rule: Rule, selector: str) -> bool:
    up = selector.upper()
    return rule.code == up or rule.code.startswith(up) and up.isalnum() or rule.slug == selector.lower()


def select_rules(catalog: Iterable[Rule], select: Any = None, ignore: Any = None, tags: Any = None) -> list[Rule]:
    """The rules that --select (default: all), --tags (any of them) and --ignore leave; SelectionError
    for a selector or tag naming nothing. Tool-health (SYS) rules are never selected away; a rule
    marked `only_with_tags` runs only when --tags names one of its tags or --select names it (its
    code, slug or family)."""
    rules = list(catalog)
    sel, ign = split_codes(select), split_codes(ignore)
    wanted = {t.lower() for t in split_codes(tags)}
    known_tags = {t for r in rules for t in r.tags}
    for t in sorted(wanted - known_tags):
        raise SelectionError(f"--tags: {t!r} is no rule's tag (tags: {', '.join(sorted(known_tags))})")
    for opt, selectors in (("--select", sel), ("--ignore", ign)):
        for s in selectors:
            if not any(_matches(r, s) for r in rules):
                families = sorted({r.family for r in rules})
                raise SelectionError(f"{opt}: {s!r} names no rule (codes like TOPO001, families: {', '.join(families)})")
    out = []
    for rule in rules:
        if any(_matches(rule, s) for s in ign):
            continue
        if sel and rule.family != TOOL_FAMILY and not any(_matches(rule, s) for s in sel):
            continue
        if wanted and rule.family != TOOL_FAMILY and not wanted & set(rule.tags):
            continue
        if rule.only_with_tags and not wanted & set(rule.tags) and not any(_matches(rule, s) for s in sel):
            continue  # a view asked for by tag (the prolog's) or by name only
        out.append(rule)
    return out


def resolve_config(catalog: Catalog, config: Optional[Mapping[str, Any]] = None) -> dict[str, RuleSettings]:
    """Per-rule settings from `{CODE or slug: {enabled, severity, params}}`; ConfigError (one line) on misfit."""
    overrides: dict[str, Mapping[str, Any]] = {}
    for key, table in (config or {}).items():
        rule = catalog.find(key)
        if rule is None:
            raise ConfigError(f"config: rules.{key}: no such rule")
        if not isinstance(table, Mapping):
            raise ConfigError(f"config: rules.{key}: must be a table (enabled, severity, params)")
        for k in table:
            if k not in CONFIG_KEYS:
                raise ConfigError(f"config: rules.{key}.{k}: unknown key (known: {', '.join(CONFIG_KEYS)})")
        if rule.code in overrides:
            raise ConfigError(f"config: rules.{key}: {rule.code} configured twice")
        overrides[rule.code] = table
    out = {}
    for rule in catalog:
        table = overrides.get(rule.code, {})
        enabled = table.get("enabled", True)
        if not isinstance(enabled, bool):
            raise ConfigError(f"config: rules.{rule.code}.enabled: must be true or false")
        severity = None
        if "severity" in table:
            try:
                severity = Severity.parse(table["severity"])
            except ValueError as exc:
                raise ConfigError(f"config: rules.{rule.code}.severity: {exc}") from None
        params = dict(rule.params)
        given = table.get("params", {})
        if not isinstance(given, Mapping):
            raise ConfigError(f"config: rules.{rule.code}.params: must be a table")
        for name, value in given.items():
            if name not in rule.params:
                known = ", ".join(rule.params) or "none"
                raise ConfigError(f"config: rules.{rule.code}.params.{name}: unknown parameter (known: {known})")
            if not _same_kind(rule.params[name], value):
                raise ConfigError(
                    f"config: rules.{rule.code}.params.{name}: {value!r} is not a {type(rule.params[name]).__name__} "
                    f"like the default {rule.params[name]!r}"
                )
            params[name] = value
        out[rule.code] = RuleSettings(enabled, severity, MappingProxyType(params))
    return out


def _same_kind(default: Any, value: Any) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, (int, float)):
        return isinstance(value, (int, float))
    return isinstance(value, type(default))


def exit_code_for(findings: Iterable[Finding], fail_on: Optional[Severity] = Severity.ERROR) -> ExitCode:
    """1 for a checklist finding at or above fail_on; else 4 for a crash; else 3 for a failed input; else 0."""
    tool: list[Finding] = []
    real: list[Finding] = []
    for f in findings:
        is_tool = f.code.startswith(TOOL_FAMILY) and f.code[len(TOOL_FAMILY):].isdigit()
        (tool if is_tool else real).append(f)
    if fail_on is not None and any(f.severity >= fail_on for f in real):
        return ExitCode.FINDINGS
    if any(f.code == CHECK_CRASHED for f in tool):
        return ExitCode.INTERNAL
    if any(f.code in INCOMPLETE_CODES for f in tool):
        return ExitCode.INCOMPLETE
    return ExitCode.OK


def _finding(rule: Rule, settings: Optional[RuleSettings], h: Hit,
             files: Optional[Mapping[str, Optional[str]]] = None) -> Finding:
    """The Finding of a check's Hit; `files` ({source: file} of a per-file call) fill the file of its
    evidence that names none (`_filed`)."""
    severity = (settings.severity if settings else None) or h.severity or rule.severity
    params = settings.params if settings else rule.params
    return Finding(
        code=rule.code, slug=rule.slug, severity=severity, subjects=h.subjects,
        message=rule.format_message(h.values, params, h.variant, h.notes), evidence=_filed(h.evidence, files),
        why=rule.why, fix=rule.fix, expectation=h.expectation, values=MappingProxyType(dict(h.values)),
        action=rule.action_for(h.variant), observed=rule.format_observed(h.values, params),
    )


def run(
    catalog: Catalog,
    inputs: Mapping[str, Any],
    *,
    select: Any = None,
    ignore: Any = None,
    config: Optional[Mapping[str, Any]] = None,
    fail_on: "Severity | str | None" = Severity.ERROR,
    problems: Iterable[InputProblem] = (),
    deadline_s: Optional[float] = None,
    tags: Any = None,
) -> Outcome:
    """Run the selected rules of `catalog` over `inputs` (name -> parsed value; None counts as absent).

    Raises SelectionError / ConfigError (usage errors, exit 2 in the CLI) before running anything.
    """
    fail_on = parse_fail_on(fail_on)
    missing_builtin = [r for r in FALLBACK_RULES if r.code not in catalog.codes()]
    full = Catalog(list(catalog) + missing_builtin, root=catalog.root) if missing_builtin else catalog
    settings = resolve_config(full, config)
    rules = select_rules(full, select, ignore, tags)
    state = _Run(full, settings, inputs, list(problems), {r.code for r in rules if settings[r.code].enabled})
    state.tool_health()
    start = time.monotonic()
    for rule in rules:
        if rule.builtin:
            continue  # emitted by the engine itself (tool health, and on crashes)
        if deadline_s is not None and time.monotonic() - start > deadline_s and settings[rule.code].enabled:
            state.skipped.append(Skipped(rule.code, rule.slug, f"run deadline of {deadline_s:g} s reached"))
            continue
        state.run_rule(rule)
    return Outcome(
        findings=tuple(state.findings), skipped=tuple(state.skipped), ran=tuple(state.ran),
        crashes=tuple(state.crashes), fail_on=fail_on, exit_code=exit_code_for(state.findings, fail_on),
    )


class _Run:
    """One run's state: what it found, skipped, ran and what crashed."""

    def __init__(self, full: Catalog, settings: Mapping[str, RuleSettings], inputs: Mapping[str, Any],
                 problems: list[InputProblem], active: set[str]):
        self.full, self.settings, self.inputs, self.problems, self.active = full, settings, inputs, problems, active
        self.by_source: dict[str, InputProblem] = {}
        for p in problems:
            self.by_source.setdefault(p.source, p)
        self.findings: list[Finding] = []
        self.skipped: list[Skipped] = []
        self.ran: list[str] = []
        self.crashes: list[Crash] = []

    def tool_health(self) -> None:
        """SYS001/SYS002 for the inputs that failed, SYS004 for text no catalogue explains."""
        for p in self.problems:
            code = PROBLEM_RULE[p.kind]
            if code in self.active:
                where = p.file or "live output"
                if p.line_no:
                    where = f"{where}:{p.line_no}" if p.file else f"{where} line {p.line_no}"
                values = {"source": p.source, "reason": p.reason, "file": p.file or "", "line_no": p.line_no or 0,
                          "where": where}
                ev = (Evidence(p.source, p.file, p.line_no),)
                self.findings.append(_finding(self.full.get(code), self.settings[code],
                                              Hit((f"source:{p.source}",), values, ev)))
        if UNRECOGNISED in self.active:
            self.findings.extend(_finding(self.full.get(UNRECOGNISED), self.settings[UNRECOGNISED], h)
                                 for h in _unrecognised(self.inputs))

    def skipped_for(self, rule: Rule, spec: Optional[registry.CheckSpec]) -> Optional[Skipped]:
        """Why this rule does not run, and the capabilities it lacks (None: it runs)."""
        if not self.settings[rule.code].enabled:
            return Skipped(rule.code, rule.slug, "disabled in the config")
        if spec is None:
            return Skipped(rule.code, rule.slug, "no check is implemented for this rule")
        needed = list(dict.fromkeys(rule.requires + spec.required))
        absent = [group for group in needed if not any(_present(self.inputs, n) for n in _group_inputs(group))]
        covered = {n for group in absent if _is_capabilities(group) for n in _group_inputs(group)}
        absent = [g for g in absent if _is_capabilities(g) or g not in covered]  # said once, by the capability
        if not absent:
            return None
        return Skipped(rule.code, rule.slug, "; ".join(_absent_reason(g, self.by_source, self.inputs) for g in absent),
                       tuple(g for g in absent if _is_capabilities(g)))

    def run_rule(self, rule: Rule) -> None:
        spec = registry.get(rule.code)
        skip = self.skipped_for(rule, spec)
        if skip is not None:
            self.skipped.append(skip)
            return
        conf = self.settings[rule.code]
        self.ran.append(rule.code)
        for kwargs, files in _calls(spec, self.inputs):
            if "params" in spec.wants:
                kwargs["params"] = conf.params
            if "rule" in spec.wants:
                kwargs["rule"] = rule
            try:
                produced = _collect(rule, conf, spec.func(**kwargs), files)
            except Exception as exc:  # crash isolation: the run goes on
                self.crashed(rule, exc)
                break
            self.findings.extend(collapse(produced))

    def crashed(self, rule: Rule, exc: BaseException) -> None:
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        tb = traceback.extract_tb(exc.__traceback__)
        self.crashes.append(Crash(rule.code, error,
                                  "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))))
        if CHECK_CRASHED not in self.active:
            return
        evidence = (Evidence("topodiag", tb[-1].filename, tb[-1].lineno),) if tb else ()
        values = {"rule": rule.code, "slug": rule.slug, "error": error, "exception": type(exc).__name__}
        self.findings.append(_finding(self.full.get(CHECK_CRASHED), self.settings[CHECK_CRASHED],
                                      Hit((f"rule:{rule.code}",), values, evidence)))


def _unrecognised(inputs: Mapping[str, Any]):
    """A Hit per parsed input whose parser kept failure-looking lines that no catalogue entry explains
    (its result's `unrecognised`: records with `line_no` and `text`; `unrecognised_total` the count)."""
    for name, value in inputs.items():
        items = value.items if isinstance(value, Each) else [(value, None)]
        for item, file in items:
            lines = getattr(item, "unrecognised", None) or ()
            if not lines:
                continue
            total = getattr(item, "unrecognised_total", None) or len(lines)
            first = lines[0]
            listed = ", ".join(str(x.line_no) for x in lines[:5]) + (", ..." if total > 5 else "")
            values = {"source": name, "file": file or "", "count": total, "lines": listed,
                      "first": str(first.text)[:300]}
            yield Hit((f"source:{name}",), values, (Evidence(name, file, first.line_no),))


def _calls(spec: registry.CheckSpec, inputs: Mapping[str, Any]):
    """The keyword sets to call a check with: once, or once per file of each `Each` input it takes
    (with the {source: file} of that call, for evidence)."""
    taken = [name for name in spec.inputs if _present(inputs, name)]
    plain = {name: inputs[name] for name in taken if not isinstance(inputs[name], Each)}
    many = [name for name in taken if isinstance(inputs[name], Each)]
    for combo in itertools.product(*(inputs[name].items for name in many)):
        kwargs = dict(plain)
        files = {}
        for name, (value, file) in zip(many, combo):
            kwargs[name] = value
            files[name] = file
        yield kwargs, files


def _filed(evidence: tuple, files: Optional[Mapping[str, Optional[str]]]) -> tuple:
    """Evidence of a per-file input that names no file gets the file the check was called with."""
    if not files or not any(e.file is None and files.get(e.source) for e in evidence):
        return evidence
    return tuple(replace(e, file=files[e.source]) if e.file is None and files.get(e.source) else e for e in evidence)


def _with_files(finding: Finding, files: Mapping[str, Optional[str]]) -> Finding:
    """A Finding a check made itself, its evidence filed as `_filed` does."""
    evidence = _filed(finding.evidence, files)
    return finding if evidence is finding.evidence else replace(finding, evidence=evidence)


def _collect(rule: Rule, conf: RuleSettings, result: Any, files: Optional[Mapping[str, Optional[str]]] = None) -> list[Finding]:
    """Findings from what a check returned (None, a Hit or Finding, or an iterable of them), their
    evidence filed (`_filed`); raises on anything else."""
    if result is None:
        return []
    items = [result] if isinstance(result, (Hit, Finding)) else list(result)
    out = []
    for item in items:
        if isinstance(item, Finding):
            out.append(_with_files(item, files) if files else item)
        elif isinstance(item, Hit):
            out.append(_finding(rule, conf, item, files))
        else:
            raise TypeError(f"check {rule.code} produced {type(item).__name__}, not a Hit or Finding")
    return out


def _is_capabilities(group: str) -> bool:
    """A `requires` entry of capabilities (nic.port_state|nccl.transport), not of input names."""
    from ..model.schema import is_capability

    return any(is_capability(n) for n in group.split("|"))


def _group_inputs(group: str) -> tuple[str, ...]:
    """The inputs that meet a `requires` entry: an input name stands for itself, a capability for
    every input that gives it (topodiag.model.merge.capability_sources)."""
    if not _is_capabilities(group):
        return tuple(group.split("|"))
    from ..model.merge import capability_sources

    table = capability_sources()
    return tuple(dict.fromkeys(s for name in group.split("|") for s in table.get(name, (name,))))


def _tool(source: str) -> str:
    """How a person gets a source: "ibv_devinfo (ibv_devinfo -v)", "ibstat"."""
    from .. import parsers

    try:
        tool = parsers.info(source).tool
    except (KeyError, LookupError, ImportError):
        return source
    return source if tool == source else f"{source} ({tool})"


def _capability_reason(group: str, by_source: Mapping[str, InputProblem], inputs: Mapping[str, Any]) -> str:
    """"needs nic.port_state (from ibstat, ibv_devinfo, ibstatus, rdma_link or sysfs_infiniband): not
    given" (or the first of them that failed, and why); `topodiag explain` names their tools."""
    from ..model.combiners import COMBINED

    names = list(dict.fromkeys(s for n in _group_inputs(group) for s in COMBINED.get(n, (n,))))
    what = f"needs {describe_requires(group, tools=False)}"
    present = [n for n in names if _present(inputs, n)]
    if present:  # the sources are there but not their combined view: the caller did not run combine()
        return (f"{what}: made from {', '.join(present)} by topodiag.model.combiners.combine, "
                "which was not run on these inputs")
    failed = [by_source[n] for n in names if n in by_source]
    if not failed:
        return f"{what}: not given"
    p = failed[0]
    return f"{what}: {p.source} {'source failed' if p.kind == 'failed' else 'not parseable'}: {p.reason}"


def describe_requires(group: str, tools: bool = True) -> str:
    """One `requires` entry for a person: "nic.port_state (from ibstat, ibv_devinfo (ibv_devinfo -v) ...
    or rdma_link (rdma link show))"; without `tools` only the input names (the run's skip reasons:
    naming the tools imports every parser, which a prolog cannot afford); an input name as it is."""
    if not _is_capabilities(group):
        return group
    from ..model.combiners import COMBINED

    names = list(dict.fromkeys(s for n in _group_inputs(group) for s in COMBINED.get(n, (n,))))
    shown = [_tool(n) for n in names] if tools else names
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
    return f"{group.replace('|', ' or ')} (from {listed})"


def _absent_reason(group: str, by_source: Mapping[str, InputProblem], inputs: Mapping[str, Any]) -> str:
    if _is_capabilities(group):
        return _capability_reason(group, by_source, inputs)
    from ..model.combiners import COMBINED  # only when a rule is skipped

    names = list(dict.fromkeys(s for n in group.split("|") for s in COMBINED.get(n, (n,))))  # a combined view: its sources
    failed = [by_source[n] for n in names if n in by_source]
    what = names[0] if len(names) == 1 else "one of " + ", ".join(names)
    present = [n for n in names if _present(inputs, n)]
    if present:  # the sources are there but not their combined view: the caller did not run combine()
        return (f"needs {group} (made from {', '.join(present)} by topodiag.model.combiners.combine, "
                "which was not run on these inputs)")
    if not failed:
        return f"needs {what} (not given)"
    p = failed[0]
    word = "source failed" if p.kind == "failed" else "not parseable"
    return f"needs {what} ({p.source} {word}: {p.reason})" if len(names) > 1 else f"needs {what} ({word}: {p.reason})"
