"""The check registry: `@check("CODE")` binds a Python function to the rule with that code.

A check's parameters are named inputs: `topology` (the model), `params` (the rule's parameters,
defaults merged with the site config), `rule` (the Rule itself) and any source name
(`nvidia_smi_topo_m`, `ibstat`, ...). A parameter without a default is required: when that input is
absent the runner skips the rule with the reason. The function returns or yields Hits (or
Findings), or returns None when all is well.

    @check("TOPO002")
    def topo002(topology, params, nvidia_smi_topo_m=None):
        ...
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from .catalog import CODE_RE

# Parameters the runner fills itself; every other parameter is an input name.
ENGINE_PARAMS = ("params", "rule")


@dataclass(frozen=True)
class CheckSpec:
    """A registered check: its code, the function, and the inputs it takes."""

    code: str
    func: Callable
    required: tuple[str, ...]  # inputs without a default: missing -> the rule is skipped
    optional: tuple[str, ...]  # inputs with a default: passed when present
    wants: tuple[str, ...]  # which of ENGINE_PARAMS it takes

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.required + self.optional

    @property
    def where(self) -> str:
        return f"{self.func.__module__}.{self.func.__qualname__}"


_checks: dict[str, CheckSpec] = {}


def check(code: str) -> Callable[[Callable], Callable]:
    """Register the decorated function as the check for rule `code`; the function is returned as is."""
    if not isinstance(code, str) or not CODE_RE.match(code):
        raise ValueError(f"check code {code!r} is not letters then three digits (like TOPO001)")

    def register(func: Callable) -> Callable:
        spec = _spec(code, func)
        old = _checks.get(code)
        if old is not None and old.where != spec.where:
            raise ValueError(f"check {code} registered twice: {old.where} and {spec.where}")
        _checks[code] = spec
        return func

    return register


def _spec(code: str, func: Callable) -> CheckSpec:
    required, optional, wants = [], [], []
    for p in inspect.signature(func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            raise ValueError(f"check {code} ({func.__qualname__}): parameter {p.name!r} must be a plain named parameter")
        if p.name in ENGINE_PARAMS:
            wants.append(p.name)
        elif p.default is p.empty:
            required.append(p.name)
        else:
            optional.append(p.name)
    return CheckSpec(code, func, tuple(required), tuple(optional), tuple(wants))


def get(code: str) -> CheckSpec | None:
    """The check registered for a code, or None."""
    return _checks.get(code)


def registered() -> dict[str, CheckSpec]:
    """A copy of the registry, code -> CheckSpec."""
    return dict(_checks)


def unregister(code: str) -> None:
    """Forget the check for a code (tests that register throwaway checks)."""
    _checks.pop(code, None)


@contextmanager
def scoped() -> Iterator[None]:
    """Restore the registry on exit to what it held on entry (for tests)."""
    saved = dict(_checks)
    try:
        yield
    finally:
        _checks.clear()
        _checks.update(saved)


def load_checks(package: str = "topodiag.checks", codes: Iterable[str] | None = None) -> dict[str, CheckSpec]:
    """Import the modules of the checks package (registering their checks); returns the registry.

    With `codes` (the rules a run selected: the prolog's ~20 of ~60), only the modules whose source
    says `@check("CODE")` for one of them are imported; when a code is found in no module's text
    (a check registered some other way), or a module's source cannot be read, every module is."""
    try:
        pkg = importlib.import_module(package)
    except ModuleNotFoundError as exc:
        if exc.name != package:
            raise
        return registered()  # no checks package yet: only builtin rules can run
    names = sorted(i.name for i in pkgutil.iter_modules(getattr(pkg, "__path__", [])) if not i.name.startswith("_"))
    if codes is not None:
        some = _modules_for(pkg, names, set(codes) - set(_checks))
        names = names if some is None else some
    for name in names:
        importlib.import_module(f"{package}.{name}")
    return registered()


_CHECK_DECORATOR = re.compile(r"""@check\(\s*["']([A-Z]+[0-9]{3})["']\s*\)""")


def _modules_for(pkg, names: list[str], wanted: set[str]) -> list[str] | None:
    """The modules among `names` whose source registers one of `wanted` ([] for none wanted); None
    when that cannot be told from the source text (then every module is imported)."""
    if not wanted:
        return []
    found: set[str] = set()
    out = []
    for name in names:
        text = _source(pkg, name)
        if text is None:
            return None
        registers = set(_CHECK_DECORATOR.findall(text))
        if registers & wanted:
            out.append(name)
            found |= registers
    return out if wanted <= found else None


def _source(pkg, name: str) -> str | None:
    for folder in getattr(pkg, "__path__", []):
        try:
            with open(os.path.join(folder, name + ".py"), encoding="utf-8") as f:
                return f.read()
        except OSError:
            continue
    return None
