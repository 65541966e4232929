"""The NVML child on a node without libnvidia-ml.so.1: it answers without importing pynvml, and its
probe JSON is the one the real pynvml's nvmlInit failure gives (issue 29: the prolog's fixed cost)."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

from topodiag.live import nvml_probe

pynvml = pytest.importorskip("pynvml")


def _no_dlopen(name, *args, **kwargs):
    raise OSError(f"{name}: cannot open shared object file: No such file or directory")


def test_fast_path_is_what_real_pynvml_says(monkeypatch):
    monkeypatch.setattr(pynvml, "nvmlLib", None)
    monkeypatch.setattr(pynvml, "CDLL", _no_dlopen)  # pynvml's own `from ctypes import *`
    slow = nvml_probe.probe(nvml=pynvml)
    monkeypatch.setattr(ctypes, "CDLL", _no_dlopen)
    monkeypatch.delitem(sys.modules, "pynvml")
    calls: list[str] = []
    fast = nvml_probe._no_library(calls.append)
    assert fast == slow
    assert fast["error_name"] == "NVML_ERROR_LIBRARY_NOT_FOUND" and fast["ok"] is False
    assert calls == ["nvmlInit()"]


def test_a_library_that_loads_goes_to_pynvml(monkeypatch):
    monkeypatch.setattr(ctypes, "CDLL", lambda name, *a, **k: object())
    monkeypatch.delitem(sys.modules, "pynvml")
    assert nvml_probe._no_library() is None


def test_an_imported_pynvml_is_left_to_probe(monkeypatch):
    monkeypatch.setattr(ctypes, "CDLL", _no_dlopen)  # pynvml imported: its nvmlLib may be a stand-in
    assert nvml_probe._no_library() is None


def test_child_without_the_library_imports_no_pynvml():
    code = ("import ctypes, sys\n"
            "try:\n    ctypes.CDLL('libnvidia-ml.so.1')\nexcept OSError:\n    pass\n"
            "else:\n    print('has-library'); raise SystemExit(0)\n"
            "from topodiag.live import nvml_probe\n"
            "import io, contextlib\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    nvml_probe.main([])\n"
            "print('pynvml' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    if out == "has-library":
        pytest.skip("libnvidia-ml.so.1 is on this host")
    assert out == "False"
