"""The rule catalog: `rules/<family>/<CODE>-<slug>.toml`, one rule per file, validated on load.

Data says *what* (code, slug, severity, message, why, fix, examples); the Python check registered
under the same code says *how*. All wording of a finding is data: `message` is the default
variant, the optional `[messages]` table holds the other variants and the notes a check may add
(each a template over the check's facts and the rule's params), and a check names which one fits. Every problem is one line naming the file and the key, e.g.
`rules/ib/IB001-ib-port-down.toml: severity: 'fatal' is not one of info, warning, error, critical`.
`rules/profiles/` holds platform expectations, not rules, and is not read here.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Iterator, Mapping, Optional

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from ..errors import CatalogError
from .findings import ACTIONS, DEFAULT_ACTION, Severity, names as severity_names

CODE_RE = re.compile(r"^[A-Z]+\d{3}$")
SLUG_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")  # input and param names
# a capability (nic.port_state) or an input name (nvidia_smi_topo_m), or alternatives joined by |
REQUIRES_RE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)?(\|[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)?)*$")
TAG_RE = re.compile(r"^[a-z][a-z0-9-]*$")
FILE_RE = re.compile(r"^(?P<code>[A-Za-z]+\d+)-(?P<slug>.+)\.toml$")
NOT_RULE_DIRS = {"profiles"}

REQUIRED_KEYS = ("code", "slug", "title", "severity", "message", "why", "fix")
OPTIONAL_KEYS = ("tags", "requires", "params", "how_to_check", "references", "messages", "examples", "builtin",
                 "only_with_tags", "action", "actions", "observed")
MAX_OBSERVED = 80  # an `observed` text is cut here: it goes into a 200-character Slurm drain reason
DEFAULT_VARIANT = "default"  # the rule's `message`
NOTES_FIELD = "notes"  # the placeholder where a variant takes the notes a hit names
RESERVED_NAMES = (NOTES_FIELD, "variant")  # not usable as param names (hit() and the runner own them)
EXAMPLE_KEYS = ("description", "inputs", "inline", "problems", "params", "raises", "subjects", "profile")
PROBLEM_KEYS = ("source", "kind", "reason", "file", "line_no")
PROBLEM_KINDS = ("failed", "unparseable")


class UnknownMessage(LookupError):
    """A check named a message variant or note its rule does not define (the run reports it as SYS003)."""


@dataclass(frozen=True)
class Example:
    """A pass or fail case a test runs through the rule's check.

    `inputs` maps an input name to a fixture path (relative to the repository root), `inline` maps
    an input name to the tool's text itself; `problems` are source failures (SYS001/SYS002),
    `raises` names an exception a throwaway check raises (SYS003); `subjects` optionally lists
    node ids a fail example must name; `params` override the rule's defaults for this case.
    """

    description: str = ""
    inputs: Mapping[str, str] = field(default_factory=dict)
    inline: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[Mapping[str, Any], ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    raises: Optional[str] = None
    subjects: tuple[str, ...] = ()
    profile: Optional[str] = None  # the profile the case is judged under (as --profile), else detected


@dataclass(frozen=True)
class Rule:
    """One checklist entry as its TOML file states it."""

    code: str
    slug: str
    title: str
    severity: Severity
    message: str
    why: str
    fix: str
    tags: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    how_to_check: str = ""
    references: tuple[str, ...] = ()
    pass_examples: tuple[Example, ...] = ()
    fail_examples: tuple[Example, ...] = ()
    builtin: bool = False
    path: Optional[Path] = None
    messages: Mapping[str, str] = field(default_factory=dict)  # [messages]: variant / note name -> template
    # runs only when a run asks for one of its tags (the prolog asks for "prolog") or selects it by
    # code: a view that another rule already gives in a full check (GPU003 beside GPU001)
    only_with_tags: bool = False
    action: str = DEFAULT_ACTION  # what the node needs (findings.ACTIONS); every shipped rule says it
    observed: str = ""  # a short template over the check's values for the drain reason ("{nic} port {port} ...")
    actions: Mapping[str, str] = field(default_factory=dict)  # [actions]: message variant -> its own action

    def action_for(self, variant: str = DEFAULT_VARIANT) -> str:
        """The action of a hit of this variant: its `[actions]` entry, else the rule's `action`."""
        return self.actions.get(variant, self.action)

    def format_observed(self, values: Mapping[str, Any], params: Optional[Mapping[str, Any]] = None) -> str:
        """`observed` filled with params then values, at most MAX_OBSERVED characters; "" when the rule
        has none or a value it names is missing (the drain reason then names the slug and subjects)."""
        if not self.observed:
            return ""
        merged = dict(self.params if params is None else params)
        merged.update(values)
        try:
            text = self.observed.format_map(merged)
        except (KeyError, IndexError, AttributeError, ValueError, TypeError):
            return ""
        return " ".join(text.split())[:MAX_OBSERVED]

    @property
    def family(self) -> str:
        """The letters of the code: `TOPO` for TOPO001."""
        return self.code.rstrip("0123456789")

    def variants(self) -> dict[str, str]:
        """Every message template by name: `default` (the `message`) first, then the `[messages]` table."""
        return {DEFAULT_VARIANT: self.message, **self.messages}

    def template(self, name: str) -> str:
        """The template called `name`; UnknownMessage (naming the rule and what it has) otherwise."""
        found = self.message if name == DEFAULT_VARIANT else self.messages.get(name)
        if not isinstance(found, str):
            raise UnknownMessage(f"rule {self.code} has no message {name!r} (it has: {', '.join(self.variants())})")
        return found

    def format_message(self, values: Mapping[str, Any], params: Optional[Mapping[str, Any]] = None,
                       variant: str = DEFAULT_VARIANT, notes: Iterable[str] = ()) -> str:
        """The variant's template filled with params then values (values win), the named notes (each
        filled the same way) joined at its `{notes}`. UnknownMessage for a name the rule lacks or notes
        for a variant without `{notes}`; KeyError when a value is missing."""
        merged = dict(self.params if params is None else params)
        merged.update(values)
        template = self.template(variant)
        notes = tuple(notes)
        if notes and not _has_field(template, NOTES_FIELD):
            raise UnknownMessage(f"rule {self.code}: message {variant!r} has no {{{NOTES_FIELD}}} for the notes "
                                 f"{', '.join(notes)}")
        merged[NOTES_FIELD] = "".join(self.template(n).format_map(merged) for n in notes)
        return template.format_map(merged)


