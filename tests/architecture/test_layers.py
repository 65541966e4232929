"""The import direction of the package: each layer imports only layers below it, and no module
imports itself back through another (no cycle). The layers, bottom up:

    base      exit_codes, errors, records, knowledge, xid, catalogues  (leaves: the standard library only)
              scan/ (chunks, line cuts, worker processes; imports errors only)
    parsers   parsers/                                  text -> frozen dataclasses
    sources   live/, bundle/, load/                     collecting, the bundle format, loading inputs
    model     model/                                    the Topology (networkx) and combiners
    engine    profiles, engine/                         catalog, registry, runner
    checks    checks/                                   the rules' logic
    render    render/                                   output formats
    pipeline  pipeline                                  load -> model -> engine -> render's input
    shells    actions/, fleet/, plan/, compare/         Slurm drain, fan-out, fleet comparison, plan, compare
    commands  pipeline/commands/                        each command's flow, request -> result + outcome
    cli       cli/, __main__, docs/                     the commands; the generated parts of README and man page

Imports under `if TYPE_CHECKING:` do not count. `topodiag/__init__.py` is the package's face (its
API names are looked up lazily, from `pipeline` and `errors`) and is not in any layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "topodiag"

LAYERS = [
    ("base", ("exit_codes", "errors", "records", "knowledge", "xid", "scan", "catalogues")),
    ("parsers", ("parsers",)),
    ("sources", ("live", "bundle", "load")),
    ("model", ("model",)),
    ("engine", ("profiles", "engine")),
    ("checks", ("checks",)),
    ("render", ("render",)),
    ("pipeline", ("pipeline",)),
    ("shells", ("actions", "fleet", "plan", "compare")),
    ("commands", ("pipeline.commands",)),  # the pipeline's upper half: it drives the shells
    ("cli", ("cli", "__main__", "docs")),
]
RANK = {top: i for i, (_, tops) in enumerate(LAYERS) for top in tops}
# Within a layer, what may import what: loading reads bundles and live collection reads user
# files with the loader's opener; profiles find their folder beside the rules; __main__ runs the CLI.
SIDEWAYS = {("load", "bundle"), ("live", "load"), ("profiles", "engine"), ("__main__", "cli"), ("fleet", "actions"),
            ("xid", "knowledge"),  # xid.py re-exports knowledge/xid.py (the one home of hardware facts)
            ("scan", "errors")}  # scan raises ParseError for a file it cannot read


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[str, int]]:
    """(absolute module imported, line) for every import of a topodiag module in the file."""
    tree = ast.parse(path.read_text(), str(path))
    here = _module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "topodiag"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "topodiag":
                continue
            if node.module is None or mod == "topodiag":  # `from . import x`: the submodules named
                out += [(f"{mod}.{a.name}", node.lineno) for a in node.names]
            else:
                out.append((mod, node.lineno))
    return out


def _top(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) > 2 and ".".join(parts[1:3]) in RANK:  # a sub-package with a layer of its own
        return ".".join(parts[1:3])
    return parts[1] if len(parts) > 1 else None


def _modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_top_level_module_has_a_layer() -> None:
    tops = {p.relative_to(PKG).parts[0].removesuffix(".py") for p in _modules()} - {"__init__"}
    assert sorted(tops - set(RANK)) == [], "a new top-level module or package: give it a layer here"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PKG)))
def test_imports_point_down(path: Path) -> None:
    me = _top(_module_name(path))
    if me is None:  # the package's face
        return
    bad = []
    for mod, line in _imports(path):
        other = _top(mod)
        if other is None or other == me or other == "__version__":
            continue
        if other not in RANK:
            continue  # a name imported from the package face, e.g. `from .. import __version__`
        if RANK[other] > RANK[me] or (RANK[other] == RANK[me] and (me, other) not in SIDEWAYS):
            bad.append(f"line {line}: {mod} ({LAYERS[RANK[other]][0]}) from the {LAYERS[RANK[me]][0]} layer")
    assert not bad, f"{path.relative_to(PKG)} imports upward:\n  " + "\n  ".join(bad)


def test_no_import_cycles() -> None:
    graph: dict[str, set[str]] = {}
    names = {_module_name(p) for p in _modules()}
    for p in _modules():
        me = _module_name(p)
        deps = set()
        for mod, _ in _imports(p):
            while mod and mod not in names:  # `from x import name`: the module x
                mod = mod.rpartition(".")[0]
            if mod and mod != me and mod != "topodiag":
                deps.add(mod)
        graph[me] = deps
    import networkx as nx

    g = nx.DiGraph((a, b) for a, deps in graph.items() for b in deps)
    cycles = list(nx.simple_cycles(g))
    assert not cycles, "import cycles:\n  " + "\n  ".join(" -> ".join(c + [c[0]]) for c in cycles[:10])
