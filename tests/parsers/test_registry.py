"""The parser registry: derived from the package (every module or subpackage but the helpers is a
parser named after its source), cheap to import, and every parser declares its ParserInfo."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

import topodiag.parsers as parsers
from topodiag.parsers import ParserInfo

# Parsers someone else is rewriting in parallel, which will declare INFO when they land; until then
# their missing INFO is an expected failure (xfail), not a pass, and once they have it they pass.
def _package_members() -> list[pkgutil.ModuleInfo]:
    return [m for m in pkgutil.iter_modules(parsers.__path__) if not m.name.startswith("_")]


def test_sources_are_every_module_but_the_helpers():
    found = set()
    for member in _package_members():
        mod = importlib.import_module(f"topodiag.parsers.{member.name}")
        if member.name in parsers.HELPERS:
            assert not hasattr(mod, "SOURCE"), f"{member.name} defines SOURCE: a parser, not a helper"
            continue
        assert isinstance(getattr(mod, "SOURCE", None), str), f"{member.name} is neither a parser nor in HELPERS"
        assert mod.SOURCE == member.name, f"{member.name} must be named after its SOURCE {mod.SOURCE!r}"
        found.add(mod.SOURCE)
    assert set(parsers.SOURCES) == found
    assert parsers.names() == list(parsers.SOURCES) == sorted(found)
    assert parsers.HELPERS <= {m.name for m in _package_members()}, "a helper named in HELPERS no longer exists"


def test_a_parser_may_be_a_package(tmp_path, monkeypatch):
    """Discovery lists subpackages as well as modules (a parser grown into several files)."""
    pkg = tmp_path / "parsers_copy"
    (pkg / "multi").mkdir(parents=True)
    (pkg / "multi" / "__init__.py").write_text("")
    (pkg / "single.py").write_text("")
    (pkg / "base.py").write_text("")
    (pkg / "__init__.py").write_text("")
    monkeypatch.setattr(parsers, "__path__", [str(pkg)])
    assert parsers._discover() == ("multi", "single")


@pytest.mark.parametrize("name", parsers.names())
def test_every_parser_declares_its_info(name):
    mod = parsers.get(name)
    assert isinstance(mod.INFO, ParserInfo)
    assert mod.INFO.source == name == mod.SOURCE
    assert parsers.info(name) is mod.INFO
    assert callable(mod.parse) and callable(mod.sniff)


@pytest.mark.parametrize("info", parsers.infos(), ids=lambda i: i.source)
def test_info_fields_are_sane(info):
    assert info.tool and "\n" not in info.tool
    assert info.description and "\n" not in info.description and not info.description.endswith(".")
    assert info.timeout_s > 0 and info.schema_version >= 1
    assert all(isinstance(a, str) and a for a in info.argv)
    if info.probe is not None:  # fed by a probe: no command of its own
        assert info.argv == ()
    # prolog-safe means a probe, never a command (one can hang on a wedged device): live collection
    # relies on it to pick the prolog sources from its probes alone
    assert info.prolog_safe == (info.probe is not None)


def test_infos_are_every_parser_in_order():
    assert [i.source for i in parsers.infos()] == parsers.names()


def test_a_parser_without_info_reads_as_a_file_only_source(monkeypatch):
    mod = parsers.get("ibstatus")
    monkeypatch.delattr(mod, "INFO")
    found = parsers.info("ibstatus")
    assert (found.source, found.argv, found.probe, found.prolog_safe) == ("ibstatus", (), None, False)
    assert found.description


def _loaded_parsers(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "; import sys; "
                          "print(' '.join(m for m in sys.modules if m.startswith('topodiag.parsers.')))"],
                         capture_output=True, text=True, check=True)
    return {m.split(".")[2] for m in out.stdout.split()}


def test_importing_the_registry_imports_no_parser():
    loaded = _loaded_parsers("import topodiag.parsers as p; p.names(); p.SOURCES")
    assert loaded <= {"base"}, loaded


def test_get_imports_only_the_parser_asked_for():
    loaded = _loaded_parsers("import topodiag.parsers as p; p.get('nvidia_smi_topo_m')")
    assert loaded & set(parsers.SOURCES) == {"nvidia_smi_topo_m"}
    loaded = _loaded_parsers("import topodiag.parsers as p; p.info('nvml')")
    assert loaded & set(parsers.SOURCES) == {"nvml"}


def test_unknown_source_is_a_key_error():
    with pytest.raises(KeyError):
        parsers.get("no_such_tool")
    with pytest.raises(KeyError):
        parsers.get("base")  # a helper module, not a parser
    with pytest.raises(KeyError):
        parsers.info("ib_records")
