"""Detection stays light (issue 29): importing every sniff module (topodiag/parsers/sniff/) imports no
parser, none of the parsers' shared record modules and no catalogue; detecting a kernel log imports
the kernel_log sniff and no parser at all; nvidia-smi's failure sniff loads its catalogue only for a
text whose lines may be only a failure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import topodiag.parsers as parsers

ROOT = Path(__file__).resolve().parents[2]
KERNEL_LOG = ROOT / "fixtures/kernel_log/kernel-log-aer-correctable-syslog-dmesg-amd-01.txt"
HEAVY = ("topodiag.parsers.ib_records", "topodiag.parsers._tool_failures", "topodiag.catalogues",
         "topodiag.parsers.nvidia_smi_gpu_blocks", "topodiag.parsers.nccl_tests_failures")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def _parsers_in(mods: set[str]) -> set[str]:
    return {m for m in mods if m.startswith("topodiag.parsers.") and m.split(".")[2] in parsers.SOURCES}


def test_importing_every_sniff_module_imports_no_parser():
    mods = _modules_after("import importlib, topodiag.parsers as P\n"
                          "for s in P.SOURCES: importlib.import_module('topodiag.parsers.sniff.' + s)")
    assert {f"topodiag.parsers.sniff.{s}" for s in parsers.SOURCES} <= mods  # it did run
    assert _parsers_in(mods) == set()
    assert [m for m in HEAVY if m in mods] == []


def test_detecting_a_kernel_log_imports_no_parser():
    mods = _modules_after(f"import topodiag.parsers as P\n"
                          f"assert P.detect(open({str(KERNEL_LOG)!r}).read()) == 'kernel_log'")
    assert "topodiag.parsers.sniff.kernel_log" in mods
    assert _parsers_in(mods) == set()
    assert [m for m in HEAVY if m in mods] == []


def test_the_nvidia_smi_failure_sniff_loads_the_catalogue_only_for_a_possible_failure():
    table = "Failed to initialize NVML: Unknown Error\n    Attached GPUs : 8\n    Product Name : H100\n"
    mods = _modules_after(f"import topodiag.parsers as P\nassert P.detect({table!r}) == 'nvidia_smi_q'")
    assert "topodiag.catalogues" not in mods and _parsers_in(mods) == set()
    failure = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
    mods = _modules_after(f"import topodiag.parsers as P\nassert P.detect({failure!r}) == 'nvidia_smi_q'")
    assert "topodiag.catalogues" in mods  # the failure needs the catalogue's class
    assert _parsers_in(mods) == set()
