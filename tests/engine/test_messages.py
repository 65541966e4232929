"""Rule wording: `message` (the default variant) and the `[messages]` table (other variants, notes).

- the catalog validates the table; a check that names a variant or note its rule lacks is a SYS003
  finding at run time;
- statically, every variant and note name the checks in topodiag/checks/ can pass (`variant="..."`,
  `notes=when(name=...)`, through helpers that return literals) exists in the rule of each check
  that reaches it, and every `[messages]` entry of a rule is named by its check.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from topodiag.engine import (
    Catalog,
    CatalogError,
    Rule,
    Severity,
    UnknownMessage,
    check,
    hit,
    load_catalog,
    load_rule,
    registry,
    run,
    when,
)
from topodiag.engine.catalog import DEFAULT_VARIANT

REPO = Path(__file__).resolve().parents[2]
CHECKS = REPO / "topodiag" / "checks"

RULE = dict(code="ZZZ001", slug="probe", title="probe", severity=Severity.WARNING, why="w", fix="f",
            message="{gpu} is slow{notes}", params={"limit": 3},
            messages={"lost": "{gpu} is lost", "cut": "; the output is cut", "over": "; above {limit}"})


# -- formatting ----------------------------------------------------------------------------------

def test_variants_and_notes_are_formatted_with_values_and_params():
    rule = Rule(**RULE)
    assert rule.format_message({"gpu": "gpu:0"}) == "gpu:0 is slow"
    assert rule.format_message({"gpu": "gpu:0"}, variant="lost") == "gpu:0 is lost"
    assert rule.format_message({"gpu": "gpu:0"}, notes=("cut", "over")) == "gpu:0 is slow; the output is cut; above 3"
    assert rule.format_message({"gpu": "gpu:0"}, {"limit": 5}, notes=["over"]) == "gpu:0 is slow; above 5"
    assert list(rule.variants()) == ["default", "lost", "cut", "over"]


def test_an_unknown_variant_or_note_is_an_error_naming_the_rule():
    rule = Rule(**RULE)
    with pytest.raises(UnknownMessage, match=r"rule ZZZ001 has no message 'gone' \(it has: default, lost, cut, over\)"):
        rule.format_message({"gpu": "gpu:0"}, variant="gone")
    with pytest.raises(UnknownMessage, match="no message 'later'"):
        rule.format_message({"gpu": "gpu:0"}, notes=["later"])
    with pytest.raises(UnknownMessage, match=r"message 'lost' has no \{notes\}"):
        rule.format_message({"gpu": "gpu:0"}, variant="lost", notes=["cut"])


def test_when_names_the_true_flags_in_order():
    assert when(b=1, a=[], c="x", d=None) == ("b", "c")
    h = hit("gpu:0", variant="lost", notes=when(cut=True), gpu="gpu:0")
    assert (h.variant, h.notes, dict(h.values)) == ("lost", ("cut",), {"gpu": "gpu:0"})


def test_a_check_naming_an_unknown_variant_becomes_sys003():
    catalog = Catalog([Rule(**RULE)])
    with registry.scoped():
        @check("ZZZ001")
        def probe():
            yield hit("gpu:0", variant="gone", gpu="gpu:0")

        out = run(catalog, {})
    [f] = out.findings
    assert f.code == "SYS003" and f.subjects == ("rule:ZZZ001",)
    assert f.message == ("check ZZZ001 (probe) crashed: UnknownMessage: rule ZZZ001 has no message 'gone' "
                         "(it has: default, lost, cut, over)")
    assert out.crashes[0].code == "ZZZ001"


# -- the catalog ---------------------------------------------------------------------------------

def _rule_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "ZZZ001-probe.toml"
    path.write_text(textwrap.dedent('''
        code = "ZZZ001"
        slug = "probe"
        title = "t"
        severity = "warning"
        message = "{gpu} is slow{notes}"
        why = "w"
        fix = "f"
    ''') + textwrap.dedent(body))
    return path


def test_the_messages_table_is_read():
    rule = load_rule(_rule_file(Path(pytest.importorskip("tempfile").mkdtemp()), '''
        [messages]
        lost = "{gpu} is lost"
        cut = "; cut"
    '''))
    assert dict(rule.messages) == {"lost": "{gpu} is lost", "cut": "; cut"}


@pytest.mark.parametrize("body, error", [
    ('messages = "x"\n', "messages: must be a table of name = message template"),
    ('[messages]\ndefault = "x"\n', "messages.default: the default variant is the rule's `message`"),
    ('[messages]\nBad-Name = "x"\n', "messages.Bad-Name: is not a lowercase name"),
    ('[messages]\nlost = ""\n', "messages.lost: must be a non-empty string"),
    ('[messages]\nlost = 3\n', "messages.lost: must be a non-empty string"),
    ('[messages]\nlost = "{gpu"\n', "messages.lost: bad template"),
    ('[messages]\nlost = "{1}"\n', "messages.lost: placeholder {1} must be a name"),
    ('[params]\nnotes = 1\n', "params.notes: 'notes' is reserved"),
    ('[[examples.pass]]\ndescription = "d"\ninline.ibstat = "x"\n[messages]\nlost = "x"\n',
     "messages: must come before the [[examples.*]] tables"),
])
def test_bad_messages_tables_are_refused(tmp_path, body, error):
    with pytest.raises(CatalogError) as exc:
        load_rule(_rule_file(tmp_path, body))
    assert any(error in line for line in exc.value.errors), exc.value.errors


def test_check_reads_the_same_wording_as_the_full_catalog():
    """`check` loads the rules without their examples (the text up to the first [[examples.): the
    wording must be all there."""
    full, head = load_catalog(REPO / "rules"), load_catalog(REPO / "rules", examples=False)
    assert {r.code: r.variants() for r in full} == {r.code: r.variants() for r in head}


# -- the checks' variant names against the rules -----------------------------------------------

class Unreadable(Exception):
    """A variant or notes expression the scan cannot reduce to names."""


class Module:
    """One checks module: its top-level functions, the rule code of each @check, and the names each
    function's variant= / notes= arguments can take."""

    def __init__(self, path: Path):
        self.path = path
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        self.funcs = {n.name: n for n in self.tree.body if isinstance(n, ast.FunctionDef)}
        self.codes = {name: code for name, fn in self.funcs.items() if (code := _check_code(fn))}

    def reachable(self, name: str) -> set[str]:
        """The module's functions `name` calls or refers to, transitively (itself included)."""
        seen, todo = set(), [name]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            todo += [n.id for n in ast.walk(self.funcs[current]) if isinstance(n, ast.Name) and n.id in self.funcs]
        return seen

    def named(self) -> dict[str, set[str]]:
        """{function: the variant and note names its calls can pass}."""
        out: dict[str, set[str]] = {}
        for name, fn in self.funcs.items():
            for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
                for kw in call.keywords:
                    if kw.arg in ("variant", "notes"):
                        out.setdefault(name, set()).update(self.names(kw.value, fn, f"{self.path.name}:{kw.lineno}"))
        return out

    def names(self, expr: ast.AST, fn: ast.FunctionDef, where: str) -> set[str]:
        if isinstance(expr, ast.Constant):
            if expr.value is None:
                return set()
            if isinstance(expr.value, str):
                return {expr.value}
        if isinstance(expr, ast.IfExp):
            return self.names(expr.body, fn, where) | self.names(expr.orelse, fn, where)
        if isinstance(expr, (ast.Tuple, ast.List)):
            return set().union(*(self.names(e, fn, where) for e in expr.elts))
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return self.names(expr.left, fn, where) | self.names(expr.right, fn, where)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            if expr.func.id == "when":
                return {kw.arg for kw in expr.keywords}
            if expr.func.id in self.funcs:
                return self._returned(self.funcs[expr.func.id], None, where)
        if isinstance(expr, ast.Name):
            return self._assigned(expr.id, fn, where)
        raise Unreadable(f"{where}: {ast.unparse(expr)!r}: write variant and note names as literals, when(...), "
                         "or a helper returning literals")

    def _element(self, expr: ast.AST, index: int, fn: ast.FunctionDef, where: str) -> set[str]:
        """The names element `index` of a tuple-valued expression can take."""
        if isinstance(expr, ast.Tuple):
            return self.names(expr.elts[index], fn, where)
        if isinstance(expr, ast.IfExp):
            return self._element(expr.body, index, fn, where) | self._element(expr.orelse, index, fn, where)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in self.funcs:
            return self._returned(self.funcs[expr.func.id], index, where)
        if isinstance(expr, ast.Constant) and expr.value is None:
            return set()
        raise Unreadable(f"{where}: {ast.unparse(expr)!r}: cannot see element {index}")

    def _returned(self, fn: ast.FunctionDef, index, where: str) -> set[str]:
        out: set[str] = set()
        for ret in (n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None):
            out |= self.names(ret.value, fn, where) if index is None else self._element(ret.value, index, fn, where)
        return out

    def _assigned(self, name: str, fn: ast.FunctionDef, where: str) -> set[str]:
        found, out = False, set()
        for node in (n for n in ast.walk(fn) if isinstance(n, ast.Assign)):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    found, out = True, out | self.names(node.value, fn, where)
                elif isinstance(target, ast.Tuple):
                    for i, elt in enumerate(target.elts):
                        if isinstance(elt, ast.Name) and elt.id == name:
                            found, out = True, out | self._element(node.value, i, fn, where)
        if not found:
            raise Unreadable(f"{where}: {name!r} is not assigned in {fn.name}")
        return out


def _check_code(fn: ast.FunctionDef):
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "check" and d.args:
            return d.args[0].value
    return None


def _names_by_rule() -> dict[str, set[str]]:
    """{rule code: every variant and note name its check can pass}; the default variant for each check."""
    out: dict[str, set[str]] = {}
    for path in sorted(CHECKS.glob("*.py")):
        module = Module(path)
        named = module.named()
        for func, code in module.codes.items():
            reach = module.reachable(func)
            out.setdefault(code, {DEFAULT_VARIANT}).update(*(named.get(f, set()) for f in reach))
        orphans = sorted(set(named) - set().union(*(module.reachable(f) for f in module.codes)))
        assert not orphans, f"{path.name}: functions naming messages that no @check reaches: {orphans}"
    return out


def test_the_scan_sees_the_checks():
    names = _names_by_rule()
    assert {"IB001", "NVL001", "NCCL006", "PERF001", "TOPO001"} <= set(names)
    assert {"disabled", "spare", "odd_only"} <= names["IB001"]  # via a helper returning literals, and when()
    assert {"no_hosts", "no_nvlink_bandwidth"} <= names["PERF001"]  # via a tuple element of a helper's return


def test_every_name_a_check_passes_is_in_its_rule():
    catalog = load_catalog(REPO / "rules", examples=False)
    missing = [f"{code}: {sorted(names - set(catalog.get(code).variants()))}"
               for code, names in sorted(_names_by_rule().items()) if names - set(catalog.get(code).variants())]
    assert not missing, "variant or note names the checks use that their rule's [messages] lacks:\n" + "\n".join(missing)


def test_every_message_of_a_rule_is_used_by_its_check():
    catalog = load_catalog(REPO / "rules", examples=False)
    names = _names_by_rule()
    unused = [f"{r.code}: {sorted(set(r.messages) - names[r.code])}" for r in catalog
              if r.code in names and set(r.messages) - names[r.code]]
    assert not unused, "[messages] entries no check names:\n" + "\n".join(unused)


def test_the_scan_refuses_names_it_cannot_see(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("def f(x):\n    return hit(variant=x.name)\n")
    with pytest.raises(Unreadable, match="write variant and note names as literals"):
        Module(path).named()
