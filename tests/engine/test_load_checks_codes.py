"""load_checks(codes=...): a run that selects few rules (the prolog's) imports only the check modules
that register them (issue 29: the prolog's fixed cost), and falls back to every module when the
source text cannot tell."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _loaded(codes: str) -> dict:
    code = ("import json, sys\n"
            "from topodiag.engine import load_checks\n"
            f"reg = load_checks(codes={codes})\n"
            "mods = sorted(m for m in sys.modules if m.startswith('topodiag.checks.') and '._' not in m)\n"
            "print(json.dumps({'modules': mods, 'codes': sorted(reg)}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_only_the_modules_of_the_selected_codes():
    got = _loaded("{'TOPO001', 'IB001'}")
    assert "topodiag.checks.topo" in got["modules"] and "topodiag.checks.ib" in got["modules"]
    assert "topodiag.checks.pci" not in got["modules"] and "topodiag.checks.roce" not in got["modules"]
    assert {"TOPO001", "IB001"} <= set(got["codes"])


@pytest.mark.parametrize("codes", ["{'TOPO001', 'NOPE999'}", "None"])
def test_a_code_no_module_names_or_none_loads_every_module(codes):
    every = _loaded("None")
    got = _loaded(codes)
    assert got == every
    assert "topodiag.checks.pci" in got["modules"] and len(got["modules"]) > 20


def test_no_codes_loads_no_module():
    assert _loaded("set()")["modules"] == []


def test_prolog_selection_is_the_same_set_of_checks():
    """Every rule the prolog selects has its check registered after the narrowed load."""
    code = ("import json\n"
            "from topodiag.engine import load_catalog, load_checks\n"
            "from topodiag.pipeline.run import _checked_codes\n"
            "w = _checked_codes(load_catalog(examples=False), None, None, ['prolog'])\n"
            "print(json.dumps({'wanted': sorted(w), 'codes': sorted(load_checks(codes=w))}))\n")
    got = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout)
    assert got["wanted"] and set(got["wanted"]) <= set(got["codes"])