def _has_field(template: str, name: str) -> bool:
    return any(field_name == name for _, field_name, _, _ in string.Formatter().parse(template))


class Catalog:
    """The rules by code, in code order; lookup by code or slug."""

    def __init__(self, rules: Iterable[Rule], root: Optional[Path] = None):
        self._rules = {r.code: r for r in sorted(rules, key=lambda r: (r.family, r.code))}
        self._slugs = {r.slug: r for r in self._rules.values()}
        self.root = root

    def __iter__(self) -> Iterator[Rule]:
        return iter(self._rules.values())

    def __len__(self) -> int:
        return len(self._rules)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.find(key) is not None

    def codes(self) -> list[str]:
        return list(self._rules)

    def families(self) -> list[str]:
        return sorted({r.family for r in self._rules.values()})

    def find(self, key: str) -> Optional[Rule]:
        """The rule with this code (any case) or slug, or None."""
        return self._rules.get(key.upper()) or self._slugs.get(key.lower())

    def get(self, key: str) -> Rule:
        """The rule with this code or slug; KeyError naming the key otherwise."""
        rule = self.find(key)
        if rule is None:
            raise KeyError(f"no rule {key!r}")
        return rule

    def with_tag(self, tag: str) -> list[Rule]:
        return [r for r in self if tag in r.tags]


