"""What the prolog path imports: a Slurm prolog runs on every job start, so `topodiag prolog`
must import only what it uses (the NVML and sysfs parsers, the model, the engine) and none of the
heavy or unrelated parts. Measured by module set, not by time (timings belong to benchmarks/).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SYSFS = ROOT / "fixtures" / "sysfs" / "hgx-h100-cx7-ndr-8rail"

RUN = r"""
import json, sys
sys.argv = ["topodiag", *json.loads(sys.argv[1])]
from topodiag.cli import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\nMODULES " + json.dumps(sorted(sys.modules)) + "\n")
"""

NEVER_ON_THE_PROLOG_PATH = (
    "rich",  # the text report
    "topodiag.render.text", "topodiag.render.json_report", "topodiag.render.prometheus",
    "topodiag.fleet", "topodiag.actions.fanout", "topodiag.bundle.redact",
    "topodiag.parsers.nccl_debug", "topodiag.parsers.nccl_tests", "topodiag.parsers.nvidia_smi_topo_m",
    "topodiag.parsers.ibstat", "topodiag.parsers.ibv_devinfo", "tarfile",
    "networkx",  # the model keeps its own store; networkx only when a graph is asked for (topology.graph)
    "hashlib", "concurrent.futures", "multiprocessing",  # no workers on the prolog path
    # no bundle is read: only bundle.shown (one-line errors) loads, not the archive, manifest or writer
    "topodiag.bundle.archive", "topodiag.bundle.manifest", "topodiag.bundle.writer",
)


def _modules(*args: str) -> set[str]:
    res = subprocess.run([sys.executable, "-c", RUN, json.dumps(list(args))], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    line = next(ln for ln in res.stderr.splitlines() if ln.startswith("MODULES "))
    return set(json.loads(line[len("MODULES "):]))


def test_prolog_imports_only_what_it_uses() -> None:
    mods = _modules("prolog", "--sysfs-root", str(SYSFS))
    assert "topodiag.pipeline" in mods and "topodiag.parsers.sysfs_infiniband" in mods  # it did run
    never = (*NEVER_ON_THE_PROLOG_PATH, "topodiag.cli.check", "topodiag.cli.output",
             *(m for m in OTHER_COMMANDS if m != "topodiag.cli.prolog"))
    loaded = sorted(m for m in never if m in mods or any(x.startswith(m + ".") for x in mods))
    assert loaded == [], f"the prolog path imports {loaded}"


def test_asking_for_the_graph_imports_networkx() -> None:
    code = ("import sys\nfrom topodiag.model import Topology\nt = Topology()\nt.add_node('gpu:0', 'gpu')\n"
            "assert 'networkx' not in sys.modules\nprint(type(t.graph).__name__, 'networkx' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert res.stdout.split() == ["MultiGraph", "True"], res.stderr


def test_commands_that_build_no_topology_do_not_import_networkx() -> None:
    assert "networkx" not in _modules("rules")
    assert "networkx" not in _modules("explain", "NVL001")


def test_the_bundle_package_loads_its_members_when_a_name_is_asked_for() -> None:
    code = ("import sys\nimport topodiag.bundle as b\nfrom topodiag.bundle.shown import shown\n"
            "assert 'tarfile' not in sys.modules and 'topodiag.bundle.archive' not in sys.modules\n"
            "print(b.pack.__module__, b.read_manifest.__module__, b.write_bundle_dir.__module__, "
            "b.archive.place_dir.__name__, sorted(b.__all__) == sorted(set(b.__all__)))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert res.stdout.split() == ["topodiag.bundle.archive", "topodiag.bundle.manifest", "topodiag.bundle.writer",
                                  "place_dir", "True"], res.stderr


KERNEL_LOG = ROOT / "fixtures" / "kernel_log" / "kernel-log-aer-correctable-syslog-dmesg-amd-01.txt"
OTHER_COMMANDS = tuple(f"topodiag.cli.{name}" for name in
                       ("parse", "rules", "explain", "show", "collect", "prolog", "fleet", "plan", "compare"))


def test_check_json_imports_no_text_renderer_no_graph_and_no_other_command() -> None:
    """`check --from FILE --format json` runs in a log pipeline on every file: no rich (the text
    report), no networkx (no graph is asked for), and only its own command module (cli/app.py's
    group loads a command's module when that command runs)."""
    mods = _modules("check", "--from", str(KERNEL_LOG), "--format", "json")
    assert "topodiag.cli.check" in mods and "topodiag.parsers.kernel_log" in mods  # it did run
    never = ("rich", "networkx", "topodiag.render.text", "topodiag.render.prometheus", "topodiag.fleet",
             *OTHER_COMMANDS)
    loaded = sorted(m for m in never if m in mods or any(x.startswith(m + ".") for x in mods))
    assert loaded == [], f"check --format json imports {loaded}"


def test_help_still_lists_every_command() -> None:
    mods = _modules("--help")
    assert {"topodiag.cli.check", *OTHER_COMMANDS} <= mods


def test_check_from_a_kernel_log_imports_only_the_parsers_whose_needles_appear() -> None:
    """Detection imports a parser only when one of its needles (parsers/_needles.py) is in the text
    (issue 29): a kernel log loads kernel_log and the few whose needles it holds, never the
    nvidia-smi or InfiniBand parsers."""
    from topodiag import parsers
    from topodiag.parsers import _needles

    mods = _modules("check", "--from", str(KERNEL_LOG), "--format", "json")
    loaded = {m.split(".")[2] for m in mods if m.startswith("topodiag.parsers.")} & set(parsers.SOURCES)
    head = parsers.blank_provenance_header(KERNEL_LOG.read_text())
    assert "kernel_log" in loaded
    assert loaded <= set(_needles.candidates(head, parsers.SOURCES)), loaded
    assert not [s for s in loaded if s.startswith(("nvidia_smi_", "ib", "nccl_", "nvml", "lspci_"))], loaded
    assert len(loaded) <= 5, loaded


def test_prolog_imports_only_the_check_modules_of_its_rules() -> None:
    """The prolog runs the rules tagged prolog: it imports the check modules that register them
    (engine/registry.load_checks(codes=)), not the NCCL, perf or RoCE ones (issue 29)."""
    mods = _modules("prolog", "--sysfs-root", str(SYSFS))
    checks = {m.split(".")[2] for m in mods if m.startswith("topodiag.checks.") and not m.split(".")[2].startswith("_")}
    assert {"topo", "ib", "nvlink"} <= checks, checks  # it ran its rules
    assert not checks & {"perf", "perf_pairs", "p2p_bench", "roce", "nccl_env", "nccl_job", "pci"}, checks
