"""The parser registry: its static SOURCES list is exactly the package's parser modules."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import topodiag.parsers as parsers


def test_sources_list_every_parser_module_and_nothing_else():
    found = set()
    for info in pkgutil.iter_modules(parsers.__path__):
        mod = importlib.import_module(f"topodiag.parsers.{info.name}")
        if isinstance(getattr(mod, "SOURCE", None), str):
            assert mod.SOURCE == info.name, f"{info.name}.py must be named after its SOURCE {mod.SOURCE!r}"
            found.add(mod.SOURCE)
    assert set(parsers.SOURCES) == found
    assert parsers.names() == sorted(found)


def test_get_imports_only_the_parser_asked_for():
    code = ("import sys, topodiag.parsers as p; p.get('nvidia_smi_topo_m'); "
            "print(' '.join(m for m in sys.modules if m.startswith('topodiag.parsers.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = {m.rsplit(".", 1)[1] for m in out.stdout.split()}
    assert loaded & set(parsers.SOURCES) == {"nvidia_smi_topo_m"}


def test_unknown_source_is_a_key_error():
    import pytest

    with pytest.raises(KeyError):
        parsers.get("no_such_tool")
    with pytest.raises(KeyError):
        parsers.get("base")  # a helper module, not a parser