def default_rules_dir() -> Path:
    """Where the shipped rules live: `topodiag/rules` in a wheel, else `rules/` beside the package."""
    pkg = Path(__file__).resolve().parent.parent
    for candidate in (pkg / "rules", pkg.parent / "rules"):
        if candidate.is_dir():
            return candidate
    return pkg.parent / "rules"


def rule_files(rules_dir: Path) -> list[Path]:
    """Every `<family>/*.toml` under the rules directory (profiles excluded), sorted."""
    return sorted(
        p
        for d in rules_dir.iterdir()
        if d.is_dir() and d.name not in NOT_RULE_DIRS and not d.name.startswith((".", "_"))
        for p in d.glob("*.toml")
    )


def load_catalog(rules_dir: "Path | str | None" = None, examples: bool = True) -> Catalog:
    """Load and validate every rule file; CatalogError listing every problem (one line each).

    `examples=False` (what `check` uses) leaves the `[[examples.pass]]`/`[[examples.fail]]` tables
    unread: they are half of each file and only tests and `explain` need them."""
    root = Path(rules_dir) if rules_dir is not None else default_rules_dir()
    if not root.is_dir():
        raise CatalogError([f"{root}: rules directory not found"])
    errors: list[str] = []
    rules: list[Rule] = []
    for path in rule_files(root):
        try:
            rules.append(load_rule(path, label=_label(path, root), examples=examples))
        except CatalogError as exc:
            errors.extend(exc.errors)
    by_code: dict[str, Rule] = {}
    by_slug: dict[str, Rule] = {}
    for rule in rules:
        label = _label(rule.path, root)
        if rule.code in by_code:
            errors.append(f"{label}: code: {rule.code} is also used by {_label(by_code[rule.code].path, root)}")
        else:
            by_code[rule.code] = rule
        if rule.slug in by_slug:
            errors.append(f"{label}: slug: {rule.slug!r} is also used by {_label(by_slug[rule.slug].path, root)}")
        else:
            by_slug[rule.slug] = rule
    if errors:
        raise CatalogError(errors)
    return Catalog(rules, root=root)


def _label(path: Optional[Path], root: Path) -> str:
    if path is None:
        return "<rule>"
    try:
        return str(Path(root.name) / path.relative_to(root))
    except ValueError:
        return str(path)


