"""One name per meaning in the parse records (`topodiag parse --format json` is public): a name
retired for a meaning (README: renamed fields) is not given to a record field again."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import topodiag.parsers as package

RETIRED = {"tool_errors": "errors", "product_name": "model"}  # old name -> the one every record uses


def _records() -> list[type]:
    out = []
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        mod = importlib.import_module(info.name)
        out += [obj for obj in vars(mod).values()
                if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == mod.__name__]
    return out


def test_there_are_records() -> None:
    assert len(_records()) > 50


def test_no_record_uses_a_retired_name() -> None:
    found = [(r.__module__, r.__qualname__, f.name) for r in _records() for f in dataclasses.fields(r)
             if f.name in RETIRED]
    assert not found, f"use {RETIRED}: {found}"

