"""The parser registry: derived from the package (every module or subpackage but the helpers is a
parser named after its source), cheap to import, and every parser declares its ParserInfo."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import topodiag.parsers as parsers
from topodiag import catalogues
from topodiag.parsers import ParserInfo, _needles

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
    assert loaded <= {"base", "_needles"}, loaded


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


# --- detection's needle pass (issue 29): parsers whose needles are absent are not imported ---------

ROOT = Path(__file__).resolve().parents[2]
# Literals a sniff tests with `in` only to lower its score or to refuse (never the reason it claims a
# text), or only beside another literal that is a needle: no needle need hold them.
NOT_A_CLAIM = {
    "kernel_cmdline": {"kernel:", "ommand line:", " ro"},  # a kernel log's lines: 0; " ro" only with root=
    "nccl_tests": {"NCCL INFO", "NCCL WARN"},  # the 0.75 of a summary beside an NCCL log
    "nvidia_smi_q": {"Product Name", "Link Width"},  # only with "Attached GPUs" / "GPU Link Info"
    "nccl_debug": {"Watchdog", "NCCL work"},  # only with "ProcessGroupNCCL"
    "mlnx_qos": {"mlnx_qos"},  # only with a trust or PFC line
}


def _sniff_tree(name: str) -> ast.FunctionDef:
    src = inspect.getsource(inspect.getmodule(parsers.get(name).sniff))
    tree = ast.parse(src)
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "sniff")


def _in_literals(fn: ast.FunctionDef) -> set[str]:
    """The string literals the sniff tests with `"..." in x`."""
    return {n.left.value for n in ast.walk(fn) if isinstance(n, ast.Compare) and isinstance(n.left, ast.Constant)
            and isinstance(n.left.value, str) and any(isinstance(op, ast.In) for op in n.ops)}


def test_every_parser_is_in_the_needle_table():
    assert set(_needles.NEEDLES) == set(parsers.SOURCES), "a parser missing from parsers/_needles.py (or a stale entry)"
    for name, needles in _needles.NEEDLES.items():
        assert needles is None or (needles and all(n and n == n.lower() for n in needles)), name


@pytest.mark.parametrize("name", parsers.names())
def test_needles_hold_every_literal_the_sniff_claims_by(name):
    """Each literal a sniff tests with `in` holds a needle (a route to a score the table misses fails
    here); a sniff that goes through nvidia-smi's failure scan is in NVSMI_FAILURE; one that strips
    ANSI colours first has ESC as a needle (colour codes could split any other)."""
    needles = _needles.NEEDLES[name]
    fn = _sniff_tree(name)
    body = ast.unparse(fn)
    assert ("sniff_failure" in body) == (name in _needles.NVSMI_FAILURE)
    if needles is None:
        return
    if "ANSI_RE" in body:
        assert "\x1b" in needles
    missed = [lit for lit in _in_literals(fn) - NOT_A_CLAIM.get(name, set())
              if not any(n in lit.lower() for n in needles)]
    assert missed == [], f"{name}: literals its sniff claims by hold no needle"


def test_the_nvidia_smi_failure_needles_cover_the_catalogue():
    """sniff_failure needs a line the nvidia-smi catalogue explains; the catalogue tries an entry only
    when a line starts with its fixed start (or holds its anchor): a whole word of each start (not the
    last, which a key may cut) holds a failure needle."""
    cat = catalogues.load("nvidia-smi")
    assert {p for p in catalogues.producers() if "nvidia_smi_q" in catalogues.readers_of(p)} == {"nvidia-smi"}
    keys = {key for table in cat._by_prefix.values() for key in table}
    tried = {id(e) for table in cat._by_prefix.values() for es in table.values() for e in es}
    tried |= {id(e) for _, e in cat._by_anchor}
    assert tried == {id(e) for e in cat.entries}, "an entry found otherwise than by its start or anchor"
    for key in keys:
        words = key.lower().split()
        words = words[:-1] if len(key) >= catalogues.KEY_CHARS else words  # a key cut at KEY_CHARS
        assert any(n in w for n in _needles.NVSMI_FAILURE_NEEDLES for w in words), key
    for anchor, _ in cat._by_anchor:
        assert any(n in anchor.lower() for n in _needles.NVSMI_FAILURE_NEEDLES), anchor


# One short text per route by which a sniff claims (invented for a test: the shapes its regexes
# name), so that a needle missing for a route no fixture takes still fails the comparison.
ROUTES = [
    ("fabricmanager", "active\n"),
    ("peermem", "Module                  Size  Used by\nnvidia                 16384  0\n"),
    ("peermem", "ib_core 1 2 - Live 0x0\nmlx5_core 1 2 - Live 0x0\nfoo 3 0 - Live 0x0\n"),
    ("kernel_cmdline", "root=/dev/sda1 ro quiet\n"),
    ("kernel_cmdline", "intel_iommu=on\n"),
    ("nvidia_smi_topo_m", "\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n"),
    ("nvidia_smi_topo_m", "  NV#  = Connection traversing a bonded set of # NVLinks\n"),
    ("nvidia_smi_topo_m", "\x1b[1mGP\x1b[0mU0\tGPU1\tCPU Aff\x1b[0minity\n"),
    ("nvidia_smi_topo_p2p", "\tGPU0\tGPU1\nGPU0\tX\tOK\nGPU1\tOK\tX\n"),
    ("nvidia_smi_topo_p2p", "  OK   = Status Ok\n"),
    ("nvidia_smi_q", "Failed to initialize NVML: Unknown Error\n"),
    ("nvidia_smi_q", "    Fabric\n        State   : Completed\n"),
    ("sysfs_iommu", "dmar0\ndmar1\n"),
    ("sysfs_iommu", "ivhd0\n"),
    ("ibv_devinfo", "2 HCAs found:\n\tmlx5_0\n\tmlx5_1\n"),
    ("ibv_devinfo", "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n"),
    ("ibv_devinfo", "\t\t\tphys_state:\t\tLINK_UP (5)\n"),
    ("rdma_link", "link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ib0\n"),
    ("show_gids", "mlx5_0  1  0  fe80:0000:0000:0000:ba3f:d2ff:fe00:0001  v1  ib0\n"),
    ("nccl_tests", "  8  2  float  sum  -1  18.60  0.00  0.00  0  18.46  0.00  0.00  0\n"
                   "  16  4  float  sum  -1  18.60  0.00  0.00  0  18.46  0.00  0.00  0\n"),
    ("ethtool_stats", "NIC statistics:\n     rx_packets: 1\n"),
    ("lspci_tree", "-[0000:00]-+-00.0\n"),
    ("nvbandwidth", "nvbandwidth Version: v0.5\n"),
    ("p2p_bandwidth_latency", "Device=0 CAN Access Peer Device=1\n"),
    ("ibstat", "\tPhysical state: LinkUp\n\tRate: 400\n"),
    ("iblinkinfo", "          1    1[  ] ==( 4X 25.78125 Gbps Active/  LinkUp)==>       2    1[  ] sw\n"),
    ("ibnetdiscover", "switchguid=0x0002c90200405798(2c90200405798)\n"),
    ("ibnetdiscover", "Switch\t: 0x0002c90200405798 ports 36 sw\n"),
    ("nvidia_smi_nvlink_e", "\t Link 0: Replay Errors: 0\n"),
    ("nvidia_smi_nvlink_gt", "\t Link 0: Data Tx: 123 KiB\n"),
    ("nvidia_smi_nvlink_c", "\t Link 0, P2P is supported: true\n"),
    ("nvidia_smi_nvlink_info", "\tNVLE: Disabled\n"),
    ("nvidia_smi_nvlink_s", "\t Link 0: 26.562 GB/s\n"),
    ("nvidia_smi_nvlink_s", "Unable to retrieve NVLink information as all links are inActive\n"),
    ("mlnx_qos", "Priority trust state: pcp\nPFC configuration:\n"),
    ("nccl_env", "NCCL_DEBUG=INFO\nNCCL_IB_HCA=mlx5\n"),
    ("nccl_debug", "9[1a000] -> 2[6b000] [send] via NET/IB/0/GDRDMA\n"),
    ("nccl_topo_xml", "<system version=\"1\">\n  <cpu numaid=\"0\">\n"),
    ("ib_counters", "# Port counters: Lid 1 port 1\n"),
    ("ib_counters", "/sys/class/net/eth0/ecn/roce_np/enable/3\n"),
    ("ibstatus", "Infiniband device 'mlx5_0' port 1 status:\n"),
    ("sysfs_infiniband", '{"infiniband": [\n'),
]


# the probes' JSON heads (no fixture under fixtures/ holds gpu_scope's)
PROBES = ("gpu_scope", "nvml", "nccl_env", "ib_counters", "sysfs", "pyverbs", "peermem")


def _variants(text: str) -> dict[str, str]:
    n = len(text)
    return {"whole": text, "4k": text[:4096], "half": text[:n // 2], "third": text[:n // 3],
            "tail": text[n // 2:], "line-cut": text[text.find("\n", n // 4) + 1:][:8192]}


def test_the_needle_pass_detects_what_asking_every_parser_detects():
    """Over every fixture and hostile input (whole, its first 4 KB, cut): the same sources, the same
    scores, in the same order (ties in source order) as asking all parsers."""
    files = sorted(p for d in ("fixtures", "tests/hostile") for p in (ROOT / d).rglob("*") if p.is_file())
    assert len(files) > 500
    differ, seen = [], set()
    texts = [(str(p.relative_to(ROOT)), p.read_bytes()[:1 << 20].decode("utf-8", "replace")) for p in files]
    texts += [(f"probe {n}", f'{{"probe": "{n}", "schema_version": 1}}\n') for n in PROBES]
    texts += [(f"route {name} {i}", text) for i, (name, text) in enumerate(ROUTES)]
    for name, text in texts:
        for cut, variant in _variants(text).items():
            every = parsers.detect_all(variant, ask_all=True)
            if parsers.detect_all(variant) != every:
                differ.append(f"{name} ({cut})")
            seen.update(s for s, _ in every)
    assert differ == []
    # not vacuous: every parser with needles claimed something, so its needles were put to the test
    assert {s for s, n in _needles.NEEDLES.items() if n is not None} - seen == set()


@pytest.mark.parametrize("name,text", ROUTES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(ROUTES)])
def test_each_route_text_is_claimed_by_its_parser(name, text):
    """The route texts stand for their routes: asking every parser, theirs claims each."""
    assert name in {s for s, _ in parsers.detect_all(text, ask_all=True)}


def test_the_needle_pass_skips_what_cannot_claim():
    head = parsers.blank_provenance_header((ROOT / "fixtures/kernel_log/"
                                            "kernel-log-aer-correctable-syslog-dmesg-amd-01.txt").read_text())
    asked = _needles.candidates(head, parsers.SOURCES)
    assert "kernel_log" in asked
    assert not [s for s in asked if s.startswith(("nvidia_smi_", "ib"))], asked
    assert set(_needles.candidates("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
                                   parsers.SOURCES)) >= {"nvidia_smi_nvlink_s", "nvidia_smi_q", "nvidia_smi_topo_m"}
    assert parsers.detect_all("\x1b[1mGPU0\x1b[0m\t X \tNV18\n", ask_all=True) == \
        parsers.detect_all("\x1b[1mGPU0\x1b[0m\t X \tNV18\n")
