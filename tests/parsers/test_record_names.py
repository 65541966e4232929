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



def test_device_records_name_the_product_model() -> None:
    """A record of a device seen on its bus (nccl-tests' rank lines, nvbandwidth's and p2p's device
    lists) holds the GPU's product name as `model`, never `name` (which names a device or a testcase)."""
    devices = [r for r in _records() if {f.name for f in dataclasses.fields(r)} >= {"bus_id"} or r.__name__ == "Device"]
    assert len(devices) >= 3
    for r in devices:
        names = {f.name for f in dataclasses.fields(r)}
        if "bus_id" in names or "pci" in names or "bus" in names:
            assert "name" not in names, (r.__module__, r.__qualname__)