def load_rule(path: "Path | str", label: Optional[str] = None, examples: bool = True) -> Rule:
    """Read and validate one rule file; CatalogError with one line per problem. Without
    `examples`, the text from the first `[[examples.` table header on is not parsed (the rule
    then has no examples; a file that writes its examples otherwise is read whole)."""
    path = Path(path)
    where = label or str(path)
    try:
        text = path.read_text(encoding="utf-8")
        head = text.split("\n[[examples.", 1)[0]
        data = tomllib.loads(text if examples else head)
        if examples and head != text:
            _check_head(tomllib.loads(head), data, where)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError([f"{where}: not valid TOML: {exc}"]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError([f"{where}: cannot read: {exc}"]) from None
    return rule_from_dict(data, where, path)


def _check_head(head: Mapping[str, Any], whole: Mapping[str, Any], where: str) -> None:
    """`check` reads a rule only up to its first `[[examples.` table: whatever the rule says after
    it (a `[messages]` or `[params]` table) would be missing there."""
    late = [k for k in whole if k != "examples" and head.get(k) != whole[k]]
    if late:
        raise CatalogError([f"{where}: {k}: must come before the [[examples.*]] tables" for k in late])


def rule_from_dict(data: Mapping[str, Any], where: str, path: Optional[Path] = None) -> Rule:
    """Validate a parsed rule table (`where` prefixes each error line)."""
    v = _Validator(where)
    for key in data:
        if key not in REQUIRED_KEYS and key not in OPTIONAL_KEYS:
            v.err(key, f"unknown key (known: {', '.join(REQUIRED_KEYS + OPTIONAL_KEYS)})")
    for key in REQUIRED_KEYS:
        if key not in data:
            v.err(key, "missing")
    code, slug = v.code_and_slug(data, path)
    title = v.string(data, "title")
    severity = v.severity(data)
    why = v.string(data, "why", nonempty=True)
    fix = v.string(data, "fix", nonempty=True)
    how_to_check = v.string(data, "how_to_check") or ""
    tags = v.string_list(data, "tags", TAG_RE, "lowercase words with hyphens")
    requires = v.requires(data)
    references = v.string_list(data, "references")
    params = v.params(data)
    message = v.string(data, "message", nonempty=True)
    if message is not None:
        v.template(message, "message")
    messages = v.messages(data)
    builtin = v.boolean(data, "builtin")
    only_with_tags = v.boolean(data, "only_with_tags")
    if only_with_tags and not tags:
        v.err("only_with_tags", "a rule that runs only when one of its tags is asked for needs tags")
    pass_examples, fail_examples = v.examples(data)
    action, actions = v.actions(data, messages)
    observed = v.string(data, "observed") or ""
    if observed:
        v.template(observed, "observed")

    if v.errors:
        raise CatalogError(v.errors)
    return Rule(
        code=code, slug=slug, title=title, severity=severity, message=message, why=why, fix=fix,
        tags=tags, requires=requires, params=params, how_to_check=how_to_check, references=references,
        pass_examples=pass_examples, fail_examples=fail_examples, builtin=builtin, path=path, messages=messages,
        only_with_tags=only_with_tags, action=action, observed=observed,
        actions=MappingProxyType(dict(actions)),
    )


class _Validator:
    def __init__(self, where: str):
        self.where = where
        self.errors: list[str] = []

    def err(self, key: str, message: str) -> None:
        self.errors.append(f"{self.where}: {key}: {message}")

    def string(self, data: Mapping[str, Any], key: str, nonempty: bool = False) -> Optional[str]:
        if key not in data:
            return None
        value = data[key]
        if not isinstance(value, str):
            self.err(key, f"must be a string, not {_type_name(value)}")
            return None
        if nonempty and not value.strip():
            self.err(key, "must not be empty")
            return None
        return value

    def string_list(self, data: Mapping[str, Any], key: str, pattern: Optional[re.Pattern] = None,
                    what: str = "") -> tuple[str, ...]:
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            self.err(key, "must be a list of strings")
            return ()
        for item in value:
            if pattern is not None and not pattern.match(item):
                self.err(key, f"{item!r} is not {what}")
        if len(set(value)) != len(value):
            self.err(key, "lists an entry twice")
        return tuple(value)

    def code_and_slug(self, data: Mapping[str, Any], path: Optional[Path]) -> tuple[Optional[str], Optional[str]]:
        """The rule's code and slug (None where invalid); the file name must be CODE-slug.toml."""
        code = self.string(data, "code")
        if code is not None and not CODE_RE.match(code):
            self.err("code", f"{code!r} is not letters then three digits (like TOPO001)")
            code = None
        slug = self.string(data, "slug")
        if slug is not None and not SLUG_RE.match(slug):
            self.err("slug", f"{slug!r} is not lowercase words joined by hyphens (like gpu-link-asymmetry)")
            slug = None
        if path is not None and code and slug and path.name != f"{code}-{slug}.toml":
            self.err("code", f"file name must be {code}-{slug}.toml (from code and slug), not {path.name}")
        return code, slug

    def severity(self, data: Mapping[str, Any]) -> Optional[Severity]:
        text = self.string(data, "severity")
        if text is None:
            return None
        if text not in severity_names():
            self.err("severity", f"{text!r} is not one of {', '.join(severity_names())}")
            return None
        return Severity.parse(text)

    def boolean(self, data: Mapping[str, Any], key: str) -> bool:
        value = data.get(key, False)
        if not isinstance(value, bool):
            self.err(key, "must be true or false")
            return False
        return value

    def requires(self, data: Mapping[str, Any]) -> tuple[str, ...]:
        """The capabilities (topodiag.model.schema.CAPABILITIES) a rule needs, each met by any input
        that gives it; an input name stands for itself (a throwaway rule's, a test's)."""
        from ..model.schema import CAPABILITIES, is_capability

        requires = self.string_list(data, "requires", REQUIRES_RE,
                                    "a capability (like nic.port_state) or an input name (like "
                                    "nvidia_smi_topo_m), or alternatives joined by |")
        for entry in (e for e in requires if REQUIRES_RE.match(e)):
            for name in entry.split("|"):
                if is_capability(name) and name not in CAPABILITIES:
                    close = [c for c in CAPABILITIES if c.split(".")[0] == name.split(".")[0]]
                    self.err("requires", f"{name!r} is no capability (topodiag/model/schema.py"
                                         f"{': ' + ', '.join(close) if close else ''})")
        return requires

    def actions(self, data: Mapping[str, Any], messages: Mapping[str, str]) -> tuple[str, Mapping[str, str]]:
        """`action` and the `[actions]` table (message variant -> action)."""
        action = data.get("action", DEFAULT_ACTION)
        if action not in ACTIONS:
            self.err("action", f"{action!r} is not one of {', '.join(ACTIONS)}")
        actions = data.get("actions", {})
        if not isinstance(actions, dict):
            self.err("actions", "must be a table: message variant = action")
            return action, {}
        for name, act in actions.items():
            if name != DEFAULT_VARIANT and name not in messages:
                self.err(f"actions.{name}", "names no message variant of this rule")
            if act not in ACTIONS:
                self.err(f"actions.{name}", f"{act!r} is not one of {', '.join(ACTIONS)}")
        return action, actions

    def params(self, data: Mapping[str, Any]) -> Mapping[str, Any]:
        value = data.get("params", {})
        if not isinstance(value, dict):
            self.err("params", "must be a table of name = default value")
            return MappingProxyType({})
        for name, default in value.items():
            if not NAME_RE.match(name):
                self.err(f"params.{name}", "is not a lowercase name (like min_fraction)")
            elif name in RESERVED_NAMES:
                self.err(f"params.{name}", f"{name!r} is reserved for the message notes; choose another name")
            if isinstance(default, dict) or (
                isinstance(default, list) and not all(isinstance(x, (str, int, float, bool)) for x in default)
            ):
                self.err(f"params.{name}", "default must be a string, number, boolean or list of those")
        return MappingProxyType(dict(value))

    def template(self, message: str, key: str) -> None:
        try:
            for _, name, _, _ in string.Formatter().parse(message):
                if name is None:
                    continue
                base = re.split(r"[.\[]", name, maxsplit=1)[0]
                if not NAME_RE.match(base):
                    self.err(key, f"placeholder {{{name}}} must be a name, like {{gpu}}")
        except ValueError as exc:
            self.err(key, f"bad template: {exc} (write {{{{ and }}}} for literal braces)")

    def messages(self, data: Mapping[str, Any]) -> Mapping[str, str]:
        """`[messages]`: name = template, the variants and notes a check may name besides `message`."""
        value = data.get("messages", {})
        if not isinstance(value, dict):
            self.err("messages", "must be a table of name = message template")
            return MappingProxyType({})
        out = {}
        for name, template in value.items():
            key = f"messages.{name}"
            if not NAME_RE.match(name):
                self.err(key, "is not a lowercase name (like all_inactive)")
            elif name == DEFAULT_VARIANT:
                self.err(key, "the default variant is the rule's `message`; name this one otherwise")
            elif not isinstance(template, str) or not template.strip():
                self.err(key, "must be a non-empty string")
            else:
                self.template(template, key)
                out[name] = template
        return MappingProxyType(out)

    def examples(self, data: Mapping[str, Any]) -> tuple[tuple[Example, ...], tuple[Example, ...]]:
        value = data.get("examples", {})
        if not isinstance(value, dict):
            self.err("examples", "must be a table with pass and fail lists")
            return (), ()
        for key in value:
            if key not in ("pass", "fail"):
                self.err(f"examples.{key}", "unknown key (known: pass, fail)")
        out = []
        for kind in ("pass", "fail"):
            items = value.get(kind, [])
            if not isinstance(items, list):
                self.err(f"examples.{kind}", "must be a list of tables ([[examples.pass]])")
                out.append(())
                continue
            out.append(tuple(
                ex for i, item in enumerate(items)
                if (ex := self.example(item, f"examples.{kind}[{i}]")) is not None
            ))
        return out[0], out[1]

    def example(self, item: Any, key: str) -> Optional[Example]:
        if not isinstance(item, dict):
            self.err(key, "must be a table")
            return None
        before = len(self.errors)
        for k in item:
            if k not in EXAMPLE_KEYS:
                self.err(f"{key}.{k}", f"unknown key (known: {', '.join(EXAMPLE_KEYS)})")
        maps = {k: self._input_map(item, key, k) for k in ("inputs", "inline")}
        params = item.get("params", {})
        if not isinstance(params, dict):
            self.err(f"{key}.params", "must be a table")
            params = {}
        problems = self._problems(item, key)
        description = item.get("description", "")
        raises = item.get("raises")
        subjects = item.get("subjects", [])
        if not isinstance(description, str):
            self.err(f"{key}.description", "must be a string")
        if raises is not None and not isinstance(raises, str):
            self.err(f"{key}.raises", "must be a string (an exception name, like ZeroDivisionError)")
        if not isinstance(subjects, list) or not all(isinstance(s, str) for s in subjects):
            self.err(f"{key}.subjects", "must be a list of node ids")
        profile = item.get("profile")
        if profile is not None and not isinstance(profile, str):
            self.err(f"{key}.profile", "must be a string (a profile name, like dgx-h100)")
        if len(self.errors) > before:
            return None
        return Example(
            description=description, inputs=maps["inputs"], inline=maps["inline"],
            problems=tuple(MappingProxyType(dict(p)) for p in problems),
            params=MappingProxyType(dict(params)), raises=raises, subjects=tuple(subjects), profile=profile,
        )

    def _input_map(self, item: Mapping[str, Any], key: str, k: str) -> Mapping[str, str]:
        """An example's `inputs` / `inline` table: input name = text."""
        m = item.get(k, {})
        if not isinstance(m, dict) or not all(isinstance(x, str) for x in m.values()):
            self.err(f"{key}.{k}", "must be a table of input name = text")
            m = {}
        for name in m:
            if not NAME_RE.match(name):
                self.err(f"{key}.{k}.{name}", "is not a lowercase input name")
        return MappingProxyType(dict(m))

    def _problems(self, item: Mapping[str, Any], key: str) -> list:
        """An example's `problems`: source failures, each a table of PROBLEM_KEYS."""
        problems = item.get("problems", [])
        if not isinstance(problems, list):
            self.err(f"{key}.problems", "must be a list of tables")
            return []
        for j, p in enumerate(problems):
            pk = f"{key}.problems[{j}]"
            if not isinstance(p, dict):
                self.err(pk, "must be a table")
                continue
            for k in p:
                if k not in PROBLEM_KEYS:
                    self.err(f"{pk}.{k}", f"unknown key (known: {', '.join(PROBLEM_KEYS)})")
            for k in ("source", "kind", "reason"):
                if not isinstance(p.get(k), str):
                    self.err(f"{pk}.{k}", "missing or not a string")
            if isinstance(p.get("kind"), str) and p["kind"] not in PROBLEM_KINDS:
                self.err(f"{pk}.kind", f"{p['kind']!r} is not one of {', '.join(PROBLEM_KINDS)}")
        return problems


def _type_name(value: Any) -> str:
    return {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)
